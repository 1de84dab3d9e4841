//! Reading the generator's input: plain YAML or JSON manifests (files or directory trees,
//! multi-document files, `kind: List`), sorted by path so the output never depends on the
//! order the file system lists them in, and sorted into the buckets the CSV is built from.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::bundle::SUPPORTED_KINDS;
use crate::bundle::load::{BundleError, err, field, kind_of, list_at, parse_file, str_at};
use crate::fbc::node::{Node, Pos, Value};
use crate::input::tree::Tree;

/// One input object and where it came from.
#[derive(Debug, Clone)]
pub struct Obj {
    /// The file.
    pub path: Arc<Path>,
    /// The parsed object.
    pub doc: Node,
}

impl Obj {
    /// `kind`.
    pub fn kind(&self) -> &str {
        kind_of(&self.doc).unwrap_or("")
    }
    /// `metadata.name`.
    pub fn name(&self) -> &str {
        str_at(&self.doc, &["metadata", "name"]).unwrap_or("")
    }
    /// `apiVersion`.
    pub fn api_version(&self) -> &str {
        str_at(&self.doc, &["apiVersion"]).unwrap_or("")
    }
    /// `file:line` for messages.
    pub fn at(&self) -> String {
        if self.doc.pos.line > 0 {
            format!("{}:{}", self.path.display(), self.doc.pos.line)
        } else {
            self.path.display().to_string()
        }
    }
    /// An error about this object.
    pub fn error(&self, message: impl Into<String>) -> BundleError {
        err(&self.path, self.doc.pos, message)
    }
}

/// The input sorted by role.
#[derive(Debug, Default)]
pub struct Inputs {
    /// ClusterServiceVersions found among the manifests.
    pub csvs: Vec<Obj>,
    /// CustomResourceDefinitions.
    pub crds: Vec<Obj>,
    /// Deployments (become the install strategy).
    pub deployments: Vec<Obj>,
    /// ServiceAccounts.
    pub service_accounts: Vec<Obj>,
    /// Roles and ClusterRoles.
    pub roles: Vec<Obj>,
    /// RoleBindings and ClusterRoleBindings.
    pub bindings: Vec<Obj>,
    /// Services.
    pub services: Vec<Obj>,
    /// Mutating and validating webhook configurations.
    pub webhook_configs: Vec<Obj>,
    /// Custom resources of a collected CRD (become `alm-examples`).
    pub samples: Vec<Obj>,
    /// Other objects of a kind a registry+v1 bundle may carry (written as manifests).
    pub others: Vec<Obj>,
    /// The scorecard config (`scorecard.operatorframework.io/v1alpha3` `Configuration`): it
    /// goes to `tests/scorecard/config.yaml`, as operator-sdk's collector takes it from its
    /// input (`internal/generate/collector/manifests.go :: addScorecardConfig`).
    pub scorecard: Option<Obj>,
}

/// Every YAML/JSON file at or below `paths`, sorted, without repeats.
pub fn input_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, BundleError> {
    let mut out = BTreeSet::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|e| err(p, Pos::default(), format!("cannot read: {e}")))?;
        if meta.is_dir() {
            let tree = Tree::new(p).map_err(|e| err(p, Pos::default(), e.to_string()))?;
            walk(&tree, p, &mut out)?;
        } else {
            out.insert(p.clone());
        }
    }
    Ok(out.into_iter().collect())
}

/// The YAML and JSON files below `dir`; a linked one must resolve inside `tree` (see
/// [`crate::input::tree`]), linked directories are not entered.
fn walk(tree: &Tree, dir: &Path, out: &mut BTreeSet<PathBuf>) -> Result<(), BundleError> {
    let rd = std::fs::read_dir(dir)
        .map_err(|e| err(dir, Pos::default(), format!("cannot list directory: {e}")))?;
    for entry in rd {
        let entry = entry.map_err(|e| err(dir, Pos::default(), e.to_string()))?;
        let p = entry.path();
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let ft = entry
            .file_type()
            .map_err(|e| err(&p, Pos::default(), e.to_string()))?;
        if ft.is_dir() {
            walk(tree, &p, out)?;
        } else if matches!(
            p.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        ) {
            if ft.is_symlink() {
                tree.check(&p)
                    .map_err(|e| err(&p, Pos::default(), e.to_string()))?;
            }
            out.insert(p);
        }
    }
    Ok(())
}

/// Parses every input file into objects (a `kind: List` contributes its items).
pub fn read_objects(paths: &[PathBuf]) -> Result<Vec<Obj>, BundleError> {
    let mut out = Vec::new();
    for file in input_files(paths)? {
        let path: Arc<Path> = Arc::from(file.as_path());
        for doc in parse_file(&file)? {
            if matches!(doc.value, Value::Null) {
                continue;
            }
            if kind_of(&doc).is_some_and(|k| k.ends_with("List"))
                && field(&doc, &["items"]).is_some()
            {
                for item in list_at(&doc, &["items"]) {
                    out.push(Obj {
                        path: path.clone(),
                        doc: item.clone(),
                    });
                }
            } else {
                out.push(Obj {
                    path: path.clone(),
                    doc,
                });
            }
        }
    }
    Ok(out)
}

/// Sorts objects into [`Inputs`]. Objects must be Kubernetes objects (apiVersion, kind,
/// metadata.name); exact duplicates are dropped, and two different objects of the same kind
/// and name are an error. Kinds a bundle cannot carry are an error unless listed in `ignore`.
pub fn classify(objs: Vec<Obj>, ignore: &[String]) -> Result<Inputs, BundleError> {
    let mut inputs = Inputs::default();
    // (kind, namespace, name) → the object's JSON, to drop exact repeats and refuse conflicts.
    let mut seen: BTreeMap<(String, String, String), String> = BTreeMap::new();
    // CRD-provided group/version/kind, to recognise samples.
    let mut provided: BTreeSet<(String, String)> = BTreeSet::new();
    for o in &objs {
        if o.kind() == "CustomResourceDefinition"
            && let Some(v) = crate::bundle::load::crd_versions(&o.doc)
        {
            for (ver, _) in &v.versions {
                provided.insert((format!("{}/{}", v.group, ver), v.kind.to_string()));
            }
        }
    }
    for o in objs {
        if o.api_version().is_empty() || o.kind().is_empty() || o.name().is_empty() {
            return Err(o.error(
                "not a Kubernetes object: apiVersion, kind and metadata.name are required",
            ));
        }
        if ignore.iter().any(|k| k.eq_ignore_ascii_case(o.kind())) {
            continue;
        }
        let key = (
            o.kind().to_string(),
            str_at(&o.doc, &["metadata", "namespace"])
                .unwrap_or("")
                .to_string(),
            o.name().to_string(),
        );
        let json = o.doc.to_json();
        match seen.get(&key) {
            Some(earlier) if *earlier == json => continue,
            Some(_) => {
                return Err(o.error(format!(
                    "{} \"{}\" is defined twice with different content; keep one",
                    o.kind(),
                    o.name()
                )));
            }
            None => {
                seen.insert(key, json);
            }
        }
        if o.kind() == "Configuration"
            && o.api_version() == "scorecard.operatorframework.io/v1alpha3"
        {
            if let Some(first) = &inputs.scorecard {
                return Err(o.error(format!(
                    "a second scorecard Configuration (the first is at {}); a bundle has one tests/scorecard/config.yaml",
                    first.at()
                )));
            }
            inputs.scorecard = Some(o);
            continue;
        }
        let bucket = match o.kind() {
            "ClusterServiceVersion" => &mut inputs.csvs,
            "CustomResourceDefinition" => &mut inputs.crds,
            "Deployment" => &mut inputs.deployments,
            "ServiceAccount" => &mut inputs.service_accounts,
            "Role" | "ClusterRole" => &mut inputs.roles,
            "RoleBinding" | "ClusterRoleBinding" => &mut inputs.bindings,
            "Service" => &mut inputs.services,
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration" => {
                &mut inputs.webhook_configs
            }
            k if provided.contains(&(o.api_version().to_string(), k.to_string())) => {
                &mut inputs.samples
            }
            k if SUPPORTED_KINDS.contains(&k) => &mut inputs.others,
            k => {
                return Err(o.error(format!(
                    "{k} \"{}\" ({}) cannot go into a registry+v1 bundle: OLM installs only the \
                     CSV, CRDs, the deployments, RBAC, webhooks and the kinds {}; remove it from \
                     the input or pass --ignore-kind {k}",
                    o.name(),
                    o.api_version(),
                    SUPPORTED_KINDS[2..].join(", ")
                )));
            }
        };
        bucket.push(o);
    }
    Ok(inputs)
}
