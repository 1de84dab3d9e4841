//! `olmctl bundle render --olmv1`: the library's rendering printed (YAML and JSON), refusals
//! with operator-controller's reason and exit 1, unreadable input exit 2.

mod common;

use common::cli::olmctl;
use olmctl::olmv1::render::{CertProvider, Options, manifests, to_yaml};
use serde_json::Value;

fn bundle(name: &str) -> String {
    format!(
        "{}/../tests/data/olmv1-render/bundles/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn library(name: &str, provider: CertProvider) -> Vec<Value> {
    let b = olmctl::bundle::load::load_bundle(std::path::Path::new(&bundle(name))).expect("bundle");
    manifests(
        &b,
        &Options {
            install_namespace: "ns1".into(),
            watch_namespace: None,
            cert_provider: provider,
            operator_namespace_annotation: true,
            single_own_namespace: false,
            deployment_config: None,
        },
    )
    .expect("renders")
}

/// `olmctl bundle render BUNDLE --olmv1 --install-namespace ns1 EXTRA...`.
fn render(bundle: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "bundle",
        "render",
        bundle,
        "--olmv1",
        "--install-namespace",
        "ns1",
    ];
    args.extend(extra);
    olmctl(&args)
}

#[test]
fn the_command_prints_the_rendering() {
    let b = bundle("webhook-operator.v0.0.5");
    let o = render(&b, &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want = library("webhook-operator.v0.0.5", CertProvider::CertManager);
    assert_eq!(String::from_utf8_lossy(&o.stdout), to_yaml(&want));
    let o = render(
        &b,
        &["--cert-provider", "openshift-service-ca", "-o", "json"],
    );
    let got: Vec<Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(
        got,
        library("webhook-operator.v0.0.5", CertProvider::OpenshiftServiceCa)
    );
    // v1.10 did not set olm.operatorNamespace.
    let o = render(&b, &["-o", "json", "--operator-controller", "1.10"]);
    let got: Vec<Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    let d = got
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("deployment");
    let a = &d["spec"]["template"]["metadata"]["annotations"];
    assert!(a.get("olm.operatorNamespace").is_none());
    assert_eq!(a["olm.targetNamespaces"], "");
}

#[test]
fn refusals_and_bad_input() {
    let b = bundle("webhook-operator.v0.0.5");
    let o = render(&b, &["--cert-provider", "none"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: {b}: operator-controller would not install this bundle: unsupported bundle: \
             webhookDefinitions are not supported: certificate provider is nil\n"
        )
    );
    let o = olmctl(&[
        "bundle",
        "render",
        "/nonexistent",
        "--olmv1",
        "--install-namespace",
        "x",
    ]);
    assert_eq!(o.status.code(), Some(2));
    // OLM v1's objects are bundle render's only mode: --olmv1 may be left out, same output.
    let without = olmctl(&["bundle", "render", &b, "--install-namespace", "x"]);
    let with = olmctl(&[
        "bundle",
        "render",
        &b,
        "--olmv1",
        "--install-namespace",
        "x",
    ]);
    assert_eq!(
        without.status.code(),
        with.status.code(),
        "--olmv1 is optional"
    );
    assert_eq!(without.stdout, with.stdout);
    assert_eq!(without.stderr, with.stderr);
}

/// `--deployment-config FILE` (YAML here) reaches every Deployment as the library applies it;
/// one that operator-controller's configuration schema refuses is refused with its message,
/// exit 1; a file that is not an object is refused with its position, exit 2.
#[test]
fn the_deployment_config_is_applied() {
    let b = bundle("argocd-operator.v0.6.0");
    let dir = tempfile::tempdir().expect("tmp");
    let f = dir.path().join("dc.yaml");
    std::fs::write(
        &f,
        "nodeSelector:\n  kubernetes.io/os: linux\nenv:\n- name: LOG_LEVEL\n  value: debug\n",
    )
    .expect("write");
    let o = render(
        &b,
        &[
            "-o",
            "json",
            "--deployment-config",
            f.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let got: Vec<Value> = serde_json::from_slice(&o.stdout).expect("JSON");
    let d = got
        .iter()
        .find(|o| o["kind"] == "Deployment")
        .expect("deployment");
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(
        pod["nodeSelector"],
        serde_json::json!({"kubernetes.io/os": "linux"})
    );
    let env = pod["containers"][0]["env"].as_array().expect("env");
    assert_eq!(
        env.last(),
        Some(&serde_json::json!({"name": "LOG_LEVEL", "value": "debug"}))
    );
    // What operator-controller's configuration schema refuses, refused with its message.
    std::fs::write(&f, "selector:\n  matchLabels:\n    app: x\n").expect("write");
    let o = render(&b, &["--deployment-config", f.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).ends_with(": operator-controller would not install this bundle: invalid ClusterExtension configuration: invalid configuration: unknown field \"selector\"\n"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(&f, "- 1\n").expect("write");
    let o = render(&b, &["--deployment-config", f.to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("dc.yaml:1:1: a deploymentConfig is an object"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A CSV that operator-controller's bundle source cannot read into its Go types (a webhook's
/// `containerPort: 1.5`, `rules: x`) is refused with the converter's message naming the CSV's
/// file, exit 1, nothing printed; a port Go reads (2^32, truncated to 0) renders as upstream
/// renders it.
#[test]
fn a_csv_upstream_cannot_read_is_refused() {
    let dir = tempfile::tempdir().expect("tmp");
    let b = dir.path().join("b");
    olmctl_testdata::copy_tree(std::path::Path::new(&bundle("webhook-operator.v0.0.5")), &b);
    let csv = b.join("manifests/webhook-operator.clusterserviceversion.yaml");
    let text = std::fs::read_to_string(&csv).expect("csv");
    let b = b.to_str().expect("utf-8").to_string();
    let refusal = |e: &str| {
        format!(
            "error: {b}: operator-controller would not install this bundle: error parsing \
             objects in \"manifests/webhook-operator.clusterserviceversion.yaml\": {e}\n"
        )
    };
    for (edit, e) in [
        (
            text.replace("containerPort: 443", "containerPort: 1.5"),
            "cannot convert float64 to int32",
        ),
        (
            text.replacen("      rules:\n", "      rules: x\n      was:\n", 1),
            "cannot restore slice from string",
        ),
    ] {
        std::fs::write(&csv, edit).expect("write");
        let o = render(&b, &[]);
        assert_eq!(o.status.code(), Some(1));
        assert!(o.stdout.is_empty());
        assert_eq!(String::from_utf8_lossy(&o.stderr), refusal(e));
    }
    std::fs::write(
        &csv,
        text.replace("containerPort: 443", "containerPort: 4294967296"),
    )
    .expect("write");
    // Read as upstream reads it (truncated: port 0), then refused as the API server would
    // refuse the webhook configuration, pointing at the CSV's field.
    let o = render(&b, &["-o", "json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive (the CSV's webhookdefinitions[")
            && err.contains("].containerPort: OLM v1 reads it as the bundle has it"),
        "{err}"
    );
}
