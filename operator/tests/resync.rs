//! Time without events (defect J): the controller loop (caches, queue, timers) on the API
//! double, with the wall clock.
//!
//! - a maintenance window that opens while nothing happens: the plan waits, then is approved
//!   at the opening, from the timer the decision set (its next window edge);
//! - a change the controller does not watch (a live CRD edited so that the upgrade becomes
//!   safe): the held plan is judged again at the next resync and approved.

mod common;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use common::*;
use olmctl_operator::controller::{Ctx, run};
use olmctl_operator::metrics::Metrics;
use serde_json::json;

/// Starts the controller loop; its clock reads `at` now and runs with the wall clock.
fn start(
    fake: &olmctl_testkit::api::ApiServer,
    resync: Duration,
    at: jiff::Timestamp,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let t0 = std::time::Instant::now();
    let clock: olmctl_operator::Clock =
        Arc::new(move || at + jiff::SignedDuration::try_from(t0.elapsed()).unwrap_or_default());
    let ctx = Arc::new(Ctx::new(
        fake.client(),
        Arc::new(Metrics::default()),
        leadership(true),
        clock,
        Some(semver::Version::new(1, 30, 2)),
    ));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(run(
        ctx,
        None,
        resync,
        Arc::new(AtomicBool::new(false)),
        async move {
            let _ = stopped.await;
        },
    ));
    (stop, task)
}

fn approved(fake: &olmctl_testkit::api::ApiServer) -> bool {
    fake.get(OLM, "installplans", NS, PLAN).expect("plan")["spec"]["approved"] == true
}

fn decision(fake: &olmctl_testkit::api::ApiServer) -> String {
    fake.get("olmctl.dev", "upgradepolicies", NS, "default")
        .and_then(|p| {
            p["status"]["subscriptions"][0]["decision"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_window_that_opens_with_no_event_approves_at_its_opening() {
    let fake = fake_with(&safe_docs());
    // A daily window at 11:00 UTC, one hour long; the controller's clock starts two seconds
    // before it opens and runs with the wall clock.
    add_policy(
        &fake,
        json!({"maxVersionJump": "minor", "maintenanceWindows": [
            {"start": "11:00", "duration": "1h", "timeZone": "UTC"}]}),
    );
    let start_at: jiff::Timestamp = "2026-09-20T11:00:00Z".parse().expect("t");
    let (stop, task) = start(
        &fake,
        Duration::from_secs(3600),
        start_at - jiff::SignedDuration::from_secs(2),
    );
    wait_for(&fake, "the plan to wait", || decision(&fake) == "Waiting").await;
    assert!(!approved(&fake));
    let before = fake.log().len();
    // Nothing happens in the cluster until the window opens; then the plan is approved.
    let end = tokio::time::Instant::now() + Duration::from_secs(15);
    while !approved(&fake) && tokio::time::Instant::now() < end {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let writes_by_others: Vec<_> = fake.log()[before..]
        .iter()
        .filter(|l| {
            l.method != http::Method::GET && !l.uri.contains(&format!("installplans/{PLAN}"))
        })
        .filter(|l| {
            !l.uri.contains("upgradepolicies")
                && !l.uri.contains("/events")
                && !l.uri.contains("subscriptions")
        })
        .map(|l| l.uri.clone())
        .collect();
    assert!(writes_by_others.is_empty(), "{writes_by_others:?}");
    assert!(
        approved(&fake),
        "approved at the opening: {}",
        decision(&fake)
    );
    let _ = stop.send(());
    let _ = task.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_the_controller_does_not_watch_is_seen_at_the_resync() {
    // The example: held for its CRD changes (the new CRD adds a maximum, etc.).
    let fake = fake_with(&olmctl::gate::testing::example_docs());
    add_policy(
        &fake,
        json!({"maxVersionJump": "minor", "crdSafety": "Enforce"}),
    );
    let (stop, task) = start(&fake, Duration::from_secs(2), NOW.parse().expect("now"));
    wait_for(&fake, "the hold", || decision(&fake) == "Held").await;
    // The cause goes where no watch looks: the live CRD (CRDs are read on demand, not
    // watched) takes the bundle's schema, so the upgrade introduces nothing any more.
    let mut docs = olmctl::gate::testing::example_docs();
    let new = olmctl::gate::testing::bundle_crd(&docs);
    let mut live = olmctl::gate::testing::find(
        &mut docs,
        "CustomResourceDefinition",
        "databases.acme.example.com",
    )
    .clone();
    live["spec"] = new["spec"].clone();
    fake.insert("customresourcedefinitions", live);
    let end = tokio::time::Instant::now() + Duration::from_secs(20);
    while !approved(&fake) {
        assert!(
            tokio::time::Instant::now() < end,
            "not judged again at the resync: {}",
            decision(&fake)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = stop.send(());
    let _ = task.await;
}
