//! `catalog build OPERATOR_DIR`: every template/catalog pair of ci.yaml's
//! `fbc.catalog_mapping` rendered to `<catalogs-dir>/<catalog>/<operator-dir>/catalog.yaml` (with the
//! csv-metadata migration from v4.17 on, as the community pipeline does), then validated and
//! linted; with `check`, nothing is written and a committed catalog that differs from its
//! template is reported.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::path::{Path, PathBuf};

use super::pull::{Sources, bundle_dirs};
use super::{MigrateLevel, ci, images, kind, render};
use crate::diag::Finding;
use crate::fbc::write::{Format, canonical_text};
use crate::oci::events::Events;

/// What `catalog build` does.
#[derive(Debug, Clone)]
pub struct Build {
    /// The operator's directory (with ci.yaml and catalog-templates/).
    pub dir: PathBuf,
    /// Where the catalogs go (default `<dir>/../../catalogs`, as in the community repos).
    pub catalogs_dir: Option<PathBuf>,
    /// Compare with the committed catalogs instead of writing.
    pub check: bool,
    /// Where the bundles come from.
    pub sources: Sources,
}

/// What it did.
#[derive(Debug)]
pub enum Built {
    /// With `check`: the catalogs that differ from what their templates render, or are
    /// missing (empty when all are current).
    Checked {
        /// One per out-of-date catalog, in ci.yaml's order.
        stale: Vec<Stale>,
    },
    /// The catalogs written, with the findings of validating and linting each.
    Written {
        /// The package directories written (`<catalogs>/<catalog>/<operator-dir>`).
        written: Vec<PathBuf>,
        /// Their findings, sorted.
        findings: Vec<Finding>,
    },
}

/// A committed catalog that is not what its template renders (`catalog build --check`).
#[derive(Debug, Clone)]
pub struct Stale {
    /// Where the catalog is (`<catalogs>/<catalog>/<operator-dir>/catalog.yaml`).
    pub path: PathBuf,
    /// The template that renders it.
    pub template: PathBuf,
    /// The committed file (`None`: missing).
    pub committed: Option<Vec<u8>>,
    /// What the template renders.
    pub rendered: String,
}

impl Stale {
    /// `PATH is missing: TEMPLATE renders it` or `PATH differs from what TEMPLATE renders`.
    pub fn message(&self) -> String {
        match self.committed {
            None => format!(
                "{} is missing: {} renders it",
                self.path.display(),
                self.template.display()
            ),
            Some(_) => format!(
                "{} differs from what {} renders",
                self.path.display(),
                self.template.display()
            ),
        }
    }

    /// The unified diff from the committed catalog to the rendered one (from `/dev/null` when
    /// missing), both sides named by the catalog's path, so `patch -p0` applies it.
    pub fn diff(&self) -> String {
        let path = self.path.display().to_string();
        match &self.committed {
            None => crate::linediff::unified("", &self.rendered, "/dev/null", &path),
            Some(c) => {
                crate::linediff::unified(&String::from_utf8_lossy(c), &self.rendered, &path, &path)
            }
        }
    }
}

/// Runs `catalog build`; `events` hears each catalog written.
pub async fn build(b: &Build, events: &dyn Events) -> Result<Built, String> {
    let dir = &b.dir;
    // ci.yaml and the templates are read only where they resolve inside the package
    // directory (a link committed there may point anywhere).
    let tree = crate::input::tree::Tree::new(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let inside = |f: &Path| {
        tree.check(f).or_else(|e| match e.kind() {
            // A missing file is the reader's error, with its own message.
            std::io::ErrorKind::NotFound => Ok(()),
            _ => Err(format!("{}: {e}", f.display())),
        })
    };
    let ci_file = dir.join("ci.yaml");
    inside(&ci_file)?;
    let mappings = ci::read_mapping(&ci_file)?;
    let catalogs_root = b
        .catalogs_dir
        .clone()
        .unwrap_or_else(|| dir.join("../../catalogs"));
    // The catalog goes under the operator directory's name, as the pipeline's Makefile writes
    // it (`OPERATOR_NAME=$(shell basename $(PWD))`, `$(CATALOG_DIR)/<catalog>/$(OPERATOR_NAME)`):
    // the package need not be named like it (certified-operators' isovalent-networking
    // publishes package `clife`). opm reads any layout: a package is the `olm.package` blob's
    // name, not its directory's (operator-registry alpha/declcfg/load.go, `WalkMetasFS`).
    let package_dir = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if package_dir.is_empty() || package_dir.starts_with('.') {
        return Err(format!("{}: not a package directory", dir.display()));
    }
    // Every template read once, every image resolved once (from the first template naming it).
    let mut docs = Vec::new();
    let mut dirs: HashMap<String, PathBuf> = HashMap::new();
    for m in &mappings {
        let file = dir.join("catalog-templates").join(&m.template);
        inside(&file)?;
        let doc = super::file::read(&file)?;
        let k = kind(&file, &doc).map_err(|e| e.to_string())?;
        if !m.kind.is_empty() && m.kind != k.schema() {
            return Err(format!(
                "{}:{}:{}: catalog_mapping says {} is {}, but its schema is {}",
                ci_file.display(),
                m.pos.line,
                m.pos.col,
                m.template,
                m.kind,
                k.schema()
            ));
        }
        let mut refs = images(&file, &doc).map_err(|e| e.to_string())?;
        refs.retain(|r| !dirs.contains_key(&r.image));
        dirs.extend(bundle_dirs(&file, &refs, &b.sources, events).await?);
        docs.push((file, doc));
    }
    let mut rendered: HashMap<(usize, bool), (String, String)> = HashMap::new();
    let mut outputs: Vec<(usize, String, PathBuf, String)> = Vec::new();
    for (i, m) in mappings.iter().enumerate() {
        for catalog in &m.catalogs {
            let migrate = ci::migrates(catalog);
            let (package, text): &(String, String) = match rendered.entry((i, migrate)) {
                Entry::Occupied(o) => &*o.into_mut(),
                Entry::Vacant(v) => {
                    let level = if migrate {
                        MigrateLevel::CsvMetadata
                    } else {
                        MigrateLevel::None
                    };
                    let cfg =
                        render(&docs[i].0, &docs[i].1, &dirs, level).map_err(|e| e.to_string())?;
                    // One template, one package: the directory holds one package's catalog.
                    if cfg.packages.len() != 1 {
                        let named: Vec<&str> =
                            cfg.packages.iter().map(|p| p.name.as_str()).collect();
                        return Err(format!(
                            "{}: renders {} packages ({}); the template of an operator directory \
                             renders one package; nothing was written",
                            docs[i].0.display(),
                            named.len(),
                            if named.is_empty() {
                                "<none>".to_string()
                            } else {
                                named.join(", ")
                            }
                        ));
                    }
                    &*v.insert((package_dir.clone(), canonical_text(&cfg, Format::Yaml)))
                }
            };
            let rel = Path::new(catalog).join(package).join("catalog.yaml");
            outputs.push((i, catalog.clone(), rel, text.clone()));
        }
    }
    // Everything rendered: now compare or write.
    let mut written = Vec::new();
    let mut stale = Vec::new();
    for (i, catalog, rel, text) in outputs {
        if b.check {
            // Read as every input, and as the write below would go (through no link).
            let committed =
                crate::input::committed::read_committed(&catalogs_root, &rel).map_err(|e| {
                    format!(
                        "{e}; --check compares what {} renders with the regular file \
                         `olmctl catalog build {}` writes there",
                        docs[i].0.display(),
                        dir.display()
                    )
                })?;
            if committed.as_deref() != Some(text.as_bytes()) {
                stale.push(Stale {
                    path: catalogs_root.join(&rel),
                    template: docs[i].0.clone(),
                    committed,
                    rendered: text,
                });
            }
            continue;
        }
        crate::outdir::write(&catalogs_root, &rel, text.as_bytes()).map_err(|e| e.to_string())?;
        written.push(catalogs_root.join(catalog).join(&package_dir));
    }
    if b.check {
        return Ok(Built::Checked { stale });
    }
    // Validate and lint what was written (each catalog on its own: they are separate
    // indexes), as the pipeline does before it commits.
    let mut findings = Vec::new();
    for w in &written {
        events.note(&format!("wrote {}", w.join("catalog.yaml").display()));
        let loaded = crate::fbc::load::load_catalog(std::slice::from_ref(w))?;
        findings.extend(crate::checks::fbc::validate(&loaded));
        findings.extend(crate::checks::graph::lint(&loaded.cfg));
    }
    crate::diag::sort_findings(&mut findings);
    Ok(Built::Written { written, findings })
}
