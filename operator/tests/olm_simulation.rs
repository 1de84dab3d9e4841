//! OLM simulation: a test double plays OLM's catalog operator against the in-memory API while
//! the operator runs its real controller loop (watches, queue, reconcile) on the same API.
//!
//! OLM's side, as operator.md §3.7 and §3.10 describe it: the InstallPlan is created with its
//! spec only (empty phase), its status is written in a second write (`RequiresApproval`, the
//! steps, the bundle lookups) and the Subscription then points at it; once approved, the plan
//! goes `Installing` and `Complete` and the Subscription moves on.

mod common;

use common::*;
use olmctl::gate::testing::{self as t, Doc};
use olmctl_operator::controller;
use olmctl_testkit::api::ApiServer as FakeApi;
use serde_json::{Value, json};

/// The double: what it keeps back until it "resolves" the upgrade.
struct Olm {
    fake: FakeApi,
    plan: Value,
    sub_status: Value,
}

impl Olm {
    /// A cluster where acme-db-operator 1.4.2 is installed, its Subscription has just found
    /// 1.5.0, and no plan exists yet.
    fn new(mut docs: Vec<Doc>) -> Olm {
        let plan = t::plan(&mut docs).clone();
        let sub_status = t::subscription(&mut docs)["status"].clone();
        {
            let sub = t::subscription(&mut docs);
            let st = sub["status"].as_object_mut().expect("status");
            st.remove("installPlanRef");
            st.remove("installplan");
            st.insert("state".into(), json!("UpgradeAvailable"));
        }
        docs.retain(|(_, v)| v["kind"] != "InstallPlan");
        Olm {
            fake: fake_with(&docs),
            plan,
            sub_status,
        }
    }

    /// Step 1: Create, spec only (OLM's first write).
    fn create_plan(&self) {
        let mut p = self.plan.clone();
        p.as_object_mut().expect("o").remove("status");
        self.fake.insert("installplans", p);
    }

    /// Step 2: UpdateStatus with the plan's status, then the Subscription points at it.
    fn write_status(&self) {
        self.write_plan_status();
        self.point_subscription();
    }

    /// Step 2a: UpdateStatus of the plan (RequiresApproval, the steps, the lookups).
    fn write_plan_status(&self) {
        self.fake.merge(
            OLM,
            "installplans",
            NS,
            PLAN,
            &json!({"status": self.plan["status"]}),
            true,
        );
    }

    /// Step 2b: the Subscriptions' UpdateStatus (installPlanRef, UpgradePending).
    fn point_subscription(&self) {
        self.fake.merge(
            OLM,
            "subscriptions",
            NS,
            "acme-db-operator",
            &json!({"status": self.sub_status}),
            true,
        );
    }

    /// Step 3: an approved plan runs: Installing, then Complete; the Subscription is at the
    /// new CSV.
    fn install(&self) {
        for phase in ["Installing", "Complete"] {
            self.fake.merge(
                OLM,
                "installplans",
                NS,
                PLAN,
                &json!({"status": {"phase": phase}}),
                true,
            );
        }
        self.fake.merge(
            OLM,
            "subscriptions",
            NS,
            "acme-db-operator",
            &json!({"status": {"state": "AtLatestKnown", "installedCSV": "acme-db-operator.v1.5.0"}}),
            true,
        );
    }

    fn plan_writes(&self) -> usize {
        writes(&self.fake, &format!("installplans/{PLAN}"))
            .iter()
            .filter(|l| !l.uri.contains("/status"))
            .count()
    }

    fn status(&self) -> Value {
        self.fake
            .get("olmctl.dev", "upgradepolicies", NS, "default")
            .map(|p| p["status"].clone())
            .unwrap_or(Value::Null)
    }
}

/// Starts the operator's controller loop on the double's API; returns its stop switch and
/// context.
fn start(
    olm: &Olm,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
    std::sync::Arc<controller::Ctx>,
) {
    let c = ctx(&olm.fake, true);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let synced = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let task = tokio::spawn(controller::run(
        c.clone(),
        None,
        std::time::Duration::from_secs(600),
        synced,
        async move {
            let _ = stopped.await;
        },
    ));
    (stop, task, c)
}

/// Waits until the controller has judged `n` plans in all (its memo misses).
async fn judged(c: &controller::Ctx, n: u64) {
    let end = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
    while c.evaluations() < n {
        assert!(
            tokio::time::Instant::now() < end,
            "timed out: {} judged",
            c.evaluations()
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

fn decision(olm: &Olm) -> Option<String> {
    olm.status()["subscriptions"][0]["decision"]
        .as_str()
        .map(str::to_string)
}

#[tokio::test]
async fn an_allowed_upgrade_is_approved_only_once_olm_has_written_the_plan() {
    let olm = Olm::new(safe_docs());
    add_policy(
        &olm.fake,
        json!({"maxVersionJump": "minor", "crdSafety": "Enforce"}),
    );
    let (stop, task, c) = start(&olm);
    wait_for(&olm.fake, "the policy to be reconciled", || {
        olm.status()["conditions"][0]["status"] == "True"
    })
    .await;

    // OLM's first write: the plan without status. Nobody points at it: no decision, nothing
    // written anywhere.
    olm.create_plan();
    judged(&c, 1).await;
    // OLM's second write: the plan's status (RequiresApproval). The Subscription does not
    // point at it yet: still no decision, and above all no hold (before, the gate reported
    // it Held as stale, GATE002, with a Warning Event).
    olm.write_plan_status();
    judged(&c, 2).await;
    assert_eq!(olm.status()["subscriptions"], json!([]));
    assert!(
        olm.fake.list("events.k8s.io", "events").is_empty(),
        "no Event for OLM's order of writes"
    );
    assert_eq!(
        olm.plan_writes(),
        0,
        "nothing is written to a plan before the Subscription points at it"
    );

    // OLM's third write: the Subscription points at the plan. The gate approves, once.
    olm.point_subscription();
    wait_for(&olm.fake, "the approval", || {
        olm.fake.get(OLM, "installplans", NS, PLAN).expect("plan")["spec"]["approved"] == true
    })
    .await;
    assert_eq!(olm.plan_writes(), 1);
    wait_for(&olm.fake, "the Approved status", || {
        decision(&olm).as_deref() == Some("Approved")
    })
    .await;

    // OLM runs the plan; the gate keeps its record and writes nothing more.
    olm.install();
    wait_for(&olm.fake, "the Subscription to settle", || {
        olm.fake
            .get(OLM, "subscriptions", NS, "acme-db-operator")
            .expect("sub")["status"]["state"]
            == "AtLatestKnown"
    })
    .await;
    let _ = stop.send(());
    task.await.expect("the controller stops");
    assert_eq!(olm.plan_writes(), 1);
    assert_eq!(decision(&olm).as_deref(), Some("Approved"));
    assert_eq!(
        olm.fake.get(OLM, "installplans", NS, PLAN).expect("plan")["status"]["phase"],
        "Complete"
    );
}

#[tokio::test]
async fn a_crd_breaking_upgrade_is_held_with_its_reasons() {
    // The new CRD drops v1alpha1, which the live CRD lists in status.storedVersions.
    let mut docs = t::example_docs();
    let mut crd = t::safe_crd(&docs);
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .retain(|v| v["name"] != "v1alpha1");
    t::set_plan_crd(&mut docs, &crd);
    let olm = Olm::new(docs);
    add_policy(
        &olm.fake,
        json!({"maxVersionJump": "minor", "crdSafety": "Enforce"}),
    );
    let (stop, task, _) = start(&olm);
    olm.create_plan();
    olm.write_status();
    wait_for(&olm.fake, "the hold", || {
        decision(&olm).as_deref() == Some("Held")
    })
    .await;
    let reasons = olm.status()["subscriptions"][0]["reasons"].clone();
    let holds: Vec<&Value> = reasons
        .as_array()
        .expect("reasons")
        .iter()
        .filter(|r| r["effect"] == "hold")
        .collect();
    assert_eq!(holds.len(), 1, "{reasons:#}");
    assert_eq!(holds[0]["code"], "GATE007");
    let m = holds[0]["message"].as_str().expect("message");
    assert!(
        m.contains("new CRD removes version v1alpha1 that is listed as a stored version"),
        "{m}"
    );
    let _ = stop.send(());
    task.await.expect("stops");
    assert_eq!(olm.plan_writes(), 0);
    assert_eq!(
        olm.fake.get(OLM, "installplans", NS, PLAN).expect("plan")["spec"]["approved"],
        false
    );
}
