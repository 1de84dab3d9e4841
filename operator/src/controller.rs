//! The controller: reconciles UpgradePolicies, woken by their Subscriptions and InstallPlans.
//! Each reconcile reads the namespace (`cluster::snapshot`), asks the library's decision
//! function (`olmctl::gate::decide::evaluate`, the same as `olmctl gate evaluate`), approves
//! what it allows, and records every decision: the policy's status, an Event on the
//! InstallPlan and on the policy, an annotation on the Subscriptions, and metrics.
//!
//! Writes to an InstallPlan are exactly one merge patch, `spec.approved: true` guarded by the
//! resourceVersion the decision was made on; a conflict re-reads and decides again (at most
//! [`CONFLICT_RETRIES`] times in one reconcile, then the error policy backs off).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{Event as Finalizer, finalizer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use olmctl::gate::decide::{Context as GateContext, Decision, Effect, Verdict, evaluate};
use serde_json::json;

use crate::cluster;
use crate::crd::v1::UpgradePolicy;
use crate::crd::{ReasonStatus, SubscriptionStatus, UpgradePolicyStatus};
use crate::metrics::Metrics;

/// The finalizer on UpgradePolicies.
pub const FINALIZER: &str = "olmctl.dev/cleanup";
/// The annotation the gate writes on Subscriptions: `<InstallPlan>: <decision>`.
pub const DECISION_ANNOTATION: &str = "olmctl.dev/gate-decision";
/// Re-reads after a conflicting approval within one reconcile.
pub const CONFLICT_RETRIES: usize = 3;

/// What every reconcile shares.
pub struct Ctx {
    /// The API client.
    pub client: Client,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// Who reports Events.
    pub reporter: Reporter,
    /// Whether this replica holds the Lease.
    pub leader: Arc<AtomicBool>,
    /// The clock.
    pub clock: crate::Clock,
    /// The cluster's Kubernetes version.
    pub kube_version: Option<semver::Version>,
    failures: Mutex<HashMap<String, u32>>,
}

impl Ctx {
    /// A context.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        leader: Arc<AtomicBool>,
        clock: crate::Clock,
        kube_version: Option<semver::Version>,
    ) -> Self {
        Ctx {
            client,
            metrics,
            reporter: Reporter {
                controller: "olmctl-operator".into(),
                instance: std::env::var("POD_NAME").ok(),
            },
            leader,
            clock,
            kube_version,
            failures: Mutex::new(HashMap::new()),
        }
    }
}

/// A reconcile error.
#[derive(Debug)]
pub enum Error {
    /// The API failed.
    Kube(kube::Error),
    /// Approvals kept conflicting.
    Conflict(String),
    /// The finalizer machinery failed.
    Finalizer(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Kube(e) => write!(f, "API error: {e}"),
            Error::Conflict(m) => write!(f, "conflict: {m}"),
            Error::Finalizer(m) => write!(f, "finalizer: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<kube::Error> for Error {
    fn from(e: kube::Error) -> Self {
        Error::Kube(e)
    }
}

fn word(v: Verdict) -> &'static str {
    match v {
        Verdict::Approve => "Approved",
        Verdict::Hold => "Held",
        Verdict::Wait => "Waiting",
    }
}

/// Reconciles one policy (the finalizer first).
pub async fn reconcile(p: Arc<UpgradePolicy>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    if !ctx.leader.load(Ordering::SeqCst) {
        // Another replica holds the Lease: do nothing, look again later.
        return Ok(Action::requeue(Duration::from_secs(15)));
    }
    let start = Instant::now();
    let ns = p.namespace().unwrap_or_default();
    let api: Api<UpgradePolicy> = Api::namespaced(ctx.client.clone(), &ns);
    let key = format!("{ns}/{}", p.name_any());
    let r = finalizer(&api, FINALIZER, p, |ev| async {
        match ev {
            Finalizer::Apply(p) => apply(&p, &ctx).await,
            Finalizer::Cleanup(p) => cleanup(&p, &ctx).await,
        }
    })
    .await;
    ctx.metrics.reconciled(start.elapsed());
    match r {
        Ok(a) => {
            ctx.failures.lock().map(|mut f| f.remove(&key)).ok();
            Ok(a)
        }
        Err(kube::runtime::finalizer::Error::ApplyFailed(e))
        | Err(kube::runtime::finalizer::Error::CleanupFailed(e)) => Err(e),
        Err(e) => Err(Error::Finalizer(e.to_string())),
    }
}

/// Errors back off exponentially per policy: 1 s, 2 s, 4 s ... up to 5 minutes.
pub fn error_policy(p: Arc<UpgradePolicy>, e: &Error, ctx: Arc<Ctx>) -> Action {
    let kind = match e {
        Error::Kube(_) => "api",
        Error::Conflict(_) => "conflict",
        Error::Finalizer(_) => "finalizer",
    };
    ctx.metrics.error(kind);
    let key = format!("{}/{}", p.namespace().unwrap_or_default(), p.name_any());
    let n = ctx
        .failures
        .lock()
        .map(|mut f| {
            let n = f.entry(key.clone()).or_insert(0);
            *n += 1;
            *n
        })
        .unwrap_or(1);
    let delay =
        Duration::from_secs(1u64 << n.min(9).saturating_sub(1)).min(Duration::from_secs(300));
    tracing::warn!(policy = %key, error = %e, retry_in = ?delay, "reconcile failed");
    Action::requeue(delay)
}

async fn apply(p: &UpgradePolicy, ctx: &Ctx) -> Result<Action, Error> {
    let ns = p.namespace().unwrap_or_default();
    let now = (ctx.clock)();
    let text = serde_json::to_string(p).map_err(|e| Error::Kube(kube::Error::SerdeError(e)))?;
    let policy = match olmctl::gate::policy::parse(&text) {
        Ok(x) => x,
        Err(e) => {
            ctx.metrics.error("policy");
            let st = status_of(p, Vec::new(), now, Some(&e.message), 0);
            patch_status(ctx, p, &st).await?;
            return Ok(Action::await_change());
        }
    };
    let mut attempt = 0;
    let (decisions, approved, csvs) = loop {
        let objects = cluster::snapshot(&ctx.client, &ns).await?;
        // Each Subscription's installed and target CSV, for the status.
        let csvs: HashMap<String, (Option<String>, Option<String>)> = objects
            .subscriptions
            .iter()
            .map(|s| {
                let at = |f: &str| {
                    s.str(&["status", f])
                        .filter(|v| !v.is_empty())
                        .map(str::to_string)
                };
                (s.name().to_string(), (at("installedCSV"), at("currentCSV")))
            })
            .collect();
        let decisions = evaluate(&GateContext {
            policy: &policy,
            objects: &objects,
            now,
            kube: ctx.kube_version.as_ref(),
        });
        let mut conflict = None;
        let mut approved = Vec::new();
        for d in decisions.iter().filter(|d| d.decision == Verdict::Approve) {
            match approve(ctx, d).await {
                Ok(()) => approved.push(d.install_plan.clone()),
                Err(kube::Error::Api(s)) if s.code == 409 => {
                    conflict = Some(format!(
                        "InstallPlan {}/{}: {}",
                        d.namespace, d.install_plan, s.message
                    ));
                    break;
                }
                Err(e) => return Err(e.into()),
            }
        }
        match conflict {
            None => break (decisions, approved, csvs),
            Some(c) if attempt + 1 >= CONFLICT_RETRIES => return Err(Error::Conflict(c)),
            Some(c) => {
                tracing::info!(conflict = %c, "the plan changed while it was approved; deciding again");
                ctx.metrics.error("conflict");
                attempt += 1;
            }
        }
    };
    let previous = p.status.clone().unwrap_or_default();
    let mut entries = Vec::new();
    for d in &decisions {
        let reasons: Vec<ReasonStatus> = d
            .reasons
            .iter()
            .map(|r| ReasonStatus {
                code: r.code.into(),
                effect: r.effect.as_str().into(),
                message: r.message.clone(),
            })
            .collect();
        let mut changed = false;
        for sub in &d.subscriptions {
            let old = previous
                .subscriptions
                .iter()
                .find(|x| &x.name == sub && x.install_plan == d.install_plan);
            let same = old.is_some_and(|o| o.decision == word(d.decision) && o.reasons == reasons);
            changed |= !same;
            let (installed, pending) = csvs.get(sub).cloned().unwrap_or_default();
            entries.push(SubscriptionStatus {
                name: sub.clone(),
                installed_csv: installed,
                pending_csv: pending,
                install_plan: d.install_plan.clone(),
                decision: word(d.decision).into(),
                reasons: reasons.clone(),
                since: match old {
                    Some(o) if same => o.since.clone(),
                    _ => now.to_string(),
                },
                next_check: d.requeue_at.map(|t| t.to_string()),
            });
        }
        if changed {
            record(ctx, p, d, approved.contains(&d.install_plan)).await;
        }
    }
    // Approved plans drop out of the decisions once OLM runs them: keep their entries while
    // the plan still exists and the Subscription has no newer one.
    let plan_api = cluster::api(&ctx.client, &ns, "InstallPlan");
    for o in previous
        .subscriptions
        .iter()
        .filter(|o| o.decision == "Approved")
    {
        if entries.iter().all(|x| x.name != o.name)
            && plan_api.get_opt(&o.install_plan).await?.is_some()
        {
            entries.push(o.clone());
        }
    }
    entries.sort_by(|a, b| (&a.name, &a.install_plan).cmp(&(&b.name, &b.install_plan)));
    let st = status_of(p, entries, now, None, decisions.len());
    if p.status
        .as_ref()
        .map(|s| (&s.subscriptions, s.observed_generation))
        != Some((&st.subscriptions, st.observed_generation))
        || p.status.as_ref().map(|s| s.conditions.len()) != Some(2)
    {
        patch_status(ctx, p, &st).await?;
    }
    annotate(ctx, &ns, &decisions).await?;
    let next = decisions.iter().filter_map(|d| d.requeue_at).min();
    Ok(match next {
        Some(t) => {
            let secs = t.duration_since(now).as_secs_f64().max(1.0);
            Action::requeue(Duration::from_secs_f64(secs))
        }
        None => Action::await_change(),
    })
}

/// The one write to an InstallPlan.
async fn approve(ctx: &Ctx, d: &Decision) -> Result<(), kube::Error> {
    let api = cluster::api(&ctx.client, &d.namespace, "InstallPlan");
    let patch = json!({
        "metadata": {"resourceVersion": d.resource_version},
        "spec": {"approved": true},
    });
    api.patch(
        &d.install_plan,
        &PatchParams::default(),
        &Patch::Merge(&patch),
    )
    .await?;
    ctx.metrics.approved();
    tracing::info!(namespace = %d.namespace, install_plan = %d.install_plan, to = ?d.to, "approved");
    Ok(())
}

fn condition(
    type_: &str,
    status: bool,
    reason: &str,
    message: String,
    now: jiff::Timestamp,
    generation: Option<i64>,
) -> Condition {
    Condition {
        type_: type_.into(),
        status: if status { "True" } else { "False" }.into(),
        reason: reason.into(),
        message,
        last_transition_time: Time(crate::to_k8s_time(now)),
        observed_generation: generation,
    }
}

fn status_of(
    p: &UpgradePolicy,
    entries: Vec<SubscriptionStatus>,
    now: jiff::Timestamp,
    error: Option<&str>,
    pending: usize,
) -> UpgradePolicyStatus {
    let generation = p.metadata.generation;
    let previous = p.status.clone().unwrap_or_default();
    let keep = |c: Condition| -> Condition {
        match previous.conditions.iter().find(|o| o.type_ == c.type_) {
            Some(o) if o.status == c.status => Condition {
                last_transition_time: o.last_transition_time.clone(),
                ..c
            },
            _ => c,
        }
    };
    let conditions = match error {
        Some(e) => vec![
            keep(condition(
                "Ready",
                false,
                "InvalidPolicy",
                e.to_string(),
                now,
                generation,
            )),
            keep(condition(
                "Degraded",
                true,
                "InvalidPolicy",
                e.to_string(),
                now,
                generation,
            )),
        ],
        None => {
            let count = |w: &str| {
                let mut plans: Vec<&str> = entries
                    .iter()
                    .filter(|x| x.decision == w)
                    .map(|x| x.install_plan.as_str())
                    .collect();
                plans.sort();
                plans.dedup();
                plans.len()
            };
            let msg = format!(
                "{pending} pending InstallPlan(s): {} approved, {} waiting, {} held",
                count("Approved"),
                count("Waiting"),
                count("Held")
            );
            vec![
                keep(condition("Ready", true, "Evaluated", msg, now, generation)),
                keep(condition(
                    "Degraded",
                    false,
                    "Evaluated",
                    String::new(),
                    now,
                    generation,
                )),
            ]
        }
    };
    UpgradePolicyStatus {
        conditions,
        subscriptions: entries,
        observed_generation: generation,
    }
}

async fn patch_status(ctx: &Ctx, p: &UpgradePolicy, st: &UpgradePolicyStatus) -> Result<(), Error> {
    let api: Api<UpgradePolicy> =
        Api::namespaced(ctx.client.clone(), &p.namespace().unwrap_or_default());
    api.patch_status(
        &p.name_any(),
        &PatchParams::default(),
        &Patch::Merge(json!({"status": st})),
    )
    .await?;
    Ok(())
}

/// An Event on the InstallPlan and on the policy, and the metrics, for a new or changed
/// decision. Event failures are logged, never fatal.
async fn record(ctx: &Ctx, p: &UpgradePolicy, d: &Decision, approved: bool) {
    let codes: Vec<&str> = d
        .reasons
        .iter()
        .filter(|r| r.effect != Effect::Info || r.code == olmctl::gate::decide::OVERRIDE.code)
        .map(|r| r.code)
        .collect();
    ctx.metrics.decision(d.decision.as_str(), &codes);
    let mut note = format!("{} -> {}", d.from.join(", "), d.to.join(", "));
    for r in d
        .reasons
        .iter()
        .filter(|r| r.effect != Effect::Info || r.code == olmctl::gate::decide::OVERRIDE.code)
    {
        note.push_str(&format!("; {}: {}", r.code, r.message));
    }
    if note.len() > 1000 {
        let mut cut = 997;
        while !note.is_char_boundary(cut) {
            cut -= 1;
        }
        note.truncate(cut);
        note.push_str("...");
    }
    let ev = Event {
        type_: if d.decision == Verdict::Hold {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: word(d.decision).into(),
        note: Some(note),
        action: if approved { "Approve" } else { "Evaluate" }.into(),
        secondary: None,
    };
    let recorder = Recorder::new(ctx.client.clone(), ctx.reporter.clone());
    let plan_ref = ObjectReference {
        api_version: Some("operators.coreos.com/v1alpha1".into()),
        kind: Some("InstallPlan".into()),
        name: Some(d.install_plan.clone()),
        namespace: Some(d.namespace.clone()),
        ..Default::default()
    };
    for r in [plan_ref, p.object_ref(&())] {
        if let Err(e) = recorder.publish(&ev, &r).await {
            tracing::warn!(error = %e, "event not recorded");
        }
    }
}

/// The decision annotation on each covered Subscription of a plan, written only when it
/// changes.
async fn annotate(ctx: &Ctx, ns: &str, decisions: &[Decision]) -> Result<(), Error> {
    let api = cluster::api(&ctx.client, ns, "Subscription");
    for d in decisions {
        let value = format!("{}: {}", d.install_plan, word(d.decision));
        for s in &d.subscriptions {
            let Some(sub) = api.get_opt(s).await? else {
                continue;
            };
            if sub.annotations().get(DECISION_ANNOTATION) == Some(&value) {
                continue;
            }
            let patch = json!({"metadata": {"annotations": {DECISION_ANNOTATION: value}}});
            api.patch(s, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
    }
    Ok(())
}

/// On delete: removes the decision annotations of the namespace's Subscriptions and the
/// policy's plan entries; then the finalizer goes.
async fn cleanup(p: &UpgradePolicy, ctx: &Ctx) -> Result<Action, Error> {
    let ns = p.namespace().unwrap_or_default();
    let api = cluster::api(&ctx.client, &ns, "Subscription");
    for s in api.list(&ListParams::default()).await? {
        if s.annotations().contains_key(DECISION_ANNOTATION) {
            let patch = json!({"metadata": {"annotations": {DECISION_ANNOTATION: null}}});
            api.patch(
                &s.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await?;
        }
    }
    if p.status
        .as_ref()
        .is_some_and(|s| !s.subscriptions.is_empty())
    {
        let policies: Api<UpgradePolicy> = Api::namespaced(ctx.client.clone(), &ns);
        policies
            .patch_status(
                &p.name_any(),
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"subscriptions": []}})),
            )
            .await?;
    }
    tracing::info!(policy = %p.name_any(), namespace = %ns, "cleaned up");
    Ok(Action::await_change())
}

/// The controller over every namespace (or one): policies, woken by their namespace's
/// Subscriptions and InstallPlans. Runs until `shutdown` resolves.
pub async fn run(
    ctx: Arc<Ctx>,
    namespace: Option<String>,
    shutdown: impl std::future::Future<Output = ()> + Send + Sync + 'static,
) {
    let client = ctx.client.clone();
    let policies: Api<UpgradePolicy> = match &namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let dyn_api = |kind: &str| -> Api<DynamicObject> {
        let ar = cluster::resource(kind);
        match &namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        }
    };
    let controller = Controller::new(policies, watcher::Config::default());
    let store = controller.store();
    let mapper = move |o: DynamicObject| {
        let ns = o.namespace();
        store
            .state()
            .into_iter()
            .filter(|p| p.namespace() == ns)
            .map(|p| ObjectRef::from_obj(&*p))
            .collect::<Vec<_>>()
    };
    controller
        .watches_with(
            dyn_api("Subscription"),
            cluster::resource("Subscription"),
            watcher::Config::default(),
            mapper.clone(),
        )
        .watches_with(
            dyn_api("InstallPlan"),
            cluster::resource("InstallPlan"),
            watcher::Config::default(),
            mapper,
        )
        .graceful_shutdown_on(shutdown)
        .run(reconcile, error_policy, ctx)
        .for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "controller event");
            }
        })
        .await;
}
