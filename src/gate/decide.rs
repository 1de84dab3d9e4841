//! The gate's decision for every pending InstallPlan an [`UpgradePolicy`](super::policy::Policy)
//! covers: `approve`, `hold` (a person must act) or `wait` (time will resolve it), with reasons
//! that carry stable GATE codes. `olmctl gate evaluate` and the operator call [`evaluate`] with
//! the same objects and agree by construction.
//!
//! The rules (operator.md §3.7–3.11 and §8):
//! - the gate looks at InstallPlans with `spec.approval: Manual` and `spec.approved` not true
//!   that a covered Subscription references (`status.installPlanRef`) or owns; plans past
//!   approval (`Installing`, `Complete`, `Failed`) get no entry;
//! - not ready (phase empty or `Planning`, bundle lookups pending, a CSV of the plan without its
//!   step): wait, and nothing else is judged (not even currency: OLM points the Subscriptions
//!   at a plan only after its status write);
//! - stale (no covered Subscription references the plan) or a CSV that is neither a covered
//!   Subscription's target nor a dependency a Subscription step of the plan creates: hold;
//! - content that cannot be read, a version jump over `maxVersionJump`, CRD safety errors the
//!   upgrade introduces (under `crdSafety: Enforce`), a `minKubeVersion` above the cluster's,
//!   a package the namespace did not have (under `newDependencies: Hold`), `paused`: hold; outside every maintenance window or younger than `minAge`: wait;
//! - hold reasons win over wait reasons, and every reason is listed;
//! - the override (`olmctl.dev/approve: <plan>` on a covered Subscription) approves a ready,
//!   current plan whatever else holds it.

use std::collections::BTreeSet;

use jiff::Timestamp;
use semver::Version;

use super::crds::Upgrade;
use super::dependency::new_dependencies;
use super::jump::classify;
use super::manifests::step_object;
use super::objects::{Object, Objects};
use super::policy::{CrdSafety, NewDependencies, Policy};
use super::window;
use crate::bundle::load::{field, list_at, str_at};
use crate::diag::Severity;
use crate::diag::Severity::{Error, Info, Warning};
use crate::fbc::node::{Node, Value};

codes! {
    NOT_READY = "GATE001", Warning, "The InstallPlan is not ready to be judged: its phase is not RequiresApproval (empty or Planning), a bundle lookup is pending, or a CSV of the plan has no step yet. Writing to it now races OLM's own status write (duplicate plans), so the gate waits.";
    STALE = "GATE002", Error, "No Subscription the policy covers references the InstallPlan any more (OLM made a newer plan); approving it would still install it, so the gate holds it.";
    UNACCOUNTED = "GATE003", Error, "A CSV of the plan is neither the target (currentCSV) of a Subscription the policy covers nor a new dependency that a Subscription step of the same plan creates; approving the plan approves every CSV in it.";
    CONTENT = "GATE004", Error, "The objects the plan would apply cannot be read (no manifest yet, the unpacked-bundle ConfigMap missing or undecodable, a failed bundle lookup), so the plan cannot be checked.";
    JUMP = "GATE005", Error, "The upgrade moves further than maxVersionJump allows, from the installed CSV's version to the target's, whatever edges OLM takes.";
    VERSION = "GATE006", Error, "The installed or the target CSV version is missing, not semver, or not higher, so maxVersionJump cannot be judged.";
    CRD_UNSAFE = "GATE007", Error, "A CRD safety check of `check upgrade` (SCH, CRV or API code) fails for the plan against the live cluster and the upgrade introduces it; crdSafety: Enforce holds, Warn reports and approves.";
    CRD_PREEXISTING = "GATE008", Info, "A CRD safety finding the live CRDs already have against themselves: not introduced by the upgrade, so no reason to hold.";
    WINDOW = "GATE009", Warning, "Outside every maintenance window of the policy: the plan waits for the next opening.";
    SOAK = "GATE010", Warning, "The InstallPlan is younger than the policy's minAge (counted from its creationTimestamp): it waits until it has soaked.";
    PAUSED = "GATE011", Error, "The policy is paused: nothing is approved until it is resumed.";
    OVERRIDE = "GATE012", Info, "Approved by the olmctl.dev/approve annotation on a Subscription (for a ClusterExtension: the pin moved by its olmctl.dev/approve-version annotation), despite the other reasons listed.";
    KUBE_TOO_OLD = "GATE013", Error, "A CSV of the plan needs a newer Kubernetes (spec.minKubeVersion) than the cluster runs: OLM would install it and the CSV would fail.";
    KUBE_UNKNOWN = "GATE014", Info, "The cluster's Kubernetes version is not known (no --kube-version), so minKubeVersion was not checked.";
    CRD_WARNING = "GATE015", Info, "A CRD safety warning of `check upgrade` that the upgrade introduces: reported, no reason to hold.";
    ROLLOUT = "GATE016", Warning, "The ClusterExtension has no installed bundle yet, or OLM v1 is still rolling out (Installed is not True, its generation is not observed yet, or the installed version is not the pinned one): the gate waits and leaves the pin as it is.";
    PIN = "GATE017", Info, "The ClusterExtension's spec.source.catalog.version is not an exact pin of the installed version (empty, or a range under which OLM v1 upgrades by itself): the gate pins it to the installed version.";
    PASSED_OVER = "GATE018", Info, "A higher direct successor of the installed ClusterExtension bundle that the policy does not allow was passed over: the pin moves to a lower one the policy allows.";
    STEP_FAILED = "GATE019", Error, "OLM v1 gave up on the step to the pinned version (Progressing is False: a terminal error such as its CRD upgrade-safety preflight): a person must move the pin back or fix the cause.";
    UNRESOLVABLE = "GATE020", Error, "OLM v1 would not resolve a pin to this step from the ClusterCatalogs the extension selects: two offer it at the same highest spec.priority, or none offers it as a direct successor in its own channels (operator-controller's CatalogResolver.Resolve); the pin does not move there.";
    NEW_DEPENDENCY = "GATE021", Error, "The plan installs a package the namespace did not have: a dependency OLM's resolver pulled in, for which a Subscription step of the plan creates a Subscription (step_resolver.go::ResolveSteps); under newDependencies: Hold the plan waits for a person (the olmctl.dev/approve annotation, or newDependencies: Allow).";
    DEPENDENCY_ALLOWED = "GATE022", Info, "The plan installs a package the namespace did not have (a dependency OLM pulled in, with its own Subscription step); newDependencies: Allow (the default) approves it with the rest of the plan.";
}

/// The annotation of the human override; its value names the InstallPlan to approve.
pub const OVERRIDE_ANNOTATION: &str = "olmctl.dev/approve";

/// What the gate decides for one plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Approve it now.
    Approve,
    /// Time will resolve it (a window, the soak time, a plan not ready yet).
    Wait,
    /// A person must act (the policy forbids it, or the plan cannot be checked).
    Hold,
}

impl Verdict {
    /// `approve`, `wait` or `hold`.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "approve",
            Verdict::Wait => "wait",
            Verdict::Hold => "hold",
        }
    }
}

/// What a reason does to the decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// Information only.
    Info,
    /// A finding reported at warning level that does not stop the plan (`crdSafety: Warn`).
    Warn,
    /// The plan waits.
    Wait,
    /// The plan is held.
    Hold,
}

impl Effect {
    /// `info`, `warn`, `wait` or `hold`.
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Info => "info",
            Effect::Warn => "warn",
            Effect::Wait => "wait",
            Effect::Hold => "hold",
        }
    }
}

/// One reason of a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reason {
    /// The GATE code.
    pub code: &'static str,
    /// What it does to the decision.
    pub effect: Effect,
    /// What happened, naming the objects.
    pub message: String,
}

impl Reason {
    pub(super) fn new(
        code: &'static crate::diag::Code,
        effect: Effect,
        message: impl Into<String>,
    ) -> Self {
        Reason {
            code: code.code,
            effect,
            message: message.into(),
        }
    }
}

/// The decision for one InstallPlan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The plan's namespace.
    pub namespace: String,
    /// The plan's name.
    pub install_plan: String,
    /// The plan's `metadata.resourceVersion` the decision was made on (the approval's
    /// precondition).
    pub resource_version: String,
    /// The Subscriptions the plan installs (their `status.currentCSV` is one of its CSVs),
    /// sorted; for a stale plan, the covered Subscriptions it names or that own it.
    pub subscriptions: Vec<String>,
    /// The policies that govern the plan (those covering one of its Subscriptions), in the
    /// order given.
    pub policies: Vec<String>,
    /// Whether a Subscription references the plan as its current one (false: stale, GATE002).
    pub current: bool,
    /// The installed CSVs the plan upgrades from, sorted.
    pub from: Vec<String>,
    /// The CSVs the plan installs (`spec.clusterServiceVersionNames`, in order).
    pub to: Vec<String>,
    /// The verdict.
    pub decision: Verdict,
    /// Every reason, holds first, then waits, then information.
    pub reasons: Vec<Reason>,
    /// When a waiting plan should be looked at again (the next window, the end of the soak).
    pub requeue_at: Option<Timestamp>,
    /// Until when the decision stands on the same inputs: the next opening or closing of a
    /// governing policy's window, or the end of the soak (none: until the inputs change).
    pub valid_until: Option<Timestamp>,
}

/// What [`evaluate`] reads.
pub struct Context<'a> {
    /// The policies: each governs the plans of the Subscriptions it covers.
    pub policies: &'a [Policy],
    /// The cluster's objects.
    pub objects: &'a Objects,
    /// The clock.
    pub now: Timestamp,
    /// The cluster's Kubernetes version, when known.
    pub kube: Option<&'a Version>,
}

/// An object's `metadata.labels`.
pub(super) fn labels(o: &Object) -> std::collections::BTreeMap<String, String> {
    match field(&o.node, &["metadata", "labels"]).map(|n| &n.value) {
        Some(Value::Map(es)) => es
            .iter()
            .map(|e| {
                (
                    e.key.clone(),
                    e.value.as_str().unwrap_or_default().to_string(),
                )
            })
            .collect(),
        _ => Default::default(),
    }
}

fn bool_at(n: &Node, path: &[&str]) -> bool {
    matches!(field(n, path).map(|n| &n.value), Some(Value::Bool(true)))
}

/// The Subscriptions `policy` covers: its namespace (every namespace when it has none) and its
/// selector.
pub fn covered<'a>(policy: &Policy, objects: &'a Objects) -> Vec<&'a Object> {
    objects
        .subscriptions
        .iter()
        .filter(|s| covers(policy, s))
        .collect()
}

fn covers(policy: &Policy, sub: &Object) -> bool {
    (policy.namespace.is_empty() || sub.namespace() == policy.namespace)
        && policy.selector.matches(&labels(sub))
}

fn owned_by(plan: &Object, sub: &Object) -> bool {
    list_at(&plan.node, &["metadata", "ownerReferences"])
        .iter()
        .any(|r| {
            str_at(r, &["kind"]) == Some("Subscription") && str_at(r, &["name"]) == Some(sub.name())
        })
}

fn references(sub: &Object, plan: &Object) -> bool {
    sub.namespace() == plan.namespace()
        && sub.str(&["status", "installPlanRef", "name"]) == Some(plan.name())
}

/// An integer at `path` (a number, or a string of one).
pub(super) fn int_at(n: &Node, path: &[&str]) -> Option<i64> {
    match field(n, path).map(|n| &n.value) {
        Some(Value::Number(n)) if n.fract() == 0.0 => Some(*n as i64),
        Some(Value::Str(s)) => s.parse().ok(),
        _ => None,
    }
}

fn csv_names(plan: &Object) -> Vec<String> {
    list_at(&plan.node, &["spec", "clusterServiceVersionNames"])
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect()
}

/// Where a plan stands against the Subscriptions of its namespace (operator.md §2.5, §3.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Currency {
    /// A Subscription references it (`status.installPlanRef`, and `installPlanGeneration`
    /// when both sides have one) and targets one of its CSVs (`status.currentCSV`).
    Current,
    /// OLM has moved on: a Subscription has reached its generation or a later one, or
    /// references it but targets a CSV it does not install. Approving it would still run it.
    Stale,
    /// No Subscription points at it yet: OLM creates a plan, writes its status, and only then
    /// points the Subscriptions at it (`syncResolvingNamespace`, cluster.md R5.3). Nothing to
    /// judge, and nothing to report: this is OLM's order of writes, not a hold.
    Unreferenced,
}

fn currency(plan: &Object, ns_subs: &[&Object], csvs: &[String]) -> Currency {
    let generation = int_at(&plan.node, &["spec", "generation"]);
    let referencing: Vec<&&Object> = ns_subs.iter().filter(|s| references(s, plan)).collect();
    let current = referencing.iter().any(|s| {
        let target = s.str(&["status", "currentCSV"]).unwrap_or_default();
        let same_generation = match (
            int_at(&s.node, &["status", "installPlanGeneration"]),
            generation,
        ) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        same_generation && csvs.iter().any(|c| c == target)
    });
    if current {
        return Currency::Current;
    }
    let moved_on = generation.is_some_and(|g| {
        ns_subs.iter().any(|s| {
            int_at(&s.node, &["status", "installPlanGeneration"]).is_some_and(|sg| sg >= g)
        })
    });
    if moved_on || !referencing.is_empty() {
        Currency::Stale
    } else {
        Currency::Unreferenced
    }
}

/// Evaluates every pending InstallPlan the policies govern, sorted by namespace and name.
///
/// A plan is judged once, for the Subscriptions it installs (their `status.currentCSV` is one
/// of its `spec.clusterServiceVersionNames`), by every policy that covers one of them: the
/// plan passes only when it passes all of them (the worst verdict wins). OLM makes every
/// Subscription of a namespace an owner of every plan it creates there (cluster.md R5.1), so
/// ownership says nothing about whom a plan is for. Plans no Subscription points at yet get
/// no decision; stale plans get a hold (GATE002) with `current: false`.
pub fn evaluate(ctx: &Context<'_>) -> Vec<Decision> {
    let mut plans: Vec<&Object> = ctx
        .objects
        .install_plans
        .iter()
        .filter(|p| p.str(&["spec", "approval"]) == Some("Manual"))
        .filter(|p| !bool_at(&p.node, &["spec", "approved"]))
        .filter(|p| {
            !matches!(
                p.str(&["status", "phase"]),
                Some("Installing" | "Complete" | "Failed")
            )
        })
        .collect();
    plans.sort_by(|a, b| (a.namespace(), a.name()).cmp(&(b.namespace(), b.name())));
    plans.into_iter().filter_map(|p| decide(ctx, p)).collect()
}

/// Readiness (operator.md §3.7): phase, bundle lookups, a CSV step per CSV name.
fn not_ready(plan: &Object) -> Option<String> {
    let phase = plan.str(&["status", "phase"]).unwrap_or_default();
    if phase != "RequiresApproval" {
        let shown = if phase.is_empty() { "empty" } else { phase };
        return Some(format!(
            "InstallPlan {} has phase {shown}: OLM has not finished writing it (approve only in RequiresApproval)",
            plan.name()
        ));
    }
    for l in list_at(&plan.node, &["status", "bundleLookups"]) {
        for c in list_at(l, &["conditions"]) {
            let t = str_at(c, &["type"]).unwrap_or_default();
            if matches!(t, "BundleLookupPending" | "BundleLookupNotPersisted")
                && str_at(c, &["status"]) == Some("True")
            {
                return Some(format!(
                    "bundle lookup {} is not done ({t}: {})",
                    str_at(l, &["identifier"]).unwrap_or("?"),
                    str_at(c, &["message"]).unwrap_or_default()
                ));
            }
        }
    }
    let steps = list_at(&plan.node, &["status", "plan"]);
    for csv in list_at(&plan.node, &["spec", "clusterServiceVersionNames"]) {
        let name = csv.as_str().unwrap_or_default();
        if !steps
            .iter()
            .any(|s| is_step(s, "ClusterServiceVersion", name))
        {
            return Some(format!("CSV {name} has no step in the plan yet"));
        }
    }
    None
}

fn is_step(s: &Node, kind: &str, name: &str) -> bool {
    str_at(s, &["resource", "kind"]) == Some(kind) && str_at(s, &["resource", "name"]) == Some(name)
}

fn failed_lookup(plan: &Object) -> Option<String> {
    list_at(&plan.node, &["status", "bundleLookups"])
        .iter()
        .find_map(|l| {
            list_at(l, &["conditions"]).iter().find_map(|c| {
                (str_at(c, &["type"]) == Some("BundleLookupFailed")
                    && str_at(c, &["status"]) == Some("True"))
                .then(|| {
                    format!(
                        "bundle lookup {} failed: {}",
                        str_at(l, &["identifier"]).unwrap_or("?"),
                        str_at(c, &["message"]).unwrap_or_default()
                    )
                })
            })
        })
}

fn csv_version(n: &Node) -> Result<Version, String> {
    let v = str_at(n, &["spec", "version"]).ok_or("has no spec.version")?;
    Version::parse(v).map_err(|e| format!("has spec.version {v:?}, not semver ({e})"))
}

fn decide(ctx: &Context<'_>, plan: &Object) -> Option<Decision> {
    let ns = plan.namespace();
    let ns_subs: Vec<&Object> = ctx
        .objects
        .subscriptions
        .iter()
        .filter(|s| s.namespace() == ns)
        .collect();
    let to = csv_names(plan);
    let governed_by = |subs: &[&Object]| -> Vec<&Policy> {
        ctx.policies
            .iter()
            .filter(|p| subs.iter().any(|s| covers(p, s)))
            .collect()
    };
    let mut involved: Vec<&Object> = ns_subs
        .iter()
        .copied()
        .filter(|s| {
            s.str(&["status", "currentCSV"])
                .is_some_and(|c| to.iter().any(|t| t == c))
        })
        .collect();
    involved.sort_by(|a, b| a.name().cmp(b.name()));
    let names = |subs: &[&Object]| -> Vec<String> {
        let mut v: Vec<String> = subs.iter().map(|s| s.name().to_string()).collect();
        v.sort();
        v.dedup();
        v
    };
    let resource_version = plan
        .str(&["metadata", "resourceVersion"])
        .unwrap_or_default()
        .to_string();
    let base = |subscriptions: Vec<String>, policies: &[&Policy]| Decision {
        namespace: ns.to_string(),
        install_plan: plan.name().to_string(),
        resource_version: resource_version.clone(),
        subscriptions,
        policies: policies.iter().map(|p| p.name.clone()).collect(),
        current: true,
        from: Vec::new(),
        to: to.clone(),
        decision: Verdict::Wait,
        reasons: Vec::new(),
        requeue_at: None,
        valid_until: None,
    };
    match currency(plan, &ns_subs, &to) {
        Currency::Unreferenced => return None,
        Currency::Stale => {
            // Reported to the policies of the Subscriptions it names or that own it.
            let mut concerned: Vec<&Object> = ns_subs
                .iter()
                .copied()
                .filter(|s| {
                    owned_by(plan, s)
                        || references(s, plan)
                        || involved.iter().any(|i| i.name() == s.name())
                })
                .collect();
            concerned.sort_by(|a, b| a.name().cmp(b.name()));
            let policies = governed_by(&concerned);
            if policies.is_empty() {
                return None;
            }
            let covered: Vec<&Object> = concerned
                .into_iter()
                .filter(|s| policies.iter().any(|p| covers(p, s)))
                .collect();
            let mut d = base(names(&covered), &policies);
            d.current = false;
            d.decision = Verdict::Hold;
            d.reasons.push(Reason::new(
                &STALE,
                Effect::Hold,
                format!(
                    "InstallPlan {} is stale: no Subscription references it as its current plan (OLM made a newer one); delete it, or approve the current one",
                    plan.name()
                ),
            ));
            return Some(d);
        }
        Currency::Current => {}
    }
    let policies = governed_by(&involved);
    if policies.is_empty() {
        return None;
    }
    let mut d = base(names(&involved), &policies);
    // Not ready (a pending bundle lookup on OLM before 0.25, a CSV without its step): wait,
    // and nothing else is judged.
    if let Some(why) = not_ready(plan) {
        d.reasons.push(Reason::new(&NOT_READY, Effect::Wait, why));
        return Some(d);
    }
    let of = naming(policies.len() > 1);
    let mut reasons = Vec::new();
    let mut from = BTreeSet::new();
    let mut accounted = true;
    let steps = list_at(&plan.node, &["status", "plan"]);
    let mut upgrades = Vec::new();
    for csv in &to {
        let target = involved
            .iter()
            .find(|s| s.str(&["status", "currentCSV"]) == Some(csv));
        let dependency = steps.iter().any(|s| {
            str_at(s, &["resource", "kind"]) == Some("Subscription")
                && str_at(s, &["resolving"]) == Some(csv.as_str())
        });
        match target {
            Some(sub) if ctx.policies.iter().any(|p| covers(p, sub)) => {
                let installed = sub
                    .str(&["status", "installedCSV"])
                    .filter(|s| !s.is_empty());
                if let Some(i) = installed {
                    from.insert(i.to_string());
                }
                upgrades.push((csv.as_str(), installed));
            }
            Some(sub) => {
                accounted = false;
                reasons.push(Reason::new(
                    &UNACCOUNTED,
                    Effect::Hold,
                    format!(
                        "CSV {csv} is the target of Subscription {}, which no UpgradePolicy covers; approving the plan would install it too",
                        sub.name()
                    ),
                ));
            }
            None if dependency => upgrades.push((csv.as_str(), None)),
            None => {
                accounted = false;
                reasons.push(Reason::new(
                    &UNACCOUNTED,
                    Effect::Hold,
                    format!(
                        "CSV {csv} is neither the target of a covered Subscription nor a dependency a Subscription step of this plan creates"
                    ),
                ));
            }
        }
    }
    if let Some(why) = failed_lookup(plan) {
        reasons.push(Reason::new(&CONTENT, Effect::Hold, why));
    }
    for dep in new_dependencies(&plan.node) {
        if !to.contains(&dep.csv) {
            continue; // not in spec.clusterServiceVersionNames: not this plan's to approve
        }
        let said = dep.describe(plan.name(), plan.namespace());
        for p in &policies {
            reasons.push(match p.new_dependencies {
                NewDependencies::Hold => Reason::new(
                    &NEW_DEPENDENCY,
                    Effect::Hold,
                    of(
                        p,
                        format!(
                            "{said}; newDependencies: Hold holds it: review the package, then approve with the {OVERRIDE_ANNOTATION} annotation or set newDependencies: Allow"
                        ),
                    ),
                ),
                NewDependencies::Allow => {
                    Reason::new(&DEPENDENCY_ALLOWED, Effect::Info, of(p, said.clone()))
                }
            });
        }
    }
    let check_crds = policies.iter().any(|p| p.crd_safety != CrdSafety::Ignore);
    for (csv, installed) in upgrades {
        let facts = csv_facts(ctx, plan, csv, installed, check_crds);
        for p in &policies {
            judge_csv(p, &facts, &of, &mut reasons);
        }
    }
    let mut timing = Timing::default();
    for p in &policies {
        let created = plan
            .str(&["metadata", "creationTimestamp"])
            .and_then(|t| t.parse::<Timestamp>().ok());
        let soak = Soak {
            since: created,
            what: format!("InstallPlan {} was created", plan.name()),
            missing: format!(
                "InstallPlan {} has no valid creationTimestamp, so minAge cannot be judged",
                plan.name()
            ),
        };
        clock_reasons(p, ctx.now, &soak, &of, &mut reasons, &mut timing);
    }
    let Timing {
        requeue_at: mut requeue,
        valid_until,
    } = timing;
    let mut decision = match worst(&mut reasons) {
        Effect::Hold => Verdict::Hold,
        Effect::Wait => Verdict::Wait,
        Effect::Warn | Effect::Info => Verdict::Approve,
    };
    if decision != Verdict::Approve && accounted {
        let by = involved.iter().find(|s| {
            s.str(&["metadata", "annotations", OVERRIDE_ANNOTATION]) == Some(plan.name())
        });
        if let Some(s) = by {
            decision = Verdict::Approve;
            reasons.push(Reason::new(
                &OVERRIDE,
                Effect::Info,
                format!(
                    "approved by annotation {OVERRIDE_ANNOTATION}={} on Subscription {}",
                    plan.name(),
                    s.name()
                ),
            ));
        }
    }
    if decision == Verdict::Approve {
        requeue = None;
    }
    // Holds first, then waits, then information; stable within each.
    reasons.sort_by_key(|r| std::cmp::Reverse(r.effect));
    d.from = from.into_iter().collect();
    d.decision = decision;
    d.reasons = reasons;
    d.requeue_at = requeue;
    d.valid_until = valid_until;
    Some(d)
}

/// What one CSV of a ready plan is, independent of any policy: its content, its version jump,
/// its minKubeVersion against the cluster, and the CRD safety findings (checked once however
/// many policies judge it).
struct CsvFacts {
    csv: String,
    /// Content that cannot be read: held by every policy.
    content: Vec<Reason>,
    /// The jump from the installed version, or why it cannot be judged (upgrades only).
    jump: Option<Result<(String, Version, Version, super::jump::Jump), String>>,
    /// minKubeVersion against the cluster.
    kube: Vec<Reason>,
    /// `check upgrade`'s outcome against the live CRDs (when a policy checks CRDs).
    crds: Option<crate::gate::crds::Outcome>,
}

fn csv_facts(
    ctx: &Context<'_>,
    plan: &Object,
    csv: &str,
    installed: Option<&str>,
    check_crds: bool,
) -> CsvFacts {
    let mut facts = CsvFacts {
        csv: csv.to_string(),
        content: Vec::new(),
        jump: None,
        kube: Vec::new(),
        crds: None,
    };
    let steps = list_at(&plan.node, &["status", "plan"]);
    let content = |kind: &str| -> Vec<(&Node, Result<Node, String>)> {
        steps
            .iter()
            .filter(|s| str_at(s, &["resolving"]) == Some(csv))
            .filter(|s| str_at(s, &["resource", "kind"]) == Some(kind))
            .map(|s| (s, step_object(plan, s, ctx.objects)))
            .collect()
    };
    let hold = |code, m: String| Reason::new(code, Effect::Hold, m);
    let new_csv = match content("ClusterServiceVersion")
        .into_iter()
        .find(|(s, _)| is_step(s, "ClusterServiceVersion", csv))
    {
        Some((_, Ok(n))) => n,
        Some((_, Err(e))) => {
            facts
                .content
                .push(hold(&CONTENT, format!("CSV {csv}: {e}")));
            return facts;
        }
        None => return facts, // readiness already requires the step
    };
    let mut crds = Vec::new();
    for (s, r) in content("CustomResourceDefinition") {
        match r {
            Ok(n) => crds.push(n),
            Err(e) => facts.content.push(hold(
                &CONTENT,
                format!(
                    "CRD {} of CSV {csv}: {e}",
                    str_at(s, &["resource", "name"]).unwrap_or("?")
                ),
            )),
        }
    }
    let ns = plan.namespace();
    let installed_obj = installed.and_then(|i| {
        ctx.objects
            .csvs
            .iter()
            .find(|c| c.name() == i && c.namespace() == ns)
    });
    // Version jump: upgrades only; a new dependency is no jump.
    if let Some(i) = installed {
        let to = csv_version(&new_csv).map_err(|e| format!("the target CSV {csv} {e}"));
        let from = installed_obj
            .ok_or_else(|| format!("the installed CSV {i} is not among the objects"))
            .and_then(|o| csv_version(&o.node).map_err(|e| format!("the installed CSV {i} {e}")));
        facts.jump = Some(match (from, to) {
            (Ok(f), Ok(t)) => match classify(&f, &t) {
                Some(j) => Ok((i.to_string(), f, t, j)),
                None => Err(format!(
                    "{csv} ({t}) is not higher than the installed {i} ({f})"
                )),
            },
            (Err(e), _) | (_, Err(e)) => Err(e),
        });
    }
    // minKubeVersion against the cluster.
    if let Some(min) = str_at(&new_csv, &["spec", "minKubeVersion"]) {
        facts.kube = kube_reasons(csv, min, ctx.kube);
    }
    if !check_crds {
        return facts;
    }
    // The live CRDs: those the plan applies and those the installed CSV owns.
    let mut names: BTreeSet<String> = crds
        .iter()
        .filter_map(|c| str_at(c, &["metadata", "name"]).map(str::to_string))
        .collect();
    if let Some(o) = installed_obj {
        for c in list_at(&o.node, &["spec", "customresourcedefinitions", "owned"]) {
            if let Some(n) = str_at(c, &["name"]) {
                names.insert(n.to_string());
            }
        }
    }
    let live: Vec<&Object> = ctx
        .objects
        .crds
        .iter()
        .filter(|c| names.contains(c.name()))
        .collect();
    let up = Upgrade {
        plan: format!("{ns}/{}", plan.name()),
        installed: installed_obj,
        live,
        csv: new_csv,
        crds,
        preflight_olmv1: false,
    };
    facts.crds = Some(up.check(ctx.kube));
    facts
}

/// One policy's reasons for one CSV of a ready plan.
fn judge_csv(
    p: &Policy,
    facts: &CsvFacts,
    of: &dyn Fn(&Policy, String) -> String,
    reasons: &mut Vec<Reason>,
) {
    let csv = facts.csv.as_str();
    let hold = |code, m: String| Reason::new(code, Effect::Hold, m);
    reasons.extend(facts.content.iter().cloned());
    match &facts.jump {
        Some(Ok((i, f, t, j))) if *j > p.max_version_jump => reasons.push(hold(
            &JUMP,
            of(
                p,
                format!(
                    "{i} ({f}) -> {csv} ({t}) is a {} jump; the policy allows up to {}",
                    j.as_str(),
                    p.max_version_jump.as_str()
                ),
            ),
        )),
        Some(Err(e)) => reasons.push(hold(&VERSION, e.clone())),
        _ => {}
    }
    reasons.extend(facts.kube.iter().cloned());
    if let Some(out) = &facts.crds {
        reasons.extend(crd_reasons(p, csv, out));
    }
}

/// How a policy-specific message names its policy: only when several policies govern.
pub(super) fn naming(several: bool) -> impl Fn(&Policy, String) -> String {
    move |p: &Policy, m: String| {
        if several {
            format!("{m} (UpgradePolicy {})", p.name)
        } else {
            m
        }
    }
}

/// One policy's reasons for the CRD safety findings of the upgrade to `to` (GATE007, GATE015,
/// GATE008): errors hold under `crdSafety: Enforce` and are warnings (the plan goes on) under
/// `Warn`; nothing under `Ignore`.
pub(super) fn crd_reasons(p: &Policy, to: &str, out: &crate::gate::crds::Outcome) -> Vec<Reason> {
    let mut reasons = Vec::new();
    if p.crd_safety == CrdSafety::Ignore {
        return reasons;
    }
    let effect = match p.crd_safety {
        CrdSafety::Enforce => Effect::Hold,
        _ => Effect::Warn,
    };
    let say = |f: &crate::diag::Finding| format!("{} {}: {}", to, f.code, f.message);
    for f in &out.errors {
        reasons.push(Reason::new(&CRD_UNSAFE, effect, say(f)));
    }
    for f in &out.warnings {
        reasons.push(Reason::new(&CRD_WARNING, Effect::Info, say(f)));
    }
    for f in &out.preexisting {
        let m = format!(
            "{to}: the live cluster already has {}: {}",
            f.code, f.message
        );
        reasons.push(Reason::new(&CRD_PREEXISTING, Effect::Info, m));
    }
    reasons
}

/// Dedupes `reasons` (the same finding from several policies is one reason) and gives the
/// strongest effect among them.
pub(super) fn worst(reasons: &mut Vec<Reason>) -> Effect {
    let mut seen = BTreeSet::new();
    reasons.retain(|r: &Reason| seen.insert((r.code, r.effect, r.message.clone())));
    reasons
        .iter()
        .map(|r| r.effect)
        .max()
        .unwrap_or(Effect::Info)
}

/// A bundle's `minKubeVersion` (named `what`) against the cluster's version (GATE013, GATE014).
pub(super) fn kube_reasons(what: &str, min: &str, kube: Option<&Version>) -> Vec<Reason> {
    let hold = |code, m: String| Reason::new(code, Effect::Hold, m);
    if min.is_empty() {
        return Vec::new();
    }
    match (
        kube,
        crate::checks::bundle::apis::parse_kube_version_strict(min),
    ) {
        (None, _) => vec![Reason::new(
            &KUBE_UNKNOWN,
            Effect::Info,
            format!(
                "{what} needs Kubernetes {min}; the cluster's version is unknown, so this was not checked"
            ),
        )],
        (Some(k), Some(m)) if k.cmp_precedence(&m).is_lt() => vec![hold(
            &KUBE_TOO_OLD,
            format!("{what} needs Kubernetes {min} (spec.minKubeVersion); the cluster runs {k}"),
        )],
        (Some(_), Some(_)) => Vec::new(),
        (Some(_), None) => vec![hold(
            &KUBE_TOO_OLD,
            format!("{what} has spec.minKubeVersion {min:?}, which is not a version"),
        )],
    }
}

/// When a waiting decision should be looked at again, and until when it stands.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Timing {
    /// The earliest instant a wait can end (the next window, the end of the soak).
    pub requeue_at: Option<Timestamp>,
    /// The earliest window edge or soak end.
    pub valid_until: Option<Timestamp>,
}

impl Timing {
    fn requeue(&mut self, t: Timestamp) {
        self.requeue_at = Some(self.requeue_at.map_or(t, |r| r.min(t)));
    }

    fn until(&mut self, t: Timestamp) {
        self.valid_until = Some(self.valid_until.map_or(t, |v| v.min(t)));
    }
}

/// What `minAge` counts from.
pub(super) struct Soak {
    /// The instant, when known.
    pub since: Option<Timestamp>,
    /// What happened at that instant (`InstallPlan x was created`).
    pub what: String,
    /// The hold message when the instant is unknown.
    pub missing: String,
}

/// One policy's reasons that depend on the clock: `paused` (GATE011), the maintenance windows
/// (GATE009) and `minAge` (GATE010).
pub(super) fn clock_reasons(
    p: &Policy,
    now: Timestamp,
    soak: &Soak,
    of: &dyn Fn(&Policy, String) -> String,
    reasons: &mut Vec<Reason>,
    timing: &mut Timing,
) {
    if let Some(t) = window::next_edge(&p.windows, now) {
        timing.until(t);
    }
    if p.paused {
        reasons.push(Reason::new(
            &PAUSED,
            Effect::Hold,
            format!("UpgradePolicy {} is paused", p.name),
        ));
    }
    if !window::open(&p.windows, now) {
        let next = window::next_open(&p.windows, now);
        if let Some(t) = next {
            timing.requeue(t);
        }
        reasons.push(Reason::new(
            &WINDOW,
            Effect::Wait,
            of(
                p,
                match next {
                    Some(t) => format!("outside every maintenance window; the next opens at {t}"),
                    None => "outside every maintenance window, and none opens again".into(),
                },
            ),
        ));
    }
    let Some(min_age) = p.min_age else { return };
    match soak.since {
        Some(c) => {
            if let Some(at) = window::soaked_at(c, min_age, now) {
                timing.requeue(at);
                timing.until(at);
                reasons.push(Reason::new(
                    &SOAK,
                    Effect::Wait,
                    of(
                        p,
                        format!(
                            "{} at {c}, less than minAge {} ago; it is old enough at {at}",
                            soak.what,
                            window::format_duration(min_age)
                        ),
                    ),
                ));
            }
        }
        None => reasons.push(Reason::new(&SOAK, Effect::Hold, soak.missing.clone())),
    }
}

/// The severity a reason is shown with.
pub fn severity(r: &Reason) -> Severity {
    match r.effect {
        Effect::Hold => Severity::Error,
        Effect::Wait | Effect::Warn => Severity::Warning,
        Effect::Info => Severity::Info,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::testing::{self as t, Doc};
    use serde_json::json;

    const POLICY: &str = "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {name: default, namespace: acme-system}\nspec:\n  maxVersionJump: minor\n  crdSafety: Enforce\n";

    /// A Sunday, six days after the example plan was created.
    fn now() -> Timestamp {
        "2026-09-20T10:00:00Z".parse().expect("ts")
    }

    fn with_spec(extra: &str) -> Policy {
        crate::gate::policy::parse(&format!("{POLICY}{extra}")).unwrap_or_else(|e| panic!("{e:?}"))
    }

    fn run_at(docs: &[Doc], p: &Policy, now: Timestamp, kube: Option<&str>) -> Vec<Decision> {
        let o = t::objects(docs);
        let k = kube.map(|k| Version::parse(k).expect("kube"));
        evaluate(&Context {
            policies: std::slice::from_ref(p),
            objects: &o,
            now,
            kube: k.as_ref(),
        })
    }

    /// The one decision for the example plan.
    fn one(docs: &[Doc], p: &Policy, kube: Option<&str>) -> Decision {
        let mut d = run_at(docs, p, now(), kube);
        assert_eq!(d.len(), 1, "{d:?}");
        d.remove(0)
    }

    fn codes(d: &Decision) -> Vec<(&'static str, Effect)> {
        d.reasons.iter().map(|r| (r.code, r.effect)).collect()
    }

    fn has(d: &Decision, code: &str) -> bool {
        d.reasons.iter().any(|r| r.code == code)
    }

    fn safe() -> Vec<Doc> {
        let mut docs = t::example_docs();
        t::make_crd_safe(&mut docs);
        docs
    }

    #[test]
    fn the_example_is_held_for_the_crd_changes_it_introduces() {
        let d = one(&t::example_docs(), &with_spec(""), None);
        assert_eq!(d.decision, Verdict::Hold);
        assert_eq!(
            (
                d.install_plan.as_str(),
                d.namespace.as_str(),
                d.resource_version.as_str()
            ),
            ("install-7xk2p", "acme-system", "1044821")
        );
        assert_eq!(d.subscriptions, ["acme-db-operator"]);
        assert_eq!(d.from, ["acme-db-operator.v1.4.2"]);
        assert_eq!(
            d.to,
            ["acme-db-operator.v1.5.0", "acme-metrics-operator.v0.3.1"]
        );
        let holds: Vec<&str> = d
            .reasons
            .iter()
            .filter(|r| r.effect == Effect::Hold)
            .map(|r| r.message.as_str())
            .collect();
        assert_eq!(holds.len(), 3, "{holds:#?}");
        assert!(
            holds[0].contains("SCH004")
                && holds[0].contains("spec.replicas: maximum constraint added")
        );
        assert!(
            holds[1].contains("CRV005") && holds[1].contains("switches storage from v1beta1 to v1")
        );
        assert!(holds[2].contains("CRV006") && holds[2].contains("v1beta1 and v1"));
        // The live CRD's own problem (two served versions, different schemas) is information.
        let pre: Vec<&Reason> = d.reasons.iter().filter(|r| r.code == "GATE008").collect();
        assert_eq!(pre.len(), 1, "{pre:?}");
        assert!(pre[0].message.contains("v1alpha1 and v1beta1") && pre[0].effect == Effect::Info);
        assert_eq!(d.requeue_at, None);
    }

    #[test]
    fn the_safe_example_is_approved_and_warn_approves_the_unsafe_one() {
        let d = one(&safe(), &with_spec(""), Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Approve, "{:#?}", d.reasons);
        assert!(!has(&d, "GATE007"));
        assert!(
            has(&d, "GATE008"),
            "the live CRD's own finding is still told"
        );
        let warn = crate::gate::policy::parse(&POLICY.replace("Enforce", "Warn")).expect("policy");
        let d = one(&t::example_docs(), &warn, Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Approve);
        assert_eq!(
            codes(&d)
                .iter()
                .filter(|c| **c == ("GATE007", Effect::Warn))
                .count(),
            3
        );
        let ignore =
            crate::gate::policy::parse(&POLICY.replace("Enforce", "Ignore")).expect("policy");
        let d = one(&t::example_docs(), &ignore, Some("1.30.0"));
        assert_eq!(
            (d.decision, codes(&d)),
            (Verdict::Approve, vec![("GATE022", Effect::Info)]),
            "{:?}",
            d.reasons
        );
    }

    #[test]
    fn gate001_plans_that_are_not_ready_wait_and_nothing_else_is_judged() {
        for phase in [json!(""), json!("Planning"), serde_json::Value::Null] {
            let mut docs = t::example_docs();
            t::plan(&mut docs)["status"]["phase"] = phase.clone();
            let d = one(&docs, &with_spec(""), None);
            assert_eq!(d.decision, Verdict::Wait, "{phase}");
            assert_eq!(codes(&d), [("GATE001", Effect::Wait)], "{phase}");
        }
        // A pending bundle lookup (OLM before 0.25), and a CSV without its step.
        let mut docs = t::example_docs();
        t::plan(&mut docs)["status"]["bundleLookups"][0]["conditions"] = json!([
            {"type": "BundleLookupPending", "status": "True", "reason": "JobIncomplete", "message": "unpack job not completed"}
        ]);
        let d = one(&docs, &with_spec(""), None);
        assert_eq!(codes(&d), [("GATE001", Effect::Wait)]);
        assert!(d.reasons[0].message.contains("unpack job not completed"));
        let mut docs = t::example_docs();
        t::plan(&mut docs)["spec"]["clusterServiceVersionNames"]
            .as_array_mut()
            .expect("names")
            .push(json!("late.v1.0.0"));
        let d = one(&docs, &with_spec(""), None);
        assert_eq!(codes(&d), [("GATE001", Effect::Wait)]);
        // Past approval: no entry at all.
        for phase in ["Installing", "Complete", "Failed"] {
            let mut docs = t::example_docs();
            t::plan(&mut docs)["status"]["phase"] = json!(phase);
            assert!(run_at(&docs, &with_spec(""), now(), None).is_empty());
        }
        let d = one(&safe(), &with_spec(""), None);
        assert!(!has(&d, "GATE001"));
    }

    #[test]
    fn plans_the_gate_does_not_look_at_get_no_entry() {
        let p = with_spec("");
        for edit in [
            |d: &mut Vec<Doc>| t::plan(d)["spec"]["approval"] = json!("Automatic"),
            |d: &mut Vec<Doc>| t::plan(d)["spec"]["approved"] = json!(true),
            |d: &mut Vec<Doc>| t::plan(d)["metadata"]["namespace"] = json!("elsewhere"),
        ] {
            let mut docs = t::example_docs();
            edit(&mut docs);
            assert!(run_at(&docs, &p, now(), None).is_empty());
        }
        // A selector that does not match the Subscription.
        let p = crate::gate::policy::parse(&format!(
            "{POLICY}  selector: {{matchLabels: {{tier: gold}}}}\n"
        ))
        .expect("policy");
        assert!(run_at(&t::example_docs(), &p, now(), None).is_empty());
    }

    #[test]
    fn gate002_a_plan_no_covered_subscription_references_is_held_even_when_overridden() {
        let mut docs = t::example_docs();
        let sub = t::subscription(&mut docs);
        sub["status"]["installPlanRef"]["name"] = json!("install-newer");
        sub["metadata"]["annotations"] = json!({OVERRIDE_ANNOTATION: "install-7xk2p"});
        let d = one(&docs, &with_spec(""), None);
        assert_eq!(d.decision, Verdict::Hold);
        assert_eq!(d.reasons[0].code, "GATE002");
        assert!(!has(&d, "GATE012"));
        assert!(!has(&one(&safe(), &with_spec(""), None), "GATE002"));
    }

    #[test]
    fn gate003_a_csv_nobody_covered_asked_for_is_held() {
        let mut docs = t::example_docs();
        // The dependency's Subscription step is gone: its CSV is unaccounted for.
        t::plan(&mut docs)["status"]["plan"]
            .as_array_mut()
            .expect("steps")
            .retain(|s| s["resource"]["kind"] != "Subscription");
        let d = one(&docs, &with_spec(""), None);
        assert_eq!(d.decision, Verdict::Hold);
        let r = d
            .reasons
            .iter()
            .find(|r| r.code == "GATE003")
            .expect("GATE003");
        assert!(
            r.message.contains("acme-metrics-operator.v0.3.1"),
            "{}",
            r.message
        );
        // With the step it is a new dependency: accounted for.
        assert!(!has(&one(&safe(), &with_spec(""), None), "GATE003"));
    }

    #[test]
    fn gate004_content_that_cannot_be_read_holds_and_the_override_approves_it() {
        let mut docs = safe();
        docs.retain(|(name, _)| !name.starts_with("05-"));
        let d = one(&docs, &with_spec(""), None);
        assert_eq!(d.decision, Verdict::Hold);
        let r = d
            .reasons
            .iter()
            .find(|r| r.code == "GATE004")
            .expect("GATE004");
        assert!(
            r.message
                .contains("error finding unpacked bundle configmap"),
            "{}",
            r.message
        );
        t::subscription(&mut docs)["metadata"]["annotations"] =
            json!({OVERRIDE_ANNOTATION: "install-7xk2p"});
        let d = one(&docs, &with_spec(""), None);
        assert_eq!(d.decision, Verdict::Approve);
        assert!(has(&d, "GATE004") && has(&d, "GATE012"));
        assert!(!has(&one(&safe(), &with_spec(""), None), "GATE004"));
    }

    #[test]
    fn gate005_and_gate006_version_jumps() {
        let patch = crate::gate::policy::parse(&POLICY.replace("minor", "patch")).expect("p");
        let d = one(&safe(), &patch, None);
        assert_eq!(d.decision, Verdict::Hold);
        let r = d
            .reasons
            .iter()
            .find(|r| r.code == "GATE005")
            .expect("GATE005");
        assert!(
            r.message.contains("1.4.2")
                && r.message.contains("1.5.0")
                && r.message.contains("minor jump"),
            "{}",
            r.message
        );
        // The new dependency is no jump, whatever its version.
        assert_eq!(d.reasons.iter().filter(|r| r.code == "GATE005").count(), 1);
        assert!(!has(&one(&safe(), &with_spec(""), None), "GATE005"));
        // Versions that cannot be judged.
        let mut docs = safe();
        t::find(
            &mut docs,
            "ClusterServiceVersion",
            "acme-db-operator.v1.4.2",
        )["spec"]["version"] = json!("banana");
        let d = one(&docs, &with_spec(""), None);
        assert_eq!(d.decision, Verdict::Hold);
        assert!(
            d.reasons
                .iter()
                .any(|r| r.code == "GATE006" && r.message.contains("not semver"))
        );
        let mut docs = safe();
        docs.retain(|(n, _)| !n.starts_with("06-"));
        let d = one(&docs, &with_spec(""), None);
        assert!(
            d.reasons
                .iter()
                .any(|r| r.code == "GATE006" && r.message.contains("not among the objects"))
        );
        assert!(!has(&one(&safe(), &with_spec(""), None), "GATE006"));
    }

    #[test]
    fn several_csvs_in_one_plan_are_each_judged() {
        // The metrics operator is an upgrade too (0.2.0 -> 0.3.1), by its own Subscription.
        let mut docs = safe();
        let mut sub = t::subscription(&mut docs).clone();
        sub["metadata"]["name"] = json!("acme-metrics-operator");
        sub["status"]["currentCSV"] = json!("acme-metrics-operator.v0.3.1");
        sub["status"]["installedCSV"] = json!("acme-metrics-operator.v0.2.0");
        docs.push(("10-sub-metrics.yaml".into(), sub));
        let mut csv = t::find(
            &mut docs,
            "ClusterServiceVersion",
            "acme-db-operator.v1.4.2",
        )
        .clone();
        csv["metadata"]["name"] = json!("acme-metrics-operator.v0.2.0");
        csv["spec"]["version"] = json!("0.2.0");
        docs.push(("11-csv-metrics.yaml".into(), csv));
        let d = one(&docs, &with_spec(""), Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Approve, "{:#?}", d.reasons);
        assert_eq!(
            d.subscriptions,
            ["acme-db-operator", "acme-metrics-operator"]
        );
        assert_eq!(
            d.from,
            ["acme-db-operator.v1.4.2", "acme-metrics-operator.v0.2.0"]
        );
        // Patch only: both are minor jumps, both are named; the plan is held whole.
        let patch = crate::gate::policy::parse(&POLICY.replace("minor", "patch")).expect("p");
        let d = one(&docs, &patch, Some("1.30.0"));
        let jumps: Vec<&str> = d
            .reasons
            .iter()
            .filter(|r| r.code == "GATE005")
            .map(|r| r.message.as_str())
            .collect();
        assert_eq!(jumps.len(), 2, "{jumps:?}");
        assert!(
            jumps[0]
                .starts_with("acme-db-operator.v1.4.2 (1.4.2) -> acme-db-operator.v1.5.0 (1.5.0)")
        );
        assert!(jumps[1].starts_with(
            "acme-metrics-operator.v0.2.0 (0.2.0) -> acme-metrics-operator.v0.3.1 (0.3.1)"
        ));
        assert_eq!(d.decision, Verdict::Hold);
    }

    #[test]
    fn gate009_and_gate010_windows_and_soak_wait_and_requeue() {
        // Saturday 02:00-06:00 Berlin; now is Sunday 12:00 Berlin: the next is Saturday.
        let p = with_spec(
            "  maintenanceWindows:\n  - {days: [Sat], start: \"02:00\", duration: 4h, timeZone: Europe/Berlin}\n",
        );
        let d = one(&safe(), &p, Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Wait);
        assert_eq!(codes(&d)[0], ("GATE009", Effect::Wait));
        let next: Timestamp = "2026-09-26T00:00:00Z".parse().expect("ts");
        assert_eq!(d.requeue_at, Some(next));
        let d = run_at(&safe(), &p, next, Some("1.30.0")).remove(0);
        assert_eq!((d.decision, d.requeue_at), (Verdict::Approve, None));
        // Soak: created 2026-09-14T08:03:27Z; 7 days are over on the 21st.
        let p = with_spec("  minAge: 168h\n");
        let d = one(&safe(), &p, Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Wait);
        assert_eq!(codes(&d)[0], ("GATE010", Effect::Wait));
        assert_eq!(
            d.requeue_at,
            Some("2026-09-21T08:03:27Z".parse().expect("ts"))
        );
        let d = one(&safe(), &with_spec("  minAge: 24h\n"), Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Approve);
        // Both: the earlier instant is when to look again.
        let p = with_spec(
            "  minAge: 168h\n  maintenanceWindows:\n  - {days: [Sat], start: \"02:00\", duration: 4h, timeZone: Europe/Berlin}\n",
        );
        let d = one(&safe(), &p, Some("1.30.0"));
        assert_eq!(
            d.requeue_at,
            Some("2026-09-21T08:03:27Z".parse().expect("ts"))
        );
    }

    #[test]
    fn gate011_paused_holds_and_hold_wins_over_wait_with_every_reason_listed() {
        let p = with_spec("  paused: true\n  minAge: 168h\n");
        let d = one(&safe(), &p, Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Hold);
        assert_eq!(
            codes(&d)[..2],
            [("GATE011", Effect::Hold), ("GATE010", Effect::Wait)]
        );
        assert!(d.requeue_at.is_some());
        assert!(!has(&one(&safe(), &with_spec(""), None), "GATE011"));
    }

    #[test]
    fn gate012_the_override_approves_a_held_plan_but_never_one_that_is_not_ready() {
        let mut docs = t::example_docs();
        t::subscription(&mut docs)["metadata"]["annotations"] =
            json!({OVERRIDE_ANNOTATION: "install-7xk2p"});
        let p = with_spec("  paused: true\n");
        let d = one(&docs, &p, None);
        assert_eq!(d.decision, Verdict::Approve);
        assert!(has(&d, "GATE007") && has(&d, "GATE011"));
        assert_eq!(d.reasons.last().map(|r| r.code), Some("GATE012"));
        // Another plan's name does nothing.
        t::subscription(&mut docs)["metadata"]["annotations"] =
            json!({OVERRIDE_ANNOTATION: "install-other"});
        assert_eq!(one(&docs, &p, None).decision, Verdict::Hold);
        // Not ready: the override waits too.
        t::subscription(&mut docs)["metadata"]["annotations"] =
            json!({OVERRIDE_ANNOTATION: "install-7xk2p"});
        t::plan(&mut docs)["status"]["phase"] = json!("");
        let d = one(&docs, &p, None);
        assert_eq!(d.decision, Verdict::Wait, "the override needs a ready plan");
        assert_eq!(codes(&d), [("GATE001", Effect::Wait)]);
    }

    #[test]
    fn gate021_and_gate022_a_package_the_namespace_did_not_have() {
        // Allow (the default): the example plan's new dependency is told, and approved.
        let d = one(&safe(), &with_spec(""), None);
        assert_eq!(d.decision, Verdict::Approve, "{:#?}", d.reasons);
        let r = d
            .reasons
            .iter()
            .find(|r| r.code == "GATE022")
            .expect("GATE022");
        assert!(
            r.message.contains("acme-metrics-operator.v0.3.1")
                && r.message.contains("required by acme-db-operator.v1.5.0")
                && r.message
                    .contains("Subscription acme-metrics-operator-stable-acme-catalog-olm"),
            "{}",
            r.message
        );
        // Hold: the same plan is held for a person, with what to do.
        let hold = with_spec("  newDependencies: Hold\n");
        let d = one(&safe(), &hold, None);
        assert_eq!(d.decision, Verdict::Hold);
        let holds: Vec<_> = codes(&d)
            .into_iter()
            .filter(|c| c.1 == Effect::Hold)
            .collect();
        assert_eq!(holds, [("GATE021", Effect::Hold)], "the only hold");
        assert!(
            d.reasons[0]
                .message
                .contains("newDependencies: Hold holds it")
                && d.reasons[0].message.contains(OVERRIDE_ANNOTATION),
            "{}",
            d.reasons[0].message
        );
        // The override approves it.
        let mut docs = safe();
        t::subscription(&mut docs)["metadata"]["annotations"] =
            json!({OVERRIDE_ANNOTATION: "install-7xk2p"});
        let d = one(&docs, &hold, None);
        assert_eq!(d.decision, Verdict::Approve);
        assert!(has(&d, "GATE021") && has(&d, "GATE012"));
        // An upgrade alone (no Subscription step, no second CSV) is no new dependency.
        let mut docs = safe();
        let plan = t::plan(&mut docs);
        plan["status"]["plan"]
            .as_array_mut()
            .expect("steps")
            .retain(|s| s["resolving"] == "acme-db-operator.v1.5.0");
        plan["spec"]["clusterServiceVersionNames"] = json!(["acme-db-operator.v1.5.0"]);
        let d = one(&docs, &hold, None);
        assert_eq!(d.decision, Verdict::Approve, "{:#?}", d.reasons);
        assert!(!has(&d, "GATE021") && !has(&d, "GATE022"));
    }

    #[test]
    fn gate013_and_gate014_min_kube_version() {
        let d = one(&safe(), &with_spec(""), Some("1.26.5"));
        assert_eq!(d.decision, Verdict::Hold);
        let r: Vec<&Reason> = d.reasons.iter().filter(|r| r.code == "GATE013").collect();
        assert_eq!(r.len(), 1, "only acme-db-operator needs 1.27: {r:?}");
        assert!(r[0].message.contains("1.27.0") && r[0].message.contains("1.26.5"));
        assert!(!has(&d, "GATE014"));
        let d = one(&safe(), &with_spec(""), None);
        assert_eq!(d.reasons.iter().filter(|r| r.code == "GATE014").count(), 2);
        assert_eq!(d.decision, Verdict::Approve);
        assert!(!has(
            &one(&safe(), &with_spec(""), Some("1.27.0")),
            "GATE013"
        ));
    }

    #[test]
    fn gate015_warnings_the_upgrade_introduces_are_told() {
        // The installed CSV owns a second CRD that the new bundle no longer ships (CRV010).
        let mut docs = safe();
        let live = t::find(
            &mut docs,
            "CustomResourceDefinition",
            "databases.acme.example.com",
        )
        .clone();
        let mut other = live.clone();
        other["metadata"]["name"] = json!("backups.acme.example.com");
        other["spec"]["names"] = json!({"kind": "Backup", "listKind": "BackupList", "plural": "backups", "singular": "backup"});
        docs.push(("10-crd-backups.yaml".into(), other));
        t::find(
            &mut docs,
            "ClusterServiceVersion",
            "acme-db-operator.v1.4.2",
        )["spec"]["customresourcedefinitions"]["owned"]
            .as_array_mut()
            .expect("owned")
            .push(
                json!({"name": "backups.acme.example.com", "version": "v1beta1", "kind": "Backup"}),
            );
        let d = one(&docs, &with_spec(""), Some("1.30.0"));
        assert_eq!(d.decision, Verdict::Approve, "{:#?}", d.reasons);
        let r = d
            .reasons
            .iter()
            .find(|r| r.code == "GATE015")
            .expect("GATE015");
        assert!(
            r.message.contains("CRV010") && r.message.contains("backups.acme.example.com"),
            "{}",
            r.message
        );
        assert!(!has(
            &one(&safe(), &with_spec(""), Some("1.30.0")),
            "GATE015"
        ));
    }

    /// A second Subscription in the namespace (OLM makes it an owner of every plan there,
    /// cluster.md R5.1), at its own CSV, covered by a policy of its own.
    fn with_second_subscription(docs: &mut Vec<Doc>) {
        let mut sub = t::subscription(docs).clone();
        sub["metadata"]["name"] = json!("acme-cache-operator");
        sub["metadata"]["labels"] = json!({"tier": "cache"});
        sub["status"]["currentCSV"] = json!("acme-cache-operator.v2.0.0");
        sub["status"]["installedCSV"] = json!("acme-cache-operator.v2.0.0");
        sub["status"]["state"] = json!("AtLatestKnown");
        sub["status"]["installPlanRef"]["name"] = json!("install-older");
        sub["status"]["installPlanGeneration"] = json!(2);
        docs.push(("10-sub-cache.yaml".into(), sub));
        let owners = &mut t::plan(docs)["metadata"]["ownerReferences"];
        let mut second = owners[0].clone();
        second["name"] = json!("acme-cache-operator");
        owners.as_array_mut().expect("owners").push(second);
    }

    fn policies(specs: &[(&str, &str)]) -> Vec<Policy> {
        specs
            .iter()
            .map(|(name, extra)| {
                crate::gate::policy::parse(&format!(
                    "{}{extra}",
                    POLICY.replace("name: default", &format!("name: {name}"))
                ))
                .unwrap_or_else(|e| panic!("{e:?}"))
            })
            .collect()
    }

    fn run_all(docs: &[Doc], ps: &[Policy]) -> Vec<Decision> {
        let o = t::objects(docs);
        let k = Version::new(1, 30, 0);
        evaluate(&Context {
            policies: ps,
            objects: &o,
            now: now(),
            kube: Some(&k),
        })
    }

    #[test]
    fn a_plan_is_judged_once_for_the_subscription_it_installs_not_for_every_owner() {
        // The plan installs acme-db-operator's target; acme-cache-operator only owns it. Its
        // policy (patch only, selector tier=cache) must not judge the plan: before, each
        // policy decided on every plan its Subscriptions owned, so the two disagreed about
        // the same plan and their decision annotations flipped it back and forth.
        let mut docs = safe();
        with_second_subscription(&mut docs);
        let ps = policies(&[
            (
                "db",
                "  selector: {matchExpressions: [{key: tier, operator: DoesNotExist}]}\n",
            ),
            ("cache", "  selector: {matchLabels: {tier: cache}}\n"),
        ]);
        // POLICY says `maxVersionJump: minor`; the cache policy allows patches only.
        let ps: Vec<Policy> = ps
            .into_iter()
            .map(|mut p| {
                if p.name == "cache" {
                    p.max_version_jump = super::super::jump::Jump::Patch;
                }
                p
            })
            .collect();
        let d = run_all(&docs, &ps);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].policies, ["db"]);
        assert_eq!(d[0].subscriptions, ["acme-db-operator"]);
        assert_eq!(d[0].decision, Verdict::Approve, "{:#?}", d[0].reasons);
        // Only the cache policy: the plan is nobody's business there.
        assert!(run_all(&docs, &ps[1..]).is_empty());
    }

    #[test]
    fn several_policies_covering_one_subscription_give_one_decision_the_worst_wins() {
        let ps = policies(&[("a", ""), ("b", "  paused: true\n")]);
        let d = run_all(&safe(), &ps);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].policies, ["a", "b"]);
        assert_eq!(d[0].decision, Verdict::Hold);
        assert_eq!(d[0].reasons[0].code, "GATE011");
        assert!(
            d[0].reasons[0]
                .message
                .contains("UpgradePolicy b is paused")
        );
        // A policy-specific reason names its policy when several govern.
        let mut strict = policies(&[("a", ""), ("b", "")]);
        strict[1].max_version_jump = super::super::jump::Jump::Patch;
        let d = run_all(&safe(), &strict);
        let jump: Vec<&Reason> = d[0]
            .reasons
            .iter()
            .filter(|r| r.code == "GATE005")
            .collect();
        assert_eq!(jump.len(), 1);
        assert!(
            jump[0].message.ends_with("(UpgradePolicy b)"),
            "{}",
            jump[0].message
        );
        // The same content finding from both is one reason.
        let d = run_all(&t::example_docs(), &policies(&[("a", ""), ("b", "")]));
        assert_eq!(
            d[0].reasons.iter().filter(|r| r.code == "GATE007").count(),
            3
        );
    }

    #[test]
    fn a_plan_no_subscription_points_at_yet_gets_no_decision_not_a_hold() {
        // OLM's order of writes (cluster.md R5.3): the plan's status is written, then the
        // Subscriptions are pointed at it. In between the plan is RequiresApproval and
        // nobody references it; before, the gate reported it Held as stale (GATE002).
        let mut docs = safe();
        {
            let sub = t::subscription(&mut docs);
            sub["status"]["installPlanRef"]["name"] = json!("install-older");
            sub["status"]["installPlanGeneration"] = json!(2);
            sub["status"]["currentCSV"] = json!("acme-db-operator.v1.4.2");
            sub["status"]["state"] = json!("AtLatestKnown");
        }
        assert_eq!(run_all(&docs, &policies(&[("a", "")])), []);
        // Once the Subscription has moved past its generation, it is stale.
        t::subscription(&mut docs)["status"]["installPlanGeneration"] = json!(3);
        let d = run_all(&docs, &policies(&[("a", "")]));
        assert_eq!((d.len(), d[0].current), (1, false));
        assert_eq!(d[0].reasons[0].code, "GATE002");
        // A reference whose generation differs is not current either.
        let mut docs = safe();
        t::subscription(&mut docs)["status"]["installPlanGeneration"] = json!(4);
        let d = run_all(&docs, &policies(&[("a", "")]));
        assert!(!d[0].current && d[0].decision == Verdict::Hold);
    }
}
