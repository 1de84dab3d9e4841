//! `olmctl gate evaluate` (issue 16): the example cluster state of the fixtures, its safe
//! variant, v1alpha1 policies, and bad input.

mod common;

use std::path::Path;

use common::cli::{code, olmctl, p};
use olmctl::gate::testing as t;

const POLICY: &str = "apiVersion: olmctl.dev/v1
kind: UpgradePolicy
metadata: {name: default, namespace: acme-system}
spec:
  selector: {matchLabels: {}}
  maxVersionJump: minor
  crdSafety: Enforce
  maintenanceWindows:
  - days: [Sat, Sun]
    start: \"02:00\"
    duration: 4h
    timeZone: Europe/Berlin
  minAge: 24h
  paused: false
";

/// Sunday 2026-09-20, 03:00 in Berlin: inside the window, the plan six days old.
const NOW: &str = "2026-09-20T01:00:00Z";

fn policy_file(dir: &Path, text: &str) -> std::path::PathBuf {
    let f = dir.join("policy.yaml");
    std::fs::write(&f, text).expect("write");
    f
}

fn evaluate(policy: &Path, objects: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["gate", "evaluate", "--policy", p(policy), "-f", p(objects)];
    args.extend_from_slice(extra);
    let o = olmctl(&args);
    (
        code(&o),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn the_example_is_held_as_its_readme_says_and_approved_once_safe() {
    let d = tempfile::tempdir().expect("tmp");
    let pol = policy_file(d.path(), POLICY);
    let (rc, out, err) = evaluate(&pol, &t::example_dir(), &["--now", NOW, "-o", "json"]);
    assert_eq!(rc, 1, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let plans = v.as_array().expect("a list");
    assert_eq!(plans.len(), 1);
    let e = &plans[0];
    assert_eq!(e["installPlan"], "install-7xk2p");
    assert_eq!(e["namespace"], "acme-system");
    assert_eq!(e["subscriptions"], serde_json::json!(["acme-db-operator"]));
    assert_eq!(e["from"], serde_json::json!(["acme-db-operator.v1.4.2"]));
    assert_eq!(
        e["to"],
        serde_json::json!(["acme-db-operator.v1.5.0", "acme-metrics-operator.v0.3.1"])
    );
    assert_eq!(e["decision"], "hold");
    let reasons: Vec<(String, String)> = e["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| {
            (
                r["code"].as_str().expect("code").to_string(),
                r["effect"].as_str().expect("effect").to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("GATE007", "hold"),
        ("GATE007", "hold"),
        ("GATE007", "hold"),
        ("GATE022", "info"),
        ("GATE014", "info"),
        ("GATE008", "info"),
        ("GATE014", "info"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(reasons, expected);
    let messages = e["reasons"].to_string();
    assert!(messages.contains("maximum constraint added"), "{messages}");
    assert!(
        messages.contains("switches storage from v1beta1 to v1"),
        "{messages}"
    );

    // Text output, same decision.
    let (rc, out, _) = evaluate(&pol, &t::example_dir(), &["--now", NOW]);
    assert_eq!(rc, 1);
    assert!(
        out.starts_with("acme-system/install-7xk2p: hold\n"),
        "{out}"
    );
    assert!(
        out.ends_with("1 pending plan(s): 0 approve, 0 wait, 1 hold\n"),
        "{out}"
    );

    // The README's safe variant is approved by the same policy.
    let mut docs = t::example_docs();
    t::make_crd_safe(&mut docs);
    let objs = tempfile::tempdir().expect("tmp");
    t::write(&docs, objs.path());
    let (rc, out, err) = evaluate(&pol, objs.path(), &["--now", NOW, "--kube-version", "1.30"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(
        out.starts_with("acme-system/install-7xk2p: approve\n"),
        "{out}"
    );
    // Outside the window it waits (exit 1), and says until when.
    let (rc, out, _) = evaluate(
        &pol,
        objs.path(),
        &[
            "--now",
            "2026-09-21T10:00:00Z",
            "--kube-version",
            "1.30",
            "-o",
            "json",
        ],
    );
    assert_eq!(rc, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v[0]["decision"], "wait");
    assert_eq!(v[0]["reasons"][0]["code"], "GATE009");
    assert_eq!(v[0]["requeueAt"], "2026-09-26T00:00:00Z");
}

/// Issue 40 item 17: under `crdSafety: Warn` the failing CRD checks are reported at warning
/// level (`warn`, not `info`) and the plan is approved.
#[test]
fn crd_safety_warn_reports_the_crd_findings_as_warnings_and_approves() {
    let d = tempfile::tempdir().expect("tmp");
    let pol = policy_file(
        d.path(),
        &POLICY.replace("crdSafety: Enforce", "crdSafety: Warn"),
    );
    let (rc, out, err) = evaluate(&pol, &t::example_dir(), &["--now", NOW]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(
        out.starts_with("acme-system/install-7xk2p: approve\n"),
        "{out}"
    );
    let gate007: Vec<&str> = out.lines().filter(|l| l.contains("GATE007")).collect();
    assert_eq!(gate007.len(), 3, "{out}");
    assert!(
        gate007.iter().all(|l| l.starts_with("  warn  GATE007  ")),
        "{out}"
    );
    let (rc, out, err) = evaluate(&pol, &t::example_dir(), &["--now", NOW, "-o", "json"]);
    assert_eq!(rc, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let effects: Vec<&str> = v[0]["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter(|r| r["code"] == "GATE007")
        .map(|r| r["effect"].as_str().expect("effect"))
        .collect();
    assert_eq!(effects, ["warn", "warn", "warn"]);
}

#[test]
fn a_v1alpha1_policy_decides_the_same() {
    let d = tempfile::tempdir().expect("tmp");
    let v1 = policy_file(d.path(), POLICY);
    let (_, a, _) = evaluate(&v1, &t::example_dir(), &["--now", NOW, "-o", "json"]);
    let alpha = "apiVersion: olmctl.dev/v1alpha1
kind: UpgradePolicy
metadata: {name: default, namespace: acme-system}
spec:
  subscriptionSelector: {matchLabels: {}}
  maxUpgrade: minor
  crdChecks: Enforce
  maintenanceWindows: [\"Sat,Sun 02:00+4h Europe/Berlin\"]
  soak: 24h
";
    let f = policy_file(d.path(), alpha);
    let (rc, b, err) = evaluate(&f, &t::example_dir(), &["--now", NOW, "-o", "json"]);
    assert_eq!(rc, 1, "{err}");
    assert_eq!(a, b);
}

#[test]
fn bad_input_is_exit_2_with_file_and_line() {
    let d = tempfile::tempdir().expect("tmp");
    let good = policy_file(d.path(), POLICY);
    let cases: [(&str, &str, &str); 4] = [
        (
            "objects.yaml",
            "apiVersion: v1\nkind: ConfigMap\n---\n- a list\n",
            "objects.yaml:4:1: not a Kubernetes object",
        ),
        (
            "objects.yaml",
            "apiVersion: v1\n---\nname: x\n",
            "objects.yaml:1:1: not a Kubernetes object",
        ),
        ("broken.yaml", "apiVersion: v1\nkind: [\n", "broken.yaml:"),
        ("notutf8.yaml", "kind: \u{0}", "notutf8.yaml"),
    ];
    for (name, text, needle) in cases {
        let f = d.path().join(name);
        std::fs::write(&f, text).expect("write");
        let (rc, out, err) = evaluate(&good, &f, &["--now", NOW]);
        assert_eq!(rc, 2, "{name}: {out}{err}");
        assert!(err.contains(needle), "{name}: {err}");
        std::fs::remove_file(&f).expect("rm");
    }
    // Policies: a bad window, an unknown field (v1 and v1alpha1 names), a bad version.
    let bad_policies = [
        (POLICY.replace("start: \"02:00\"", "start: \"25:00\""), "policy.yaml:10:12: spec.maintenanceWindows[0]: invalid start"),
        (POLICY.replace("paused: false", "pause: false"), "policy.yaml:14:3: unknown field spec.pause"),
        (
            "apiVersion: olmctl.dev/v1alpha1\nkind: UpgradePolicy\nspec:\n  maxUpgrade: huge\n".to_string(),
            "policy.yaml:4:15: invalid maxVersionJump",
        ),
        (
            "apiVersion: olmctl.dev/v1alpha1\nkind: UpgradePolicy\nspec:\n  maintenanceWindows: [\"Sat 02:00\"]\n".to_string(),
            "policy.yaml:4:24: spec.maintenanceWindows[0]: invalid maintenance window",
        ),
        (
            "apiVersion: olmctl.dev/v1alpha1\nkind: UpgradePolicy\nspec:\n  minAge: 1h\n".to_string(),
            "unknown field spec.minAge (known: subscriptionSelector, clusterExtensionSelector, maxUpgrade, crdChecks, newDependencies, maintenanceWindows, soak, paused)",
        ),
        ("apiVersion: olmctl.dev/v2\nkind: UpgradePolicy\n".to_string(), "policy.yaml:1:13: apiVersion must be"),
    ];
    for (text, needle) in bad_policies {
        let f = policy_file(d.path(), &text);
        let (rc, out, err) = evaluate(&f, &t::example_dir(), &["--now", NOW]);
        assert_eq!(rc, 2, "{text}: {out}{err}");
        assert!(err.contains(needle), "{needle}: {err}");
    }
    // Flags.
    let good = policy_file(d.path(), POLICY);
    let (rc, _, err) = evaluate(&good, &t::example_dir(), &["--now", "yesterday"]);
    assert_eq!(rc, 2);
    assert!(err.contains("--now \"yesterday\""), "{err}");
    let (rc, _, err) = evaluate(&good, &t::example_dir(), &["--kube-version", "one"]);
    assert_eq!(rc, 2);
    assert!(err.contains("--kube-version"), "{err}");
}

#[test]
fn kinds_the_gate_does_not_read_are_ignored_in_a_kubectl_dump() {
    let d = tempfile::tempdir().expect("tmp");
    let pol = policy_file(d.path(), POLICY);
    let mut docs = t::example_docs();
    t::make_crd_safe(&mut docs);
    let mut items: Vec<serde_json::Value> = docs.into_iter().map(|(_, v)| v).collect();
    items.push(serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}));
    items.push(serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "y"}}));
    let dump = serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items});
    let f = d.path().join("dump.json");
    std::fs::write(&f, serde_json::to_string_pretty(&dump).expect("json")).expect("write");
    let (rc, out, err) = evaluate(&pol, &f, &["--now", NOW, "--kube-version", "1.30"]);
    assert_eq!(rc, 0, "{out}{err}");
    assert!(out.contains(": approve\n"), "{out}");
    // No plan at all: nothing pending, exit 0.
    std::fs::write(&f, "apiVersion: v1\nkind: List\nitems: []\n").expect("write");
    let (rc, out, _) = evaluate(&pol, &f, &["--now", NOW]);
    assert_eq!(
        (rc, out.as_str()),
        (0, "0 pending plan(s): 0 approve, 0 wait, 0 hold\n")
    );
}

/// Issue 28 item 6: the unpacked-bundle ConfigMap with 8 keys that each inflate to 64 MiB
/// (about 1 MB, under the ConfigMap limit) is refused within its budget: the plan is held
/// with a reason naming the ConfigMap, the key and the budget; memory stays bounded.
#[test]
fn an_inflating_bundle_config_map_is_a_hold_not_a_crash() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // An object whose one list holds 32 million numbers: 64 MiB of text.
    gz.write_all(b"kind: ConfigMap\nitems: [").expect("gzip");
    gz.write_all(&b"1,".repeat(32 << 20)).expect("gzip");
    gz.write_all(b"]\n").expect("gzip");
    let gz = gz.finish().expect("gzip");
    let bomb = olmctl::encoding::base64(olmctl::encoding::base64(&gz).as_bytes());
    let mut docs = t::example_docs();
    let cm = t::find(
        &mut docs,
        "ConfigMap",
        "3529f77e5fa7d467898f3c3e49e6a6f628af7f54a06ff5a13aacef49056a055",
    );
    let data = cm["binaryData"].as_object_mut().expect("binaryData");
    for i in 0..8 {
        data.insert(
            format!("a{i}.yaml"),
            serde_json::Value::String(bomb.clone()),
        );
    }
    let d = tempfile::tempdir().expect("tmp");
    let objs = d.path().join("objects");
    std::fs::create_dir(&objs).expect("dir");
    t::write(&docs, &objs);
    let size = std::fs::metadata(objs.join("05-bundle-configmap.yaml"))
        .expect("written")
        .len();
    assert!(
        size < 1 << 20,
        "the ConfigMap fits a real one: {size} bytes"
    );
    let pol = policy_file(d.path(), POLICY);
    let run = common::bounded::run(&[
        "gate",
        "evaluate",
        "--policy",
        p(&pol),
        "-f",
        p(&objs),
        "--now",
        NOW,
        "-o",
        "json",
    ]);
    eprintln!("peak RSS {} MiB", run.max_rss >> 20);
    assert_eq!(run.bounded(256 << 20), 1, "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let reasons = v[0]["reasons"].to_string();
    assert!(reasons.contains("GATE004"), "{reasons}");
    assert!(
        reasons.contains("ConfigMap olm/3529f77e5fa7d467898f3c3e49e6a6f628af7f54a06ff5a13aacef49056a055 key a0.yaml: inflates to more than 8 MiB"),
        "{reasons}"
    );
}
