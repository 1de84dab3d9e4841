//! Names the operator reads from bundle text go into request paths only when they are valid
//! names of their kind (issue 39 review): a CSV's `owned` CRDs and a plan's steps are never
//! checked by the API server, and kube puts a name into the path as it is given, so
//! `../../api/v1/namespaces/kube-system/secrets/x` or `a?watch=1` would leave its segment.

mod common;

use common::{NS, PLAN, client, fake_with, safe_docs};
use serde_json::json;

#[tokio::test]
async fn names_from_a_csv_and_a_plan_are_asked_for_only_when_valid() {
    let mut docs = safe_docs();
    let hostile = [
        "../../../../api/v1/namespaces/kube-system/secrets/x",
        "a?watch=1",
        "Databases.Example",
    ];
    for (_, v) in docs.iter_mut() {
        if v["kind"] == "ClusterServiceVersion" {
            let owned = v["spec"]["customresourcedefinitions"]["owned"]
                .as_array_mut()
                .expect("owned");
            for h in hostile {
                owned.push(json!({"name": h, "version": "v1", "kind": "X"}));
            }
        }
        if v["kind"] == "InstallPlan" && v["metadata"]["name"] == PLAN {
            let steps = v["status"]["plan"].as_array_mut().expect("steps");
            let resolving = steps[0]["resolving"].clone();
            steps.push(json!({"resolving": resolving, "status": "Unknown", "resource": {
                "group": "apiextensions.k8s.io", "version": "v1", "kind": "CustomResourceDefinition",
                "name": "b?watch=true&x=", "manifest": json!({"kind": "ConfigMap", "name": "m",
                    "namespace": "../kube-system", "catalogSourceName": "c",
                    "catalogSourceNamespace": "olm"}).to_string()}}));
        }
    }
    let fake = fake_with(&docs);
    let objects = olmctl_operator::cluster::snapshot(&client(&fake), NS)
        .await
        .expect("snapshot");
    // Every CRD and ConfigMap asked for is a valid name of its kind in a path of its own.
    for l in fake.log() {
        let path = l.uri.split('?').next().unwrap_or_default();
        assert!(
            !path.contains("/secrets") && !path.contains(".."),
            "{}",
            l.uri
        );
        assert!(
            !l.uri.contains("watch=1") && !l.uri.contains("watch=true"),
            "{}",
            l.uri
        );
    }
    let asked: Vec<String> = fake
        .log()
        .into_iter()
        .filter(|l| l.uri.contains("/customresourcedefinitions/"))
        .map(|l| l.uri)
        .collect();
    assert!(!asked.is_empty(), "the valid CRDs are still read");
    assert!(!objects.crds.is_empty());
}
