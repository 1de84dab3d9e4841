//! The controller: judges each namespace's pending InstallPlans by the UpgradePolicies there.
//!
//! Every replica keeps caches of UpgradePolicies, Subscriptions, InstallPlans and CSVs
//! (watches, [`Caches`]); an event queues its namespace. Only the Lease holder reconciles
//! ([`crate::leader::Leadership`]), and each reconcile reads the caches, not the API:
//!
//! - a plan is judged once per (plan, resourceVersion of its inputs): the plan, the
//!   Subscriptions it installs or that point at it, the governing policies' generations, the
//!   installed CSVs and the cluster version ([`Memo`]); the decision is the library's
//!   (`olmctl::gate::decide::evaluate`, the same as `olmctl gate evaluate`), for the
//!   Subscriptions the plan installs, by every policy that covers one of them;
//! - plans no Subscription points at yet get no decision (OLM writes a plan, then points the
//!   Subscriptions at it), so nothing is reported Held for OLM's order of writes;
//! - an approval re-reads the plan, the namespace's Subscriptions and the CRDs and bundles
//!   from the API, decides again, and is one merge patch of `spec.approved: true` guarded by
//!   the plan's resourceVersion, sent only while this replica still leads;
//! - what is recorded (Events, the Subscriptions' decision annotation, metrics) is written
//!   only when a plan's decision changes; each policy's status only when it differs;
//! - the namespace is queued again at the next maintenance-window edge or soak end of its
//!   decisions, and every namespace with a policy at each resync period.
//!
//! OLM v1: the caches also hold ClusterExtensions (an event queues the namespace the extension
//! installs into) and ClusterCatalogs (an event queues every namespace); they are not part of
//! readiness, so a cluster without OLM v1 runs as before. A namespace's reconcile then judges
//! the extensions its policies select ([`crate::extensions`]), moves their pins while leading,
//! and records them on the policies' status (`clusterExtensions`), as Events and metrics.
//!
//! No finalizer: when a policy goes, its namespace's next reconcile (queued by the deletion)
//! removes the decision annotations no policy stands behind any more. A finalizer would block
//! the namespace's deletion and the CRD's removal once the operator is gone, and earlier
//! releases' finalizer `olmctl.dev/cleanup` is removed from policies that carry it.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use olmctl::gate::decide::{Context as GateContext, Decision, Effect, Verdict, evaluate};
use olmctl::gate::extension::{ExtVerdict, ExtensionDecision};
use olmctl::gate::objects::{Object, Objects};
use olmctl::gate::policy::Policy;
use serde_json::{Value, json};

use crate::cluster;
use crate::crd::v1::UpgradePolicy;
use crate::crd::{ReasonStatus, SubscriptionStatus, UpgradePolicyStatus};
use crate::leader::Leadership;
use crate::metrics::Metrics;

/// The finalizer earlier releases put on UpgradePolicies; removed where found.
pub const LEGACY_FINALIZER: &str = "olmctl.dev/cleanup";
/// The annotation the gate writes on Subscriptions: `<InstallPlan>: <decision>` (read by
/// `olmctl status`, whose library holds it).
pub use olmctl::status::DECISION_ANNOTATION;
/// Default period of the full resync.
pub const RESYNC: Duration = Duration::from_secs(600);

/// What every reconcile shares.
pub struct Ctx {
    /// The API client.
    pub client: Client,
    /// The metrics.
    pub metrics: Arc<Metrics>,
    /// Who reports Events.
    pub reporter: Reporter,
    /// Whether this replica leads (and until when).
    pub leadership: Arc<Leadership>,
    /// The clock.
    pub clock: crate::Clock,
    /// The cluster's Kubernetes version.
    pub kube_version: Mutex<Option<semver::Version>>,
    memo: Mutex<Memo>,
    /// Unpacked bundles decoded, by content: a ConfigMap is decoded once however often its
    /// plans are judged (a bundle refused for its size is not inflated on every reconcile).
    pub decoded: Mutex<olmctl::gate::manifests::DecodeCache>,
    /// What this replica last wrote: each policy's status and each Subscription's decision
    /// annotation (the caches may not show a write yet; this replica is the only writer).
    written: Mutex<Written>,
    /// ClusterCatalog content (OLM v1), fetched from catalogd.
    pub catalogs: crate::extensions::Catalogs,
    /// What was last recorded (Events, metrics) per ClusterExtension: the verdict, the pin
    /// and the reasons.
    ext_recorded: Mutex<HashMap<String, ExtSig>>,
}

/// What an extension's recorded decision is compared by.
type ExtSig = (
    olmctl::gate::extension::ExtVerdict,
    Option<String>,
    Vec<(String, String)>,
);

/// The last writes of this replica, by `namespace/name`.
#[derive(Default)]
struct Written {
    status: HashMap<String, UpgradePolicyStatus>,
    annotations: HashMap<String, Option<String>>,
}

impl Ctx {
    /// A context.
    pub fn new(
        client: Client,
        metrics: Arc<Metrics>,
        leadership: Arc<Leadership>,
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
            leadership,
            clock,
            kube_version: Mutex::new(kube_version),
            memo: Mutex::new(Memo::default()),
            decoded: Mutex::default(),
            written: Mutex::new(Written::default()),
            catalogs: crate::extensions::Catalogs::default(),
            ext_recorded: Mutex::new(HashMap::new()),
        }
    }

    fn kube(&self) -> Option<semver::Version> {
        self.kube_version.lock().ok().and_then(|k| k.clone())
    }

    /// How many plan judgements the memo holds (for tests and the benchmark).
    pub fn judged(&self) -> usize {
        self.memo.lock().map(|m| m.plans.len()).unwrap_or(0)
    }

    /// How many times a plan was judged (memo misses) since start.
    pub fn evaluations(&self) -> u64 {
        self.memo.lock().map(|m| m.evaluations).unwrap_or(0)
    }
}

/// A reconcile error.
#[derive(Debug)]
pub enum Error {
    /// The API failed.
    Kube(kube::Error),
    /// The plan changed while it was approved.
    Conflict(String),
    /// A ClusterCatalog's content could not be read (OLM v1).
    Catalog(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Kube(e) => write!(f, "API error: {e}"),
            Error::Conflict(m) => write!(f, "conflict: {m}"),
            Error::Catalog(m) => write!(f, "catalog content: {m}"),
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

/// One plan's last judgement.
#[derive(Clone)]
struct Judged {
    fingerprint: String,
    decision: Decision,
    /// What was last recorded (Events, annotation): the verdict and reasons.
    recorded: Option<(Verdict, Vec<(String, String)>)>,
}

/// Judgements by plan (namespace/name), and object parses by uid.
#[derive(Default)]
struct Memo {
    plans: HashMap<String, Judged>,
    parsed: HashMap<String, (String, Object)>,
    evaluations: u64,
}

/// The caches one namespace reconcile reads.
#[derive(Default, Clone)]
pub struct View {
    /// UpgradePolicies.
    pub policies: Vec<Arc<UpgradePolicy>>,
    /// Subscriptions.
    pub subscriptions: Vec<Arc<DynamicObject>>,
    /// InstallPlans.
    pub install_plans: Vec<Arc<DynamicObject>>,
    /// ClusterServiceVersions.
    pub csvs: Vec<Arc<DynamicObject>>,
    /// ClusterExtensions installing into the namespace (OLM v1).
    pub cluster_extensions: Vec<Arc<DynamicObject>>,
    /// Every ClusterCatalog (OLM v1).
    pub cluster_catalogs: Vec<Arc<DynamicObject>>,
    /// Whether the two above are known (OLM v1's caches synced, or listed): when not, the
    /// policies' extension entries are left as they are.
    pub extensions_known: bool,
}

impl View {
    /// The namespace as the API has it now (for tests and the approval's re-check).
    pub async fn list(client: &Client, ns: &str) -> Result<View, kube::Error> {
        let lp = ListParams::default();
        let policies: Api<UpgradePolicy> = Api::namespaced(client.clone(), ns);
        let dy = |kind: &str| cluster::api(client, ns, kind);
        Ok(View {
            policies: policies
                .list(&lp)
                .await?
                .items
                .into_iter()
                .map(Arc::new)
                .collect(),
            subscriptions: dy("Subscription")
                .list(&lp)
                .await?
                .items
                .into_iter()
                .map(Arc::new)
                .collect(),
            install_plans: dy("InstallPlan")
                .list(&lp)
                .await?
                .items
                .into_iter()
                .map(Arc::new)
                .collect(),
            csvs: dy("ClusterServiceVersion")
                .list(&lp)
                .await?
                .items
                .into_iter()
                .map(Arc::new)
                .collect(),
            cluster_extensions: list_v1(client, "ClusterExtension")
                .await?
                .into_iter()
                .filter(|c| crate::extensions::in_namespace(c, ns))
                .collect(),
            cluster_catalogs: list_v1(client, "ClusterCatalog").await?,
            extensions_known: true,
        })
    }
}

/// Whether a watch failed because its resource is not served (the list is a 404: the CRD is
/// not installed).
fn not_served(e: &watcher::Error) -> bool {
    matches!(e, watcher::Error::InitialListFailed(kube::Error::Api(s)) if s.code == 404)
}

/// Every object of an OLM v1 kind; none when OLM v1 is not installed (404).
async fn list_v1(client: &Client, kind: &str) -> Result<Vec<Arc<DynamicObject>>, kube::Error> {
    match crate::extensions::cluster_api(client, kind)
        .list(&ListParams::default())
        .await
    {
        Ok(l) => Ok(l.items.into_iter().map(Arc::new).collect()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// The watches every replica keeps.
#[derive(Clone)]
pub struct Caches {
    policies: Store<UpgradePolicy>,
    subscriptions: Store<DynamicObject>,
    install_plans: Store<DynamicObject>,
    csvs: Store<DynamicObject>,
    cluster_extensions: Store<DynamicObject>,
    cluster_catalogs: Store<DynamicObject>,
}

impl Caches {
    /// One namespace's objects.
    pub fn view(&self, ns: &str) -> View {
        let in_ns = |o: &DynamicObject| o.namespace().as_deref() == Some(ns);
        View {
            policies: self
                .policies
                .state_filter(|p| p.namespace().as_deref() == Some(ns)),
            subscriptions: self.subscriptions.state_filter(in_ns),
            install_plans: self.install_plans.state_filter(in_ns),
            csvs: self.csvs.state_filter(in_ns),
            cluster_extensions: self
                .cluster_extensions
                .state_filter(|c| crate::extensions::in_namespace(c, ns)),
            cluster_catalogs: self.cluster_catalogs.state(),
            extensions_known: self.extensions_synced(),
        }
    }

    /// Whether OLM v1's caches have listed (never, on a cluster without OLM v1: they are not
    /// part of readiness, and extensions are then left alone).
    pub fn extensions_synced(&self) -> bool {
        use futures::FutureExt;
        self.cluster_extensions
            .wait_until_ready()
            .now_or_never()
            .is_some_and(|r| r.is_ok())
            && self
                .cluster_catalogs
                .wait_until_ready()
                .now_or_never()
                .is_some_and(|r| r.is_ok())
    }

    /// Every namespace with a policy, or with a Subscription the gate annotated.
    pub fn namespaces(&self) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = self
            .policies
            .state()
            .iter()
            .filter_map(|p| p.namespace())
            .collect();
        for s in self.subscriptions.state() {
            if s.annotations().contains_key(DECISION_ANNOTATION)
                && let Some(ns) = s.namespace()
            {
                out.insert(ns);
            }
        }
        out
    }

    /// Resolves once every cache has listed its objects.
    pub async fn synced(&self) {
        let _ = futures::future::join4(
            self.policies.wait_until_ready(),
            self.subscriptions.wait_until_ready(),
            self.install_plans.wait_until_ready(),
            self.csvs.wait_until_ready(),
        )
        .await;
    }
}

/// Starts the watches (each queues the namespace of every object it sees change); returns
/// the caches and the task driving them.
pub fn start_caches(
    client: &Client,
    namespace: Option<&str>,
    queue: tokio::sync::mpsc::UnboundedSender<String>,
) -> (Caches, tokio::task::JoinHandle<()>) {
    fn drive<K>(
        api: Api<K>,
        writer: reflector::store::Writer<K>,
        queue: tokio::sync::mpsc::UnboundedSender<String>,
    ) -> futures::stream::BoxStream<'static, ()>
    where
        K: Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + Send + Sync + 'static,
        K::DynamicType: Clone + Eq + std::hash::Hash + Default,
    {
        let _ = &api;
        watcher(api, watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .filter_map(move |ev| {
                let q = queue.clone();
                async move {
                    match ev {
                        Ok(watcher::Event::Apply(o) | watcher::Event::Delete(o)) => {
                            if let Some(ns) = o.meta().namespace.clone() {
                                let _ = q.send(ns);
                            }
                        }
                        Ok(watcher::Event::InitApply(o)) => {
                            if let Some(ns) = o.meta().namespace.clone() {
                                let _ = q.send(ns);
                            }
                        }
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "watch failed; retrying"),
                    }
                    Some(())
                }
            })
            .boxed()
    }
    fn drive_dyn(
        api: Api<DynamicObject>,
        ar: ApiResource,
        queue: tokio::sync::mpsc::UnboundedSender<String>,
        key: fn(&DynamicObject) -> Option<String>,
        synced_queues_all: bool,
    ) -> (
        Store<DynamicObject>,
        futures::stream::BoxStream<'static, ()>,
    ) {
        let kind = ar.kind.clone();
        let writer = reflector::store::Writer::new(ar);
        let reader = writer.as_reader();
        // Whether the kind was found not served (and said so) since its last event.
        let missing = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s = watcher(api, watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .filter_map(move |ev| {
                let q = queue.clone();
                let missing = missing.clone();
                let kind = kind.clone();
                async move {
                    if ev.is_ok() {
                        missing.store(false, std::sync::atomic::Ordering::Relaxed);
                    }
                    match ev {
                        Ok(
                            watcher::Event::Apply(o)
                            | watcher::Event::Delete(o)
                            | watcher::Event::InitApply(o),
                        ) => {
                            if let Some(ns) = key(&o) {
                                let _ = q.send(ns);
                            }
                        }
                        // A cache outside readiness (OLM v1's) is ready now: everything again.
                        Ok(watcher::Event::InitDone) if synced_queues_all => {
                            let _ = q.send(ALL.to_string());
                        }
                        Ok(_) => {}
                        // The kind is not served (OLM v1, or v0, is not installed): said once,
                        // then looked for again quietly with the watcher's backoff.
                        Err(e) if not_served(&e) => {
                            if missing.swap(true, std::sync::atomic::Ordering::Relaxed) {
                                tracing::debug!(kind = %kind, "still not served");
                            } else {
                                tracing::info!(
                                    kind = %kind,
                                    "not served by this cluster (its OLM is not installed); the gate looks for it again with backoff"
                                );
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "watch failed; retrying"),
                    }
                    Some(())
                }
            })
            .boxed();
        (reader, s)
    }
    let dyn_api = |kind: &str| -> Api<DynamicObject> {
        let ar = cluster::resource(kind);
        match namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
            None => Api::all_with(client.clone(), &ar),
        }
    };
    let papi: Api<UpgradePolicy> = match namespace {
        Some(ns) => Api::namespaced(client.clone(), ns),
        None => Api::all(client.clone()),
    };
    let (preader, pwriter) = reflector::store::<UpgradePolicy>();
    let p = drive(papi, pwriter, queue.clone());
    let own_ns = |o: &DynamicObject| o.namespace();
    let (subs, s) = drive_dyn(
        dyn_api("Subscription"),
        cluster::resource("Subscription"),
        queue.clone(),
        own_ns,
        false,
    );
    let (plans, i) = drive_dyn(
        dyn_api("InstallPlan"),
        cluster::resource("InstallPlan"),
        queue.clone(),
        own_ns,
        false,
    );
    let (csvs, c) = drive_dyn(
        dyn_api("ClusterServiceVersion"),
        cluster::resource("ClusterServiceVersion"),
        queue.clone(),
        own_ns,
        false,
    );
    // OLM v1's objects are cluster-scoped: an extension queues the namespace it installs into
    // (whose policies govern it), a catalog every namespace ([`ALL`]).
    let (ces, e) = drive_dyn(
        crate::extensions::cluster_api(client, "ClusterExtension"),
        cluster::resource("ClusterExtension"),
        queue.clone(),
        |o| {
            o.data
                .pointer("/spec/namespace")
                .and_then(Value::as_str)
                .map(str::to_string)
        },
        true,
    );
    let (ccs, k) = drive_dyn(
        crate::extensions::cluster_api(client, "ClusterCatalog"),
        cluster::resource("ClusterCatalog"),
        queue,
        |_| Some(ALL.to_string()),
        true,
    );
    let task = tokio::spawn(async move {
        futures::stream::select_all([p, s, i, c, e, k])
            .for_each(|_| async {})
            .await;
    });
    (
        Caches {
            policies: preader,
            subscriptions: subs,
            install_plans: plans,
            csvs,
            cluster_extensions: ces,
            cluster_catalogs: ccs,
        },
        task,
    )
}

/// The queue's key for "every namespace" (a ClusterCatalog changed); no namespace is named so.
pub const ALL: &str = "*";

/// When to look at the namespace again.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Next {
    /// The earliest window edge or soak end of its decisions.
    pub at: Option<jiff::Timestamp>,
}

fn parse_object(memo: &mut Memo, kind: &str, o: &DynamicObject) -> Option<Object> {
    let uid = o.uid().unwrap_or_default();
    let rv = o.resource_version().unwrap_or_default();
    if let Some((r, parsed)) = memo.parsed.get(&uid)
        && *r == rv
        && !uid.is_empty()
    {
        return Some(parsed.clone());
    }
    let mut v = serde_json::to_value(o).ok()?;
    let ar = cluster::resource(kind);
    v["apiVersion"] = Value::String(ar.api_version.clone());
    v["kind"] = Value::String(kind.into());
    let name = format!(
        "cluster/{kind}/{}/{}",
        o.namespace().unwrap_or_default(),
        o.name_any()
    );
    let mut objects = Objects::default();
    objects.add_text(Path::new(&name), &v.to_string()).ok()?;
    let parsed = match kind {
        "Subscription" => objects.subscriptions.pop(),
        "InstallPlan" => objects.install_plans.pop(),
        _ => objects.csvs.pop(),
    }?;
    if !uid.is_empty() {
        memo.parsed.insert(uid, (rv, parsed.clone()));
    }
    Some(parsed)
}

fn ds<'a>(o: &'a DynamicObject, ptr: &str) -> &'a str {
    o.data.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// Whether the gate looks at a plan at all (Manual, not approved, not past approval).
fn pending(plan: &DynamicObject) -> bool {
    ds(plan, "/spec/approval") == "Manual"
        && plan.data.pointer("/spec/approved").and_then(Value::as_bool) != Some(true)
        && !matches!(
            ds(plan, "/status/phase"),
            "Installing" | "Complete" | "Failed"
        )
}

/// What of a Subscription a decision reads: its labels (policy selectors), annotations but
/// the gate's own (the override), and where it stands (target, installed CSV, current plan,
/// its generation). OLM rewrites a Subscription's status often (catalog health, times) and
/// the gate annotates it; neither changes a decision.
fn sub_digest(sub: &DynamicObject) -> String {
    let mut ann: BTreeMap<&String, &String> = sub.annotations().iter().collect();
    ann.remove(&DECISION_ANNOTATION.to_string());
    let labels: BTreeMap<&String, &String> = sub.labels().iter().collect();
    format!(
        "{labels:?}{ann:?}{}|{}|{}|{:?}",
        ds(sub, "/status/currentCSV"),
        ds(sub, "/status/installedCSV"),
        ds(sub, "/status/installPlanRef/name"),
        sub.data.pointer("/status/installPlanGeneration")
    )
}

/// The namespace's Subscriptions indexed for [`fingerprint`].
struct SubIndex<'a> {
    by_target: HashMap<&'a str, Vec<&'a DynamicObject>>,
    by_plan: HashMap<&'a str, Vec<&'a DynamicObject>>,
    max_generation: i64,
}

impl<'a> SubIndex<'a> {
    fn new(subs: &'a [Arc<DynamicObject>]) -> Self {
        let mut ix = SubIndex {
            by_target: HashMap::new(),
            by_plan: HashMap::new(),
            max_generation: 0,
        };
        for sub in subs {
            ix.by_target
                .entry(ds(sub, "/status/currentCSV"))
                .or_default()
                .push(sub);
            ix.by_plan
                .entry(ds(sub, "/status/installPlanRef/name"))
                .or_default()
                .push(sub);
            ix.max_generation = ix.max_generation.max(
                sub.data
                    .pointer("/status/installPlanGeneration")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
            );
        }
        ix
    }
}

/// The inputs a plan's decision depends on, as one string: the plan (its resourceVersion),
/// what matters of the Subscriptions it installs or that point at it and of their installed
/// CSVs (uid and generation: spec changes), the highest plan generation the namespace's
/// Subscriptions reached (stale or not), the policies' generations and labels, and the
/// cluster version.
fn fingerprint(
    plan: &DynamicObject,
    subs: &SubIndex<'_>,
    policies: &[(String, i64, String)],
    csvs: &HashMap<String, String>,
    kube: &Option<semver::Version>,
) -> String {
    let name = plan.name_any();
    let mut f = format!(
        "{}@{}|",
        plan.uid().unwrap_or_default(),
        plan.resource_version().unwrap_or_default()
    );
    let mut involved: Vec<&DynamicObject> = Vec::new();
    for n in plan
        .data
        .pointer("/spec/clusterServiceVersionNames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        involved.extend(subs.by_target.get(n).into_iter().flatten());
    }
    involved.extend(subs.by_plan.get(name.as_str()).into_iter().flatten());
    involved.sort_by_key(|s| s.name_any());
    involved.dedup_by_key(|s| s.name_any());
    for sub in involved {
        f.push_str(&format!("{}={};", sub.name_any(), sub_digest(sub)));
        let installed = ds(sub, "/status/installedCSV");
        if let Some(g) = csvs.get(installed) {
            f.push_str(&format!("{installed}@{g};"));
        }
    }
    f.push_str(&format!("|gen{}|", subs.max_generation));
    for (n, g, labels) in policies {
        f.push_str(&format!("{n}#{g}{labels};"));
    }
    f.push_str(&format!("|{kube:?}"));
    f
}

/// Reconciles namespace `ns` from `view`; approves what its policies allow and records the
/// decisions. Only a leading replica calls it.
pub async fn reconcile(ns: &str, view: &View, ctx: &Ctx) -> Result<Next, Error> {
    let start = std::time::Instant::now();
    let r = reconcile_inner(ns, view, ctx).await;
    ctx.metrics.reconciled(start.elapsed());
    r
}

async fn reconcile_inner(ns: &str, view: &View, ctx: &Ctx) -> Result<Next, Error> {
    if !ctx.leadership.is_leader() {
        // Another replica holds the Lease: write nothing.
        return Ok(Next::default());
    }
    let now = (ctx.clock)();
    let kube = ctx.kube();
    // The policies: earlier releases' finalizer removed; unreadable ones reported.
    let mut policies: Vec<(Arc<UpgradePolicy>, Policy)> = Vec::new();
    for p in &view.policies {
        if p.finalizers().iter().any(|f| f == LEGACY_FINALIZER) {
            drop_legacy_finalizer(ctx, p).await?;
        }
        if p.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let text =
            serde_json::to_string(&**p).map_err(|e| Error::Kube(kube::Error::SerdeError(e)))?;
        match olmctl::gate::policy::parse(&text) {
            Ok(x) => policies.push((p.clone(), x)),
            Err(e) => {
                ctx.metrics.error("policy");
                let st = status_of(
                    p,
                    &last_status(ctx, p),
                    Vec::new(),
                    now,
                    Some(&e.message),
                    0,
                );
                patch_status_if_changed(ctx, p, &st).await?;
            }
        }
    }
    policies.sort_by(|a, b| a.1.name.cmp(&b.1.name));
    let gate_policies: Vec<Policy> = policies.iter().map(|(_, p)| p.clone()).collect();
    let policy_keys: Vec<(String, i64, String)> = policies
        .iter()
        .map(|(p, _)| {
            (
                p.name_any(),
                p.metadata.generation.unwrap_or(0),
                format!("{:?}", p.labels()),
            )
        })
        .collect();

    let sub_index = SubIndex::new(&view.subscriptions);
    let csv_rvs: HashMap<String, String> = view
        .csvs
        .iter()
        .map(|c| {
            (
                c.name_any(),
                format!(
                    "{}/{}",
                    c.uid().unwrap_or_default(),
                    c.metadata.generation.unwrap_or(0)
                ),
            )
        })
        .collect();

    // Which pending plans need judging (their inputs changed, or their decision expired).
    let mut decisions: Vec<Decision> = Vec::new();
    let mut to_judge: Vec<(Arc<DynamicObject>, String)> = Vec::new();
    let mut keys_now = HashSet::new();
    {
        let memo = ctx.memo.lock().expect("memo");
        for p in &view.install_plans {
            if !pending(p) || gate_policies.is_empty() {
                continue;
            }
            let key = format!("{ns}/{}", p.name_any());
            keys_now.insert(key.clone());
            let fp = fingerprint(p, &sub_index, &policy_keys, &csv_rvs, &kube);
            match memo.plans.get(&key) {
                Some(j)
                    if j.fingerprint == fp
                        && j.decision.valid_until.is_none_or(|t| now < t)
                        && j.decision.decision != Verdict::Approve =>
                {
                    decisions.push(j.decision.clone());
                }
                _ => to_judge.push((p.clone(), fp)),
            }
        }
    }
    if !to_judge.is_empty() {
        let mut objects = {
            let mut memo = ctx.memo.lock().expect("memo");
            let subscriptions = view
                .subscriptions
                .iter()
                .filter_map(|x| parse_object(&mut memo, "Subscription", x))
                .collect();
            let csvs = view
                .csvs
                .iter()
                .filter_map(|x| parse_object(&mut memo, "ClusterServiceVersion", x))
                .collect();
            let install_plans = to_judge
                .iter()
                .filter_map(|(x, _)| parse_object(&mut memo, "InstallPlan", x))
                .collect();
            memo.evaluations += to_judge.len() as u64;
            Objects {
                subscriptions,
                csvs,
                install_plans,
                ..Objects::default()
            }
        };
        cluster::add_content(&ctx.client, &mut objects).await?;
        ctx.decoded.lock().expect("decoded").share(&mut objects);
        let fresh = evaluate(&GateContext {
            policies: &gate_policies,
            objects: &objects,
            now,
            kube: kube.as_ref(),
        });
        let mut memo = ctx.memo.lock().expect("memo");
        for (p, fp) in &to_judge {
            let key = format!("{ns}/{}", p.name_any());
            match fresh.iter().find(|d| d.install_plan == p.name_any()) {
                Some(d) => {
                    let recorded = memo.plans.get(&key).and_then(|j| j.recorded.clone());
                    memo.plans.insert(
                        key,
                        Judged {
                            fingerprint: fp.clone(),
                            decision: d.clone(),
                            recorded,
                        },
                    );
                    decisions.push(d.clone());
                }
                None => {
                    // No decision (nobody points at it yet, or no policy governs it).
                    memo.plans.remove(&key);
                }
            }
        }
    }
    {
        let mut memo = ctx.memo.lock().expect("memo");
        let prefix = format!("{ns}/");
        memo.plans
            .retain(|k, _| !k.starts_with(&prefix) || keys_now.contains(k));
        let live: HashSet<String> = view
            .subscriptions
            .iter()
            .chain(&view.install_plans)
            .chain(&view.csvs)
            .filter_map(|o| o.uid())
            .collect();
        if memo.parsed.len() > 4 * live.len() + 1024 {
            memo.parsed.retain(|k, _| live.contains(k));
        }
    }
    decisions.sort_by(|a, b| a.install_plan.cmp(&b.install_plan));

    // Approvals, each after a fresh re-check against the API.
    let mut approved: Vec<String> = Vec::new();
    for d in decisions.iter_mut() {
        if d.decision != Verdict::Approve || !d.current {
            continue;
        }
        match approve_checked(ctx, ns, d, &gate_policies, now, kube.as_ref()).await? {
            Some(re) => {
                approved.push(re.install_plan.clone());
                *d = re;
            }
            None => {
                // Changed under us: judge it again next time.
                ctx.memo
                    .lock()
                    .expect("memo")
                    .plans
                    .remove(&format!("{ns}/{}", d.install_plan));
            }
        }
    }

    // Record what changed: Events, metrics, the Subscriptions' annotation.
    let current: Vec<&Decision> = decisions.iter().filter(|d| d.current).collect();
    for d in &current {
        let key = format!("{ns}/{}", d.install_plan);
        let sig = (
            d.decision,
            d.reasons
                .iter()
                .map(|r| (r.code.to_string(), r.message.clone()))
                .collect::<Vec<_>>(),
        );
        let changed = {
            let mut memo = ctx.memo.lock().expect("memo");
            match memo.plans.get_mut(&key) {
                Some(j) if j.recorded.as_ref() == Some(&sig) => false,
                Some(j) => {
                    j.recorded = Some(sig.clone());
                    true
                }
                None => true,
            }
        };
        if changed {
            let governing: Vec<&Arc<UpgradePolicy>> = policies
                .iter()
                .filter(|(_, p)| d.policies.contains(&p.name))
                .map(|(k, _)| k)
                .collect();
            record(ctx, &governing, d, approved.contains(&d.install_plan)).await;
        }
    }
    annotate(ctx, ns, view, &current, &gate_policies).await?;

    // OLM v1: the ClusterExtensions the policies select.
    let (extensions, unjudged) = if view.extensions_known {
        reconcile_extensions(ctx, view, &policies, &gate_policies, now, kube.as_ref()).await?
    } else {
        (Vec::new(), Vec::new())
    };

    // Each policy's status.
    let plan_names: HashSet<String> = view.install_plans.iter().map(|p| p.name_any()).collect();
    for (p, gp) in &policies {
        let previous = last_status(ctx, p);
        let mut entries = if view.extensions_known {
            crate::extensions::status_entries(&previous, &gp.name, &extensions, now)
        } else {
            previous.cluster_extensions.clone()
        };
        // An extension not judged this time (its catalog unreadable, or changed while the pin
        // moved) keeps its entry.
        for o in previous
            .cluster_extensions
            .iter()
            .filter(|o| unjudged.iter().any(|(n, _)| *n == o.name))
        {
            if entries.iter().all(|e| e.name != o.name) {
                entries.push(o.clone());
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let mut st = policy_status(p, previous, gp, &current, view, &plan_names, now);
        if !entries.is_empty()
            && let Some(c) = st.conditions.iter_mut().find(|c| c.type_ == "Ready")
            && c.status == "True"
        {
            c.message = format!("{}; {}", c.message, crate::extensions::summary(&entries));
        }
        st.cluster_extensions = entries;
        patch_status_if_changed(ctx, p, &st).await?;
    }
    let at = current
        .iter()
        .filter(|d| d.decision != Verdict::Approve)
        .filter_map(|d| d.valid_until.or(d.requeue_at))
        .chain(
            extensions
                .iter()
                .filter(|d| matches!(d.decision, ExtVerdict::Wait | ExtVerdict::Hold))
                .filter_map(|d| d.valid_until.or(d.requeue_at)),
        )
        .min();
    if let Some((name, e)) = unjudged.into_iter().find(|(_, e)| !e.is_empty()) {
        // Retried with backoff; everything else of the namespace is written.
        return Err(Error::Catalog(format!("ClusterExtension {name}: {e}")));
    }
    Ok(Next { at })
}

/// The decisions for the namespace's ClusterExtensions its policies cover; a move of a pin
/// re-checked and written ([`crate::extensions::move_checked`]); Events and metrics when a
/// decision changes. Also returns the extensions not judged this time, with the error (empty
/// when the extension changed while its pin moved: its watch event brings it back).
async fn reconcile_extensions(
    ctx: &Ctx,
    view: &View,
    policies: &[(Arc<UpgradePolicy>, Policy)],
    gate_policies: &[Policy],
    now: jiff::Timestamp,
    kube: Option<&semver::Version>,
) -> Result<(Vec<ExtensionDecision>, Vec<(String, String)>), Error> {
    let mut out = Vec::new();
    let mut unjudged = Vec::new();
    if gate_policies
        .iter()
        .all(|p| p.cluster_extension_selector.is_none())
    {
        return Ok((out, unjudged));
    }
    let ccs: Vec<DynamicObject> = view
        .cluster_catalogs
        .iter()
        .map(|c| (**c).clone())
        .collect();
    let mut ces: Vec<&Arc<DynamicObject>> = view.cluster_extensions.iter().collect();
    ces.sort_by_key(|c| c.name_any());
    for ce in ces {
        let decided = crate::extensions::decide(
            &ctx.client,
            &ctx.catalogs,
            gate_policies,
            ce,
            &ccs,
            now,
            kube,
        )
        .await;
        let mut d = match decided {
            Ok(Some(d)) => d,
            Ok(None) => continue,
            Err(e) => {
                ctx.metrics.error("catalog");
                tracing::warn!(cluster_extension = %ce.name_any(), error = %e, "not judged");
                unjudged.push((ce.name_any(), e));
                continue;
            }
        };
        let mut moved = false;
        if d.changes_pin() {
            let names = crate::extensions::selected_names(ce, &ccs);
            let leading = || ctx.leadership.is_leader();
            match crate::extensions::move_checked(
                &ctx.client,
                &ctx.catalogs,
                gate_policies,
                &d,
                &names,
                now,
                kube,
                leading,
            )
            .await
            {
                Ok(Some(re)) => {
                    d = re;
                    moved = true;
                }
                Ok(None) => {
                    unjudged.push((ce.name_any(), String::new()));
                    continue;
                }
                Err(Error::Catalog(e)) => {
                    ctx.metrics.error("catalog");
                    unjudged.push((ce.name_any(), e));
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        let governing: Vec<&Arc<UpgradePolicy>> = policies
            .iter()
            .filter(|(_, p)| d.policies.contains(&p.name))
            .map(|(k, _)| k)
            .collect();
        record_extension(ctx, &governing, &d, moved).await;
        out.push(d);
    }
    Ok((out, unjudged))
}

/// An Event on the ClusterExtension and on each governing policy, and the metrics, when an
/// extension's decision (verdict, pin, reasons) changes. Event failures are logged.
async fn record_extension(
    ctx: &Ctx,
    policies: &[&Arc<UpgradePolicy>],
    d: &ExtensionDecision,
    moved: bool,
) {
    let sig: ExtSig = (
        d.decision,
        d.pin.clone(),
        d.reasons
            .iter()
            .map(|r| (r.code.to_string(), r.message.clone()))
            .collect(),
    );
    {
        let Ok(mut m) = ctx.ext_recorded.lock() else {
            return;
        };
        if !moved && m.get(&d.name) == Some(&sig) {
            return;
        }
        m.insert(d.name.clone(), sig);
    }
    count_decision(ctx, d.decision.as_str(), &d.reasons);
    let mut note = format!(
        "{} installed {}",
        d.package,
        d.installed.as_deref().unwrap_or("nothing")
    );
    if let Some(n) = &d.next {
        note.push_str(&format!("; next step {} ({})", n.bundle, n.version));
    }
    if moved {
        note.push_str(&format!(
            "; pin {:?} -> {}",
            d.version,
            d.pin.as_deref().unwrap_or_default()
        ));
    }
    let note = event_note(note, &d.reasons);
    let ev = gate_event(
        d.decision == ExtVerdict::Hold,
        crate::extensions::word(d.decision),
        note,
        if moved { "MovePin" } else { "Evaluate" },
    );
    let ce_ref = ObjectReference {
        api_version: Some("olm.operatorframework.io/v1".into()),
        kind: Some("ClusterExtension".into()),
        name: Some(d.name.clone()),
        ..Default::default()
    };
    publish(ctx, &ev, ce_ref, policies).await;
}

/// An Event of the gate: a Warning when `held`.
fn gate_event(held: bool, reason: &str, note: String, action: &str) -> Event {
    Event {
        type_: if held {
            EventType::Warning
        } else {
            EventType::Normal
        },
        reason: reason.into(),
        note: Some(note),
        action: action.into(),
        secondary: None,
    }
}

/// The decisions metric: one per told reason's code (`none` without one).
fn count_decision(ctx: &Ctx, decision: &str, reasons: &[olmctl::gate::decide::Reason]) {
    let codes: Vec<&str> = reasons
        .iter()
        .filter(|r| shown(r))
        .map(|r| r.code)
        .collect();
    ctx.metrics.decision(decision, &codes);
}

/// Whether a reason is told in Events and metrics: holds and waits, and the override.
fn shown(r: &olmctl::gate::decide::Reason) -> bool {
    r.effect != Effect::Info || r.code == olmctl::gate::decide::OVERRIDE.code
}

/// `note` with the told reasons appended, cut to the 1 kB an Event's note may hold.
fn event_note(mut note: String, reasons: &[olmctl::gate::decide::Reason]) -> String {
    for r in reasons.iter().filter(|r| shown(r)) {
        note.push_str(&format!("; {}: {}", r.code, r.message));
    }
    // Names and versions from a catalog, messages with cluster text: `kubectl describe` and
    // `kubectl get events` print the note to a terminal as it is.
    let mut note = olmctl::text::escape(&note).into_owned();
    if note.len() > 1000 {
        let mut cut = 997;
        while !note.is_char_boundary(cut) {
            cut -= 1;
        }
        note.truncate(cut);
        note.push_str("...");
    }
    note
}

/// Publishes `ev` about `regarding` and each governing policy; failures are logged.
async fn publish(
    ctx: &Ctx,
    ev: &Event,
    regarding: ObjectReference,
    policies: &[&Arc<UpgradePolicy>],
) {
    let recorder = Recorder::new(ctx.client.clone(), ctx.reporter.clone());
    let mut refs = vec![regarding];
    refs.extend(policies.iter().map(|p| p.object_ref(&())));
    for r in refs {
        if let Err(e) = recorder.publish(ev, &r).await {
            tracing::warn!(error = %e, "event not recorded");
        }
    }
}

/// Re-reads the plan, the namespace's Subscriptions and CSVs, and the content from the API,
/// decides again, and approves when the decision stands: one merge patch guarded by the
/// plan's resourceVersion, sent only while this replica leads. `None` when the decision
/// changed or the plan moved on (a 409).
async fn approve_checked(
    ctx: &Ctx,
    ns: &str,
    d: &Decision,
    policies: &[Policy],
    now: jiff::Timestamp,
    kube: Option<&semver::Version>,
) -> Result<Option<Decision>, Error> {
    let mut objects = cluster::snapshot_plan(&ctx.client, ns, &d.install_plan).await?;
    cluster::add_content(&ctx.client, &mut objects).await?;
    ctx.decoded.lock().expect("decoded").share(&mut objects);
    let again = evaluate(&GateContext {
        policies,
        objects: &objects,
        now,
        kube,
    });
    let Some(re) = again.into_iter().find(|x| x.install_plan == d.install_plan) else {
        return Ok(None);
    };
    if re.decision != Verdict::Approve || !re.current {
        return Ok(None);
    }
    if !ctx.leadership.is_leader() {
        tracing::info!(install_plan = %d.install_plan, "not approved: this replica no longer leads");
        return Ok(None);
    }
    let api = cluster::api(&ctx.client, ns, "InstallPlan");
    let patch = json!({
        "metadata": {"resourceVersion": re.resource_version},
        "spec": {"approved": true},
    });
    match api
        .patch(
            &re.install_plan,
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {
            ctx.metrics.error("conflict");
            tracing::info!(install_plan = %re.install_plan, "the plan changed while it was approved; deciding again");
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    }
    ctx.metrics.approved();
    tracing::info!(namespace = %ns, install_plan = %re.install_plan, to = ?re.to, "approved");
    Ok(Some(re))
}

async fn drop_legacy_finalizer(ctx: &Ctx, p: &UpgradePolicy) -> Result<(), Error> {
    let api: Api<UpgradePolicy> =
        Api::namespaced(ctx.client.clone(), &p.namespace().unwrap_or_default());
    let keep: Vec<String> = p
        .finalizers()
        .iter()
        .filter(|f| *f != LEGACY_FINALIZER)
        .cloned()
        .collect();
    let patch = json!({"metadata": {"resourceVersion": p.resource_version(), "finalizers": keep}});
    match api
        .patch(
            &p.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => Ok(()),
        Err(e) => Err(e.into()),
    }
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
    previous: &UpgradePolicyStatus,
    entries: Vec<SubscriptionStatus>,
    now: jiff::Timestamp,
    error: Option<&str>,
    pending: usize,
) -> UpgradePolicyStatus {
    let generation = p.metadata.generation;
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
                let plans: BTreeSet<&str> = entries
                    .iter()
                    .filter(|x| x.decision == w)
                    .map(|x| x.install_plan.as_str())
                    .collect();
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
        cluster_extensions: previous.cluster_extensions.clone(),
        observed_generation: generation,
    }
}

/// The policy's status as this replica last wrote it, else as the cache has it.
fn last_status(ctx: &Ctx, p: &UpgradePolicy) -> UpgradePolicyStatus {
    let key = format!("{}/{}", p.namespace().unwrap_or_default(), p.name_any());
    ctx.written
        .lock()
        .ok()
        .and_then(|w| w.status.get(&key).cloned())
        .or_else(|| p.status.clone())
        .unwrap_or_default()
}

/// A policy's status: one entry per covered Subscription a current plan installs.
#[allow(clippy::too_many_arguments)]
fn policy_status(
    p: &UpgradePolicy,
    previous: UpgradePolicyStatus,
    gp: &Policy,
    decisions: &[&Decision],
    view: &View,
    plans: &HashSet<String>,
    now: jiff::Timestamp,
) -> UpgradePolicyStatus {
    let subs: BTreeMap<String, &DynamicObject> = view
        .subscriptions
        .iter()
        .map(|o| (o.name_any(), &**o))
        .collect();
    let labels = |v: &DynamicObject| -> BTreeMap<String, String> {
        v.labels()
            .iter()
            .map(|(k, x)| (k.clone(), x.clone()))
            .collect()
    };
    let mut entries = Vec::new();
    let mut pending = 0;
    for d in decisions.iter().filter(|d| d.policies.contains(&gp.name)) {
        pending += 1;
        let reasons: Vec<ReasonStatus> = d
            .reasons
            .iter()
            .map(|r| ReasonStatus {
                code: r.code.into(),
                effect: r.effect.as_str().into(),
                message: r.message.clone(),
            })
            .collect();
        for sub in &d.subscriptions {
            let Some(sv) = subs.get(sub) else { continue };
            if !gp.selector.matches(&labels(sv)) {
                continue;
            }
            let old = previous
                .subscriptions
                .iter()
                .find(|x| &x.name == sub && x.install_plan == d.install_plan);
            let same = old.is_some_and(|o| o.decision == word(d.decision) && o.reasons == reasons);
            let at = |f: &str| Some(ds(sv, f).to_string()).filter(|x| !x.is_empty());
            entries.push(SubscriptionStatus {
                name: sub.clone(),
                installed_csv: at("/status/installedCSV"),
                pending_csv: at("/status/currentCSV"),
                install_plan: d.install_plan.clone(),
                decision: word(d.decision).into(),
                reasons: reasons.clone(),
                since: match old {
                    Some(o) if same => o.since.clone(),
                    _ => now.to_string(),
                },
                next_check: if d.decision == Verdict::Approve {
                    None
                } else {
                    d.requeue_at.map(|t| t.to_string())
                },
            });
        }
    }
    // Approved plans leave the decisions once OLM runs them: keep their entries while the
    // plan exists and the Subscription still points at it.
    for o in previous
        .subscriptions
        .iter()
        .filter(|o| o.decision == "Approved")
    {
        let still = subs
            .get(&o.name)
            .is_some_and(|sv| ds(sv, "/status/installPlanRef/name") == o.install_plan);
        if entries.iter().all(|x| x.name != o.name) && plans.contains(&o.install_plan) && still {
            entries.push(o.clone());
        }
    }
    entries.sort_by(|a, b| (&a.name, &a.install_plan).cmp(&(&b.name, &b.install_plan)));
    status_of(p, &previous, entries, now, None, pending)
}

async fn patch_status_if_changed(
    ctx: &Ctx,
    p: &UpgradePolicy,
    st: &UpgradePolicyStatus,
) -> Result<(), Error> {
    let key = format!("{}/{}", p.namespace().unwrap_or_default(), p.name_any());
    let cur = last_status(ctx, p);
    let same = Some(&cur).is_some_and(|cur| {
        cur.subscriptions == st.subscriptions
            && cur.cluster_extensions == st.cluster_extensions
            && cur.observed_generation == st.observed_generation
            && cur.conditions.len() == st.conditions.len()
            && cur.conditions.iter().zip(&st.conditions).all(|(a, b)| {
                a.type_ == b.type_
                    && a.status == b.status
                    && a.reason == b.reason
                    && a.message == b.message
            })
    });
    if same {
        return Ok(());
    }
    let api: Api<UpgradePolicy> =
        Api::namespaced(ctx.client.clone(), &p.namespace().unwrap_or_default());
    match api
        .patch_status(
            &p.name_any(),
            &PatchParams::default(),
            &Patch::Merge(json!({"status": st})),
        )
        .await
    {
        Ok(_) => {
            if let Ok(mut w) = ctx.written.lock() {
                w.status.insert(key, st.clone());
            }
            Ok(())
        }
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// An Event on the InstallPlan and on each governing policy, and the metrics, for a new or
/// changed decision. Event failures are logged, never fatal.
async fn record(ctx: &Ctx, policies: &[&Arc<UpgradePolicy>], d: &Decision, approved: bool) {
    count_decision(ctx, d.decision.as_str(), &d.reasons);
    let note = event_note(
        format!("{} -> {}", d.from.join(", "), d.to.join(", ")),
        &d.reasons,
    );
    let ev = gate_event(
        d.decision == Verdict::Hold,
        word(d.decision),
        note,
        if approved { "Approve" } else { "Evaluate" },
    );
    let plan_ref = ObjectReference {
        api_version: Some("operators.coreos.com/v1alpha1".into()),
        kind: Some("InstallPlan".into()),
        name: Some(d.install_plan.clone()),
        namespace: Some(d.namespace.clone()),
        ..Default::default()
    };
    publish(ctx, &ev, plan_ref, policies).await;
}

/// The decision annotation on each Subscription a current plan installs, written only when it
/// changes. A decision stays while the Subscription still points at its plan (an approved
/// plan leaves the decisions once OLM runs it) and a policy covers the Subscription; it is
/// removed otherwise (the policy was deleted, or the Subscription moved on).
async fn annotate(
    ctx: &Ctx,
    ns: &str,
    view: &View,
    decisions: &[&Decision],
    policies: &[Policy],
) -> Result<(), Error> {
    let api = cluster::api(&ctx.client, ns, "Subscription");
    let mut want: BTreeMap<String, String> = BTreeMap::new();
    for d in decisions {
        for s in &d.subscriptions {
            want.insert(
                s.clone(),
                format!("{}: {}", d.install_plan, word(d.decision)),
            );
        }
    }
    for sub in &view.subscriptions {
        let name = sub.name_any();
        let key = format!("{ns}/{name}");
        let written = ctx
            .written
            .lock()
            .ok()
            .and_then(|w| w.annotations.get(&key).cloned());
        let cached = sub.annotations().get(DECISION_ANNOTATION).cloned();
        // What this replica wrote last, unless the cache has caught up with something newer.
        let have = match written {
            Some(w) => w,
            None => cached,
        };
        let labels: BTreeMap<String, String> = sub
            .labels()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let covered = policies.iter().any(|p| p.selector.matches(&labels));
        let kept = have.as_ref().filter(|h| {
            covered
                && h.split(": ").next() == Some(ds(sub, "/status/installPlanRef/name"))
                && !ds(sub, "/status/installPlanRef/name").is_empty()
        });
        let want_now = want.get(&name).cloned().or_else(|| kept.cloned());
        let have = have.as_ref();
        let value = match (want_now.as_ref(), have) {
            (Some(w), Some(h)) if w == h => continue,
            (Some(w), _) => json!(w),
            (None, Some(_)) => Value::Null,
            (None, None) => continue,
        };
        let patch = json!({"metadata": {"annotations": {DECISION_ANNOTATION: value}}});
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => {
                if let Ok(mut w) = ctx.written.lock() {
                    w.annotations.insert(key, want_now.clone());
                }
            }
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Errors back off exponentially per namespace: 1 s, 2 s, 4 s ... up to 5 minutes.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_secs(1u64 << failures.min(9).saturating_sub(1)).min(Duration::from_secs(300))
}

/// The controller loop: caches on every replica (readiness waits for them), reconciles only
/// while leading. Runs until `shutdown` resolves.
pub async fn run(
    ctx: Arc<Ctx>,
    namespace: Option<String>,
    resync: Duration,
    synced: Arc<std::sync::atomic::AtomicBool>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let (caches, task) = start_caches(&ctx.client, namespace.as_deref(), tx.clone());
    tokio::pin!(shutdown);
    tokio::select! {
        _ = caches.synced() => {}
        _ = &mut shutdown => { task.abort(); return; }
    }
    synced.store(true, std::sync::atomic::Ordering::SeqCst);
    tracing::info!("caches synced");
    let mut queued: BTreeSet<String> = caches.namespaces();
    let mut timers: BTreeMap<String, tokio::time::Instant> = BTreeMap::new();
    let mut failures: HashMap<String, u32> = HashMap::new();
    let mut was_leader = false;
    let mut resync_at = tokio::time::Instant::now() + resync;
    loop {
        let leading = ctx.leadership.is_leader();
        if leading && !was_leader {
            // Newly leading: everything, from the caches.
            queued.extend(caches.namespaces());
        }
        was_leader = leading;
        let now = tokio::time::Instant::now();
        let due: Vec<String> = timers
            .iter()
            .filter(|(_, t)| **t <= now)
            .map(|(n, _)| n.clone())
            .collect();
        for n in due {
            timers.remove(&n);
            queued.insert(n);
        }
        if now >= resync_at {
            resync_at = now + resync;
            queued.extend(caches.namespaces());
            if let Ok(mut m) = ctx.memo.lock() {
                m.plans.values_mut().for_each(|j| j.fingerprint.clear());
            }
            // Converge on what the cluster has (someone may have edited it meanwhile).
            if let Ok(mut w) = ctx.written.lock() {
                *w = Written::default();
            }
            if let Some(v) = crate::kube_version(&ctx.client).await
                && let Ok(mut k) = ctx.kube_version.lock()
            {
                *k = Some(v);
            }
        }
        if queued.remove(ALL) {
            queued.extend(caches.namespaces());
        }
        if leading {
            while let Some(ns) = queued.pop_first() {
                if !ctx.leadership.is_leader() {
                    queued.insert(ns);
                    break;
                }
                let view = caches.view(&ns);
                match reconcile(&ns, &view, &ctx).await {
                    Ok(next) => {
                        failures.remove(&ns);
                        if let Some(at) = next.at {
                            let wait = at.duration_since((ctx.clock)()).as_secs_f64().max(0.0);
                            // A little after the edge, so the edge is behind us.
                            let t = tokio::time::Instant::now()
                                + Duration::from_secs_f64(wait)
                                + Duration::from_millis(200);
                            timers.insert(ns, t);
                        }
                    }
                    Err(e) => {
                        let n = failures.entry(ns.clone()).or_insert(0);
                        *n += 1;
                        let kind = match e {
                            Error::Kube(_) => "api",
                            Error::Conflict(_) => "conflict",
                            Error::Catalog(_) => "catalog",
                        };
                        ctx.metrics.error(kind);
                        let delay = backoff(*n);
                        tracing::warn!(namespace = %ns, error = %e, retry_in = ?delay, "reconcile failed");
                        timers.insert(ns, tokio::time::Instant::now() + delay);
                    }
                }
            }
        }
        let next_timer = timers
            .values()
            .min()
            .copied()
            .unwrap_or(resync_at)
            .min(resync_at);
        // Leadership can start at any time: look at it at least every second.
        let wake = next_timer.min(tokio::time::Instant::now() + Duration::from_secs(1));
        tokio::select! {
            ns = rx.recv() => match ns {
                Some(ns) => {
                    queued.insert(ns);
                    // Take everything queued meanwhile (one reconcile per namespace).
                    while let Ok(n) = rx.try_recv() {
                        queued.insert(n);
                    }
                }
                None => break,
            },
            _ = tokio::time::sleep_until(wake) => {}
            _ = &mut shutdown => break,
        }
    }
    task.abort();
}

#[cfg(test)]
mod tests {
    use super::event_note;

    #[test]
    fn event_notes_carry_no_raw_control_character() {
        let note = event_note(
            "p installed p.v1\u{1b}]0;owned\u{7}; next step x\u{202e} (1.0.0\n)".to_string(),
            &[],
        );
        assert!(!note.chars().any(olmctl::text::needs_escape), "{note:?}");
        assert!(note.contains("p.v1\\u{1b}]0;owned\\u{7}"), "{note}");
        // Cut to 1 kB after escaping, on a character boundary.
        let long = event_note("\u{1b}".repeat(400), &[]);
        assert!(long.len() <= 1000, "{}", long.len());
    }
}
