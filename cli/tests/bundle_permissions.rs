//! `olmctl bundle permissions` and `olmctl bundle installer-rbac` as commands: the rights of
//! real bundles under OLM v1 and v0, the flags on them (text, JSON, SARIF), `--diff` between
//! two versions of a package, `--fail-on`, and the installer RBAC printed as the library
//! derives it.

mod common;

use std::path::Path;

use common::cli::{code, olmctl};
use serde_json::Value;

fn argocd() -> String {
    format!(
        "{}/../tests/data/olmv1-render/bundles/argocd-operator.v0.6.0",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn fixture(dir: &str) -> String {
    olmctl_testdata::fixture_operators()
        .join(dir)
        .display()
        .to_string()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

fn json(args: &[&str]) -> (i32, Value) {
    let mut a = args.to_vec();
    a.extend(["-o", "json"]);
    let o = olmctl(&a);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    (code(&o), v)
}

fn codes(doc: &Value) -> Vec<(String, String, String)> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["code"].as_str().unwrap_or_default().to_string(),
                f["severity"].as_str().unwrap_or_default().to_string(),
                f["path"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// argocd-operator v0.6.0 under OLM v1 in all namespaces: its CSV's clusterPermissions and
/// permissions both become ClusterRoles; the rules that matter are flagged where they are
/// written.
#[test]
fn argocd_under_olm_v1() {
    let b = argocd();
    let (status, doc) = json(&[
        "bundle",
        "permissions",
        &b,
        "--olmv1",
        "--install-namespace",
        "argocd",
    ]);
    assert_eq!(status, 1, "errors fail by default");
    assert_eq!(doc["olm"], "v1");
    assert_eq!(doc["bundle"], "argocd-operator.v0.6.0");
    let c = codes(&doc);
    // `*` on core resources includes impersonating ServiceAccounts and reading secrets.
    assert!(c.contains(&(
        "PERM003".into(),
        "error".into(),
        "spec.install.spec.clusterPermissions[0].rules[0]".into()
    )));
    assert!(c.contains(&(
        "PERM004".into(),
        "warning".into(),
        "spec.install.spec.clusterPermissions[0].rules[0]".into()
    )));
    // `*` on rbac.authorization.k8s.io `*`: escalate and bind, RBAC writes, a wildcard.
    for (code, sev) in [
        ("PERM002", "warning"),
        ("PERM003", "error"),
        ("PERM005", "warning"),
    ] {
        assert!(
            c.contains(&(
                code.into(),
                sev.into(),
                "spec.install.spec.clusterPermissions[0].rules[14]".into()
            )),
            "{code}: {c:?}"
        );
    }
    // The CSV's namespaced permissions are granted cluster-wide (v1's AllNamespaces mode),
    // with the namespaces rule operator-controller adds.
    let rights = doc["rights"].as_array().expect("rights");
    let leases = rights
        .iter()
        .find(|r| r["resource"] == "leases")
        .expect("leases");
    assert_eq!(leases["scope"], "cluster");
    let namespaces = rights
        .iter()
        .find(|r| r["resource"] == "namespaces")
        .expect("namespaces");
    assert_eq!(
        namespaces["verbs"],
        serde_json::json!(["*", "get", "list", "watch"])
    );
    let subjects: std::collections::BTreeSet<String> = rights
        .iter()
        .map(|r| {
            r["subject"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(subjects.into_iter().collect::<Vec<_>>(), ["argocd"]);

    // Text: the rights per subject and binding, the findings, the summary; --fail-on none.
    let o = olmctl(&[
        "bundle",
        "permissions",
        &b,
        "--olmv1",
        "--install-namespace",
        "argocd",
        "--fail-on",
        "none",
    ]);
    assert_eq!(code(&o), 0);
    let text = stdout(&o);
    assert!(text.starts_with("ServiceAccount argocd/argocd-operator-controller-manager\n  cluster-wide, ClusterRole argocd-operator.v0-1dhiybrldl1gyksid1dk2dqjsc72psdybc7iyvse5gpx through ClusterRoleBinding argocd-operator.v0-1dhiybrldl1gyksid1dk2dqjsc72psdybc7iyvse5gpx\n"), "{text}");
    assert!(text.contains(
        "    coordination.k8s.io leases: get, list, watch, create, update, patch, delete\n"
    ));
    assert!(text.contains("error[PERM003]"));
    assert!(
        text.ends_with("failed: 3 errors, 17 warnings, 1 info (argocd-operator.v0.6.0)\n"),
        "{text}"
    );

    // SARIF: the same findings as results.
    let o = olmctl(&[
        "bundle",
        "permissions",
        &b,
        "--olmv1",
        "--install-namespace",
        "argocd",
        "-o",
        "sarif",
    ]);
    let sarif: Value = serde_json::from_slice(&o.stdout).expect("sarif");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    assert_eq!(results.len(), c.len());
    for (r, (code, _, _)) in results.iter().zip(&c) {
        assert_eq!(r["ruleId"], code.as_str());
    }
}

/// Under OLM v0 (AllNamespaces OperatorGroup) `permissions` stay Roles in the install
/// namespace and are lifted to ClusterRoles too; `clusterPermissions` are cluster-wide.
#[test]
fn argocd_under_olm_v0() {
    let (_, doc) = json(&[
        "bundle",
        "permissions",
        &argocd(),
        "--install-namespace",
        "ops",
    ]);
    assert_eq!(doc["olm"], "v0");
    let rights = doc["rights"].as_array().expect("rights");
    let scopes: Vec<(&str, &str)> = rights
        .iter()
        .filter(|r| r["resource"] == "leases")
        .map(|r| {
            (
                r["scope"].as_str().unwrap_or_default(),
                r["namespace"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(scopes, [("cluster", ""), ("namespace", "ops")]);
}

/// kube-green 0.6.0 moved the operator's rules into an aggregated ClusterRole bound by its own
/// ClusterRoleBinding, whose subject names the namespace `operators`: installed elsewhere, the
/// rights go to a ServiceAccount that does not run the operator. 0.7.1 moves them back into
/// the CSV. The diff shows each move; the review flags only what an upgrade adds.
#[test]
fn kube_green_upgrades() {
    let (status, doc) = json(&[
        "bundle",
        "permissions",
        &fixture("kube-green/0.6.0"),
        "--olmv1",
        "--install-namespace",
        "kg",
        "--diff",
        &fixture("kube-green/0.5.2"),
        "--fail-on",
        "warning",
    ]);
    assert_eq!(status, 1);
    let added = doc["added"].as_array().expect("added");
    let removed = doc["removed"].as_array().expect("removed");
    assert!(
        added
            .iter()
            .all(|r| r["subject"]["namespace"] == "operators")
    );
    assert!(removed.iter().all(|r| r["subject"]["namespace"] == "kg"));
    assert!(added.iter().any(|r| r["resource"] == "statefulsets"));
    let c = codes(&doc);
    assert!(c.iter().any(|(code, _, _)| code == "PERM011"), "{c:?}");
    assert!(
        c.iter()
            .any(|(code, _, path)| code == "PERM004" && path == "rules[2]"),
        "{c:?}"
    );

    // Text: one line per right added or removed.
    let o = olmctl(&[
        "bundle",
        "permissions",
        &fixture("kube-green/0.7.1"),
        "--olmv1",
        "--install-namespace",
        "kg",
        "--diff",
        &fixture("kube-green/0.6.0"),
    ]);
    assert_eq!(code(&o), 0, "warnings do not fail by default");
    let text = stdout(&o);
    let plus = text.lines().filter(|l| l.starts_with("+ ")).count();
    let minus = text.lines().filter(|l| l.starts_with("- ")).count();
    assert_eq!((plus, minus), (7, 7), "{text}");
    assert!(text.contains("+ ServiceAccount kg/kube-green-controller-manager cluster-wide: apps statefulsets: get, list, patch, update, watch\n"));
    // The same bundle against itself: nothing added or removed, nothing to review.
    let (status, doc) = json(&[
        "bundle",
        "permissions",
        &fixture("kube-green/0.7.1"),
        "--olmv1",
        "--install-namespace",
        "kg",
        "--diff",
        &fixture("kube-green/0.7.1"),
        "--fail-on",
        "info",
    ]);
    assert_eq!(status, 0);
    assert_eq!(doc["added"], serde_json::json!([]));
    assert_eq!(doc["findings"], serde_json::json!([]));
}

#[test]
fn refusals_and_bad_input() {
    // OLM v1 refuses a bundle with dependencies: its reason, exit 1.
    let o = olmctl(&[
        "bundle",
        "permissions",
        &fixture("ndmspc-operator/0.11.4"),
        "--olmv1",
        "--install-namespace",
        "x",
    ]);
    assert_eq!(code(&o), 1);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("operator-controller would not install this bundle: bundle \"ndmspc-operator.v0.11.4\" has a dependency")
    );
    let o = olmctl(&[
        "bundle",
        "installer-rbac",
        "/nonexistent/bundle",
        "--install-namespace",
        "x",
    ]);
    assert_eq!(code(&o), 2);
}

/// `installer-rbac` prints the library's derivation, named after the ClusterExtension.
#[test]
fn installer_rbac_prints_the_derivation() {
    let o = olmctl(&[
        "bundle",
        "installer-rbac",
        &argocd(),
        "--install-namespace",
        "argocd",
        "--cluster-extension",
        "argocd",
        "-o",
        "json",
    ]);
    assert_eq!(code(&o), 0);
    let printed: Value = serde_json::from_slice(&o.stdout).expect("json");
    let b = olmctl::bundle::load::load_bundle(Path::new(&argocd())).expect("bundle");
    let objects = olmctl::olmv1::render::manifests(
        &b,
        &olmctl::olmv1::render::Options {
            install_namespace: "argocd".into(),
            watch_namespace: None,
            cert_provider: olmctl::olmv1::render::CertProvider::CertManager,
            operator_namespace_annotation: false,
            single_own_namespace: false,
            deployment_config: None,
        },
    )
    .expect("renders");
    let want = olmctl::rbac::installer::installer_rbac(
        &objects,
        &[],
        &olmctl::rbac::installer::Options {
            namespace: "argocd".into(),
            service_account: "argocd-installer".into(),
            extension: "argocd".into(),
        },
    )
    .expect("derived");
    assert_eq!(printed, Value::Array(want));
    let names: Vec<String> = printed
        .as_array()
        .expect("list")
        .iter()
        .map(|o| {
            format!(
                "{} {}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            "ServiceAccount argocd-installer",
            "ClusterRole argocd-installer-clusterrole",
            "ClusterRoleBinding argocd-installer-binding",
            "ClusterRole argocd-installer-rbac-clusterrole",
            "ClusterRoleBinding argocd-installer-rbac-binding",
        ]
    );
    // YAML (the default) with its header; the package names the ClusterExtension by default.
    let o = olmctl(&[
        "bundle",
        "installer-rbac",
        &argocd(),
        "--install-namespace",
        "argocd",
    ]);
    let text = stdout(&o);
    assert!(text.starts_with("# The installer ServiceAccount of ClusterExtension argocd-operator for operator-controller v1.10 and\n"), "{text}");
    assert!(text.contains("  name: argocd-operator-installer\n"));
}

/// `bind`, `escalate` and `impersonate` limited by `resourceNames` are each flagged (PERM003),
/// naming the roles or users: `bind` on the admin ClusterRole is all of admin.
#[test]
fn escalation_verbs_on_named_objects_are_flagged() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("kube-green");
    let src = olmctl_testdata::fixture_operators().join("kube-green/0.7.1");
    for sub in ["manifests", "metadata"] {
        std::fs::create_dir_all(dir.join(sub)).expect("mkdir");
        for e in std::fs::read_dir(src.join(sub)).expect("read") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), dir.join(sub).join(e.file_name())).expect("copy");
        }
    }
    let csv = dir.join("manifests/kube-green.clusterserviceversion.yaml");
    let text = std::fs::read_to_string(&csv).expect("csv");
    let rules = "      clusterPermissions:\n      - rules:\n        - apiGroups: [rbac.authorization.k8s.io]\n          resources: [clusterroles]\n          verbs: [bind]\n          resourceNames: [konflux-admin, konflux-viewer]\n        - apiGroups: [rbac.authorization.k8s.io]\n          resources: [roles]\n          verbs: [escalate, get]\n          resourceNames: [editor]\n        - apiGroups: [\"\"]\n          resources: [serviceaccounts]\n          verbs: [impersonate]\n          resourceNames: [builder]\n        - apiGroups: [rbac.authorization.k8s.io]\n          resources: [clusterroles]\n          verbs: [get]\n          resourceNames: [konflux-admin]\n";
    std::fs::write(
        &csv,
        text.replacen("      clusterPermissions:\n      - rules:\n", rules, 1),
    )
    .expect("write");
    let (_, doc) = json(&["bundle", "permissions", &dir.display().to_string()]);
    let perm003: Vec<(String, String)> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "PERM003")
        .map(|f| {
            (
                f["path"].as_str().unwrap_or_default().to_string(),
                f["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let at = |i: usize| format!("spec.install.spec.clusterPermissions[0].rules[{i}]");
    for (i, what) in [
        (
            0,
            "bind on clusterroles named konflux-admin, konflux-viewer",
        ),
        (1, "escalate on roles named editor"),
        (2, "impersonate on serviceaccounts named builder"),
    ] {
        assert!(
            perm003.iter().any(|(p, m)| *p == at(i) && m.contains(what)),
            "rule {i}: {what}: {perm003:#?}"
        );
    }
    // `get` on a named role is no escalation.
    assert!(!perm003.iter().any(|(p, _)| *p == at(3)), "{perm003:#?}");
}
