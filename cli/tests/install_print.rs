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
    let catalog = repo("catalog");
    let cases: [(&[&str], &str); 3] = [
        (
            &[
                "--catalog",
                "ghcr.io/olmctl/olmctl-catalog:v0.3.0",
                "--channel",
                "stable-v0",
                "--version",
                "0.2.0",
                // Looked up in the repository's catalog (the image is not pulled).
                "--catalog-dir",
                &catalog,
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
    // No catalog was read: the name is a guess, and both stderr and the output say so.
    assert!(
        text.starts_with("# startingCSV olmctl-operator.v0.2.0 is a guess"),
        "{text}"
    );
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .starts_with("warning: startingCSV olmctl-operator.v0.2.0 is a guess"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
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

fn crunchy_catalog() -> String {
    repo("../shared/fixtures/first-day/catalogs/v4.21/crunchy-postgres-operator")
}

/// Issue 40 item 4: crunchy-postgres-operator's CSVs are named `postgresoperator.v<version>`;
/// `--version 5.8.8` with the catalog at hand writes that name, not a guess; a version not in
/// the package, or not in the channel, is exit 2 saying what there is.
#[test]
fn version_is_looked_up_in_the_catalog() {
    let catalog = crunchy_catalog();
    let install = |extra: &[&str]| {
        let mut args = vec![
            "install",
            "crunchy-postgres-operator",
            "--catalog-source",
            "certified-operators",
            "--catalog-namespace",
            "openshift-marketplace",
            "--catalog-dir",
            &catalog,
            "--print",
        ];
        args.extend_from_slice(extra);
        olmctl(&args)
    };
    let o = install(&["--version", "5.8.8"]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert_eq!(code(&o), 0, "{err}");
    assert!(
        out.contains("  startingCSV: postgresoperator.v5.8.8\n"),
        "{out}"
    );
    assert!(!out.contains("guess") && err.is_empty(), "{out}{err}");
    assert_eq!(
        validate(&o.stdout),
        "valid OperatorGroup operators\nvalid Subscription crunchy-postgres-operator\n2 objects valid\n"
    );

    let o = install(&["--version", "5.8.99"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("--version 5.8.99:")
            && err.contains("package crunchy-postgres-operator has no bundle of version 5.8.99")
            && err.contains("5.8.7, 5.8.8)"),
        "{err}"
    );
    let o = install(&["--version", "5.8.8", "--channel", "v4"]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("package crunchy-postgres-operator has no channel v4 (channels: v5)"),
        "{err}"
    );
}
