//! The real `olmctl-operator run` binary as pods against the API double served over HTTP:
//! each replica with its own address, a kubeconfig with its own ServiceAccount token, and the
//! RBAC OLM would create from the bundle's CSV under an AllNamespaces OperatorGroup
//! (`olmctl_testkit::olm::rbac`), so every call the operator makes is authorized as on a
//! cluster.
//!
//! `OLMCTL_OPERATOR_BIN` runs another build of the binary (how these tests were shown to fail
//! on the release before the fixes).

mod common;

use std::time::{Duration, Instant};

use common::pods::*;
use common::*;
use olmctl_testkit::api::ApiServer;
use olmctl_testkit::process::eventually;
use serde_json::{Value, json};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_replicas_become_ready_though_only_one_leads() {
    // Defect A: readiness was tied to the Lease, so the standby never became Ready and a
    // Deployment of two replicas never became Available.
    let api = operator_cluster();
    let server = api.serve_on_loopback();
    let a = start(&api, &server, "olmctl-operator-a", &[]);
    let b = start(&api, &server, "olmctl-operator-b", &[]);
    let both = eventually(Duration::from_secs(30), || async {
        a.ready().await && b.ready().await
    })
    .await;
    assert!(both, "both replicas Ready\n{}", show(&[&a, &b]));
    // Readiness no longer waits for the Lease, so both can be Ready before either has
    // acquired it: wait for a holder, then check that it is exactly one of them.
    let held = eventually(Duration::from_secs(30), || async {
        !holder(&api).is_empty()
    })
    .await;
    let h = holder(&api);
    assert!(held, "someone takes the Lease\n{}", show(&[&a, &b]));
    assert!(
        h.starts_with("olmctl-operator-a") ^ h.starts_with("olmctl-operator-b"),
        "one holds the Lease: {h:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_releases_the_lease_and_exits_0() {
    // Defect I: only SIGINT was handled and the Lease was never released, so after a
    // rollout's SIGTERM the next replica waited a whole lease duration.
    let api = operator_cluster();
    let server = api.serve_on_loopback();
    let mut a = start(&api, &server, "olmctl-operator-a", &[]);
    let held = eventually(Duration::from_secs(30), || async {
        holder(&api).starts_with("olmctl-operator-a")
    })
    .await;
    assert!(held, "a leads\n{}", a.proc.output());
    let transitions = lease(&api)["spec"]["leaseTransitions"].clone();
    a.terminate_exits_0().await;
    let l = lease(&api);
    assert_eq!(l["spec"]["holderIdentity"], "", "released: {l:#}");
    assert_eq!(l["spec"]["leaseDurationSeconds"], 1);
    assert_eq!(l["spec"]["leaseTransitions"], transitions);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_standby_takes_over_a_killed_leader_and_a_cut_off_leader_stops_first() {
    // Defect I: client-go's semantics with short timings (lease 3 s, renew deadline 2 s,
    // retry 500 ms).
    let timing = FAST_ELECTION;
    let lease_duration = Duration::from_secs(3);
    let jitter = Duration::from_millis(1100); // retry period x (1 + 1.2)
    let api = operator_cluster();
    let server = api.serve_on_loopback();
    let mut a = start(&api, &server, "olmctl-operator-a", &timing);
    assert!(
        eventually(Duration::from_secs(30), || async {
            holder(&api).starts_with("olmctl-operator-a")
        })
        .await,
        "a leads\n{}",
        a.proc.output()
    );
    let b = start(&api, &server, "olmctl-operator-b", &timing);
    assert!(
        eventually(Duration::from_secs(30), || async { b.ready().await }).await,
        "{}",
        b.proc.output()
    );
    // Killed (no release): b takes over once it has seen no renewal for the lease duration.
    a.proc.kill();
    let killed = Instant::now();
    assert!(
        eventually(Duration::from_secs(30), || async {
            holder(&api).starts_with("olmctl-operator-b")
        })
        .await,
        "{}",
        show(&[&a, &b])
    );
    let took = killed.elapsed();
    // b saw the last renewal at most a retry period before the kill; it tries every retry
    // period (with jitter) and takes over one lease duration after that (1 s of slack for
    // a loaded machine).
    assert!(
        took <= lease_duration + jitter + Duration::from_secs(1),
        "took over after {took:?}"
    );
    assert!(
        took >= lease_duration - Duration::from_millis(600),
        "too early: {took:?}"
    );
    assert_eq!(lease(&api)["spec"]["leaseTransitions"], 1);

    // Cut off from the API server, the leader stops acting (exits, leadership lost) before
    // the standby can acquire.
    let c = start(&api, &server, "olmctl-operator-c", &timing);
    assert!(
        eventually(Duration::from_secs(30), || async { c.ready().await }).await,
        "{}",
        c.proc.output()
    );
    api.partition(&b.token);
    let mut b = b;
    let mut stopped = None;
    let mut taken = None;
    let end = Instant::now() + Duration::from_secs(30);
    while (stopped.is_none() || taken.is_none()) && Instant::now() < end {
        if stopped.is_none() && b.proc.exited().is_some() {
            stopped = Some(Instant::now());
        }
        if taken.is_none() && holder(&api).starts_with("olmctl-operator-c") {
            taken = Some(Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    api.heal(&b.token);
    let (Some(stopped), Some(taken)) = (stopped, taken) else {
        panic!("stopped {stopped:?}, taken {taken:?}\n{}", show(&[&b, &c]));
    };
    assert!(
        stopped < taken,
        "the cut-off leader stopped {:?} after the standby took over\n{}",
        stopped - taken,
        show(&[&b, &c])
    );
    assert_eq!(b.proc.exited().and_then(|s| s.code()), Some(1));
    assert!(
        b.proc.output().contains("leader election lost"),
        "{}",
        b.proc.output()
    );
}

/// The example namespace with the CRD made safe, and `policies` (name, spec).
fn gated_cluster(policies: &[(&str, Value)]) -> ApiServer {
    let api = operator_cluster();
    for (_, v) in safe_docs() {
        let kind = v["kind"].as_str().expect("kind");
        api.insert(plural(kind), v);
    }
    for (name, spec) in policies {
        let mut p = policy(spec.clone());
        p["metadata"]["name"] = json!(name);
        api.insert("upgradepolicies", p);
    }
    api
}

fn sub_writes(api: &ApiServer) -> usize {
    writes(api, "subscriptions/acme-db-operator").len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_policies_covering_one_subscription_do_not_rewrite_its_decision_back_and_forth() {
    // Defect B: each policy decided on every plan its Subscriptions owned and wrote its own
    // decision into the same annotation; each write woke the other (a write loop).
    let api = gated_cluster(&[
        ("soak", json!({"minAge": "168h"})),
        ("paused", json!({"paused": true})),
    ]);
    let server = api.serve_on_loopback();
    let a = start(&api, &server, "olmctl-operator-a", &[]);
    let both = eventually(Duration::from_secs(30), || async {
        ["soak", "paused"].iter().all(|n| {
            api.get("olmctl.dev", "upgradepolicies", NS, n)
                .is_some_and(|p| {
                    p["status"]["subscriptions"]
                        .as_array()
                        .is_some_and(|e| !e.is_empty())
                })
        })
    })
    .await;
    assert!(both, "{}", a.proc.output());
    let first = sub_writes(&api);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let later = sub_writes(&api);
    assert_eq!(
        (first, later),
        (1, 1),
        "one annotation write, then none: {:#?}",
        writes(&api, "subscriptions/acme-db-operator")
            .iter()
            .map(|l| l.body.to_string())
            .collect::<Vec<_>>()
    );
    let sub = api
        .get(OLM, "subscriptions", NS, "acme-db-operator")
        .expect("sub");
    assert_eq!(
        sub["metadata"]["annotations"]["olmctl.dev/gate-decision"],
        format!("{PLAN}: Held"),
        "the plan's one decision: held by the paused policy, whatever the other says"
    );
    for n in ["soak", "paused"] {
        let p = api.get("olmctl.dev", "upgradepolicies", NS, n).expect("p");
        assert_eq!(
            p["status"]["subscriptions"][0]["decision"], "Held",
            "{n}: {p:#}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_the_subscription_does_not_point_at_yet_is_not_reported_held() {
    // Defect H: between OLM's status write of a plan and its write of the Subscription, the
    // plan is RequiresApproval and nobody references it; the gate reported it Held (stale,
    // with a Warning Event). Then, once referenced, it is approved with a resourceVersion
    // precondition.
    let mut docs = safe_docs();
    {
        let sub = olmctl::gate::testing::subscription(&mut docs);
        sub["status"]["installPlanRef"]["name"] = json!("install-older");
        sub["status"]["installplan"]["name"] = json!("install-older");
        sub["status"]["installPlanGeneration"] = json!(2);
        sub["status"]["currentCSV"] = json!("acme-db-operator.v1.4.2");
        sub["status"]["state"] = json!("AtLatestKnown");
    }
    let api = operator_cluster();
    for (_, v) in &docs {
        api.insert(plural(v["kind"].as_str().expect("kind")), v.clone());
    }
    api.insert(
        "upgradepolicies",
        policy(json!({"maxVersionJump": "minor"})),
    );
    let server = api.serve_on_loopback();
    let a = start(&api, &server, "olmctl-operator-a", &[]);
    let reconciled = eventually(Duration::from_secs(30), || async {
        api.get("olmctl.dev", "upgradepolicies", NS, "default")
            .is_some_and(|p| p["status"]["conditions"][0]["status"] == "True")
    })
    .await;
    assert!(reconciled, "{}", a.proc.output());
    tokio::time::sleep(Duration::from_secs(2)).await;
    let p = api
        .get("olmctl.dev", "upgradepolicies", NS, "default")
        .expect("p");
    assert_eq!(p["status"]["subscriptions"], json!([]), "{p:#}");
    let held: Vec<Value> = api
        .list("events.k8s.io", "events")
        .into_iter()
        .filter(|e| e["reason"] == "Held")
        .collect();
    assert!(held.is_empty(), "{held:#?}");
    assert_eq!(writes(&api, &format!("installplans/{PLAN}")).len(), 0);
    // OLM points the Subscription at the plan: approved, once, guarded.
    let plan = api.get(OLM, "installplans", NS, PLAN).expect("plan");
    api.merge(
        OLM,
        "subscriptions",
        NS,
        "acme-db-operator",
        &json!({"status": {"installPlanRef": {"name": PLAN}, "installplan": {"name": PLAN},
                           "installPlanGeneration": 3, "currentCSV": "acme-db-operator.v1.5.0",
                           "state": "UpgradePending"}}),
        true,
    );
    let approved = eventually(Duration::from_secs(30), || async {
        api.get(OLM, "installplans", NS, PLAN).expect("plan")["spec"]["approved"] == true
    })
    .await;
    assert!(approved, "{}", a.proc.output());
    let w = writes(&api, &format!("installplans/{PLAN}"));
    assert_eq!(w.len(), 1);
    assert_eq!(
        w[0].body,
        json!({"metadata": {"resourceVersion": plan["metadata"]["resourceVersion"]}, "spec": {"approved": true}})
    );
}
