//! The controller against the API double, one namespace reconcile at a time: approvals, what
//! is never approved, the override, held plans' status, Events and metrics, a conflicting
//! approval, no finalizer (a deleted policy's annotations go on the next reconcile), and a
//! replica without the Lease.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use http::{Method, StatusCode};
use olmctl::gate::testing::{self as t, Doc};
use olmctl_operator::controller::{DECISION_ANNOTATION, LEGACY_FINALIZER};
use olmctl_testkit::api::ApiServer as FakeApi;
use serde_json::{Value, json};

fn minor() -> Value {
    json!({"maxVersionJump": "minor", "crdSafety": "Enforce"})
}

/// One reconcile of the namespace.
async fn settle(fake: &FakeApi, ctx: &Arc<olmctl_operator::controller::Ctx>) {
    reconcile_ns(fake, ctx).await;
}

fn plan_patches(fake: &FakeApi) -> Vec<Value> {
    writes(fake, &format!("installplans/{PLAN}"))
        .into_iter()
        .map(|l| l.body)
        .collect()
}

fn plan(fake: &FakeApi) -> Value {
    fake.get(OLM, "installplans", NS, PLAN).expect("plan")
}

fn status_entries(fake: &FakeApi) -> Value {
    fake.get("olmctl.dev", "upgradepolicies", NS, "default")
        .expect("policy")["status"]["subscriptions"]
        .clone()
}

fn events(fake: &FakeApi) -> Vec<Value> {
    fake.list("events.k8s.io", "events")
}

#[tokio::test]
async fn an_allowed_plan_is_approved_with_one_guarded_patch_and_recorded() {
    let fake = fake_with(&safe_docs());
    add_policy(&fake, minor());
    let rv = plan(&fake)["metadata"]["resourceVersion"].clone();
    let c = ctx(&fake, true);
    settle(&fake, &c).await;
    assert_eq!(
        plan_patches(&fake),
        [json!({"metadata": {"resourceVersion": rv}, "spec": {"approved": true}})],
        "exactly one write to the plan: the approval, guarded by the resourceVersion"
    );
    assert_eq!(plan(&fake)["spec"]["approved"], true);
    let st = status_entries(&fake);
    assert_eq!(st[0]["installPlan"], PLAN);
    assert_eq!(st[0]["decision"], "Approved");
    assert_eq!(st[0]["name"], "acme-db-operator");
    assert_eq!(st[0]["installedCsv"], "acme-db-operator.v1.4.2");
    assert_eq!(st[0]["pendingCsv"], "acme-db-operator.v1.5.0");
    assert_eq!(st[0]["since"], NOW);
    let policy = fake
        .get("olmctl.dev", "upgradepolicies", NS, "default")
        .expect("p");
    let ready = &policy["status"]["conditions"][0];
    assert_eq!(
        (ready["type"].as_str(), ready["status"].as_str()),
        (Some("Ready"), Some("True"))
    );
    // An Event on the InstallPlan and one on the policy.
    let ev = events(&fake);
    let on = |kind: &str| {
        ev.iter()
            .filter(|e| e["regarding"]["kind"] == kind && e["reason"] == "Approved")
            .count()
    };
    assert_eq!((on("InstallPlan"), on("UpgradePolicy")), (1, 1), "{ev:#?}");
    assert_eq!(c.metrics.decisions("approve", "none"), 1);
    assert!(
        c.metrics
            .render()
            .contains("olmctl_gate_approvals_total 1\n")
    );
    // The Subscription carries the decision.
    let sub = fake
        .get(OLM, "subscriptions", NS, "acme-db-operator")
        .expect("sub");
    assert_eq!(
        sub["metadata"]["annotations"][DECISION_ANNOTATION],
        format!("{PLAN}: Approved")
    );
    // Reconciling again writes nothing more to the plan, and keeps the entry.
    reconcile_ns(&fake, &c).await;
    assert_eq!(plan_patches(&fake).len(), 1);
    assert_eq!(status_entries(&fake)[0]["decision"], "Approved");
    assert_eq!(on("InstallPlan"), 1);
}

#[tokio::test]
async fn plans_that_are_not_ready_or_not_current_are_never_approved() {
    type Edit = fn(&mut Vec<Doc>);
    let edits: [(&str, Edit); 5] = [
        ("empty phase", |d| t::plan(d)["status"]["phase"] = json!("")),
        ("no status at all", |d| {
            t::plan(d).as_object_mut().expect("o").remove("status");
        }),
        ("Planning", |d| {
            t::plan(d)["status"]["phase"] = json!("Planning")
        }),
        ("Installing", |d| {
            t::plan(d)["status"]["phase"] = json!("Installing")
        }),
        ("stale", |d| {
            t::subscription(d)["status"]["installPlanRef"]["name"] = json!("install-newer")
        }),
    ];
    for (what, edit) in edits {
        let mut docs = safe_docs();
        edit(&mut docs);
        let fake = fake_with(&docs);
        add_policy(&fake, minor());
        settle(&fake, &ctx(&fake, true)).await;
        assert!(
            plan_patches(&fake).is_empty(),
            "{what}: nothing is written to the plan"
        );
        assert_eq!(plan(&fake)["spec"]["approved"], false, "{what}");
        let st = status_entries(&fake);
        match what {
            "Installing" => assert_eq!(st, json!([]), "{what}: past approval, no entry"),
            // Stale: no Subscription's current plan, so no entry (only a current plan is
            // judged for a Subscription), no Event, and no write.
            "stale" => {
                assert_eq!(st, json!([]), "{what}");
                assert!(events(&fake).is_empty(), "{what}");
            }
            _ => {
                assert_eq!(st[0]["decision"], "Waiting", "{what}");
                assert_eq!(st[0]["reasons"][0]["code"], "GATE001", "{what}");
            }
        }
    }
}

#[tokio::test]
async fn a_held_plan_gets_status_event_and_metric_and_the_override_approves_it() {
    // The example's CRD changes (read from the unpacked-bundle ConfigMap) hold the plan.
    let fake = fake_with(&t::example_docs());
    add_policy(&fake, minor());
    let c = ctx(&fake, true);
    settle(&fake, &c).await;
    assert!(plan_patches(&fake).is_empty());
    let st = status_entries(&fake);
    assert_eq!(st[0]["decision"], "Held");
    let codes: Vec<&str> = st[0]["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter(|r| r["effect"] == "hold")
        .map(|r| r["code"].as_str().expect("code"))
        .collect();
    assert_eq!(codes, ["GATE007", "GATE007", "GATE007"]);
    assert!(
        st[0]["reasons"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("SCH004"))
    );
    let held: Vec<Value> = events(&fake)
        .into_iter()
        .filter(|e| e["reason"] == "Held")
        .collect();
    assert_eq!(held.len(), 2, "on the plan and on the policy");
    assert_eq!(held[0]["type"], "Warning");
    assert!(
        held[0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("GATE007"))
    );
    assert_eq!(c.metrics.decisions("hold", "GATE007"), 3);

    // A person overrides: the annotation on the Subscription approves this plan.
    fake.merge(
        OLM,
        "subscriptions",
        NS,
        "acme-db-operator",
        &json!({"metadata": {"annotations": {"olmctl.dev/approve": PLAN}}}),
        false,
    );
    reconcile_ns(&fake, &c).await;
    assert_eq!(plan_patches(&fake).len(), 1);
    assert_eq!(plan(&fake)["spec"]["approved"], true);
    let st = status_entries(&fake);
    assert_eq!(st[0]["decision"], "Approved");
    let last = st[0]["reasons"]
        .as_array()
        .expect("r")
        .last()
        .cloned()
        .expect("a reason");
    assert_eq!(last["code"], "GATE012");
    assert!(
        events(&fake).iter().any(|e| e["reason"] == "Approved"
            && e["note"].as_str().is_some_and(|n| n.contains("GATE012")))
    );
}

#[tokio::test]
async fn a_new_dependency_is_held_under_new_dependencies_hold_and_told_under_allow() {
    // The safe example: the upgrade of acme-db-operator pulls in acme-metrics-operator, which
    // the namespace did not have (the plan's Subscription step).
    let fake = fake_with(&safe_docs());
    add_policy(
        &fake,
        json!({"maxVersionJump": "minor", "newDependencies": "Hold"}),
    );
    let c = ctx(&fake, true);
    settle(&fake, &c).await;
    assert!(plan_patches(&fake).is_empty(), "held: nothing written");
    let st = status_entries(&fake);
    assert_eq!(st[0]["decision"], "Held");
    let holds: Vec<&Value> = st[0]["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .filter(|r| r["effect"] == "hold")
        .collect();
    assert_eq!(holds.len(), 1, "{holds:#?}");
    assert_eq!(holds[0]["code"], "GATE021");
    assert!(
        holds[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("acme-metrics-operator-stable-acme-catalog-olm")),
        "{}",
        holds[0]["message"]
    );
    assert_eq!(c.metrics.decisions("hold", "GATE021"), 1);

    // Allow: the same plan is approved, the dependency told.
    let fake = fake_with(&safe_docs());
    add_policy(
        &fake,
        json!({"maxVersionJump": "minor", "newDependencies": "Allow"}),
    );
    let c = ctx(&fake, true);
    settle(&fake, &c).await;
    assert_eq!(plan(&fake)["spec"]["approved"], true);
    let st = status_entries(&fake);
    assert_eq!(st[0]["decision"], "Approved");
    assert!(
        st[0]["reasons"]
            .as_array()
            .expect("reasons")
            .iter()
            .any(|r| r["code"] == "GATE022" && r["effect"] == "info")
    );
}

#[tokio::test]
async fn a_conflicting_approval_is_decided_again_on_the_next_reconcile() {
    let fake = fake_with(&safe_docs());
    add_policy(&fake, minor());
    let c = ctx(&fake, true);
    fake.fail_next(
        Method::PATCH,
        &format!("installplans/{PLAN}"),
        StatusCode::CONFLICT,
        "Conflict",
    );
    reconcile_ns(&fake, &c).await;
    assert_eq!(plan(&fake)["spec"]["approved"], false);
    reconcile_ns(&fake, &c).await;
    assert_eq!(
        plan_patches(&fake).len(),
        2,
        "the refused patch and the next reconcile's"
    );
    assert_eq!(plan(&fake)["spec"]["approved"], true);
    assert!(
        c.metrics
            .render()
            .contains("olmctl_gate_errors_total{kind=\"conflict\"} 1\n")
    );
    // A plan that really changed under the gate: its new resourceVersion is read again.
    let fake = fake_with(&safe_docs());
    add_policy(&fake, minor());
    let c = ctx(&fake, true);
    let before = plan(&fake)["metadata"]["resourceVersion"].clone();
    fake.merge(
        OLM,
        "installplans",
        NS,
        PLAN,
        &json!({"metadata": {"labels": {"x": "y"}}}),
        false,
    );
    reconcile_ns(&fake, &c).await;
    let p = plan_patches(&fake);
    assert_eq!(p.len(), 1);
    assert_ne!(p[0]["metadata"]["resourceVersion"], before);
}

#[tokio::test]
async fn no_finalizer_a_deleted_policys_annotations_go_and_a_legacy_finalizer_is_removed() {
    let fake = fake_with(&t::example_docs());
    // A policy as earlier releases left it: with their finalizer.
    let mut p = policy(minor());
    p["metadata"]["finalizers"] = json!([LEGACY_FINALIZER]);
    fake.insert("upgradepolicies", p);
    let c = ctx(&fake, true);
    settle(&fake, &c).await;
    assert!(
        get_policy(&fake).metadata.finalizers.is_none(),
        "the legacy finalizer is removed"
    );
    let sub = || {
        fake.get(OLM, "subscriptions", NS, "acme-db-operator")
            .expect("sub")
    };
    assert_eq!(
        sub()["metadata"]["annotations"][DECISION_ANNOTATION],
        format!("{PLAN}: Held")
    );
    fake.delete("olmctl.dev", "upgradepolicies", NS, "default");
    assert!(
        fake.get("olmctl.dev", "upgradepolicies", NS, "default")
            .is_none(),
        "no finalizer: the policy goes at once"
    );
    reconcile_ns(&fake, &c).await;
    assert!(
        sub()["metadata"]["annotations"]
            .get(DECISION_ANNOTATION)
            .is_none()
    );
    assert!(plan_patches(&fake).is_empty());
}

#[tokio::test]
async fn a_replica_without_the_lease_writes_nothing() {
    let fake = fake_with(&safe_docs());
    add_policy(&fake, minor());
    let before = fake.log().len();
    let c = ctx(&fake, false);
    reconcile_ns(&fake, &c).await;
    reconcile_ns(&fake, &c).await;
    let after: Vec<_> = fake.log()[before..]
        .iter()
        .filter(|l| l.method != Method::GET)
        .cloned()
        .collect();
    assert!(after.is_empty(), "{after:?}");
    assert_eq!(plan(&fake)["spec"]["approved"], false);
}

#[tokio::test]
async fn an_invalid_policy_is_degraded_not_an_error() {
    let fake = fake_with(&safe_docs());
    // A start the schema allows (HH:MM) but no clock has: the gate's reader refuses it.
    add_policy(
        &fake,
        json!({"maintenanceWindows": [{"start": "24:00", "duration": "1h"}]}),
    );
    settle(&fake, &ctx(&fake, true)).await;
    let p = fake
        .get("olmctl.dev", "upgradepolicies", NS, "default")
        .expect("p");
    let c = &p["status"]["conditions"];
    assert_eq!(c[1]["type"], "Degraded");
    assert_eq!(c[1]["status"], "True", "{p:#}");
    assert!(plan_patches(&fake).is_empty());
}

#[tokio::test]
async fn a_waiting_plan_is_looked_at_again_at_the_next_window_edge_and_errors_back_off() {
    use olmctl_operator::controller::backoff;
    // Saturday 02:00 Berlin is 2026-09-26T00:00:00Z: 5 days 14 hours after NOW.
    let fake = fake_with(&safe_docs());
    add_policy(
        &fake,
        json!({"maxVersionJump": "minor", "maintenanceWindows": [
            {"days": ["Sat"], "start": "02:00", "duration": "4h", "timeZone": "Europe/Berlin"}]}),
    );
    let c = ctx(&fake, true);
    let next = reconcile_ns(&fake, &c).await;
    assert_eq!(next.at, Some("2026-09-26T00:00:00Z".parse().expect("ts")));
    assert!(plan_patches(&fake).is_empty());
    let st = status_entries(&fake);
    assert_eq!(st[0]["decision"], "Waiting");
    assert_eq!(st[0]["nextCheck"], "2026-09-26T00:00:00Z");
    // Judged once: another reconcile with nothing changed does not judge it again.
    let n = c.evaluations();
    reconcile_ns(&fake, &c).await;
    assert_eq!(c.evaluations(), n);
    // Nothing to wait for: no next time (no polling).
    let fake = fake_with(&safe_docs());
    add_policy(&fake, minor());
    let c2 = ctx(&fake, true);
    assert_eq!(reconcile_ns(&fake, &c2).await.at, None);
    // Errors: 1 s, 2 s, 4 s ... per namespace.
    assert_eq!(
        (1..=4).map(backoff).collect::<Vec<_>>(),
        [1, 2, 4, 8].map(Duration::from_secs)
    );
    assert_eq!(backoff(40), Duration::from_secs(256));
}

/// Issue 28 item 6: an unpacked bundle that inflates beyond its budget holds the plan with the
/// reason, and is decoded once however often the plan is judged again.
#[tokio::test]
async fn an_inflating_bundle_is_held_and_decoded_once() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(b"kind: ConfigMap\nitems: [").expect("gzip");
    gz.write_all(&b"1,".repeat(5 << 20)).expect("gzip");
    gz.write_all(b"]\n").expect("gzip");
    let gz = gz.finish().expect("gzip");
    let bomb = olmctl::encoding::base64(olmctl::encoding::base64(&gz).as_bytes());
    let mut docs = safe_docs();
    let cm = t::find(
        &mut docs,
        "ConfigMap",
        "3529f77e5fa7d467898f3c3e49e6a6f628af7f54a06ff5a13aacef49056a055",
    );
    cm["binaryData"]["bomb.yaml"] = json!(bomb);
    let fake = fake_with(&docs);
    add_policy(&fake, minor());
    let c = ctx(&fake, true);
    settle(&fake, &c).await;
    let st = status_entries(&fake);
    assert_eq!(st[0]["decision"], "Held", "{st:#}");
    let messages = st[0]["reasons"].to_string();
    assert!(messages.contains("GATE004"), "{messages}");
    assert!(
        messages.contains("key bomb.yaml: inflates to more than 8 MiB"),
        "{messages}"
    );
    assert_eq!(plan(&fake)["spec"]["approved"], false);
    // One decoding per bundle ConfigMap the plan references (the example plan has two).
    let decoded = c.decoded.lock().expect("lock").created;
    assert_eq!(decoded, 2);
    let evaluations = c.evaluations();
    // The plan changes (a new resourceVersion): judged again, not decoded again.
    fake.merge(
        OLM,
        "installplans",
        NS,
        PLAN,
        &json!({"metadata": {"annotations": {"touched": "1"}}}),
        false,
    );
    settle(&fake, &c).await;
    settle(&fake, &c).await;
    assert_eq!(status_entries(&fake)[0]["decision"], "Held");
    assert!(c.evaluations() > evaluations, "judged again");
    assert_eq!(
        c.decoded.lock().expect("lock").created,
        decoded,
        "not decoded again"
    );
}
