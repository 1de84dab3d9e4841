//! kubectl-operator's commands (issue 40 item 21) run as the binary against the API double over
//! TLS, with OLM's package-server double serving PackageManifests from the CatalogSources:
//! `packages` (`list-available`), `describe`, `catalog add|list|remove`, `list-operands` and
//! `upgrade`, with and without an UpgradePolicy covering the Subscription.

#![cfg(unix)]

mod common;

use std::sync::Arc;

use common::bounded::{Run, run_env};
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer, kubeconfig};
use olmctl_testkit::olm::catalog::{Bundle, Catalog};
use olmctl_testkit::olm::package_server::PackageServer;
use serde_json::{Value, json};

const OLM: &str = "operators.coreos.com";
const IMAGE: &str = "quay.io/acme/catalog:v1";

fn bundle(package: &str, version: &str, replaces: Option<&str>, default: &str) -> Bundle {
    let mut csv = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": format!("{package}.v{version}"),
                     "annotations": {"repository": "https://example.com/acme", "description": "Makes widgets"}},
        "spec": {"version": version, "displayName": "Widget Operator", "provider": {"name": "Acme"},
                 "description": "Widgets.\nMany of them.",
                 "installModes": [{"type": "OwnNamespace", "supported": true},
                                  {"type": "AllNamespaces", "supported": true},
                                  {"type": "MultiNamespace", "supported": false}]}});
    if let Some(r) = replaces {
        csv["spec"]["replaces"] = json!(r);
    }
    Bundle::new(
        vec![("csv.yaml".into(), csv)],
        vec![
            (
                "operators.operatorframework.io.bundle.package.v1".into(),
                package.into(),
            ),
            (
                "operators.operatorframework.io.bundle.channel.default.v1".into(),
                default.into(),
            ),
        ],
        &format!("quay.io/acme/{package}-bundle:{version}"),
    )
    .expect("bundle")
}

struct World {
    api: ApiServer,
    env: Vec<(String, String)>,
    _dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let api = ApiServer::new();
        olmctl_testkit::fixtures::install_olm_crds(&api);
        for ns in ["olm", "ops", "other"] {
            api.insert(
                "namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            );
        }
        let server = api.serve_tls_on_loopback();
        let dir = tempfile::tempdir().expect("tmp");
        let kc = dir.path().join("kubeconfig");
        std::fs::write(&kc, kubeconfig(&server, ADMIN_TOKEN, "ops")).expect("kubeconfig");
        let env = vec![
            ("KUBECONFIG".into(), kc.display().to_string()),
            ("HOME".into(), dir.path().display().to_string()),
        ];
        World {
            api,
            env,
            _dir: dir,
        }
    }

    fn run(&self, args: &[&str]) -> Run {
        let env: Vec<(&str, &str)> = self
            .env
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let r = run_env(args, &env);
        assert!(!r.hung, "{r:?}");
        r
    }
}

fn catalog_source(name: &str, image: &str, served: bool) -> Value {
    let mut cs = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
        "metadata": {"name": name, "namespace": "olm"},
        "spec": {"sourceType": "grpc", "image": image, "displayName": "Acme Operators", "publisher": "Acme"}});
    if served {
        cs["status"] = json!({"registryService": {"protocol": "grpc", "serviceName": name,
            "serviceNamespace": "olm", "port": "50051"},
            "connectionState": {"lastObservedState": "READY"}});
    }
    cs
}

/// The first four columns of each line (AGE, last, depends on the clock).
fn columns(stdout: &str, n: usize) -> Vec<Vec<String>> {
    stdout
        .lines()
        .map(|l| {
            l.split("  ")
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .take(n)
                .map(str::to_string)
                .collect()
        })
        .collect()
}

#[test]
fn packages_describe_and_catalog_sources() {
    let w = World::new();
    let ps = PackageServer::install(&w.api, "olm");
    let catalog = Catalog::new();
    catalog.release("stable", bundle("widgets", "1.0.0", None, "stable"));
    catalog.release(
        "stable",
        bundle("widgets", "1.1.0", Some("widgets.v1.0.0"), "stable"),
    );
    catalog.release("alpha", bundle("widgets", "2.0.0", None, "stable"));
    catalog.release("stable", bundle("gadgets", "0.1.0", None, "stable"));
    ps.serve(IMAGE, catalog);
    w.api
        .insert("catalogsources", catalog_source("acme", IMAGE, true));
    // Its registry service is not up yet: package-server skips it.
    w.api
        .insert("catalogsources", catalog_source("later", IMAGE, false));

    // packages (list-available): one row per channel, sorted by package; the namespace sees
    // OLM's global namespace's catalogs.
    let r = w.run(&["packages"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        columns(&r.stdout, 4),
        [
            vec!["NAME", "CATALOG", "CHANNEL", "LATEST CSV"],
            vec!["gadgets", "Acme Operators", "stable", "gadgets.v0.1.0"],
            vec!["widgets", "Acme Operators", "alpha", "widgets.v2.0.0"],
            vec!["widgets", "Acme Operators", "stable", "widgets.v1.1.0"],
        ]
    );
    let header = r.stdout.lines().next().expect("header");
    assert_eq!(
        header,
        "NAME     CATALOG         CHANNEL  LATEST CSV      AGE"
    );
    let r = w.run(&["list-available", "widgets", "-c", "olm/acme", "-o", "json"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    let rows: Vec<Value> = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["default"], true);
    assert_eq!(rows[1]["catalogSource"], "acme");
    let r = w.run(&["packages", "-c", "later"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "");
    assert_eq!(r.stderr, "No resources found in ops namespace.\n");

    // describe: the default channel's head, as kubectl-operator prints it.
    let r = w.run(&["describe", "widgets", "-L"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        r.stdout,
        "== Package ==\nWidget Operator 1.1.0 (by Acme)\n\n== Repository ==\nhttps://example.com/acme\n\n\
         == Catalog ==\nAcme Operators\n\n== Channels ==\nalpha\nstable (default) (shown)\n\n\
         == Install Modes ==\nAllNamespaces\nOwnNamespace\n\n== Description ==\nMakes widgets\n\n\
         == Long Description ==\nWidgets.\nMany of them.\n"
    );
    let r = w.run(&["describe", "widgets", "-C", "beta"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains(
            "channel \"beta\" does not exist for package \"widgets\" (its channels: alpha, stable)"
        ),
        "{}",
        r.stderr
    );
    let r = w.run(&["describe", "nothing"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("\"nothing\" not found in namespace ops"),
        "{}",
        r.stderr
    );

    // catalog add waits for READY (OLM's catalog operator is the hook), list, remove.
    let api = w.api.clone();
    w.api.set_hook(Arc::new(move |m, path| {
        if m == http::Method::GET && path.ends_with("/catalogsources/community") {
            api.merge(
                OLM,
                "catalogsources",
                "olm",
                "community",
                &json!({"status": {"connectionState": {"lastObservedState": "READY"}}}),
                true,
            );
        }
    }));
    let r = w.run(&[
        "catalog",
        "add",
        "community",
        "quay.io/community/index:v4",
        "-d",
        "Community Operators",
        "-p",
        "Red Hat",
        "-n",
        "olm",
        "--interval",
        "10ms",
    ]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "created catalogsource \"community\"\n");
    let cs = w
        .api
        .get(OLM, "catalogsources", "olm", "community")
        .expect("created");
    assert_eq!(
        cs["spec"],
        json!({"sourceType": "grpc", "image": "quay.io/community/index:v4",
               "displayName": "Community Operators", "publisher": "Red Hat"})
    );
    let r = w.run(&["catalog", "list", "-A"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        columns(&r.stdout, 5),
        [
            vec!["NAME", "NAMESPACE", "DISPLAY", "TYPE", "PUBLISHER"],
            vec!["acme", "olm", "Acme Operators", "grpc", "Acme"],
            vec!["community", "olm", "Community Operators", "grpc", "Red Hat"],
            vec!["later", "olm", "Acme Operators", "grpc", "Acme"],
        ]
    );
    let r = w.run(&["catalog", "list"]);
    assert_eq!(r.stderr, "No resources found in ops namespace.\n");
    let r = w.run(&["catalog", "remove", "community", "-n", "olm"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(r.stdout, "catalogsource \"community\" removed\n");
    assert!(
        w.api
            .get(OLM, "catalogsources", "olm", "community")
            .is_none()
    );
    let r = w.run(&["catalog", "remove", "community", "-n", "olm"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("not found"), "{}", r.stderr);
    // The FBC commands of `catalog` are still there.
    let r = w.run(&["catalog", "ls", "--help"]);
    assert_eq!(r.code, Some(0), "{r:?}");
}

fn plan(name: &str, csv: &str) -> Value {
    json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
        "metadata": {"name": name, "namespace": "ops"},
        "spec": {"approval": "Manual", "approved": false, "clusterServiceVersionNames": [csv]},
        "status": {"phase": "RequiresApproval", "catalogSources": ["acme"],
                   "plan": [{"resolving": csv, "status": "Unknown", "resource": {"group": OLM,
                       "version": "v1alpha1", "kind": "ClusterServiceVersion", "name": csv,
                       "sourceName": "acme", "sourceNamespace": "olm", "manifest": "{}"}}]}})
}

fn subscription(name: &str, plan: &str, labels: Value) -> Value {
    json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": {"name": name, "namespace": "ops", "labels": labels},
        "spec": {"name": name, "source": "acme", "sourceNamespace": "olm", "channel": "stable",
                 "installPlanApproval": "Manual"},
        "status": {"installedCSV": format!("{name}.v1.0.0"), "currentCSV": format!("{name}.v1.1.0"),
                   "state": "UpgradePending",
                   "installPlanRef": {"name": plan, "namespace": "ops"}}})
}

#[test]
fn operands_and_upgrades_through_the_gate() {
    let w = World::new();
    w.api.insert(
        "customresourcedefinitions",
        olmctl_testkit::fixtures::operator_crd(),
    );
    w.api.insert("customresourcedefinitions", json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": "v1", "served": true, "storage": true,
                     "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}}));
    w.api.insert(
        "operatorgroups",
        json!({"apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
        "metadata": {"name": "ops", "namespace": "ops"}, "spec": {"targetNamespaces": ["ops"]},
        "status": {"namespaces": ["ops"]}}),
    );
    w.api.insert(
        "clusterserviceversions",
        json!({"apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "ClusterServiceVersion", "metadata": {"name": "p.v1.0.0", "namespace": "ops"},
        "spec": {"version": "1.0.0", "customresourcedefinitions": {"owned": [
            {"name": "widgets.example.com", "version": "v1", "kind": "Widget"}]}},
        "status": {"phase": "Succeeded"}}),
    );
    for (ns, name) in [("ops", "w-b"), ("other", "w-x"), ("ops", "w-a")] {
        w.api.insert(
            "widgets",
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
                   "metadata": {"name": name, "namespace": ns}}),
        );
    }
    w.api
        .insert("subscriptions", subscription("p", "install-2", json!({})));
    w.api.insert("installplans", plan("install-2", "p.v1.1.0"));
    // q is covered by an UpgradePolicy whose gate holds its plan.
    w.api.insert(
        "subscriptions",
        subscription("q", "install-3", json!({"tier": "prod"})),
    );
    w.api.merge(
        OLM,
        "subscriptions",
        "ops",
        "q",
        &json!({"metadata": {"annotations": {"olmctl.dev/gate-decision": "install-3: Held"}}}),
        false,
    );
    w.api.insert("installplans", plan("install-3", "q.v1.1.0"));
    w.api.insert("upgradepolicies", json!({"apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
        "metadata": {"name": "prod", "namespace": "ops"},
        "spec": {"selector": {"matchLabels": {"tier": "prod"}}, "maxVersionJump": "minor"},
        "status": {"subscriptions": [{"name": "q", "installPlan": "install-3", "decision": "Held",
            "since": "2026-09-14T08:00:00Z",
            "reasons": [{"code": "GATE001", "effect": "Hold", "message": "1.0.0 -> 1.1.0 is not allowed now"}]}]}}));

    // list-operands: the Widgets of the OperatorGroup's namespaces, sorted.
    let r = w.run(&["list-operands", "p"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        columns(&r.stdout, 4),
        [
            vec!["APIVERSION", "KIND", "NAMESPACE", "NAME"],
            vec!["example.com/v1", "Widget", "ops", "w-a"],
            vec!["example.com/v1", "Widget", "ops", "w-b"],
        ]
    );
    let r = w.run(&["list-operands", "p", "-o", "json"]);
    let list: Value = serde_json::from_str(&r.stdout).expect("json");
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(2));
    let r = w.run(&["list-operands", "nope"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr
            .contains("package \"nope\" not found in namespace \"ops\""),
        "{}",
        r.stderr
    );

    // upgrade: the waiting plan approved; OLM (the hook) completes it.
    let api = w.api.clone();
    w.api.set_hook(Arc::new(move |m, path| {
        if m != http::Method::GET || !path.ends_with("/installplans/install-2") {
            return;
        }
        let Some(p) = api.get(OLM, "installplans", "ops", "install-2") else {
            return;
        };
        if p["spec"]["approved"] == true && p["status"]["phase"] != "Complete" {
            api.merge(
                OLM,
                "installplans",
                "ops",
                "install-2",
                &json!({"status": {"phase": "Complete"}}),
                true,
            );
        }
    }));
    let r = w.run(&["upgrade", "p", "--interval", "10ms"]);
    assert_eq!(r.code, Some(0), "{r:?}");
    assert_eq!(
        r.stdout,
        "InstallPlan install-2 approved: it installs p.v1.1.0\noperator \"p\" upgraded; installed csv is \"p.v1.1.0\"\n"
    );
    let p = w
        .api
        .get(OLM, "installplans", "ops", "install-2")
        .expect("plan");
    assert_eq!(p["spec"]["approved"], true);

    // The gate holds q's plan: not approved behind the policy.
    let r = w.run(&["upgrade", "q", "--interval", "10ms"]);
    assert_eq!(r.code, Some(1), "{r:?}");
    assert!(
        r.stderr.contains(
            "InstallPlan ops/install-3 is held by the upgrade gate (UpgradePolicy ops/prod): GATE001 Hold: 1.0.0 -> 1.1.0 is not allowed now"
        ),
        "{}",
        r.stderr
    );
    let q = w
        .api
        .get(OLM, "installplans", "ops", "install-3")
        .expect("plan");
    assert_eq!(q["spec"]["approved"], false);

    // Nothing to upgrade: kubectl-operator's message.
    let r = w.run(&["upgrade", "nope"]);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(
        r.stderr.contains("subscription \"nope\" not found"),
        "{}",
        r.stderr
    );
}
