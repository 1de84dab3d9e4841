//! `bundle validate`, suite `operatorhub` (HUB codes): provider, maintainers, links, icon,
//! capabilities and categories as OperatorHub needs them.

mod common;

use std::collections::BTreeMap;

use common::demo_bundle::{codes, run, same};
use olmctl::checks::bundle::hub::{CODES, check_email, check_url};
use olmctl::diag::{Finding, Severity};
use olmctl::encoding::decode_forgiving;

const ICON: &str = "  - {base64data: iVBORw0KGgo=, mediatype: image/png}\n";

fn no_icon(s: &str) -> String {
    s.replace("  icon:\n", "").replace(ICON, "")
}

fn icon(s: &str, element: &str) -> String {
    s.replace(ICON, &format!("  - {element}\n"))
}

fn hub<'a>(f: &'a [Finding], code: &str) -> Vec<&'a Finding> {
    f.iter().filter(|x| x.code == code).collect()
}

/// Every code: (code, CSV edit, expected JSON path, expected line).
#[test]
fn each_code_fires_on_its_defect() {
    type Edit = fn(&str) -> String;
    let cases: Vec<(&str, Edit, &str, u32)> = vec![
        (
            "HUB001",
            |s| s.replace("{name: Demo Inc, url", "{url"),
            "spec.provider.name",
            41,
        ),
        (
            "HUB001",
            |s| s.replace("{name: Demo Inc,", "{name: ' ',"),
            "spec.provider.name",
            41,
        ),
        (
            "HUB002",
            |s| {
                s.replace(
                    "{name: Demo Team, email: team@demo.io}",
                    "{name: Demo Team}",
                )
            },
            "spec.maintainers[0]",
            43,
        ),
        (
            "HUB003",
            |s| s.replace("team@demo.io", "team at demo.io"),
            "spec.maintainers[0].email",
            43,
        ),
        (
            "HUB004",
            |s| {
                s.replace(
                    "{name: Docs, url: 'https://demo.io/docs'}",
                    "{url: 'https://demo.io/docs'}",
                )
            },
            "spec.links[0]",
            45,
        ),
        (
            "HUB005",
            |s| s.replace("'https://demo.io/docs'", "demo.io/docs"),
            "spec.links[0].url",
            45,
        ),
        (
            "HUB006",
            |s| s.replace(ICON, &format!("{ICON}{ICON}")),
            "spec.icon",
            47,
        ),
        (
            "HUB007",
            |s| icon(s, "{mediatype: image/png}"),
            "spec.icon[0]",
            47,
        ),
        (
            "HUB008",
            |s| icon(s, "{base64data: iVBORw0KGgo=, mediatype: image/bmp}"),
            "spec.icon[0].mediatype",
            47,
        ),
        (
            "HUB009",
            |s| {
                icon(
                    s,
                    "{base64data: 'data:image/png;base64,iVBORw0KGgo=', mediatype: image/png}",
                )
            },
            "spec.icon[0].base64data",
            47,
        ),
        ("HUB010", no_icon, "spec.icon", 1),
        (
            "HUB011",
            |s| s.replace("capabilities: Basic Install", "capabilities: Basic"),
            "metadata.annotations[\"capabilities\"]",
            8,
        ),
        (
            "HUB012",
            |s| s.replace("'Database, Storage'", "'Database, Widgets'"),
            "metadata.annotations[\"categories\"]",
            9,
        ),
        (
            "HUB013",
            |s| {
                icon(
                    s,
                    "{base64data: R0lGODlhAQABAAAAACw=, mediatype: image/png}",
                )
            },
            "spec.icon[0].base64data",
            47,
        ),
    ];
    let mut covered = std::collections::BTreeSet::new();
    for (code, edit, path, line) in &cases {
        let f = run(edit, &[]);
        common::demo_bundle::assert_selections(code, &f, &|o| {
            common::demo_bundle::run_with(edit, &[], o)
        });
        let hits = hub(&f, code);
        assert_eq!(hits.len(), 1, "{code}: got {:?}", codes(&f));
        let hit = hits[0];
        common::demo_bundle::assert_at(hit, code, path, *line);
        let hub_codes: Vec<&str> = f
            .iter()
            .filter(|x| x.code.starts_with("HUB"))
            .map(|x| x.code)
            .collect();
        assert_eq!(hub_codes, [*code], "{code}: only its own code fires");
        covered.insert(*code);
    }
    let all: std::collections::BTreeSet<&str> = CODES.iter().map(|c| c.code).collect();
    assert_eq!(covered, all, "every HUB code has a failing case");
}

#[test]
fn the_demo_bundle_has_no_hub_findings() {
    let f = run(same, &[]);
    assert!(f.iter().all(|x| !x.code.starts_with("HUB")), "{f:#?}");
}

#[test]
fn messages_and_severities() {
    let f = run(|s| s.replace("team@demo.io", "team at demo.io"), &[]);
    let h = hub(&f, "HUB003")[0];
    assert!(
        h.message
            .starts_with("maintainer 0 email \"team at demo.io\" is invalid"),
        "{h:#?}"
    );
    assert_eq!(h.severity, Severity::Error);
    let f = run(no_icon, &[]);
    assert_eq!(hub(&f, "HUB010")[0].severity, Severity::Warning);
    // An explicitly empty icon list is no icon (upstream indexes element 0 and panics).
    let f = run(
        |s| s.replace("  icon:\n", "  icon: []\n").replace(ICON, ""),
        &[],
    );
    assert_eq!(
        codes(&hub(&f, "HUB010").into_iter().cloned().collect::<Vec<_>>()),
        ["HUB010"]
    );
    // One finding per bad category, each named (findings are sorted by message).
    let f = run(
        |s| s.replace("'Database, Storage'", "'Widgets,Database ,  Gadgets'"),
        &[],
    );
    let msgs: Vec<&str> = hub(&f, "HUB012")
        .iter()
        .map(|x| x.message.as_str())
        .collect();
    assert_eq!(
        msgs,
        [
            "category \"Gadgets\" is not in the set of standard categories",
            "category \"Widgets\" is not in the set of standard categories"
        ]
    );
    // Both fields missing in one maintainer: one finding naming both.
    let f = run(
        |s| s.replace("{name: Demo Team, email: team@demo.io}", "{}"),
        &[],
    );
    let h = hub(&f, "HUB002");
    assert_eq!(h.len(), 1);
    assert!(h[0].message.contains("no name and email"), "{:#?}", h[0]);
    // Mediatype mismatch names the real format.
    let f = run(
        |s| icon(s, "{base64data: /9j/4AAQ, mediatype: image/png}"),
        &[],
    );
    let h = hub(&f, "HUB013")[0];
    assert_eq!(h.severity, Severity::Warning);
    assert_eq!(
        h.message,
        "icon 0 is declared image/png but its data is image/jpeg"
    );
    assert_eq!(h.help.as_deref(), Some("set mediatype to image/jpeg"));
}

#[test]
fn absent_annotations_and_block_scalars_are_fine() {
    let f = run(
        |s| {
            s.replace("    capabilities: Basic Install\n", "").replace(
                "    categories: 'Database, Storage'\n",
                "    categories: |\n      Database,Storage\n",
            )
        },
        &[],
    );
    assert!(f.iter().all(|x| !x.code.starts_with("HUB")), "{f:#?}");
}

#[test]
fn bad_input_does_not_panic() {
    for edit in [
        |s: &str| s.replace("  icon:\n", "  icon: 3\n").replace(ICON, ""),
        |s: &str| {
            s.replace(
                "  icon:\n",
                "  icon: {base64data: iVBORw0KGgo=, mediatype: image/png}\n",
            )
            .replace(ICON, "")
        },
        |s: &str| icon(s, "7"),
        |s: &str| icon(s, "{base64data: [1], mediatype: {a: 1}}"),
        |s: &str| s.replace("{name: Demo Team, email: team@demo.io}", "[1, 2]"),
        |s: &str| {
            s.replace(
                "provider: {name: Demo Inc, url: 'https://demo.io'}",
                "provider: x",
            )
        },
        |s: &str| s.replace("capabilities: Basic Install", "capabilities: [1]"),
        |s: &str| s.replace("  links:\n", "  links: 5\n  oldlinks:\n"),
    ] {
        let _ = run(edit, &[]);
    }
}

#[test]
fn email_syntax() {
    for ok in [
        "team@demo.io",
        "bianchidavide12+kubegreen@gmail.com",
        "Joel.A.Kenny@gmail.com",
        "Demo Team <team@demo.io>",
        "root@localhost",
        "\"a b\"@demo.io",
        "x@[127.0.0.1]",
    ] {
        assert!(check_email(ok).is_ok(), "{ok}");
    }
    for bad in [
        "team",
        "team@",
        "@demo.io",
        "a b@demo.io",
        "a@demo..io",
        "a@demo.io>",
        "a@de mo.io",
        "a,b@demo.io",
    ] {
        assert!(check_email(bad).is_err(), "{bad}");
    }
}

#[test]
fn url_syntax() {
    for ok in [
        "https://demo.io",
        "https://demo.io/docs?a=1#x",
        "http://user@demo.io:8080/",
        "http://[::1]:80/x",
        "git+ssh://github.com/a/b",
    ] {
        assert!(check_url(ok).is_ok(), "{ok}");
    }
    for bad in [
        "demo.io/docs",
        "/docs",
        "https:/demo.io",
        "https://",
        "https:///x",
        "1http://demo.io",
        "https://demo.io/a b",
        "https://demo.io:port/",
        "mailto:team@demo.io",
    ] {
        assert!(check_url(bad).is_err(), "{bad}");
    }
}

#[test]
fn base64_syntax() {
    for ok in [
        "iVBORw0KGgo=",
        "iVBORw0KGgo",
        "iVBO\n Rw0K\tGgo=",
        "QQ==",
        "QUI=",
        "",
    ] {
        assert!(decode_forgiving(ok).is_ok(), "{ok:?}");
    }
    for bad in [
        "iVBORw0KGgo===",
        "Q",
        "QQ=A",
        "QQ-_",
        "data:image/png;base64,QQ==",
        "Q===",
        "QUI==",
    ] {
        assert!(decode_forgiving(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        decode_forgiving("iVBORw0KGgo=").ok().as_deref(),
        Some(&b"\x89PNG\r\n\x1a\n"[..])
    );
    assert_eq!(decode_forgiving("QUI").ok().as_deref(), Some(&b"AB"[..]));
    assert_eq!(decode_forgiving("TWFu").ok().as_deref(), Some(&b"Man"[..]));
    assert!(decode_forgiving("@@").is_err());
}

/// The community bundles: (code, severity) → count of HUB findings.
#[test]
fn fixture_bundles() {
    let mut m: BTreeMap<(&str, Severity), usize> = BTreeMap::new();
    for (_, d) in common::fixture_bundle_dirs() {
        let b = olmctl::bundle::load::load_bundle(&d).expect("loads");
        for f in olmctl::checks::bundle::validate(&b) {
            if f.code.starts_with("HUB") {
                *m.entry((f.code, f.severity)).or_default() += 1;
            }
        }
    }
    // No error: the community pipeline runs the operatorhub validators, and every provider,
    // maintainer, link, icon, capability level and category passes ours too.
    // HUB013 (warning): percona-xtradb-cluster-operator 1.9.0-1.14.0 declare their icon
    // image/png but its data is a JPEG (`/9j/...`); browsers sniff it, so it only warns.
    assert_eq!(
        m.into_iter().collect::<Vec<_>>(),
        [(("HUB013", Severity::Warning), 6)]
    );
}

/// `--categories-file` (or `OPERATOR_BUNDLE_CATEGORIES`): the file's list replaces the standard
/// categories, as operator-framework/api's category check reads it.
#[test]
fn custom_categories_replace_the_standard_set() {
    let dir = common::write_tree(&[
        (
            "categories.json",
            r#"{"categories": ["Cloud Pak", "Database"]}"#,
        ),
        ("bad.json", r#"{"categories": "Cloud Pak"}"#),
    ]);
    let file = dir.path().join("categories.json");
    let custom = olmctl::checks::bundle::hub::CustomCategories::read(&file).expect("reads");
    assert_eq!(custom.names, ["Cloud Pak", "Database"]);
    let opts = olmctl::checks::bundle::Options {
        categories: Some(custom),
        ..Default::default()
    };
    let f = common::demo_bundle::run_with(same, &[], &opts);
    let hits = hub(&f, "HUB012");
    assert_eq!(hits.len(), 1, "{f:#?}");
    assert_eq!(
        hits[0].message,
        format!(
            "category \"Storage\" is not in the set of custom categories of {}",
            file.display()
        )
    );
    let f = common::demo_bundle::run_with(
        |s| s.replace("'Database, Storage'", "'Cloud Pak, Database'"),
        &[],
        &opts,
    );
    assert!(hub(&f, "HUB012").is_empty(), "{f:#?}");

    // The CLI: the flag, the environment variable, an empty variable, a bad file.
    let bundle = common::write_tree(&[
        (
            "manifests/demo.clusterserviceversion.yaml",
            &common::demo_bundle::CSV.replace("'Database, Storage'", "'Cloud Pak'"),
        ),
        ("manifests/widgets.crd.yaml", common::demo_bundle::CRD),
        (
            "metadata/annotations.yaml",
            common::demo_bundle::ANNOTATIONS,
        ),
    ]);
    let run = |args: &[&str], env: Option<&str>| {
        let mut c = std::process::Command::new(common::olmctl_bin());
        c.args(["bundle", "validate"]).arg(bundle.path()).args(args);
        c.env_remove("OPERATOR_BUNDLE_CATEGORIES");
        if let Some(v) = env {
            c.env("OPERATOR_BUNDLE_CATEGORIES", v);
        }
        let o = c.output().expect("runs");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr),
        )
    };
    let path = file.to_str().unwrap();
    assert_eq!(run(&["--categories-file", path], None).0, Some(0));
    assert_eq!(run(&[], Some(path)).0, Some(0));
    let (code, out) = run(&[], Some(""));
    assert_eq!(code, Some(1), "standard set: Cloud Pak is not in it: {out}");
    assert!(out.contains("HUB012"), "{out}");
    let bad = dir.path().join("bad.json");
    let (code, out) = run(&["--categories-file", bad.to_str().unwrap()], None);
    assert_eq!(code, Some(2));
    assert!(out.contains("bad.json: expected {\"categories\""), "{out}");
    let (code, out) = run(&[], Some("/nonexistent/categories.json"));
    assert_eq!(code, Some(2));
    assert!(out.contains("/nonexistent/categories.json"), "{out}");
}
