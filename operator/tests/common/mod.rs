//! Test support: the fixtures' example cluster state in the API double (with OLM's CRDs and the
//! operator's own), policies, and a controller context with a fixed clock.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use olmctl::gate::testing::Doc;
use olmctl_operator::controller::{Ctx, Next, View, reconcile};
use olmctl_operator::crd::v1::UpgradePolicy;
use olmctl_operator::leader::Leadership;
use olmctl_operator::metrics::Metrics;
use olmctl_testkit::api::ApiServer;
use serde_json::{Value, json};

pub mod olmv1;
pub mod pods;

/// Sunday 2026-09-20 10:00 UTC: the example plan is six days old.
pub const NOW: &str = "2026-09-20T10:00:00Z";
pub const NS: &str = "acme-system";
pub const PLAN: &str = "install-7xk2p";
pub const OLM: &str = "operators.coreos.com";

/// The plural of a kind the tests store.
pub fn plural(kind: &str) -> &'static str {
    match kind {
        "Subscription" => "subscriptions",
        "InstallPlan" => "installplans",
        "ClusterServiceVersion" => "clusterserviceversions",
        "CustomResourceDefinition" => "customresourcedefinitions",
        "ConfigMap" => "configmaps",
        "CatalogSource" => "catalogsources",
        "OperatorGroup" => "operatorgroups",
        "UpgradePolicy" => "upgradepolicies",
        other => panic!("no plural for {other}"),
    }
}

/// An API with OLM's CRDs and the UpgradePolicy CRD, at [`NOW`].
pub fn cluster() -> ApiServer {
    let api = ApiServer::new();
    api.set_now(NOW);
    olmctl_testkit::fixtures::install_olm_crds(&api);
    api.insert(
        "customresourcedefinitions",
        serde_json::to_value(olmctl_operator::crd::crd()).expect("crd"),
    );
    api
}

/// The API holding `docs` too.
pub fn fake_with(docs: &[Doc]) -> ApiServer {
    let fake = cluster();
    for (_, v) in docs {
        let kind = v["kind"].as_str().expect("kind");
        fake.insert(plural(kind), v.clone());
    }
    fake
}

/// A v1 policy with `spec`.
pub fn policy(spec: Value) -> Value {
    json!({
        "apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
        "metadata": {"name": "default", "namespace": NS},
        "spec": spec,
    })
}

/// Stores the policy.
pub fn add_policy(fake: &ApiServer, spec: Value) {
    fake.insert("upgradepolicies", policy(spec));
}

/// The stored policy, typed.
pub fn get_policy(fake: &ApiServer) -> UpgradePolicy {
    serde_json::from_value(
        fake.get("olmctl.dev", "upgradepolicies", NS, "default")
            .expect("the policy"),
    )
    .expect("typed policy")
}

/// An admin client of `fake`.
pub fn client(fake: &ApiServer) -> Client {
    fake.client()
}

/// Leading for a day, or not at all.
pub fn leadership(leader: bool) -> Arc<Leadership> {
    let l = Arc::new(Leadership::default());
    if leader {
        l.set_until(Some(
            tokio::time::Instant::now() + Duration::from_secs(86_400),
        ));
    }
    l
}

/// A replica's context at [`NOW`] on a 1.30.2 cluster.
pub fn ctx(fake: &ApiServer, leader: bool) -> Arc<Ctx> {
    let now: jiff::Timestamp = NOW.parse().expect("now");
    Arc::new(Ctx::new(
        client(fake),
        Arc::new(Metrics::default()),
        leadership(leader),
        Arc::new(move || now),
        Some(semver::Version::new(1, 30, 2)),
    ))
}

/// One reconcile of [`NS`] from what the API holds now.
pub async fn reconcile_ns(fake: &ApiServer, c: &Arc<Ctx>) -> Next {
    let view = View::list(&fake.client(), NS).await.expect("list");
    reconcile(NS, &view, c).await.expect("reconcile")
}

/// The example objects with the CRD made safe (the fixture README's approvable variant).
pub fn safe_docs() -> Vec<Doc> {
    let mut docs = olmctl::gate::testing::example_docs();
    olmctl::gate::testing::make_crd_safe(&mut docs);
    docs
}

/// The requests that wrote (anything but GET) to a path containing `part`.
pub fn writes(fake: &ApiServer, part: &str) -> Vec<olmctl_testkit::api::Logged> {
    fake.log()
        .into_iter()
        .filter(|l| l.method != http::Method::GET && l.uri.contains(part))
        .collect()
}

/// Waits (on the API's change notifications, no sleeps) until `f` holds; fails after 20 s.
pub async fn wait_for(fake: &ApiServer, what: &str, mut f: impl FnMut() -> bool) {
    let mut changes = fake.changes();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !f() {
        match tokio::time::timeout_at(deadline, changes.next()).await {
            Ok(true) => {}
            _ => {
                for l in fake.log().iter().rev().take(30) {
                    eprintln!("{} {}", l.method, l.uri);
                }
                panic!("timed out waiting for {what}")
            }
        }
    }
}

/// The operator's namespace.
pub const OPERATOR_NS: &str = "olmctl-system";

/// A file of the repository's `bundle/manifests`.
pub fn bundle_file(name: &str) -> Value {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../bundle/manifests")
        .join(name);
    olmctl_testkit::fixtures::yaml_file(&p).remove(0)
}

/// The bundle's CSV, as OLM stores it in the operator's namespace.
pub fn bundle_csv() -> Value {
    bundle_csv_in(OPERATOR_NS)
}

/// The bundle's CSV, as OLM stores it in `ns`.
pub fn bundle_csv_in(ns: &str) -> Value {
    let mut csv = bundle_file("olmctl-operator.clusterserviceversion.yaml");
    csv["metadata"]["namespace"] = json!(ns);
    csv
}

/// The RBAC objects OLM creates for the bundle in `OPERATOR_NS`.
pub fn bundle_rbac(csv: &Value) -> Vec<(String, Value)> {
    bundle_rbac_in(csv, OPERATOR_NS)
}

/// The RBAC objects OLM creates for the bundle installed in `ns`, as stored: the CSV's
/// permissions as Roles, ClusterRoles and bindings (`resolver/rbac.go`), and the bundle's own
/// Role and RoleBinding as they are, moved to `ns` with the CSV's uid in their owner
/// references and their subjects untouched (catalog `operator.go :: ExecutePlan`).
pub fn bundle_rbac_in(csv: &Value, ns: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let generated = olmctl_testkit::olm::rbac::for_csv(csv, ns);
    let lifted = olmctl_testkit::olm::rbac::lift(
        csv["metadata"]["name"].as_str().unwrap_or_default(),
        ns,
        &generated,
        false,
    );
    assert!(
        lifted.is_empty(),
        "the bundle has no permissions to lift: {lifted:#?}"
    );
    for o in generated {
        out.push((plural_of(&o), o));
    }
    for f in [
        "olmctl-operator-leader-election_rbac.authorization.k8s.io_v1_role.yaml",
        "olmctl-operator-leader-election_rbac.authorization.k8s.io_v1_rolebinding.yaml",
    ] {
        let mut o = bundle_file(f);
        o["metadata"]["namespace"] = json!(ns);
        o["metadata"]["ownerReferences"][0]["uid"] = csv["metadata"]["uid"].clone();
        out.push((plural_of(&o), o));
    }
    out
}

pub fn plural_of(o: &Value) -> String {
    match o["kind"].as_str().unwrap_or_default() {
        "ServiceAccount" => "serviceaccounts",
        "Role" => "roles",
        "RoleBinding" => "rolebindings",
        "ClusterRole" => "clusterroles",
        _ => "clusterrolebindings",
    }
    .into()
}
