//! `catalog check-upgrades` on versions of a real fixture package derived in the test.

mod common;

use std::collections::BTreeSet;

use olmctl::fbc::decl::DeclarativeConfig;
use olmctl::fbc::load::load;
use olmctl::fbc::write::{Format, canonical, write_blobs};

fn kube_green() -> DeclarativeConfig {
    load(&[common::fixture_catalog().join("kube-green")])
        .expect("load")
        .cfg
}

/// The catalog as it was before its newest bundle: the head entry and its bundle removed.
fn without_head(mut cfg: DeclarativeConfig) -> DeclarativeConfig {
    let head = cfg.channels[0].entries.pop().expect("entries").name;
    cfg.bundles.retain(|b| b.name != head);
    cfg
}

fn write(cfg: &DeclarativeConfig) -> tempfile::TempDir {
    let mut text = String::new();
    for (_, nodes) in canonical(cfg) {
        write_blobs(&nodes, Format::Yaml, &mut text);
    }
    common::write_tree(&[("kube-green/catalog.yaml", &text)])
}

fn check(old: &DeclarativeConfig, new: &DeclarativeConfig) -> Vec<olmctl::diag::Finding> {
    olmctl::checks::upgrades::check(old, new)
}

#[test]
fn releasing_a_new_head_is_clean() {
    let new = kube_green();
    let old = without_head(new.clone());
    assert_eq!(new.channels[0].entries.len(), 10);
    assert!(check(&old, &new).is_empty());
    // Through the binary as a CI job runs it.
    let (o, n) = (write(&old), write(&new));
    let out = std::process::Command::new(crate::common::olmctl_bin())
        .args(["catalog", "check-upgrades", "--base"])
        .arg(o.path())
        .arg(n.path())
        .output()
        .expect("run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn stranded(f: &[olmctl::diag::Finding], sem: &str) -> BTreeSet<String> {
    f.iter()
        .filter(|x| x.code == "UPG001" && x.message.starts_with(sem))
        .map(|x| x.subject.bundle.clone().expect("bundle"))
        .collect()
}

fn versions(vs: &[&str]) -> BTreeSet<String> {
    vs.iter().map(|v| format!("kube-green.v{v}")).collect()
}

#[test]
fn removing_a_middle_edge_reports_the_stranded_versions() {
    let old = kube_green();
    // (a) Drop kube-green.v0.5.0's replaces edge: 0.4.1 becomes a second head, OLM v0 refuses
    // the channel and no user reaches a head.
    let mut new = old.clone();
    let e = new.channels[0]
        .entries
        .iter_mut()
        .find(|e| e.name == "kube-green.v0.5.0")
        .expect("entry");
    assert_eq!(e.replaces, "kube-green.v0.4.1");
    e.replaces.clear();
    let f = check(&old, &new);
    // The cause once (UPG007, the second head), the stranded users listed under it.
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].code, "UPG007");
    assert!(f[0].message.contains("kube-green.v0.4.1"), "{f:#?}");
    assert!(
        f[0].notes[0].starts_with(
            "OLM v0: users on kube-green.v0.3.0, kube-green.v0.3.1, kube-green.v0.4.0 and 7 more"
        ),
        "{f:#?}"
    );
    let (o, n) = (write(&old), write(&new));
    let out = std::process::Command::new(crate::common::olmctl_bin())
        .args(["catalog", "check-upgrades", "-o", "json", "--base"])
        .arg(o.path())
        .arg(n.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["summary"]["errors"].as_u64(), Some(f.len() as u64));

    // (b) Turn it into `skips: [0.4.1]`: one head, but 0.4.1 is skipped, so OLM v0 drops it
    // and users below it (0.3.0 .. 0.4.0) have no candidate; OLM v1 still walks through it.
    let mut new = old.clone();
    let e = new.channels[0]
        .entries
        .iter_mut()
        .find(|e| e.name == "kube-green.v0.5.0")
        .expect("entry");
    e.skips = vec![std::mem::take(&mut e.replaces)];
    let f = check(&old, &new);
    assert_eq!(
        stranded(&f, "OLM v0"),
        versions(&["0.3.0", "0.3.1", "0.4.0"])
    );
    assert!(stranded(&f, "OLM v1").is_empty(), "{f:#?}");
    assert!(f.iter().all(|x| x.code == "UPG001"), "{f:#?}");
}

/// The first-day case: one typo in a `replaces` of the certified index's
/// victoriametrics-operator (`v0.70.0` for `v0.70.1`). One error names the missing bundle and
/// suggests the entry; findings the base catalog has already are pre-existing and do not fail.
#[test]
fn a_replaces_typo_is_reported_once_with_a_suggestion() {
    let src = common::shared_fixtures()
        .join("first-day/catalogs/v4.21/victoriametrics-operator/catalog.yaml");
    let text = std::fs::read_to_string(&src).expect("fixture");
    let typo = text.replacen(
        "replaces: victoriametrics-operator.v0.70.1",
        "replaces: victoriametrics-operator.v0.70.0",
        1,
    );
    assert_ne!(typo, text);
    // Both catalogs get the same file that does not load: pre-existing.
    let broken = "schema: olm.package\nname: [oops\n";
    let base = common::write_tree(&[
        ("victoriametrics-operator/catalog.yaml", &text),
        ("zz/broken.yaml", broken),
    ]);
    let new = common::write_tree(&[
        ("victoriametrics-operator/catalog.yaml", &typo),
        ("zz/broken.yaml", broken),
    ]);
    let run = |format: &str| {
        std::process::Command::new(crate::common::olmctl_bin())
            .args(["catalog", "check-upgrades", "-o", format, "--base"])
            .arg(base.path())
            .arg(new.path())
            .output()
            .expect("run")
    };
    let out = run("json");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let fresh: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["baselineState"] == "new")
        .collect();
    assert_eq!(fresh.len(), 1, "{v:#}");
    assert_eq!(fresh[0]["code"], "UPG006");
    let msg = fresh[0]["message"].as_str().expect("message");
    assert!(
        msg.contains("replaces victoriametrics-operator.v0.70.0"),
        "{msg}"
    );
    assert!(
        msg.contains("did you mean victoriametrics-operator.v0.70.1?"),
        "{msg}"
    );
    let notes = fresh[0]["notes"].to_string();
    assert!(!notes.contains("<no single head>"), "{notes}");
    assert!(
        !notes.contains("users on victoriametrics-operator.v0.74.1"),
        "{notes}"
    );
    assert_eq!(v["summary"]["errors"].as_u64(), Some(1));
    assert!(v["summary"]["unchanged"].as_u64() >= Some(1), "{v:#}");
    // Without the typo only the pre-existing findings remain: exit 0.
    let same = std::process::Command::new(crate::common::olmctl_bin())
        .args(["catalog", "check-upgrades", "--base"])
        .arg(base.path())
        .arg(base.path())
        .output()
        .expect("run");
    let text_out = String::from_utf8_lossy(&same.stdout);
    assert_eq!(same.status.code(), Some(0), "{text_out}");
    assert!(text_out.contains("] (pre-existing): "), "{text_out}");
}

#[test]
fn moving_the_head_backwards_is_reported() {
    let new = kube_green();
    let old = new.clone();
    let f = check(&old, &without_head(new));
    assert!(f.iter().any(|x| x.code == "UPG003"), "{f:#?}");
}
