//! Cost of one event for the controller, with 500 Subscriptions and 2,000 InstallPlans (four
//! per Subscription: three Complete, one pending that it points at) in one namespace of the
//! API double, and a policy whose maintenance window is closed (every pending plan waits, so
//! the state is the same from one event to the next).
//!
//! Measured in this process, per namespace reconcile (`olmctl_operator::controller::reconcile`
//! over the caches' view of the namespace):
//! - cold: the first reconcile, which judges all 500 pending plans and writes every status;
//! - an event that changes nothing a decision reads (OLM rewriting a Subscription's status
//!   time): no plan is judged again;
//! - an event that changes one pending plan: that plan is judged again;
//! - the baseline, what the operator did per event before: list the namespace's
//!   Subscriptions, InstallPlans and CSVs again and judge every pending plan
//!   (`cluster::snapshot` + `evaluate`).
//!
//! Run with `cargo bench -p olmctl-operator --bench events`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use olmctl::gate::decide::{Context, evaluate};
use olmctl_operator::controller::{Ctx, View, reconcile};
use olmctl_operator::leader::Leadership;
use olmctl_operator::metrics::Metrics;
use olmctl_testkit::api::ApiServer;
use serde_json::{Value, json};

const NS: &str = "bench";
const SUBS: usize = 500;
const PLANS_PER_SUB: usize = 4;
const NOW: &str = "2026-09-20T10:00:00Z";

fn csv(i: usize, version: &str) -> Value {
    json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
        "metadata": {"name": format!("op-{i}.v{version}"), "namespace": NS},
        "spec": {"version": version, "displayName": format!("Operator {i}"),
                 "install": {"strategy": "deployment", "spec": {"deployments": []}},
                 "installModes": [{"type": "AllNamespaces", "supported": true}]}
    })
}

fn plan(i: usize, k: usize, pending: bool, sub_uid: &Value) -> Value {
    let name = format!("install-{i}-{k}");
    let target = if pending { "1.1.0" } else { "1.0.0" };
    let csv_name = format!("op-{i}.v{target}");
    let manifest = csv(i, target).to_string();
    json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "InstallPlan",
        "metadata": {"name": name, "namespace": NS, "creationTimestamp": "2026-09-14T08:00:00Z",
                     "ownerReferences": [{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
                                          "name": format!("op-{i}"), "uid": sub_uid}]},
        "spec": {"approval": "Manual", "approved": !pending, "clusterServiceVersionNames": [csv_name],
                 "generation": i * PLANS_PER_SUB + k + 1},
        "status": {"phase": if pending { "RequiresApproval" } else { "Complete" }, "catalogSources": ["catalog"],
                   "plan": [{"resolving": csv_name, "status": "Unknown", "resource": {
                       "group": "operators.coreos.com", "version": "v1alpha1", "kind": "ClusterServiceVersion",
                       "name": csv_name, "sourceName": "catalog", "sourceNamespace": "olm", "manifest": manifest}}]}
    })
}

fn subscription(i: usize) -> Value {
    let pending = format!("install-{i}-{}", PLANS_PER_SUB - 1);
    json!({
        "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
        "metadata": {"name": format!("op-{i}"), "namespace": NS},
        "spec": {"channel": "stable", "name": format!("op-{i}"), "source": "catalog",
                 "sourceNamespace": "olm", "installPlanApproval": "Manual"},
        "status": {"state": "UpgradePending", "currentCSV": format!("op-{i}.v1.1.0"),
                   "installedCSV": format!("op-{i}.v1.0.0"), "lastUpdated": "2026-09-14T08:00:00Z",
                   "installPlanGeneration": i * PLANS_PER_SUB + PLANS_PER_SUB,
                   "installPlanRef": {"name": pending, "namespace": NS}}
    })
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let api = ApiServer::new();
        api.set_now(NOW);
        olmctl_testkit::fixtures::install_olm_crds(&api);
        api.insert("customresourcedefinitions", serde_json::to_value(olmctl_operator::crd::crd()).expect("crd"));
        for i in 0..SUBS {
            let sub = api.insert("subscriptions", subscription(i));
            api.insert("clusterserviceversions", csv(i, "1.0.0"));
            for k in 0..PLANS_PER_SUB {
                api.insert("installplans", plan(i, k, k == PLANS_PER_SUB - 1, &sub["metadata"]["uid"]));
            }
        }
        // Windows on Mondays only; NOW is a Sunday: every pending plan waits.
        api.insert("upgradepolicies", json!({
            "apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
            "metadata": {"name": "default", "namespace": NS},
            "spec": {"maxVersionJump": "minor",
                     "maintenanceWindows": [{"days": ["Mon"], "start": "00:00", "duration": "1h"}]}
        }));
        let leadership = Arc::new(Leadership::default());
        leadership.set_until(Some(tokio::time::Instant::now() + Duration::from_secs(86_400)));
        let now: jiff::Timestamp = NOW.parse().expect("now");
        let ctx = Arc::new(Ctx::new(
            api.client(),
            Arc::new(Metrics::default()),
            leadership,
            Arc::new(move || now),
            Some(semver::Version::new(1, 30, 2)),
        ));
        let client = api.client();
        let list = || async { View::list(&client, NS).await.expect("list") };

        let view = list().await;
        assert_eq!((view.subscriptions.len(), view.install_plans.len()), (SUBS, SUBS * PLANS_PER_SUB));
        let t = Instant::now();
        reconcile(NS, &view, &ctx).await.expect("cold");
        let cold = t.elapsed();
        assert_eq!(ctx.evaluations(), SUBS as u64, "every pending plan judged once");
        let p = api.get("olmctl.dev", "upgradepolicies", NS, "default").expect("policy");
        assert_eq!(p["status"]["subscriptions"].as_array().map(Vec::len), Some(SUBS));

        const ROUNDS: usize = 20;
        // An event that changes nothing a decision reads: OLM rewrites a status time.
        let mut quiet = Duration::ZERO;
        for r in 0..ROUNDS {
            api.merge("operators.coreos.com", "subscriptions", NS, &format!("op-{r}"),
                &json!({"status": {"lastUpdated": format!("2026-09-14T09:{r:02}:00Z")}}), true);
            let view = list().await;
            let before = ctx.evaluations();
            let t = Instant::now();
            reconcile(NS, &view, &ctx).await.expect("quiet");
            quiet += t.elapsed();
            assert_eq!(ctx.evaluations(), before, "nothing judged again");
        }
        // An event that changes one pending plan (a label): that plan is judged again.
        let mut one = Duration::ZERO;
        for r in 0..ROUNDS {
            api.merge("operators.coreos.com", "installplans", NS,
                &format!("install-{r}-{}", PLANS_PER_SUB - 1),
                &json!({"metadata": {"labels": {"touched": r.to_string()}}}), false);
            let view = list().await;
            let before = ctx.evaluations();
            let t = Instant::now();
            reconcile(NS, &view, &ctx).await.expect("one");
            one += t.elapsed();
            assert_eq!(ctx.evaluations(), before + 1, "one plan judged again");
        }
        // The baseline: re-list the namespace and judge everything, per event.
        let policy = olmctl::gate::policy::parse(&serde_json::to_string(&p).expect("json")).expect("policy");
        let mut baseline = Duration::ZERO;
        for _ in 0..ROUNDS {
            let t = Instant::now();
            let objects = olmctl_operator::cluster::snapshot(&client, NS).await.expect("snapshot");
            let d = evaluate(&Context {
                policies: std::slice::from_ref(&policy),
                objects: &objects,
                now,
                kube: Some(&semver::Version::new(1, 30, 2)),
            });
            baseline += t.elapsed();
            assert_eq!(d.len(), SUBS);
        }
        let (view, list_time) = {
            let t = Instant::now();
            let v = list().await;
            (v, t.elapsed())
        };
        let _ = timed(|| view.install_plans.len());
        let per = |d: Duration| ms(d) / ROUNDS as f64;
        println!("controller cost per event, {SUBS} Subscriptions and {} InstallPlans ({SUBS} pending) in one namespace:", SUBS * PLANS_PER_SUB);
        println!("  cold reconcile (judges {SUBS} plans, writes status):  {:>9.1} ms", ms(cold));
        println!("  event, nothing a decision reads changed:           {:>9.2} ms", per(quiet));
        println!("  event, one pending plan changed:                   {:>9.2} ms", per(one));
        println!("  baseline (before): re-list + judge every plan:     {:>9.1} ms", per(baseline));
        println!("  ratio baseline / quiet event:                      {:>9.0}x", per(baseline) / per(quiet));
        println!("  ratio baseline / one-plan event:                   {:>9.0}x", per(baseline) / per(one));
        println!("  (a full list of the namespace from the API double: {:>9.1} ms; the operator's caches are fed by watches instead)", ms(list_time));
    });
}
