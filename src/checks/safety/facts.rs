//! What the upgrade checks read from one bundle, extracted once: CSV name and version,
//! skipRange, minKubeVersion, maxOpenShiftVersion properties, install modes, conversion webhooks
//! and the CRDs.

use std::path::Path;
use std::sync::Arc;

use semver::Version;

use crate::bundle::crd::{Crd, bundle_crds};
use crate::bundle::load::{BundleDir, field, list_at, str_at};
use crate::diag::{Location, Subject};
use crate::fbc::node::{Node, Pos, Value};

/// A string value of the CSV with its position.
pub type At<'a> = (&'a str, Pos);

/// One bundle as the upgrade checks see it.
pub struct Facts<'a> {
    /// The bundle.
    pub bundle: &'a BundleDir,
    /// The CSV file and document.
    pub csv: Option<(&'a Arc<Path>, &'a Node)>,
    /// Package name (annotations), "" when unknown.
    pub package: String,
    /// CSV `metadata.name` (or the directory name when there is no CSV).
    pub name: String,
    /// CSV `spec.version`, text and position.
    pub version_text: Option<At<'a>>,
    /// CSV `spec.version` parsed as semver.
    pub version: Option<Version>,
    /// `olm.skipRange` annotation.
    pub skip_range: Option<At<'a>>,
    /// `spec.minKubeVersion`.
    pub min_kube: Option<At<'a>>,
    /// `olm.maxOpenShiftVersion` values (from properties.yaml and the olm.properties
    /// annotation), with the file and position of each, and whether the value came from YAML
    /// (properties.yaml: a number there has lost its text, 4.10 being 4.1).
    pub max_ocp: Vec<(Arc<Path>, Pos, Node, bool)>,
    /// The install modes marked supported.
    pub install_modes: Vec<&'a str>,
    /// CRD names listed by ConversionWebhook definitions of the CSV.
    pub conversion_crds: Vec<&'a str>,
    /// The bundle's CRDs, by name.
    pub crds: Vec<Crd<'a>>,
    /// CSV `spec.replaces`.
    pub replaces: Option<&'a str>,
    /// CSV `spec.skips`.
    pub skips: Vec<&'a str>,
    /// The channels of the bundle's annotations.
    pub channels: Vec<String>,
}

impl<'a> Facts<'a> {
    /// Extracts the facts of `b`.
    pub fn of(b: &'a BundleDir) -> Facts<'a> {
        let csv = b.csv();
        let doc = csv.map(|(_, d)| d);
        let at = |path: &[&str]| -> Option<At<'a>> {
            let n = field(doc?, path)?;
            Some((n.as_str()?, n.pos))
        };
        let version_text = at(&["spec", "version"]);
        let dir_name = b
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut max_ocp = Vec::new();
        if let Some(p) = &b.properties {
            collect_max_ocp(&p.node, &p.path, &mut max_ocp);
            for m in &mut max_ocp {
                m.3 = true;
            }
        }
        if let Some((file, d)) = csv
            && let Some(a) = field(d, &["metadata", "annotations", "olm.properties"])
            && let Some(text) = a.as_str()
        {
            let mut docs = Vec::new();
            if crate::fbc::json::parse_stream(text, |x| docs.push(x)).is_ok()
                && let Some(list) = docs.first()
            {
                // Positions inside the annotation string are relative to it: point at it.
                let mut found = Vec::new();
                collect_max_ocp(list, file, &mut found);
                max_ocp.extend(found.into_iter().map(|(f, _, v, _)| (f, a.pos, v, false)));
            }
        }
        let install_modes = doc
            .map(|d| list_at(d, &["spec", "installModes"]))
            .unwrap_or_default()
            .iter()
            .filter(|m| {
                matches!(
                    field(m, &["supported"]).map(|s| &s.value),
                    Some(Value::Bool(true))
                )
            })
            .filter_map(|m| str_at(m, &["type"]))
            .collect();
        let conversion_crds = doc
            .map(crate::bundle::crd::csv_conversion_crds)
            .unwrap_or_default();
        Facts {
            bundle: b,
            csv,
            package: b
                .annotation("operators.operatorframework.io.bundle.package.v1")
                .unwrap_or("")
                .to_string(),
            name: doc
                .and_then(|d| str_at(d, &["metadata", "name"]))
                .map_or(dir_name, str::to_string),
            version: version_text.and_then(|(t, _)| Version::parse(t).ok()),
            version_text,
            skip_range: at(&["metadata", "annotations", "olm.skipRange"]),
            min_kube: at(&["spec", "minKubeVersion"]),
            max_ocp,
            install_modes,
            conversion_crds,
            crds: bundle_crds(b),
            replaces: at(&["spec", "replaces"])
                .map(|(t, _)| t)
                .filter(|t| !t.is_empty()),
            skips: doc
                .map(|d| list_at(d, &["spec", "skips"]))
                .unwrap_or_default()
                .iter()
                .filter_map(Node::as_str)
                .collect(),
            channels: b
                .annotation("operators.operatorframework.io.bundle.channels.v1")
                .unwrap_or("")
                .split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect(),
        }
    }

    /// The CRD named `name`.
    pub fn crd(&self, name: &str) -> Option<&Crd<'a>> {
        self.crds.iter().find(|c| c.name == name)
    }

    /// A location in the CSV (or the bundle directory when there is none).
    pub fn csv_loc(&self, pos: Pos) -> Location {
        match self.csv {
            Some((f, _)) => Location::new(f.clone(), pos.line, pos.col),
            None => Location::new(Arc::from(self.bundle.dir.as_path()), 0, 0),
        }
    }

    /// The subject of findings about this bundle.
    pub fn subject(&self) -> Subject {
        Subject::bundle(&self.package, &self.name)
    }

    /// The version for messages.
    pub fn version_str(&self) -> &str {
        self.version_text.map_or("?", |(t, _)| t)
    }
}

fn collect_max_ocp(list: &Node, file: &Arc<Path>, out: &mut Vec<(Arc<Path>, Pos, Node, bool)>) {
    let Value::Seq(items) = &list.value else {
        return;
    };
    for it in items {
        if str_at(it, &["type"]) == Some("olm.maxOpenShiftVersion")
            && let Some(v) = field(it, &["value"])
        {
            out.push((file.clone(), v.pos, v.clone(), false));
        }
    }
}
