//! The upgrade-graph commands through the binary: exit codes, JSON, formats.

mod common;

use std::process::{Command, Output};

fn olmctl(args: &[&str]) -> Output {
    Command::new(crate::common::olmctl_bin())
        .args(args)
        .output()
        .expect("run olmctl")
}

fn fixture() -> String {
    common::fixture_catalog().display().to_string()
}

#[test]
fn path_exit_codes_and_json() {
    let f = fixture();
    // kube-green: a plain replaces chain to the head.
    let o = olmctl(&[
        "catalog",
        "path",
        &f,
        "-p",
        "kube-green",
        "--from",
        "0.3.0",
        "-o",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["stop"], "head");
    assert_eq!(v["hops"].as_array().expect("hops").len(), 9);
    assert_eq!(v["end"], v["head"]);
    // --to stops early.
    let o = olmctl(&[
        "catalog",
        "path",
        &f,
        "-p",
        "kube-green",
        "--from",
        "kube-green.v0.3.0",
        "--to",
        "0.4.0",
        "-o",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(
        (o.status.code(), v["stop"].as_str()),
        (Some(0), Some("target"))
    );
    assert_eq!(v["end"], "kube-green.v0.4.0");
    // A user OLM v0 strands (see lint GRAPH008) exits 1; OLM v1 gets through.
    let args = [
        "catalog",
        "path",
        &f,
        "-p",
        "kubernaut-operator",
        "--from",
        "kubernaut-operator.v1.3.2",
    ];
    assert_eq!(olmctl(&args).status.code(), Some(1));
    let mut v1 = args.to_vec();
    v1.extend(["--semantics", "v1"]);
    assert_eq!(olmctl(&v1).status.code(), Some(0));
    // Usage errors exit 2.
    assert_eq!(
        olmctl(&["catalog", "path", &f, "-p", "nope", "--from", "1.0.0"])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(
        olmctl(&[
            "catalog",
            "path",
            &f,
            "-p",
            "kube-green",
            "-c",
            "nope",
            "--from",
            "1.0.0"
        ])
        .status
        .code(),
        Some(2)
    );
}

#[test]
fn graph_formats() {
    let f = fixture();
    for format in ["text", "json", "dot", "mermaid"] {
        let o = olmctl(&[
            "catalog",
            "graph",
            &f,
            "-p",
            "kube-green",
            "--format",
            format,
        ]);
        assert_eq!(o.status.code(), Some(0), "{format}");
        let s = String::from_utf8(o.stdout).expect("utf-8");
        assert!(s.contains("kube-green.v0.7.1"), "{format}: {s}");
        match format {
            "json" => {
                let v: serde_json::Value = serde_json::from_str(&s).expect("json");
                assert_eq!(v["packages"][0]["channels"][0]["head"], "kube-green.v0.7.1");
                assert_eq!(
                    v["packages"][0]["channels"][0]["edges"]
                        .as_array()
                        .expect("edges")
                        .len(),
                    9
                );
            }
            "dot" => assert!(s.starts_with("digraph upgrades {") && s.trim_end().ends_with('}')),
            "mermaid" => assert!(s.starts_with("graph LR\n")),
            _ => assert!(s.contains("[head]")),
        }
    }
    // The whole catalog's mermaid exceeds mermaid's default text limit and is split.
    let o = olmctl(&["catalog", "graph", &f, "--format", "mermaid"]);
    let s = String::from_utf8(o.stdout).expect("utf-8");
    let blocks = s.matches("```mermaid\n").count();
    assert!(blocks >= 35, "{blocks}");
    assert_eq!(
        olmctl(&["catalog", "graph", &f, "-p", "nope"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn lint_exit_codes() {
    let o = olmctl(&["catalog", "lint", &fixture(), "-o", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert!(v["findings"].as_array().expect("findings").iter().all(|f| {
        let c = f["code"].as_str().expect("code");
        c.starts_with("GRAPH") || c.starts_with("DEP")
    }));
    // The dependency findings of OLM's resolver: shipwright-operator needs Tekton, which the
    // catalog does not have.
    assert!(
        v["findings"].as_array().expect("findings").iter().any(|f| f["code"] == "DEP001"
            && f["message"].as_str().is_some_and(|m| m.starts_with("bundle shipwright-operator.v0.13.0 requires an operator providing an API with group: operator.tekton.dev"))),
        "{v:#}"
    );
    let repo = concat!(env!("CARGO_MANIFEST_DIR"), "/../catalog");
    assert_eq!(olmctl(&["catalog", "lint", repo]).status.code(), Some(0));
    assert_eq!(
        olmctl(&["catalog", "check-upgrades", "--base", repo, repo])
            .status
            .code(),
        Some(0)
    );
}
