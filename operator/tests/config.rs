//! `operator/config/`: the CRD is what the types generate (fails when stale), the samples read
//! as the gate reads them and the v1alpha1 sample converts to the v1 one, and the RBAC grants
//! what the controller does.

use std::path::Path;

use olmctl::fbc::node::Node;

fn config(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("config")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn docs(text: &str) -> Vec<Node> {
    let mut v = Vec::new();
    olmctl::fbc::yaml::parse_documents(text, |n| v.push(n)).expect("yaml");
    v
}

#[test]
fn the_crd_in_config_is_current() {
    assert!(
        config("crd.yaml") == olmctl_operator::crd::crd_yaml(),
        "operator/config/crd.yaml is stale: run `cargo run -p olmctl-operator -- crd > operator/config/crd.yaml`"
    );
}

#[test]
fn the_samples_read_and_convert() {
    let v1 = config("samples/upgradepolicy.yaml");
    let alpha = config("samples/upgradepolicy-v1alpha1.yaml");
    let a = olmctl::gate::policy::parse(&v1).expect("v1 sample");
    let mut b = olmctl::gate::policy::parse(&alpha).expect("v1alpha1 sample");
    // The same policy under another name (both go into alm-examples).
    assert_eq!((a.name.as_str(), b.name.as_str()), ("default", "legacy"));
    b.name = a.name.clone();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    let json = |t: &str| -> serde_json::Value {
        serde_json::from_str(&docs(t)[0].to_json()).expect("json")
    };
    let converted =
        olmctl::gate::convert::convert(&json(&alpha), "olmctl.dev/v1").expect("converts");
    assert_eq!(converted["spec"], json(&v1)["spec"]);
    assert_eq!(converted["apiVersion"], "olmctl.dev/v1");
    // The typed v1 resource reads the sample too.
    let _: olmctl_operator::crd::v1::UpgradePolicy =
        serde_json::from_value(json(&v1)).expect("typed");
}

#[test]
fn the_rbac_grants_what_the_controller_does() {
    let rbac = docs(&config("rbac.yaml"));
    let rules: Vec<String> = rbac
        .iter()
        .flat_map(|d| olmctl::bundle::load::list_at(d, &["rules"]).to_vec())
        .map(|r| r.to_json())
        .collect();
    let grants = |group: &str, resource: &str, verb: &str| {
        rules.iter().any(|r| {
            r.contains(&format!("\"{group}\""))
                && r.contains(&format!("\"{resource}\""))
                && r.contains(&format!("\"{verb}\""))
        })
    };
    for (g, r, v) in [
        ("operators.coreos.com", "installplans", "patch"),
        ("operators.coreos.com", "installplans", "watch"),
        ("operators.coreos.com", "subscriptions", "watch"),
        ("operators.coreos.com", "subscriptions", "patch"),
        ("operators.coreos.com", "clusterserviceversions", "list"),
        ("apiextensions.k8s.io", "customresourcedefinitions", "get"),
        ("", "configmaps", "get"),
        ("events.k8s.io", "events", "create"),
        ("coordination.k8s.io", "leases", "update"),
        ("olmctl.dev", "upgradepolicies/status", "patch"),
        ("olmctl.dev", "upgradepolicies", "patch"),
        ("olm.operatorframework.io", "clusterextensions", "patch"),
        ("olm.operatorframework.io", "clusterextensions", "watch"),
        ("olm.operatorframework.io", "clustercatalogs", "get"),
    ] {
        assert!(grants(g, r, v), "no {v} on {g}/{r}");
    }
    // Every file of config/ is Kubernetes objects.
    for f in ["crd.yaml", "rbac.yaml", "deployment.yaml", "service.yaml"] {
        for d in docs(&config(f)) {
            assert!(olmctl::bundle::load::str_at(&d, &["kind"]).is_some(), "{f}");
        }
    }
}
