//! `olmctl resolve` on the real v4.18 community catalog: a Subscription whose dependency is in
//! the catalog (rabbitmq-messaging-topology-operator needs rabbitmq-cluster-operator), one
//! whose dependency is not (alloydb-omni-operator needs cert-manager) until a second catalog
//! provides it, OLM's message and the explanation, and the usage errors (exit 2).

mod common;

use std::path::Path;

use common::cli::{code, olmctl};
use common::*;
use serde_json::{Value, json};

const OG: &str = "apiVersion: operators.coreos.com/v1\nkind: OperatorGroup\nmetadata: {name: og, namespace: team}\n";

fn objects(files: &[(&str, &str)]) -> tempfile::TempDir {
    let d = tempfile::tempdir().expect("tmp");
    for (name, text) in files {
        std::fs::write(d.path().join(name), text).expect("write");
    }
    d
}

fn resolve_json(dir: &Path, extra: &[&str]) -> (i32, Value) {
    let cat = format!("community/olm={}", fixture_catalog().display());
    let mut args = vec![
        "resolve",
        "-n",
        "team",
        "-f",
        dir.to_str().expect("utf-8"),
        "--catalog",
        &cat,
        "-o",
        "json",
    ];
    args.extend_from_slice(extra);
    let o = olmctl(&args);
    let doc = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (code(&o), doc)
}

#[test]
fn a_dependency_in_the_same_catalog_is_installed_with_its_own_subscription() {
    let d = objects(&[("og.yaml", OG)]);
    let (c, doc) = resolve_json(
        d.path(),
        &[
            "--subscribe",
            "rabbitmq-messaging-topology-operator",
            "--from",
            "community/olm",
        ],
    );
    assert_eq!(c, 0, "{doc:#}");
    assert_eq!(doc["resolved"], true);
    assert_eq!(doc["catalogs"], json!(["@existing/team", "community/olm"]));
    assert_eq!(
        doc["bundles"],
        json!([
            {"csv": "rabbitmq-cluster-operator.v2.22.3", "package": "rabbitmq-cluster-operator",
             "version": "2.22.3", "channel": "stable", "catalog": "community/olm",
             "bundle_image": doc["bundles"][0]["bundle_image"], "action": "install", "replaces": null,
             "pulled_in_by": {"bundle": "rabbitmq-messaging-topology-operator.v1.19.3",
                              "requirement": "bundle rabbitmq-messaging-topology-operator.v1.19.3 requires an operator providing an API with group: rabbitmq.com, version: v1beta1, kind: RabbitmqCluster"},
             "new_subscription": "rabbitmq-cluster-operator-stable-community-olm"},
            {"csv": "rabbitmq-messaging-topology-operator.v1.19.3",
             "package": "rabbitmq-messaging-topology-operator", "version": "1.19.3",
             "channel": "stable", "catalog": "community/olm",
             "bundle_image": doc["bundles"][1]["bundle_image"], "action": "install", "replaces": null,
             "pulled_in_by": {"subscription": "rabbitmq-messaging-topology-operator"},
             "new_subscription": null},
        ])
    );
    assert!(
        doc["bundles"][0]["bundle_image"]
            .as_str()
            .is_some_and(|i| i.contains("rabbitmq")),
        "{doc:#}"
    );
    assert_eq!(
        doc["subscriptions"],
        json!([
            {"name": "rabbitmq-cluster-operator-stable-community-olm", "action": "create",
             "startingCSV": "rabbitmq-cluster-operator.v2.22.3"},
            {"name": "rabbitmq-messaging-topology-operator", "action": "update",
             "currentCSV": "rabbitmq-messaging-topology-operator.v1.19.3"},
        ])
    );
}

#[test]
fn a_missing_dependency_is_explained_and_a_second_catalog_fixes_it() {
    let d = objects(&[("og.yaml", OG)]);
    let sub = [
        "--subscribe",
        "alloydb-omni-operator",
        "--from",
        "community/olm",
    ];
    let (c, doc) = resolve_json(d.path(), &sub);
    assert_eq!(c, 1, "{doc:#}");
    assert_eq!(doc["resolved"], false);
    assert_eq!(doc["reason"], "ConstraintsNotSatisfiable");
    let msg = doc["olm_message"].as_str().expect("message");
    assert!(
        msg.starts_with("constraints not satisfiable: bundle alloydb-omni-operator.v1.3.0 requires an operator with package: cert-manager and with version in range: >=1.12.2, "),
        "{msg}"
    );
    assert!(
        msg.ends_with("or community/olm/stable/alloydb-omni-operator.v1.3.0"),
        "{msg}"
    );
    let items = doc["explanation"].as_array().expect("explanation");
    assert_eq!(
        items[0]["constraint"],
        "subscription alloydb-omni-operator exists"
    );
    let candidates = items[1]["candidates"].as_array().expect("candidates");
    assert_eq!(candidates.len(), 11);
    assert_eq!(candidates[0]["csv"], "alloydb-omni-operator.v1.8.0");
    assert!(
        candidates[0]["why_out"]
            .as_str()
            .unwrap()
            .starts_with("it requires an operator providing an API with group: cert-manager.io")
    );
    assert!(
        items.iter().any(|i| i["fix"][0]
            .as_str()
            .is_some_and(|f| f.contains("with package: cert-manager"))),
        "{doc:#}"
    );

    // A catalog in the namespace with cert-manager (its APIs and package) resolves it; the
    // dependency comes from that catalog, with its own Subscription.
    let cm = tempfile::tempdir().expect("tmp");
    let gvk = |k: &str| json!({"type": "olm.gvk", "value": {"group": "cert-manager.io", "version": "v1", "kind": k}});
    let blobs = [
        json!({"schema": "olm.package", "name": "cert-manager", "defaultChannel": "stable"}),
        json!({"schema": "olm.channel", "package": "cert-manager", "name": "stable",
               "entries": [{"name": "cert-manager.v1.14.0"}]}),
        json!({"schema": "olm.bundle", "package": "cert-manager", "name": "cert-manager.v1.14.0",
               "image": "quay.io/example/cert-manager-bundle:v1.14.0",
               "properties": [{"type": "olm.package", "value": {"packageName": "cert-manager", "version": "1.14.0"}},
                              gvk("Certificate"), gvk("Issuer"), gvk("ClusterIssuer")]}),
    ];
    let text: String = blobs.iter().map(|b| format!("{b}\n")).collect();
    std::fs::write(cm.path().join("catalog.json"), text).expect("write");
    let second = format!("certs/team={}", cm.path().display());
    let mut extra = sub.to_vec();
    extra.extend(["--catalog", &second]);
    let (c, doc) = resolve_json(d.path(), &extra);
    assert_eq!(c, 0, "{doc:#}");
    let names: Vec<(&str, &str)> = doc["bundles"]
        .as_array()
        .expect("bundles")
        .iter()
        .map(|b| (b["csv"].as_str().unwrap(), b["catalog"].as_str().unwrap()))
        .collect();
    assert_eq!(
        names,
        [
            ("cert-manager.v1.14.0", "certs/team"),
            ("alloydb-omni-operator.v1.8.0", "community/olm")
        ]
    );
    assert_eq!(
        doc["bundles"][0]["new_subscription"],
        "cert-manager-stable-certs-team"
    );
}

#[test]
fn the_text_says_what_olm_installs_and_keeps_olms_message_beside_the_explanation() {
    let d = objects(&[("og.yaml", OG)]);
    let cat = format!("community/olm={}", fixture_catalog().display());
    let base = [
        "resolve",
        "-n",
        "team",
        "-f",
        d.path().to_str().unwrap(),
        "--catalog",
        &cat,
    ];
    let mut ok = base.to_vec();
    ok.extend([
        "--subscribe",
        "rabbitmq-messaging-topology-operator@stable",
        "--from",
        "community/olm",
    ]);
    let o = olmctl(&ok);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 0);
    assert!(s.starts_with("OLM resolves namespace team (catalogs read: @existing/team, community/olm):\n  install  rabbitmq-cluster-operator.v2.22.3 (rabbitmq-cluster-operator 2.22.3) from community/olm, channel stable\n"), "{s}");
    assert!(s.contains("           OLM creates Subscription rabbitmq-cluster-operator-stable-community-olm (startingCSV rabbitmq-cluster-operator.v2.22.3)\n"), "{s}");
    let mut bad = base.to_vec();
    bad.extend([
        "--subscribe",
        "shipwright-operator",
        "--from",
        "community/olm",
    ]);
    let o = olmctl(&bad);
    let s = String::from_utf8_lossy(&o.stdout);
    assert_eq!(code(&o), 1);
    assert!(s.contains("OLM's message (condition ResolutionFailed, reason ConstraintsNotSatisfiable, on every Subscription of the namespace):\n  constraints not satisfiable: "), "{s}");
    assert!(s.contains("\nWhy (a smallest set of constraints that cannot hold together; drop any one and OLM resolves):\n  1. the Subscription shipwright-operator must be satisfied\n"), "{s}");
    assert!(s.contains("     fix: add a catalog (a CatalogSource in the namespace or the global namespace) with a bundle providing an API with group: operator.tekton.dev"), "{s}");
}

#[test]
fn cluster_state_errors_are_olms_and_input_errors_exit_2() {
    // No OperatorGroup: OLM's ErrorPreventedResolution.
    let sub = "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: s, namespace: team}\nspec: {name: kube-green, source: community, sourceNamespace: olm}\n";
    let d = objects(&[("sub.yaml", sub)]);
    let (c, doc) = resolve_json(d.path(), &[]);
    assert_eq!(c, 1);
    assert_eq!(doc["reason"], "ErrorPreventedResolution");
    assert_eq!(
        doc["olm_message"],
        "expected 1 OperatorGroup in the namespace, found 0"
    );
    // With one, kube-green installs from its default channel.
    let d = objects(&[("sub.yaml", sub), ("og.yaml", OG)]);
    let (c, doc) = resolve_json(d.path(), &[]);
    assert_eq!(c, 0, "{doc:#}");
    assert_eq!(doc["bundles"][0]["package"], "kube-green");
    // A YAML error names the file and line.
    let d = objects(&[("bad.yaml", "kind: [\n")]);
    let o = olmctl(&["resolve", "-n", "team", "-f", d.path().to_str().unwrap()]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.yaml:"), "{err}");
    for args in [
        &["resolve", "-n", "team"][..],
        &["resolve", "-n", "Team", "-f", "."],
        &[
            "resolve",
            "-n",
            "team",
            "-f",
            ".",
            "--catalog",
            "nonamespace=dir",
        ],
        &["resolve", "-n", "team", "-f", ".", "--subscribe", "x"],
    ] {
        assert_eq!(code(&olmctl(args)), 2, "{args:?}");
    }
}

/// The README's two examples are what the command prints.
#[test]
fn the_readme_shows_what_resolve_prints() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).expect("README");
    let d = objects(&[("team.yaml", &OG.replace("name: og", "name: team"))]);
    let catalogs = fixture_catalog();
    for package in [
        "rabbitmq-messaging-topology-operator",
        "shipwright-operator",
    ] {
        let marker = format!("    --subscribe {package} --from community/olm\n");
        let start = readme.find(&marker).expect("the example") + marker.len();
        let shown = &readme[start..start + readme[start..].find("```").expect("block end")];
        let o = std::process::Command::new(common::olmctl_bin())
            .current_dir(catalogs.parent().expect("catalogs"))
            .args(["resolve", "-n", "team", "-f"])
            .arg(d.path().join("team.yaml"))
            .args(["--catalog", "community/olm=v4.18", "--subscribe", package])
            .args(["--from", "community/olm"])
            .output()
            .expect("run");
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim_end(),
            shown.trim_end(),
            "{package}"
        );
    }
}

/// `olmctl install` resolves first when the catalog's content is at hand: it names the
/// dependency OLM installs too, and refuses, writing nothing, what OLM could not resolve.
#[test]
fn install_resolves_first() {
    let dir = fixture_catalog().display().to_string();
    let install = |package: &str, extra: &[&str]| {
        let mut args = vec![
            "install",
            package,
            "--catalog",
            "quay.io/example/catalog:1",
            "--catalog-dir",
            &dir,
            "--print",
            "-n",
            "team",
        ];
        args.extend_from_slice(extra);
        olmctl(&args)
    };
    let o = install("rabbitmq-messaging-topology-operator", &[]);
    assert_eq!(code(&o), 0);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "note: OLM also installs rabbitmq-cluster-operator.v2.22.3 (rabbitmq-cluster-operator 2.22.3) from rabbitmq-messaging-topology-operator-catalog/olm, a dependency of rabbitmq-messaging-topology-operator.v1.19.3, with Subscription rabbitmq-cluster-operator-stable-rabbitmq-messaging-topology-operator-catalog-olm\n"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("kind: Subscription"));
    let o = install("shipwright-operator", &[]);
    assert_eq!(code(&o), 1);
    assert!(o.stdout.is_empty(), "nothing written");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(&format!("error: OLM could not resolve the install of shipwright-operator in namespace team (resolved against {dir} alone: --print reads no other catalog of the cluster): nothing was written (--no-resolve installs anyway)\nOLM's message: constraints not satisfiable: ")),
        "{err}"
    );
    assert!(err.contains("fix: add a catalog"), "{err}");
    let o = install("shipwright-operator", &["--no-resolve"]);
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("kind: Subscription"));
}

/// A channel head whose requirement nothing provides is passed over by OLM for an older
/// bundle, and said: a catalog with rabbitmq-messaging-topology-operator alone gets 1.14.2,
/// the newest bundle without the rabbitmq-cluster-operator requirement (all 35 fixture
/// catalogs together give the head, with its dependency: the test above).
#[test]
fn a_head_passed_over_for_an_older_bundle_is_said_with_its_requirement() {
    let only = tempfile::tempdir().expect("tmp");
    let pkg = "rabbitmq-messaging-topology-operator";
    std::fs::create_dir_all(only.path().join(pkg)).expect("mkdir");
    std::fs::copy(
        fixture_catalog().join(pkg).join("catalog.yaml"),
        only.path().join(pkg).join("catalog.yaml"),
    )
    .expect("copy");
    let d = objects(&[("og.yaml", OG)]);
    let cat = format!("c/olm={}", only.path().display());
    let o = olmctl(&[
        "resolve",
        "-n",
        "team",
        "-f",
        d.path().to_str().expect("utf-8"),
        "--catalog",
        &cat,
        "--subscribe",
        pkg,
        "--from",
        "c/olm",
        "-o",
        "json",
    ]);
    assert_eq!(code(&o), 0);
    let doc: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        doc["bundles"][0]["csv"],
        "rabbitmq-messaging-topology-operator.v1.14.2"
    );
    assert_eq!(
        doc["notes"],
        json!([
            "Subscription rabbitmq-messaging-topology-operator gets rabbitmq-messaging-topology-operator.v1.14.2, not rabbitmq-messaging-topology-operator.v1.19.3, the head of channel stable: bundle rabbitmq-messaging-topology-operator.v1.19.3 requires an operator with package: rabbitmq-cluster-operator and with version in range: >2.0.0 (OLM installs the highest bundle it can)"
        ])
    );
}
