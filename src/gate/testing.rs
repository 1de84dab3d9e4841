//! Test support shared by the library's, the CLI's and the operator's tests: the example
//! cluster state of `shared/fixtures/olm/objects` as editable JSON, and the edits the tests
//! make to it (the "safe" CRD of the fixture README, moved plans, changed phases).
#![doc(hidden)]

use std::path::{Path, PathBuf};

use serde_json::Value;

pub use super::fixture::example_dir;
use super::objects::Objects;

/// One object of a scenario: its file name and the object as JSON.
pub type Doc = (String, Value);

/// The example objects, one per file, in file order.
pub fn example_docs() -> Vec<Doc> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(example_dir())
        .expect("the example objects (shared/fixtures/olm/objects)")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read");
            let doc = crate::fbc::yaml::first_document(&text)
                .expect("yaml")
                .expect("a document");
            let name = p.file_name().expect("name").to_string_lossy().into_owned();
            (name, serde_json::from_str(&doc.to_json()).expect("json"))
        })
        .collect()
}

/// The object of `kind` named `name`.
pub fn find<'a>(docs: &'a mut [Doc], kind: &str, name: &str) -> &'a mut Value {
    docs.iter_mut()
        .map(|(_, v)| v)
        .find(|v| v["kind"] == kind && v["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no {kind} {name}"))
}

/// The example plan.
pub fn plan(docs: &mut [Doc]) -> &mut Value {
    find(docs, "InstallPlan", "install-7xk2p")
}

/// The example Subscription.
pub fn subscription(docs: &mut [Doc]) -> &mut Value {
    find(docs, "Subscription", "acme-db-operator")
}

/// [`Objects`] of `docs`.
pub fn objects(docs: &[Doc]) -> Objects {
    let mut o = Objects::default();
    for (name, v) in docs {
        o.add_text(Path::new(name), &v.to_string())
            .expect("objects");
    }
    o
}

/// The Database CRD the example plan applies, read from its unpacked-bundle ConfigMap.
pub fn bundle_crd(docs: &[Doc]) -> Value {
    let o = objects(docs);
    let cm = o
        .config_maps
        .iter()
        .find(|c| c.name().starts_with("3529f77e"))
        .expect("the bundle ConfigMap");
    let crd = super::manifests::bundle_objects(cm, &o.inflate)
        .expect("decodes")
        .into_iter()
        .find(|n| {
            crate::bundle::load::str_at(n, &["metadata", "name"])
                == Some("databases.acme.example.com")
        })
        .expect("the CRD");
    serde_json::from_str(&crd.to_json()).expect("json")
}

/// Makes the plan apply `crd` inline instead of by ConfigMap reference.
pub fn set_plan_crd(docs: &mut [Doc], crd: &Value) {
    let steps = plan(docs)["status"]["plan"].as_array_mut().expect("steps");
    let step = steps
        .iter_mut()
        .find(|s| s["resource"]["kind"] == "CustomResourceDefinition")
        .expect("the CRD step");
    step["resource"]["manifest"] = Value::String(crd.to_string());
}

/// The fixture README's safe variant: v1 keeps v1beta1's schema and no maximum is added.
pub fn make_crd_safe(docs: &mut [Doc]) {
    let crd = safe_crd(docs);
    set_plan_crd(docs, &crd);
}

/// The plan's CRD made safe ([`make_crd_safe`]), not yet put into the plan.
pub fn safe_crd(docs: &[Doc]) -> Value {
    let mut crd = bundle_crd(docs);
    let versions = crd["spec"]["versions"].as_array_mut().expect("versions");
    for v in versions.iter_mut() {
        if let Some(r) = v
            .pointer_mut("/schema/openAPIV3Schema/properties/spec/properties/replicas")
            .and_then(Value::as_object_mut)
        {
            r.remove("maximum");
        }
    }
    let beta = versions
        .iter()
        .find(|v| v["name"] == "v1beta1")
        .expect("v1beta1")["schema"]
        .clone();
    for v in versions.iter_mut().filter(|v| v["name"] == "v1") {
        v["schema"] = beta.clone();
    }
    crd
}

/// Writes `docs` as files into `dir` (JSON, which YAML readers read), returning the paths.
pub fn write(docs: &[Doc], dir: &Path) -> Vec<PathBuf> {
    docs.iter()
        .map(|(name, v)| {
            let p = dir.join(name);
            std::fs::write(&p, serde_json::to_string_pretty(v).expect("json")).expect("write");
            p
        })
        .collect()
}
