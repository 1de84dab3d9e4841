//! The shared fixtures (`../shared/fixtures`, beside the repository) as JSON objects.

use std::path::PathBuf;

use serde_json::Value;

use crate::api::ApiServer;

/// `../shared`, beside the repository.
pub fn shared() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared")
}

/// Every YAML document of `text` as JSON (panics on bad YAML: fixtures are test input).
pub fn yaml_objects(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    olmctl::fbc::yaml::parse_documents(text, |n| {
        if let Ok(v) = serde_json::from_str::<Value>(&n.to_json())
            && !v.is_null()
        {
            out.push(v);
        }
    })
    .expect("YAML");
    out
}

/// The objects of one YAML file.
pub fn yaml_file(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    yaml_objects(&text)
}

/// OLM's five CRDs as operator-framework/api publishes them (`fixtures/olm/crds`).
pub fn olm_crds() -> Vec<Value> {
    let dir = shared().join("fixtures/olm/crds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files.iter().flat_map(|f| yaml_file(f)).collect()
}

/// Stores OLM's CRDs in `api` (established at once).
pub fn install_olm_crds(api: &ApiServer) {
    for c in olm_crds() {
        api.insert("customresourcedefinitions", c);
    }
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// olmctl-operator's CRD as `operator/config/crd.yaml` has it.
pub fn operator_crd() -> Value {
    yaml_file(&repo().join("operator/config/crd.yaml")).remove(0)
}
