//! `olmctl install --print` (issue 17): the manifests validate against OLM's CRD schemas
//! (`shared/fixtures/olm/crds`, checked by tests/support/validate_olm.py with jsonschema) and the
//! operator's own CRD, in every shape the flags give; bad flags are exit 2 naming the flag.

mod common;

use std::process::Command;

use common::cli::{code, olmctl};

fn repo(rel: &str) -> String {
    common::root().join(rel).display().to_string()
}

fn validate(yaml: &[u8]) -> String {
    let d = tempfile::tempdir().expect("tmp");
    let f = d.path().join("install.yaml");
    std::fs::write(&f, yaml).expect("write");
    let o = Command::new("python3")
        .args([
            &repo("tests/support/validate_olm.py"),
            &repo("../shared/fixtures/olm/crds"),
            &repo("operator/config/crd.yaml"),
            &f.display().to_string(),
        ])
        .output()
        .expect("python3 (with PyYAML and jsonschema, installed by scripts/test.sh)");
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    text
}

#[test]
fn printed_manifests_validate_against_olms_crds() {
    let gate = repo("operator/config/samples/upgradepolicy.yaml");
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "--catalog",
                "ghcr.io/olmctl/olmctl-catalog:v0.3.0",
                "--channel",
                "stable-v0",
                "--version",
                "0.2.0",
                "--create-namespace",
                "--gate",
                &gate,
            ],
            "skip Namespace operators\nvalid CatalogSource olmctl-operator-catalog\nvalid OperatorGroup operators\nvalid UpgradePolicy default\nvalid Subscription olmctl-operator\n4 objects valid\n",
        ),
        (
            &[
                "--catalog-source",
                "operatorhubio-catalog",
                "--namespace",
                "team-a",
                "--target-namespace",
                "team-a",
                "--approval",
                "Manual",
            ],
            "valid OperatorGroup team-a\nvalid Subscription olmctl-operator\n2 objects valid\n",
        ),
        (
            &[
                "--catalog-source",
                "community-operators",
                "--catalog-namespace",
                "openshift-marketplace",
                "--no-operator-group",
                "--starting-csv",
                "olmctl-operator.v0.3.0",
            ],
            "valid Subscription olmctl-operator\n1 objects valid\n",
        ),
    ];
    for (flags, expected) in cases {
        let mut args = vec!["install", "olmctl-operator", "--print"];
        args.extend_from_slice(flags);
        let o = olmctl(&args);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(validate(&o.stdout), expected, "{flags:?}");
        // Same flags, same bytes.
        assert_eq!(olmctl(&args).stdout, o.stdout);
    }
    let o = olmctl(&[
        "install",
        "olmctl-operator",
        "--catalog-source",
        "c",
        "--version",
        "0.2.0",
        "--print",
    ]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("startingCSV: olmctl-operator.v0.2.0\n"),
        "{text}"
    );
    // A pinned version makes approval Manual: olmctl install approves only the pinned CSV's
    // plan, so OLM cannot roll on past it (issue 27 F).
    assert!(text.contains("installPlanApproval: Manual\n"), "{text}");
}

#[test]
fn bad_flags_are_exit_2_naming_the_flag() {
    for (flags, needle) in [
        (
            &["--catalog-source", "c", "--namespace", "Bad_NS"][..],
            "--namespace",
        ),
        (
            &["--catalog-source", "c", "--version", "one"][..],
            "--version",
        ),
        (&["--catalog", "no spaces allowed"][..], "--catalog"),
        (
            &["--catalog-source", "c", "--gate", "/nonexistent.yaml"][..],
            "/nonexistent.yaml",
        ),
        (
            &["--catalog-source", "c", "--approval", "manual"][..],
            "manual",
        ),
        (&[][..], "--catalog"),
    ] {
        let mut args = vec!["install", "olmctl-operator", "--print"];
        args.extend_from_slice(flags);
        let o = olmctl(&args);
        assert_eq!(code(&o), 2, "{flags:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{flags:?}: {err}");
    }
    // Without --print it applies to a cluster: with no kubeconfig and not in a pod, it says
    // where the configuration comes from, exit 2, before anything is written.
    let o = std::process::Command::new(common::olmctl_bin())
        .args(["install", "olmctl-operator", "--catalog-source", "c"])
        .env_clear()
        .env("HOME", "/nonexistent")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .output()
        .expect("run olmctl");
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no cluster configuration") && err.contains("pass --kubeconfig"),
        "{err}"
    );
}
