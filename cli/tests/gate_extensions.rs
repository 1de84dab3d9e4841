//! `olmctl gate evaluate` on OLM v1 ClusterExtension state (issue 31 §5): the real
//! pelorus-operator bundles of the fixtures (a replaces chain 0.0.1 .. 0.0.9 whose 0.0.4 ->
//! 0.0.5 step drops `x-kubernetes-preserve-unknown-fields` from `spec.exporters`, which OLM v1's
//! CRD upgrade-safety preflight refuses), rendered into a catalog with `olmctl catalog
//! template`; the v1 flow: a new version appears, the pin moves only inside the window, a
//! step whose CRD change fails preflight is held with the reason, an override moves it.

mod common;

use std::path::{Path, PathBuf};

use common::cli::{code, olmctl, p};

const PACKAGE: &str = "pelorus-operator";

fn bundles() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures/operators/pelorus-operator")
}

/// Renders 0.0.1 .. `last` of pelorus-operator (channel alpha, each replacing the one
/// before) into `dir/catalog.yaml` with `olmctl catalog template`, every manifest as
/// `olm.bundle.object`.
fn render_catalog(dir: &Path, last: u32) -> PathBuf {
    let mut t = format!(
        "schema: olm.template.basic\nentries:\n- {{schema: olm.package, name: {PACKAGE}, defaultChannel: alpha}}\n- schema: olm.channel\n  package: {PACKAGE}\n  name: alpha\n  entries:\n"
    );
    let mut map = String::new();
    for i in 1..=last {
        t.push_str(&format!("  - {{name: {PACKAGE}.v0.0.{i}"));
        if i > 1 {
            t.push_str(&format!(", replaces: {PACKAGE}.v0.0.{}", i - 1));
        }
        t.push_str("}\n");
    }
    for i in 1..=last {
        let image = format!("quay.io/pelorus/pelorus-operator-bundle:0.0.{i}");
        t.push_str(&format!("- {{schema: olm.bundle, image: \"{image}\"}}\n"));
        map.push_str(&format!(
            "\"{image}\": {}\n",
            bundles().join(format!("0.0.{i}")).display()
        ));
    }
    std::fs::write(dir.join("template.yaml"), t).expect("write");
    std::fs::write(dir.join("bundles.yaml"), map).expect("write");
    let o = olmctl(&[
        "catalog",
        "template",
        p(&dir.join("template.yaml")),
        "--bundles",
        p(&dir.join("bundles.yaml")),
    ]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let cat = dir.join("catalog");
    std::fs::create_dir_all(&cat).expect("mkdir");
    std::fs::write(cat.join("catalog.yaml"), &o.stdout).expect("write");
    cat
}

const POLICY: &str = "apiVersion: olmctl.dev/v1
kind: UpgradePolicy
metadata: {name: pelorus, namespace: pelorus}
spec:
  clusterExtensionSelector: {matchLabels: {app: pelorus}}
  maxVersionJump: minor
  crdSafety: Enforce
  maintenanceWindows:
  - {days: [Sat, Sun], start: \"02:00\", duration: 4h, timeZone: Europe/Berlin}
";

/// Sunday 2026-09-20 03:00 in Berlin: inside the window.
const INSIDE: &str = "2026-09-20T01:00:00Z";
/// Sunday 2026-09-20 12:00 in Berlin: outside it; the next opens on Saturday.
const OUTSIDE: &str = "2026-09-20T10:00:00Z";

/// The ClusterExtension with `installed` installed and pinned, and `extra` metadata lines.
fn extension(installed: &str, version: &str, extra: &str) -> String {
    format!(
        "apiVersion: olm.operatorframework.io/v1
kind: ClusterExtension
metadata:
  name: pelorus
  generation: 4
  resourceVersion: \"52211\"
  labels: {{app: pelorus}}
{extra}spec:
  namespace: pelorus
  serviceAccount: {{name: pelorus-installer}}
  source:
    sourceType: Catalog
    catalog: {{packageName: {PACKAGE}, version: \"{version}\", channels: [alpha]}}
status:
  conditions:
  - {{type: Installed, status: \"True\", reason: Succeeded, observedGeneration: 4, message: ok}}
  - {{type: Progressing, status: \"True\", reason: Succeeded, observedGeneration: 4, message: Desired state reached}}
  install:
    bundle: {{name: {PACKAGE}.v{installed}, version: {installed}}}
"
    )
}

/// Writes the cluster state (the extension, and the installed bundle's CRD as the live one)
/// into `dir/cluster/`.
fn cluster(dir: &Path, installed: &str, ce: &str) -> PathBuf {
    let c = dir.join("cluster");
    std::fs::create_dir_all(&c).expect("mkdir");
    std::fs::write(c.join("extension.yaml"), ce).expect("write");
    std::fs::copy(
        bundles().join(format!(
            "{installed}/manifests/charts.pelorus.konveyor.io_pelorus.yaml"
        )),
        c.join("crd.yaml"),
    )
    .expect("copy the CRD");
    c
}

fn evaluate(
    dir: &Path,
    objects: &Path,
    catalog: &Path,
    now: &str,
    extra: &[&str],
) -> (i32, String) {
    let policy = dir.join("policy.yaml");
    std::fs::write(&policy, POLICY).expect("write");
    let mut args = vec![
        "gate",
        "evaluate",
        "--policy",
        p(&policy),
        "-f",
        p(objects),
        "--catalog",
        p(catalog),
        "--now",
        now,
    ];
    args.extend_from_slice(extra);
    let o = olmctl(&args);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (code(&o), String::from_utf8_lossy(&o.stdout).into_owned())
}

#[test]
fn a_new_version_moves_the_pin_only_inside_the_window() {
    let d = tempfile::tempdir().expect("tmp");
    // The catalog ends at 0.0.3: the installed version is current.
    let cat = render_catalog(d.path(), 3);
    let objs = cluster(d.path(), "0.0.3", &extension("0.0.3", "0.0.3", ""));
    let (rc, out) = evaluate(d.path(), &objs, &cat, INSIDE, &[]);
    assert_eq!(rc, 0, "{out}");
    assert!(
        out.contains("clusterextension/pelorus: current\n  pelorus-operator installed 0.0.3; pin 0.0.3 (kept)\n"),
        "{out}"
    );
    // 0.0.4 appears in the catalog: outside the window it waits, with the next opening.
    let cat = render_catalog(d.path(), 9);
    let (rc, out) = evaluate(d.path(), &objs, &cat, OUTSIDE, &[]);
    assert_eq!(rc, 1, "{out}");
    assert_eq!(
        out,
        "0 pending plan(s): 0 approve, 0 wait, 0 hold
clusterextension/pelorus: wait
  pelorus-operator installed 0.0.3; pin 0.0.3 (kept)
  next step pelorus-operator.v0.0.4 (0.0.4, replaces in channel alpha)
  wait  GATE009  outside every maintenance window; the next opens at 2026-09-26T00:00:00Z
  look again at 2026-09-26T00:00:00Z
1 ClusterExtension(s): 0 move, 0 current, 1 wait, 0 hold
"
    );
    // Inside the window it moves one step (0.0.4 only, not 0.0.9: OLM v1 resolves a pin only
    // to a direct successor).
    let (rc, out) = evaluate(d.path(), &objs, &cat, INSIDE, &[]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("clusterextension/pelorus: move\n  pelorus-operator installed 0.0.3; pin \"0.0.3\" -> 0.0.4\n"), "{out}");
    // JSON: the extension's entry beside the (empty) plans.
    let (rc, out) = evaluate(d.path(), &objs, &cat, INSIDE, &["-o", "json"]);
    assert_eq!(rc, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        v,
        serde_json::json!([{
            "clusterExtension": "pelorus",
            "package": PACKAGE,
            "resourceVersion": "52211",
            "installedBundle": "pelorus-operator.v0.0.3",
            "installed": "0.0.3",
            "version": "0.0.3",
            "next": {"bundle": "pelorus-operator.v0.0.4", "version": "0.0.4", "channel": "alpha", "edge": "replaces"},
            "pin": "0.0.4",
            "decision": "move",
            "reasons": [],
            "requeueAt": null,
        }])
    );
}

#[test]
fn a_step_whose_crd_change_fails_v1s_preflight_is_held_and_an_override_moves_it() {
    let d = tempfile::tempdir().expect("tmp");
    let cat = render_catalog(d.path(), 9);
    let objs = cluster(d.path(), "0.0.4", &extension("0.0.4", "0.0.4", ""));
    let (rc, out) = evaluate(d.path(), &objs, &cat, INSIDE, &[]);
    assert_eq!(rc, 1, "{out}");
    assert!(out.contains("clusterextension/pelorus: hold\n  pelorus-operator installed 0.0.4; pin 0.0.4 (kept)\n  next step pelorus-operator.v0.0.5 (0.0.5, replaces in channel alpha)\n"), "{out}");
    assert!(
        out.contains("  hold  GATE007  pelorus-operator.v0.0.5 SCH012: pelorus.charts.pelorus.konveyor.io v1alpha1: ^.spec.exporters: unhandled changes found: x-kubernetes-preserve-unknown-fields: true -> <none>\n"),
        "{out}"
    );
    // The override names the version.
    let objs = cluster(
        d.path(),
        "0.0.4",
        &extension(
            "0.0.4",
            "0.0.4",
            "  annotations: {olmctl.dev/approve-version: 0.0.5}\n",
        ),
    );
    let (rc, out) = evaluate(d.path(), &objs, &cat, INSIDE, &[]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("clusterextension/pelorus: move\n  pelorus-operator installed 0.0.4; pin \"0.0.4\" -> 0.0.5\n"), "{out}");
    assert!(
        out.contains("  hold  GATE007  pelorus-operator.v0.0.5 SCH012"),
        "{out}"
    );
    assert!(out.contains("  info  GATE012  moved to 0.0.5 by annotation olmctl.dev/approve-version on ClusterExtension pelorus\n"), "{out}");
}

#[test]
fn a_rollout_waits_and_a_range_is_pinned() {
    let d = tempfile::tempdir().expect("tmp");
    let cat = render_catalog(d.path(), 9);
    // The pin moved to 0.0.5 and OLM v1 has not installed it yet.
    let mut ce = extension("0.0.4", "0.0.5", "");
    ce = ce.replace(
        "reason: Succeeded, observedGeneration: 4, message: Desired state reached",
        "reason: Retrying, observedGeneration: 4, message: \"unable to upgrade to version 0.0.5\"",
    );
    let objs = cluster(d.path(), "0.0.4", &ce);
    let (rc, out) = evaluate(d.path(), &objs, &cat, INSIDE, &[]);
    assert_eq!(rc, 1, "{out}");
    assert!(out.contains("clusterextension/pelorus: wait\n  pelorus-operator installed 0.0.4; pin \"0.0.5\" (left as it is)\n  wait  GATE016  ClusterExtension pelorus: the step from 0.0.4 to the pinned 0.0.5 is in progress (Progressing True/Retrying: unable to upgrade to version 0.0.5)\n"), "{out}");
    // A range: the gate pins it (to the next step here, inside the window).
    let objs = cluster(d.path(), "0.0.2", &extension("0.0.2", ">=0.0.1", ""));
    let (rc, out) = evaluate(d.path(), &objs, &cat, INSIDE, &[]);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("pin \">=0.0.1\" -> 0.0.3\n"), "{out}");
    assert!(out.contains("  info  GATE017  spec.source.catalog.version \">=0.0.1\" is not an exact pin of the installed 0.0.2: pinned to 0.0.2\n"), "{out}");
}

#[test]
fn without_bundle_objects_the_crds_cannot_be_checked_and_a_bad_catalog_is_exit_2() {
    let d = tempfile::tempdir().expect("tmp");
    // The fixture catalogs of OpenShift 4.18 carry olm.csv.metadata only: kube-green 0.7.0 ->
    // 0.7.1 there cannot be checked for CRD safety.
    let ce = extension("0.7.0", "0.7.0", "")
        .replace(&format!("{PACKAGE}.v0.7.0"), "kube-green.v0.7.0")
        .replace(
            &format!("packageName: {PACKAGE}"),
            "packageName: kube-green",
        );
    let objs = d.path().join("cluster");
    std::fs::create_dir_all(&objs).expect("mkdir");
    std::fs::write(objs.join("extension.yaml"), ce).expect("write");
    let meta = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures/catalogs/v4.18/kube-green");
    let (rc, out) = evaluate(d.path(), &objs, &meta, INSIDE, &[]);
    assert_eq!(rc, 1, "{out}");
    assert!(
        out.contains("  hold  GATE004  the catalog has no olm.bundle.object manifests for bundle kube-green.v0.7.1 (catalogd serves only its metadata)"),
        "{out}"
    );
    let bad = d.path().join("bad");
    std::fs::create_dir_all(&bad).expect("mkdir");
    std::fs::write(bad.join("c.yaml"), "schema: olm.package\nname: [\n").expect("write");
    let policy = d.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).expect("write");
    let o = olmctl(&[
        "gate",
        "evaluate",
        "--policy",
        p(&policy),
        "-f",
        p(&objs),
        "--catalog",
        p(&bad),
    ]);
    assert_eq!(code(&o), 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("c.yaml:"), "{err}");
}
