//! `olmctl catalog diff` over pairs built from the v4.18 fixture: the old side is the fixture,
//! the new side the fixture with one change made to its blobs here. Each test asserts the
//! exact changes reported (JSON), and the exit status: 0 identical, 1 different, 2 error.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use common::{fixture_blobs as blobs, write_blobs as write};

fn diff(old: &Path, new: &Path, output: &str) -> (Option<i32>, String, String) {
    let o = Command::new(common::olmctl_bin())
        .args(["catalog", "diff"])
        .arg(old)
        .arg(new)
        .args(["-o", output])
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The fixture with `change` applied, diffed against the fixture: (exit code, JSON report).
fn changed(change: impl FnOnce(&mut Vec<Value>)) -> (Option<i32>, Value) {
    let mut docs = blobs();
    change(&mut docs);
    let new = write(&docs);
    let (code, out, err) = diff(&common::fixture_catalog(), new.path(), "json");
    (
        code,
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}")),
    )
}

const J: &str = "jumpstarter-operator";

fn jname(v: &str) -> String {
    format!("{J}.v{v}")
}

/// Jumpstarter 0.9.1: a copy of 0.9.0 with its own image (the channel entry is each test's).
fn add_091(docs: &mut Vec<Value>) {
    common::copy_bundle(
        docs,
        &jname("0.9.0"),
        &jname("0.9.1"),
        "0.9.1",
        Some("quay.io/example/jumpstarter-operator:0.9.1"),
    );
}

fn channel<'a>(docs: &'a mut [Value], pkg: &str, name: &str) -> &'a mut Value {
    docs.iter_mut()
        .find(|d| d["schema"] == "olm.channel" && d["package"] == pkg && d["name"] == name)
        .unwrap()
}

/// An empty package diff of `name` with `fields` set.
fn package(name: &str, fields: Value) -> Value {
    let mut p = json!({
        "name": name,
        "status": "changed",
        "bundles_added": [],
        "bundles_removed": [],
        "bundles_changed": [],
        "channels_added": [],
        "channels_removed": [],
        "channels": [],
        "deprecations_added": [],
        "deprecations_removed": [],
        "upgradeCheck": [],
    });
    for (k, v) in fields.as_object().unwrap() {
        p[k] = v.clone();
    }
    p
}

fn channel_diff(name: &str, fields: Value) -> Value {
    let mut c = json!({
        "name": name,
        "entries_added": [],
        "entries_removed": [],
        "edges_added": [],
        "edges_removed": [],
    });
    for (k, v) in fields.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

#[test]
fn identical_catalogs_exit_zero() {
    let f = common::fixture_catalog();
    for output in ["text", "json", "markdown"] {
        let (code, out, err) = diff(&f, &f, output);
        assert_eq!(code, Some(0), "{err}");
        match output {
            "text" => assert_eq!(out, "the catalogs are the same\n"),
            "markdown" => assert_eq!(out, "### Catalog diff\n\nThe catalogs are the same.\n"),
            _ => {
                let v: Value = serde_json::from_str(&out).unwrap();
                assert_eq!(v["identical"], true);
                assert_eq!(v["packages"], json!([]));
            }
        }
    }
    // The same catalog re-encoded (YAML to JSON, one stream per package) is the same catalog.
    let copy = write(&blobs());
    assert_eq!(diff(&f, copy.path(), "text").0, Some(0));
}

/// A new version at the head: the bundle, the entry, its replaces and the skipRange edge to
/// the one entry the range covers, and the head move.
#[test]
fn bundle_added() {
    let (code, v) = changed(|docs| {
        add_091(docs);
        channel(docs, J, "alpha")["entries"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": jname("0.9.1"), "replaces": jname("0.9.0"), "skipRange": ">=0.9.0 <0.9.1"}));
    });
    assert_eq!(code, Some(1));
    assert_eq!(
        v["packages"],
        json!([package(
            J,
            json!({
                "bundles_added": [{"name": jname("0.9.1"), "version": "0.9.1"}],
                "channels": [channel_diff("alpha", json!({
                    "head": {"old": jname("0.9.0"), "new": jname("0.9.1")},
                    "entries_added": [jname("0.9.1")],
                    "edges_added": [
                        {"from": jname("0.9.0"), "to": jname("0.9.1"), "kind": "replaces"},
                        {"from": jname("0.9.0"), "to": jname("0.9.1"), "kind": "skipRange", "range": ">=0.9.0 <0.9.1"},
                    ],
                }))],
            })
        )])
    );
    assert_eq!(v["upgradeCheck"]["passed"], true);
}

/// A skipRange dropped: one edge per entry it covered (0.8.0 and 0.8.1-rc.1, a prerelease
/// the blang range includes), nothing else.
#[test]
fn edge_removed() {
    let (code, v) = changed(|docs| {
        let c = channel(docs, J, "alpha");
        for e in c["entries"].as_array_mut().unwrap() {
            if e["name"] == jname("0.8.1") {
                e.as_object_mut().unwrap().remove("skipRange");
            }
        }
    });
    assert_eq!(code, Some(1));
    assert_eq!(
        v["packages"],
        json!([package(
            J,
            json!({
                "channels": [channel_diff("alpha", json!({
                    "edges_removed": [
                        {"from": jname("0.8.0"), "to": jname("0.8.1"), "kind": "skipRange", "range": ">=0.8.0 <0.8.1"},
                        {"from": jname("0.8.1-rc.1"), "to": jname("0.8.1"), "kind": "skipRange", "range": ">=0.8.0 <0.8.1"},
                    ],
                }))],
            })
        )])
    );
}

/// The head entry and its bundle removed: the head moves back, and check-upgrades says so
/// beside the diff (UPG003, and the removed head's users stranded).
#[test]
fn head_moved_back_with_the_verdict() {
    let (code, v) = changed(|docs| {
        docs.retain(|d| !(d["schema"] == "olm.bundle" && d["name"] == jname("0.9.0")));
        let c = channel(docs, J, "alpha");
        c["entries"]
            .as_array_mut()
            .unwrap()
            .retain(|e| e["name"] != jname("0.9.0"));
    });
    assert_eq!(code, Some(1));
    let p = &v["packages"][0];
    assert_eq!(
        p["bundles_removed"],
        json!([{"name": jname("0.9.0"), "version": "0.9.0"}])
    );
    assert_eq!(
        p["channels"],
        json!([channel_diff(
            "alpha",
            json!({
                "head": {"old": jname("0.9.0"), "new": jname("0.9.0-rc.2")},
                "entries_removed": [jname("0.9.0")],
                "edges_removed": [
                    {"from": jname("0.9.0-rc.2"), "to": jname("0.9.0"), "kind": "replaces"},
                    {"from": jname("0.9.0-rc.2"), "to": jname("0.9.0"), "kind": "skipRange", "range": ">=0.9.0-rc.2 <0.9.0"},
                ],
            })
        )])
    );
    let codes: Vec<&str> = p["upgradeCheck"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    assert!(codes.contains(&"UPG003"), "{codes:?}");
    assert_eq!(v["upgradeCheck"]["passed"], false);
}

/// A channel dropped (its bundles kept in the other channel's package): the channel with its
/// head and size, and UPG004 beside.
#[test]
fn channel_dropped() {
    let (code, v) = changed(|docs| {
        docs.retain(|d| {
            !(d["schema"] == "olm.channel"
                && d["package"] == "clusterpulse"
                && d["name"] == "fast-v0")
        });
    });
    assert_eq!(code, Some(1));
    let p = &v["packages"][0];
    assert_eq!(p["name"], "clusterpulse");
    assert_eq!(
        p["channels_removed"],
        json!([{"name": "fast-v0", "head": "clusterpulse.v0.3.0", "entries": 6}])
    );
    assert_eq!(p["channels"], json!([]));
    assert_eq!(p["upgradeCheck"][0]["code"], "UPG004");
    assert_eq!(v["packages"].as_array().unwrap().len(), 1);
}

/// A deprecation added for a bundle, and another bundle's image changed.
#[test]
fn deprecation_added_and_bundle_changed() {
    let (code, v) = changed(|docs| {
        docs.push(json!({
            "schema": "olm.deprecations",
            "package": J,
            "entries": [{"reference": {"schema": "olm.bundle", "name": jname("0.8.0")}, "message": "0.8.0 is out of support; use 0.9"}],
        }));
        for d in docs.iter_mut() {
            if d["schema"] == "olm.bundle" && d["name"] == jname("0.8.1") {
                d["image"] = "quay.io/example/moved:0.8.1".into();
            }
        }
    });
    assert_eq!(code, Some(1));
    assert_eq!(
        v["packages"],
        json!([package(
            J,
            json!({
                "bundles_changed": [{"name": jname("0.8.1"), "changed": ["image"]}],
                "deprecations_added": [{"schema": "olm.bundle", "name": jname("0.8.0"), "message": "0.8.0 is out of support; use 0.9"}],
            })
        )])
    );
}

/// A side that cannot be read is exit 2, naming it.
#[test]
fn unreadable_side_is_exit_two() {
    let (code, _, err) = diff(
        &common::fixture_catalog(),
        Path::new("/nonexistent/catalog"),
        "text",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("/nonexistent/catalog"), "{err}");
}

/// `-o markdown` of a pull request that adds a version, drops a channel, moves a default
/// channel, deprecates a bundle and rewrites a channel's ranges: compared with
/// `tests/data/diff/pr-comment.md`, a file a person has read as a rendered PR comment (a table,
/// then a section per package, the long one collapsed). `OLMCTL_BLESS=1` rewrites it.
#[test]
fn markdown_pr_comment_golden() {
    let mut docs = blobs();
    // jumpstarter: a new head.
    add_091(&mut docs);
    channel(&mut docs, J, "alpha")["entries"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": jname("0.9.1"), "replaces": jname("0.9.0"), "skipRange": ">=0.9.0 <0.9.1"}));
    docs.push(json!({
        "schema": "olm.deprecations",
        "package": J,
        "entries": [{"reference": {"schema": "olm.bundle", "name": jname("0.8.0")}, "message": "0.8.0 is out of support"}],
    }));
    // clusterpulse: fast-v0 dropped.
    docs.retain(|d| {
        !(d["schema"] == "olm.channel" && d["package"] == "clusterpulse" && d["name"] == "fast-v0")
    });
    // apicurio-registry-3: another default channel.
    let channels: Vec<String> = docs
        .iter()
        .filter(|d| d["schema"] == "olm.channel" && d["package"] == "apicurio-registry-3")
        .map(|d| d["name"].as_str().unwrap().to_string())
        .collect();
    for d in docs.iter_mut() {
        if d["schema"] == "olm.package" && d["name"] == "apicurio-registry-3" {
            let other = channels
                .iter()
                .find(|c| **c != d["defaultChannel"])
                .unwrap()
                .clone();
            d["defaultChannel"] = other.into();
        }
    }
    // sailoperator: every skipRange of one channel dropped (a long section).
    let sail = docs
        .iter()
        .filter(|d| d["schema"] == "olm.channel" && d["package"] == "sailoperator")
        .max_by_key(|d| d["entries"].as_array().unwrap().len())
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();
    for e in channel(&mut docs, "sailoperator", &sail)["entries"]
        .as_array_mut()
        .unwrap()
    {
        e.as_object_mut().unwrap().remove("skipRange");
    }
    let new = write(&docs);
    let (code, out, err) = diff(&common::fixture_catalog(), new.path(), "markdown");
    assert_eq!(code, Some(1), "{err}");
    let golden = common::root().join("tests/data/diff/pr-comment.md");
    if std::env::var_os("OLMCTL_BLESS").is_some() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &out).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_default();
    assert_eq!(out, want, "rerun with OLMCTL_BLESS=1 and read the result");
    assert!(out.contains("<details><summary><code>sailoperator</code> (changed)"));
}
