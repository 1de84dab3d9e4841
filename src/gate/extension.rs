//! The gate for OLM v1 ClusterExtensions (issue 31 §5): where the pin of one ClusterExtension
//! an [`UpgradePolicy`](super::policy::Policy) covers should be.
//!
//! OLM v1 has no InstallPlans: a ClusterExtension upgrades when its resolved version changes.
//! The gate owns `spec.source.catalog.version` of the extensions a policy selects
//! (`spec.clusterExtensionSelector`) and keeps it an exact pin: the installed version, moved
//! one step at a time to the next version the policy allows. Under `CatalogProvided` OLM v1
//! resolves a pinned version only if it is installed or a *direct* successor of the installed
//! bundle (olmv1.md §6.5), so the gate steps through intermediates and waits for each step to
//! be installed before it moves again.
//!
//! The rules, in order:
//! - nothing installed yet (`status.install.bundle`), or a rollout in progress (`Installed` not
//!   `True`, a generation not observed yet, an exact pin other than the installed version):
//!   wait (GATE016) and leave the pin; a step OLM v1 gave up on (`Progressing=False`) holds
//!   (GATE019);
//! - a version that is not an exact pin of the installed version (empty, a range) is pinned to
//!   it (GATE017), whatever else is decided: under a range OLM v1 would upgrade by itself;
//! - the candidates are the direct successors of the installed bundle in the selected channels
//!   (all channels when none are selected), as `SuccessorsOf` finds them; under
//!   `SelfCertified` every higher version of those channels. They are tried in OLM v1's order
//!   of preference (not deprecated first, then the higher version), and the first one every
//!   governing policy allows is the step: `maxVersionJump` from the installed version, CRD
//!   safety of its CRDs against the cluster's by v1's preflight rules (`crdSafety`), its
//!   `minKubeVersion`. Better candidates passed over are told (GATE018); when none is allowed
//!   the pin stays, with every candidate's reasons. With several selected catalogs known one
//!   by one, a candidate OLM v1 would not resolve across them (the same highest priority) is
//!   not taken (GATE020, [`super::catalogs`]), and a candidate's bundle is the winning
//!   catalog's;
//! - the clock: `paused` holds, outside every maintenance window waits, and `minAge` counts from
//!   the later of the last step (the `olmctl.dev/pinned-at` annotation the operator writes
//!   with each move) and the newest `status.lastUnpacked` of the ClusterCatalogs the extension
//!   selects (the catalog content that brought the version): both must have soaked;
//! - the override `olmctl.dev/approve-version: <version>` on the ClusterExtension moves the
//!   pin to that candidate whatever holds it (GATE012), never during a rollout.
//!
//! No direct successor: the extension is current and the pin stays.

use jiff::Timestamp;
use semver::Version;

use super::catalogs::{Query, Resolver, Source};
use super::crds::Upgrade;
use super::decide::{
    CONTENT, Effect, JUMP, OVERRIDE, PASSED_OVER, PIN, ROLLOUT, Reason, STEP_FAILED, Soak, Timing,
    UNRESOLVABLE, VERSION, clock_reasons, kube_reasons, worst,
};
use super::decide::{crd_reasons, int_at, labels, naming};
use super::jump::classify;
use super::objects::{Object, Objects};
use super::policy::{CrdSafety, Policy, Selector, selector};
pub use super::successors::{Step, successors};
use super::successors::{bundles, parse_version, pin_of};
use crate::bundle::load::{field, list_at, str_at};
use crate::fbc::decl::{Bundle, DeclarativeConfig};
use crate::fbc::node::Node;
use crate::fbc::property::Typed;

/// The annotation of the human override; its value names the version to move the pin to.
pub const APPROVE_VERSION_ANNOTATION: &str = "olmctl.dev/approve-version";

/// The annotation the operator writes with each move of the pin: when it moved (RFC 3339).
pub const PINNED_AT_ANNOTATION: &str = "olmctl.dev/pinned-at";

/// What the gate decides for one ClusterExtension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExtVerdict {
    /// Move the pin to the next step now.
    Move,
    /// No newer version to move to: the pin stays at the installed version.
    Current,
    /// Time will resolve it (a window, the soak time, a rollout).
    Wait,
    /// A person must act.
    Hold,
}

impl ExtVerdict {
    /// `move`, `current`, `wait` or `hold`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExtVerdict::Move => "move",
            ExtVerdict::Current => "current",
            ExtVerdict::Wait => "wait",
            ExtVerdict::Hold => "hold",
        }
    }
}

/// The decision for one ClusterExtension.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionDecision {
    /// The ClusterExtension's name.
    pub name: String,
    /// `spec.source.catalog.packageName`.
    pub package: String,
    /// The `metadata.resourceVersion` the decision was made on (the patch's precondition).
    pub resource_version: String,
    /// The policies that govern it, in the order given.
    pub policies: Vec<String>,
    /// The installed bundle (`status.install.bundle.name`), if any.
    pub installed_bundle: Option<String>,
    /// The installed version (`status.install.bundle.version`), if any.
    pub installed: Option<String>,
    /// `spec.source.catalog.version` as it is ("" when unset).
    pub version: String,
    /// The step considered: the one the pin moves to, or the best candidate that is held or
    /// waits.
    pub next: Option<Step>,
    /// What `spec.source.catalog.version` should be (`None`: leave it as it is).
    pub pin: Option<String>,
    /// The verdict.
    pub decision: ExtVerdict,
    /// Every reason, holds first, then waits, then information.
    pub reasons: Vec<Reason>,
    /// When a waiting decision should be looked at again.
    pub requeue_at: Option<Timestamp>,
    /// Until when the decision stands on the same inputs.
    pub valid_until: Option<Timestamp>,
}

impl ExtensionDecision {
    /// Whether the decision writes the ClusterExtension (its pin differs from its version).
    pub fn changes_pin(&self) -> bool {
        self.pin.as_ref().is_some_and(|p| *p != self.version)
    }

    /// The JSON merge patch that writes the decision, if it changes the pin: the new
    /// `spec.source.catalog.version`, guarded by the `metadata.resourceVersion` the decision
    /// was made on (the API server refuses it with 409 when the extension changed since); a
    /// move to a newer version also stamps [`PINNED_AT_ANNOTATION`] with `now`, from which
    /// the next step's `minAge` counts. Pinning a range to the installed version is no step and
    /// leaves the stamp alone.
    pub fn pin_patch(&self, now: Timestamp) -> Option<serde_json::Value> {
        let pin = self.pin.as_ref().filter(|_| self.changes_pin())?;
        let mut metadata = serde_json::json!({"resourceVersion": self.resource_version});
        if self.decision == ExtVerdict::Move {
            metadata["annotations"] = serde_json::json!({PINNED_AT_ANNOTATION: now.to_string()});
        }
        Some(serde_json::json!({
            "metadata": metadata,
            "spec": {"source": {"catalog": {"version": pin}}},
        }))
    }
}

/// What [`evaluate`] reads.
pub struct ExtContext<'a> {
    /// The policies.
    pub policies: &'a [Policy],
    /// The cluster's objects: ClusterExtensions, ClusterCatalogs, CRDs.
    pub objects: &'a Objects,
    /// The catalog content the extensions resolve from (FBC; CRD safety needs the bundles'
    /// `olm.bundle.object` properties): the selected catalogs' contents merged.
    pub catalog: &'a DeclarativeConfig,
    /// Each ClusterCatalog's own content by name, when the caller fetched them one by one
    /// (the operator): with two or more selected, a step is checked as OLM v1 resolves it
    /// across catalogs ([`super::catalogs`], GATE020). Empty when only `catalog` is known.
    pub contents: &'a super::catalogs::Contents,
    /// The clock.
    pub now: Timestamp,
    /// The cluster's Kubernetes version, when known.
    pub kube: Option<&'a Version>,
}

/// Whether `policy` governs the ClusterExtension: its `clusterExtensionSelector` is set and
/// matches, and the extension installs into the policy's namespace (`spec.namespace`; a policy
/// without a namespace, as `gate evaluate` may read one, covers every namespace).
pub fn covers(policy: &Policy, ce: &Object) -> bool {
    policy.cluster_extension_selector.as_ref().is_some_and(|s| {
        (policy.namespace.is_empty() || ce.str(&["spec", "namespace"]) == Some(&policy.namespace))
            && s.matches(&labels(ce))
    })
}

/// Evaluates every ClusterExtension a policy covers, sorted by name.
pub fn evaluate(ctx: &ExtContext<'_>) -> Vec<ExtensionDecision> {
    let mut ces: Vec<&Object> = ctx.objects.cluster_extensions.iter().collect();
    ces.sort_by(|a, b| a.name().cmp(b.name()));
    ces.into_iter()
        .filter_map(|ce| {
            let policies: Vec<&Policy> = ctx.policies.iter().filter(|p| covers(p, ce)).collect();
            (!policies.is_empty()).then(|| decide(ctx, ce, &policies))
        })
        .collect()
}

/// The version a pin names when `spec.source.catalog.version` is an exact Masterminds
/// constraint (`1.2.3`, `=1.2.3`, `v1.2.3`): `compare.go :: NewVersionRange` matches it
/// ignoring build metadata.
fn exact_pin(s: &str) -> Option<Version> {
    let t = s.trim();
    let t = t.strip_prefix('=').unwrap_or(t).trim_start();
    let t = t.strip_prefix('v').unwrap_or(t);
    parse_version(t)
}

fn condition<'a>(ce: &'a Object, t: &str) -> Option<&'a Node> {
    list_at(&ce.node, &["status", "conditions"])
        .iter()
        .find(|c| str_at(c, &["type"]) == Some(t))
}

/// A rollout in progress or a failed step (operator-controller's "done":
/// `Installed=True`, `observedGeneration == metadata.generation`, and, for an exact pin, the
/// installed version is the pinned one; `common_controller.go :: setInstalledStatusFromRevisionStates`,
/// `clusterextension_reconcile_steps.go :: handleResolutionError`).
fn rollout(ce: &Object, installed: &Version) -> Option<Reason> {
    let wait = |m: String| Some(Reason::new(&ROLLOUT, Effect::Wait, m));
    let name = ce.name();
    let generation = int_at(&ce.node, &["metadata", "generation"]);
    let installed_c = condition(ce, "Installed");
    let progressing = condition(ce, "Progressing");
    for c in [installed_c, progressing].into_iter().flatten() {
        if let (Some(g), Some(o)) = (generation, int_at(c, &["observedGeneration"]))
            && o < g
        {
            return wait(format!(
                "ClusterExtension {name}: OLM v1 has not observed generation {g} yet (observedGeneration {o})"
            ));
        }
    }
    let say = |c: &Node| {
        format!(
            "{}/{}: {}",
            str_at(c, &["status"]).unwrap_or("?"),
            str_at(c, &["reason"]).unwrap_or("?"),
            str_at(c, &["message"]).unwrap_or_default()
        )
    };
    let pinned = exact_pin(
        ce.str(&["spec", "source", "catalog", "version"])
            .unwrap_or(""),
    );
    if let Some(p) = pinned.filter(|p| p.cmp_precedence(installed).is_ne()) {
        if let Some(c) = progressing.filter(|c| str_at(c, &["status"]) == Some("False")) {
            return Some(Reason::new(
                &STEP_FAILED,
                Effect::Hold,
                format!(
                    "ClusterExtension {name}: the step from {installed} to the pinned {p} failed (Progressing {})",
                    say(c)
                ),
            ));
        }
        return wait(format!(
            "ClusterExtension {name}: the step from {installed} to the pinned {p} is in progress{}",
            progressing.map_or(String::new(), |c| format!(" (Progressing {})", say(c)))
        ));
    }
    match installed_c {
        Some(c) if str_at(c, &["status"]) == Some("True") => None,
        Some(c) => wait(format!("ClusterExtension {name}: Installed {}", say(c))),
        None => wait(format!(
            "ClusterExtension {name} has no Installed condition yet"
        )),
    }
}

/// The CRDs a decision for `package` may read from the cluster: those its bundles in `cfg` ship
/// (`olm.bundle.object` manifests), by name. The operator reads exactly these live CRDs (by
/// name, as it reads an InstallPlan's) before [`evaluate`]; bundles whose objects do not decode
/// are left out (their decision says why).
pub fn crd_names(cfg: &DeclarativeConfig, package: &str) -> std::collections::BTreeSet<String> {
    bundles(cfg, package)
        .values()
        .filter_map(|b| bundle_objects(b).ok())
        .flatten()
        .filter(|n| kind_is(n, "CustomResourceDefinition"))
        .filter_map(|n| str_at(&n, &["metadata", "name"]).map(str::to_string))
        .collect()
}

/// The objects of a catalog bundle (`olm.bundle.object`, base64 JSON or YAML manifests).
fn bundle_objects(b: &Bundle) -> Result<Vec<Node>, String> {
    let mut out = Vec::new();
    for p in &b.properties {
        if !matches!(p.typed, Typed::BundleObject) {
            continue;
        }
        let data = str_at(&p.value, &["data"]).unwrap_or_default();
        let bytes = crate::encoding::decode_forgiving(data).map_err(|e| {
            format!(
                "an olm.bundle.object of bundle {} is not base64: {e}",
                b.name
            )
        })?;
        let text = String::from_utf8(bytes)
            .map_err(|_| format!("an olm.bundle.object of bundle {} is not UTF-8", b.name))?;
        match crate::fbc::yaml::first_document(&text) {
            Ok(Some(n)) => out.push(n),
            Ok(None) => {}
            Err(e) => {
                return Err(format!(
                    "an olm.bundle.object of bundle {} does not parse: {}",
                    b.name, e.message
                ));
            }
        }
    }
    Ok(out)
}

fn kind_is(n: &Node, kind: &str) -> bool {
    str_at(n, &["kind"]) == Some(kind)
}

/// The policy-independent facts of one candidate: the jump, its minKubeVersion, its CRD
/// safety against the cluster (checked once however many policies judge it).
struct Facts {
    content: Vec<Reason>,
    kube: Vec<Reason>,
    crds: Option<super::crds::Outcome>,
}

fn facts(
    ctx: &ExtContext<'_>,
    ce: &Object,
    installed_bundle: Option<&Bundle>,
    target: &Bundle,
    check_crds: bool,
) -> Facts {
    let mut f = Facts {
        content: Vec::new(),
        kube: Vec::new(),
        crds: None,
    };
    let hold = |m: String| Reason::new(&CONTENT, Effect::Hold, m);
    let objects = match bundle_objects(target) {
        Ok(o) => o,
        Err(e) => {
            f.content.push(hold(e));
            return f;
        }
    };
    let csv = objects.iter().find(|n| kind_is(n, "ClusterServiceVersion"));
    let min_kube = csv
        .and_then(|c| str_at(c, &["spec", "minKubeVersion"]))
        .or_else(|| {
            target
                .properties
                .iter()
                .filter(|p| matches!(p.typed, Typed::CsvMetadata))
                .find_map(|p| str_at(&p.value, &["minKubeVersion"]))
        });
    if let Some(min) = min_kube {
        f.kube = kube_reasons(&target.name, min, ctx.kube);
    }
    if !check_crds {
        return f;
    }
    let Some(csv) = csv else {
        f.content.push(hold(format!(
            "the catalog has no olm.bundle.object manifests for bundle {} (catalogd serves only its metadata), so the CRDs of the step to it cannot be checked; give the catalog rendered with its objects, or crdSafety: Ignore",
            target.name
        )));
        return f;
    };
    let crds: Vec<Node> = objects
        .iter()
        .filter(|n| kind_is(n, "CustomResourceDefinition"))
        .cloned()
        .collect();
    // The old side: the installed bundle's CSV from the catalog (OLM v1 keeps no CSV on the
    // cluster) and the live CRDs the step applies or the installed bundle owns.
    let old_csv = installed_bundle
        .and_then(|b| bundle_objects(b).ok())
        .and_then(|os| os.into_iter().find(|n| kind_is(n, "ClusterServiceVersion")))
        .map(|n| {
            Object::new(
                std::sync::Arc::from(std::path::Path::new("catalog/installed")),
                n,
            )
        });
    let mut names: std::collections::BTreeSet<String> = crds
        .iter()
        .filter_map(|c| str_at(c, &["metadata", "name"]).map(str::to_string))
        .collect();
    if let Some(o) = &old_csv {
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
        plan: format!("clusterextension/{}", ce.name()),
        installed: old_csv.as_ref(),
        live,
        csv: csv.clone(),
        crds,
        preflight_olmv1: true,
    };
    f.crds = Some(up.check(ctx.kube));
    f
}

/// One policy's hold reasons for one candidate (and the information it gives).
fn judge(
    p: &Policy,
    installed: &Version,
    step: &Step,
    f: &Facts,
    of: &dyn Fn(&Policy, String) -> String,
) -> Vec<Reason> {
    let mut out = f.content.clone();
    let to = &step.bundle;
    match classify(installed, &step.version) {
        Some(j) if j > p.max_version_jump => out.push(Reason::new(
            &JUMP,
            Effect::Hold,
            of(
                p,
                format!(
                    "{installed} -> {to} ({}) is a {} jump; the policy allows up to {}",
                    step.version,
                    j.as_str(),
                    p.max_version_jump.as_str()
                ),
            ),
        )),
        Some(_) => {}
        None => out.push(Reason::new(
            &VERSION,
            Effect::Hold,
            format!("{to} ({}) is not higher than {installed}", step.version),
        )),
    }
    out.extend(f.kube.iter().cloned());
    if let Some(o) = &f.crds {
        out.extend(crd_reasons(p, to, o));
    }
    out
}

/// The ClusterCatalogs of `objects` the extension resolves from: those its
/// `spec.source.catalog.selector` matches (none selects all, as `CatalogResolver.Resolve`
/// does). The operator fetches the content of these (those `Serving`) for [`evaluate`].
pub fn selected_catalogs<'o>(objects: &'o Objects, ce: &Object) -> Vec<&'o Object> {
    let sel: Selector = field(&ce.node, &["spec", "source", "catalog", "selector"])
        .and_then(|n| selector(n, "spec.source.catalog.selector").ok())
        .unwrap_or_default();
    objects
        .cluster_catalogs
        .iter()
        .filter(|c| sel.matches(&labels(c)))
        .collect()
}

/// The selected ClusterCatalogs whose content the caller fetched ([`ExtContext::contents`]),
/// with their `spec.priority` (0 when unset, the CRD's default).
fn sources<'c>(ctx: &ExtContext<'c>, ce: &Object) -> Vec<Source<'c>> {
    selected_catalogs(ctx.objects, ce)
        .into_iter()
        .filter_map(|c| {
            let (name, content) = ctx.contents.get_key_value(c.name())?;
            let priority = int_at(&c.node, &["spec", "priority"]).unwrap_or(0);
            Some(Source {
                name,
                priority,
                content,
            })
        })
        .collect()
}

/// The newest `status.lastUnpacked` of the ClusterCatalogs the extension selects.
fn catalog_unpacked(ctx: &ExtContext<'_>, ce: &Object) -> Option<Timestamp> {
    selected_catalogs(ctx.objects, ce)
        .into_iter()
        .filter_map(|c| c.str(&["status", "lastUnpacked"])?.parse().ok())
        .max()
}

fn decide(ctx: &ExtContext<'_>, ce: &Object, policies: &[&Policy]) -> ExtensionDecision {
    let cat = |k: &str| {
        ce.str(&["spec", "source", "catalog", k])
            .unwrap_or_default()
    };
    let mut d = ExtensionDecision {
        name: ce.name().to_string(),
        package: cat("packageName").to_string(),
        resource_version: ce
            .str(&["metadata", "resourceVersion"])
            .unwrap_or_default()
            .to_string(),
        policies: policies.iter().map(|p| p.name.clone()).collect(),
        installed_bundle: ce
            .str(&["status", "install", "bundle", "name"])
            .map(str::to_string),
        installed: ce
            .str(&["status", "install", "bundle", "version"])
            .map(str::to_string),
        version: cat("version").to_string(),
        next: None,
        pin: None,
        decision: ExtVerdict::Wait,
        reasons: Vec::new(),
        requeue_at: None,
        valid_until: None,
    };
    let (Some(name), Some(raw)) = (d.installed_bundle.clone(), d.installed.clone()) else {
        d.reasons.push(Reason::new(
            &ROLLOUT,
            Effect::Wait,
            format!(
                "ClusterExtension {} has no installed bundle yet (status.install.bundle)",
                d.name
            ),
        ));
        return d;
    };
    let Some(installed) = parse_version(&raw) else {
        d.decision = ExtVerdict::Hold;
        d.reasons.push(Reason::new(
            &VERSION,
            Effect::Hold,
            format!(
                "ClusterExtension {}: the installed version {raw:?} is not semver",
                d.name
            ),
        ));
        return d;
    };
    if let Some(r) = rollout(ce, &installed) {
        d.decision = if r.effect == Effect::Hold {
            ExtVerdict::Hold
        } else {
            ExtVerdict::Wait
        };
        d.reasons.push(r);
        return d;
    }
    let stay = pin_of(&installed);
    let mut reasons = Vec::new();
    if exact_pin(&d.version).is_none_or(|p| p.cmp_precedence(&installed).is_ne()) {
        reasons.push(Reason::new(
            &PIN,
            Effect::Info,
            format!(
                "spec.source.catalog.version {:?} is not an exact pin of the installed {installed}: pinned to {stay}",
                d.version
            ),
        ));
    }
    d.pin = Some(stay.clone());
    let channels: Vec<String> = list_at(&ce.node, &["spec", "source", "catalog", "channels"])
        .iter()
        .filter_map(|n| n.as_str().map(str::to_string))
        .collect();
    let self_certified = cat("upgradeConstraintPolicy") == "SelfCertified";
    let candidates = match successors(
        ctx.catalog,
        &d.package,
        &channels,
        self_certified,
        &name,
        &installed,
    ) {
        Ok(c) => c,
        Err(e) => {
            reasons.push(Reason::new(&CONTENT, Effect::Hold, e));
            vec![]
        }
    };
    let of = naming(policies.len() > 1);
    let resolver = Resolver::new(
        sources(ctx, ce),
        Query {
            package: &d.package,
            channels: &channels,
            self_certified,
            installed_name: &name,
            installed_raw: &raw,
            installed: &installed,
        },
    );
    let known = bundles(ctx.catalog, &d.package);
    let check_crds = policies.iter().any(|p| p.crd_safety != CrdSafety::Ignore);
    let installed_bundle = known.get(name.as_str()).copied();
    // The first candidate every policy allows; the held ones before it are told.
    let mut chosen: Option<(Step, Vec<Reason>)> = None;
    let mut refused: Vec<(Step, Vec<Reason>)> = Vec::new();
    for step in &candidates {
        // The bundle OLM v1 would install for this pin: from the catalog that wins across
        // several, or the merged content's.
        let from = match resolver.resolve(step) {
            Ok(from) => from,
            Err(e) => {
                let r = Reason::new(
                    &UNRESOLVABLE,
                    Effect::Hold,
                    format!(
                        "ClusterExtension {}: a pin to {} would not resolve: {e}",
                        d.name,
                        pin_of(&step.version)
                    ),
                );
                refused.push((step.clone(), vec![r]));
                continue;
            }
        };
        let Some(b) = from.or_else(|| known.get(step.bundle.as_str()).copied()) else {
            continue;
        };
        let f = facts(ctx, ce, installed_bundle, b, check_crds);
        let mut rs: Vec<Reason> = policies
            .iter()
            .flat_map(|p| judge(p, &installed, step, &f, &of))
            .collect();
        if worst(&mut rs) == Effect::Hold {
            refused.push((step.clone(), rs));
        } else {
            chosen = Some((step.clone(), rs));
            break;
        }
    }
    let overridden = ce
        .str(&["metadata", "annotations", APPROVE_VERSION_ANNOTATION])
        .and_then(exact_pin)
        .and_then(|v| {
            candidates
                .iter()
                .find(|s| s.version.cmp_precedence(&v).is_eq())
        });
    let mut timing = Timing::default();
    if candidates.is_empty() {
        // Nothing newer: current (unless the catalog could not be read).
        d.decision = if worst(&mut reasons) == Effect::Hold {
            ExtVerdict::Hold
        } else {
            ExtVerdict::Current
        };
        d.reasons = reasons;
        return d;
    }
    match chosen {
        Some((step, rs)) => {
            for (s, held) in &refused {
                for r in held.iter().filter(|r| r.effect == Effect::Hold) {
                    reasons.push(Reason::new(
                        &PASSED_OVER,
                        Effect::Info,
                        format!(
                            "{} ({}) passed over: {}: {}",
                            s.bundle, s.version, r.code, r.message
                        ),
                    ));
                }
            }
            reasons.extend(rs);
            d.next = Some(step);
        }
        None => {
            for (_, held) in &refused {
                reasons.extend(held.iter().cloned());
            }
            d.next = refused.first().map(|(s, _)| s.clone());
        }
    }
    let last_step = ce
        .str(&["metadata", "annotations", PINNED_AT_ANNOTATION])
        .and_then(|t| t.parse::<Timestamp>().ok());
    let since = last_step.max(catalog_unpacked(ctx, ce));
    let soak = Soak {
        since,
        what: format!(
            "the last step of ClusterExtension {} or its catalog's content changed",
            d.name
        ),
        missing: format!(
            "ClusterExtension {} has neither an {PINNED_AT_ANNOTATION} annotation nor a ClusterCatalog with status.lastUnpacked, so minAge cannot be judged",
            d.name
        ),
    };
    for p in policies {
        clock_reasons(p, ctx.now, &soak, &of, &mut reasons, &mut timing);
    }
    let mut verdict = match worst(&mut reasons) {
        Effect::Hold => ExtVerdict::Hold,
        Effect::Wait => ExtVerdict::Wait,
        Effect::Warn | Effect::Info => ExtVerdict::Move,
    };
    if let Some(o) = overridden
        && (verdict != ExtVerdict::Move || d.next.as_ref() != Some(o))
    {
        verdict = ExtVerdict::Move;
        d.next = Some(o.clone());
        reasons.push(Reason::new(
            &OVERRIDE,
            Effect::Info,
            format!(
                "moved to {} by annotation {APPROVE_VERSION_ANNOTATION} on ClusterExtension {}",
                o.version, d.name
            ),
        ));
    }
    if verdict == ExtVerdict::Move {
        d.pin = d.next.as_ref().map(|s| pin_of(&s.version));
        timing.requeue_at = None;
    } else {
        d.pin = Some(stay);
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.effect));
    d.decision = verdict;
    d.reasons = reasons;
    d.requeue_at = timing.requeue_at;
    d.valid_until = timing.valid_until;
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EdgeKind;
    use serde_json::{Value as J, json};
    use std::path::Path;
    use std::sync::Arc;

    const POLICY: &str = "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {name: db, namespace: acme-system}\nspec:\n  clusterExtensionSelector: {matchLabels: {team: db}}\n  maxVersionJump: minor\n";
    const CRD: &str = "databases.acme.example.com";

    fn now() -> Timestamp {
        "2026-09-20T10:00:00Z".parse().expect("ts")
    }

    fn policy(extra: &str) -> Policy {
        let base = if extra.contains("maxVersionJump") {
            POLICY.replace("  maxVersionJump: minor\n", "")
        } else {
            POLICY.to_string()
        };
        super::super::policy::parse(&format!("{base}{extra}")).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// The Database CRD; `max` adds a `maximum` to `spec.replicas` (a tighter bound: v1's
    /// preflight refuses it).
    fn crd(max: Option<u64>) -> J {
        let mut replicas = json!({"type": "integer"});
        if let Some(m) = max {
            replicas["maximum"] = json!(m);
        }
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": CRD},
            "spec": {"group": "acme.example.com", "scope": "Namespaced",
                "names": {"kind": "Database", "listKind": "DatabaseList", "plural": "databases", "singular": "database"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": {"replicas": replicas}}}}}}]},
            "status": {"storedVersions": ["v1"]}
        })
    }

    fn csv(version: &str, min_kube: Option<&str>) -> J {
        let mut c = json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
            "metadata": {"name": format!("acme-db.v{version}")},
            "spec": {"version": version, "displayName": "Acme DB",
                "customresourcedefinitions": {"owned": [{"name": CRD, "version": "v1", "kind": "Database"}]},
                "install": {"strategy": "deployment", "spec": {"deployments": []}}}
        });
        if let Some(k) = min_kube {
            c["spec"]["minKubeVersion"] = json!(k);
        }
        c
    }

    /// One bundle: (version, the CRD's maximum, minKubeVersion, with objects).
    type B<'a> = (&'a str, Option<u64>, Option<&'a str>, bool);

    fn bundle((v, max, kube, objects): B<'_>) -> J {
        let mut props =
            vec![json!({"type": "olm.package", "value": {"packageName": "acme-db", "version": v}})];
        if objects {
            for o in [csv(v, kube), crd(max)] {
                let data = crate::encoding::base64(o.to_string().as_bytes());
                props.push(json!({"type": "olm.bundle.object", "value": {"data": data}}));
            }
        }
        json!({"schema": "olm.bundle", "name": format!("acme-db.v{v}"), "package": "acme-db",
            "image": format!("example.com/acme-db:{v}"), "properties": props})
    }

    /// stable: 1.0.0 <- 1.0.1 <- 1.1.0 (skipRange >=1.0.0 <1.1.0) <- 2.0.0;
    /// fast: 1.0.0 <- 3.0.0 (skips 1.0.0).
    fn catalog(bundles: &[B<'_>], extra: &[J]) -> DeclarativeConfig {
        let mut blobs = vec![
            json!({"schema": "olm.package", "name": "acme-db", "defaultChannel": "stable"}),
            json!({"schema": "olm.channel", "package": "acme-db", "name": "stable", "entries": [
                {"name": "acme-db.v1.0.0"},
                {"name": "acme-db.v1.0.1", "replaces": "acme-db.v1.0.0"},
                {"name": "acme-db.v1.1.0", "replaces": "acme-db.v1.0.1", "skipRange": ">=1.0.0 <1.1.0"},
                {"name": "acme-db.v2.0.0", "replaces": "acme-db.v1.1.0"}]}),
            json!({"schema": "olm.channel", "package": "acme-db", "name": "fast", "entries": [
                {"name": "acme-db.v1.0.0"},
                {"name": "acme-db.v3.0.0", "skips": ["acme-db.v1.0.0"]}]}),
        ];
        blobs.extend(bundles.iter().copied().map(bundle));
        blobs.extend(extra.iter().cloned());
        super::super::fixture::catalog_of(&blobs)
    }

    fn safe_catalog() -> DeclarativeConfig {
        catalog(
            &[
                ("1.0.0", None, None, true),
                ("1.0.1", None, None, true),
                ("1.1.0", None, None, true),
                ("2.0.0", None, None, true),
                ("3.0.0", None, None, true),
            ],
            &[],
        )
    }

    /// 1.1.0 adds `maximum: 9` to `spec.replicas`.
    fn unsafe_catalog() -> DeclarativeConfig {
        catalog(
            &[
                ("1.0.0", None, None, true),
                ("1.0.1", None, None, true),
                ("1.1.0", Some(9), None, true),
                ("2.0.0", Some(9), None, true),
                ("3.0.0", None, None, true),
            ],
            &[],
        )
    }

    /// A ClusterExtension with `installed` done and pinned.
    fn ce(installed: &str) -> J {
        json!({
            "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
            "metadata": {"name": "acme-db", "generation": 3, "resourceVersion": "77",
                "labels": {"team": "db"},
                "annotations": {PINNED_AT_ANNOTATION: "2026-09-01T00:00:00Z"}},
            "spec": {"namespace": "acme-system", "serviceAccount": {"name": "installer"},
                "source": {"sourceType": "Catalog", "catalog": {"packageName": "acme-db",
                    "version": installed, "channels": ["stable"]}}},
            "status": {
                "conditions": [
                    {"type": "Installed", "status": "True", "reason": "Succeeded", "observedGeneration": 3,
                        "message": "Installed bundle example.com/acme-db successfully"},
                    {"type": "Progressing", "status": "True", "reason": "Succeeded", "observedGeneration": 3,
                        "message": "Desired state reached"}],
                "install": {"bundle": {"name": format!("acme-db.v{installed}"), "version": installed}}}
        })
    }

    fn objects(docs: &[J]) -> Objects {
        let mut o = Objects::default();
        for (i, d) in docs.iter().enumerate() {
            o.add_text(Path::new(&format!("{i}.json")), &d.to_string())
                .expect("objects");
        }
        o
    }

    fn run_at(
        ce: &J,
        cfg: &DeclarativeConfig,
        ps: &[Policy],
        now: Timestamp,
        kube: Option<&str>,
    ) -> Vec<ExtensionDecision> {
        let o = objects(&[ce.clone(), crd(None)]);
        let k = kube.map(|k| Version::parse(k).expect("kube"));
        evaluate(&ExtContext {
            policies: ps,
            objects: &o,
            catalog: cfg,
            contents: &Default::default(),
            now,
            kube: k.as_ref(),
        })
    }

    fn one(ce: &J, cfg: &DeclarativeConfig, p: &Policy) -> ExtensionDecision {
        let mut d = run_at(ce, cfg, std::slice::from_ref(p), now(), Some("1.30.0"));
        assert_eq!(d.len(), 1, "{d:?}");
        d.remove(0)
    }

    fn codes(d: &ExtensionDecision) -> Vec<(&'static str, Effect)> {
        d.reasons.iter().map(|r| (r.code, r.effect)).collect()
    }

    fn verdict(d: &ExtensionDecision) -> (ExtVerdict, Option<&str>) {
        (d.decision, d.pin.as_deref())
    }

    fn has(d: &ExtensionDecision, code: &str) -> bool {
        d.reasons.iter().any(|r| r.code == code)
    }

    fn v(s: &str) -> Version {
        Version::parse(s).expect("v")
    }

    #[test]
    fn the_crds_read_are_those_the_package_ships() {
        let names: Vec<String> = crd_names(&safe_catalog(), "acme-db").into_iter().collect();
        assert_eq!(names, vec![CRD.to_string()]);
        assert!(crd_names(&safe_catalog(), "other").is_empty());
        // Metadata only: nothing to read.
        let meta = catalog(&[("1.0.0", None, None, false)], &[]);
        assert!(crd_names(&meta, "acme-db").is_empty());
    }

    #[test]
    fn a_policy_covers_extensions_by_selector_and_install_namespace() {
        let cfg = safe_catalog();
        let plain = super::super::policy::parse(
            "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {name: subs, namespace: acme-system}\nspec: {}\n",
        )
        .expect("p");
        assert_eq!(run_at(&ce("1.0.0"), &cfg, &[plain], now(), None), []);
        let other_ns = policy("").clone();
        let mut x = ce("1.0.0");
        x["spec"]["namespace"] = json!("elsewhere");
        assert_eq!(run_at(&x, &cfg, &[other_ns], now(), None), []);
        let mut x = ce("1.0.0");
        x["metadata"]["labels"] = json!({"team": "web"});
        assert_eq!(run_at(&x, &cfg, &[policy("")], now(), None), []);
        let d = run_at(&ce("1.0.0"), &cfg, &[policy("")], now(), None);
        assert_eq!(
            (d.len(), d[0].policies.as_slice()),
            (1, &["db".to_string()][..])
        );
    }

    #[test]
    fn successors_are_the_direct_edges_of_the_selected_channels_best_first() {
        let cfg = safe_catalog();
        let names = |s: Vec<Step>| -> Vec<(String, Option<EdgeKind>)> {
            s.into_iter()
                .map(|s| (s.version.to_string(), s.edge))
                .collect()
        };
        let stable = vec!["stable".to_string()];
        let s = successors(
            &cfg,
            "acme-db",
            &stable,
            false,
            "acme-db.v1.0.0",
            &v("1.0.0"),
        );
        assert_eq!(
            names(s.expect("ok")),
            [
                ("1.1.0".into(), Some(EdgeKind::SkipRange)),
                ("1.0.1".into(), Some(EdgeKind::Replaces))
            ]
        );
        // No channels: every channel's edges (fast's skips).
        let s = successors(&cfg, "acme-db", &[], false, "acme-db.v1.0.0", &v("1.0.0"));
        assert_eq!(
            names(s.expect("ok"))[0],
            ("3.0.0".into(), Some(EdgeKind::Skips))
        );
        // Not transitive: 2.0.0 only from 1.1.0.
        let s = successors(
            &cfg,
            "acme-db",
            &stable,
            false,
            "acme-db.v1.0.1",
            &v("1.0.1"),
        );
        assert_eq!(
            names(s.expect("ok")),
            [("1.1.0".into(), Some(EdgeKind::Replaces))]
        );
        // SelfCertified: every higher version of the channels.
        let s = successors(
            &cfg,
            "acme-db",
            &stable,
            true,
            "acme-db.v1.0.0",
            &v("1.0.0"),
        );
        let got: Vec<String> = s
            .expect("ok")
            .iter()
            .map(|s| s.version.to_string())
            .collect();
        assert_eq!(got, ["2.0.0", "1.1.0", "1.0.1"]);
        // Deprecated bundles come last.
        let dep = json!({"schema": "olm.deprecations", "package": "acme-db", "entries": [
            {"reference": {"schema": "olm.bundle", "name": "acme-db.v1.1.0"}, "message": "broken"}]});
        let cfg = catalog(
            &[("1.0.1", None, None, false), ("1.1.0", None, None, false)],
            &[dep],
        );
        let s = successors(
            &cfg,
            "acme-db",
            &stable,
            false,
            "acme-db.v1.0.0",
            &v("1.0.0"),
        );
        assert_eq!(names(s.expect("ok"))[0].0, "1.0.1");
        // Unknown package or channel.
        let e = successors(&cfg, "nope", &stable, false, "x", &v("1.0.0")).expect_err("package");
        assert!(e.contains("no bundle of package nope"), "{e}");
        let e = successors(&cfg, "acme-db", &["beta".into()], false, "x", &v("1.0.0"))
            .expect_err("channel");
        assert!(e.contains("no channel beta"), "{e}");
    }

    #[test]
    fn the_pin_moves_to_the_highest_allowed_direct_successor() {
        let d = one(&ce("1.0.0"), &safe_catalog(), &policy(""));
        assert_eq!(d.decision, ExtVerdict::Move, "{:#?}", d.reasons);
        assert_eq!(d.pin.as_deref(), Some("1.1.0"));
        assert!(d.changes_pin());
        let next = d.next.expect("next");
        assert_eq!(
            (next.bundle.as_str(), next.edge),
            ("acme-db.v1.1.0", Some(EdgeKind::SkipRange))
        );
        assert_eq!(
            (d.resource_version.as_str(), d.installed.as_deref()),
            ("77", Some("1.0.0"))
        );
        assert!(d.requeue_at.is_none());
        // One step at a time: from 1.1.0 the next is 2.0.0, a major jump.
        let d = one(&ce("1.1.0"), &safe_catalog(), &policy(""));
        assert_eq!(d.decision, ExtVerdict::Hold);
        assert_eq!(codes(&d), [("GATE005", Effect::Hold)]);
        assert!(
            d.reasons[0].message.contains("major jump"),
            "{}",
            d.reasons[0].message
        );
        assert_eq!((d.pin.as_deref(), d.changes_pin()), (Some("1.1.0"), false));
        // At the end of the channel: current.
        let d = one(&ce("2.0.0"), &safe_catalog(), &policy(""));
        assert_eq!(
            (d.decision, d.pin.as_deref(), d.reasons.len()),
            (ExtVerdict::Current, Some("2.0.0"), 0)
        );
    }

    #[test]
    fn the_patch_moves_the_pin_stamps_the_step_and_is_guarded_by_the_resource_version() {
        let at: Timestamp = "2026-09-20T10:00:05Z".parse().expect("ts");
        let d = one(&ce("1.0.0"), &safe_catalog(), &policy(""));
        assert_eq!(
            d.pin_patch(at),
            Some(json!({
                "metadata": {"resourceVersion": "77", "annotations": {PINNED_AT_ANNOTATION: "2026-09-20T10:00:05Z"}},
                "spec": {"source": {"catalog": {"version": "1.1.0"}}},
            }))
        );
        // Held with the pin where it is: nothing to write.
        let d = one(&ce("1.1.0"), &safe_catalog(), &policy(""));
        assert_eq!(d.pin_patch(at), None);
        // A range pinned to the installed version: no stamp (no step was taken).
        let mut x = ce("1.1.0");
        x["spec"]["source"]["catalog"]["version"] = json!(">=1.0.0");
        let d = one(&x, &safe_catalog(), &policy(""));
        assert_eq!(
            d.pin_patch(at),
            Some(json!({
                "metadata": {"resourceVersion": "77"},
                "spec": {"source": {"catalog": {"version": "1.1.0"}}},
            }))
        );
    }

    #[test]
    fn gate005_and_gate018_a_lower_successor_is_taken_when_a_higher_one_jumps_too_far() {
        let d = one(
            &ce("1.0.0"),
            &safe_catalog(),
            &policy("  maxVersionJump: patch\n"),
        );
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.0.1")));
        let passed: Vec<&Reason> = d.reasons.iter().filter(|r| r.code == "GATE018").collect();
        assert_eq!(passed.len(), 1);
        assert!(
            passed[0]
                .message
                .starts_with("acme-db.v1.1.0 (1.1.0) passed over: GATE005"),
            "{}",
            passed[0].message
        );
    }

    #[test]
    fn gate007_a_step_whose_crd_change_fails_v1s_preflight_is_held() {
        // From 1.0.0: 1.1.0 tightens spec.replicas, so the pin moves to 1.0.1 instead.
        let d = one(&ce("1.0.0"), &unsafe_catalog(), &policy(""));
        assert_eq!(
            (d.decision, d.pin.as_deref()),
            (ExtVerdict::Move, Some("1.0.1")),
            "{:#?}",
            d.reasons
        );
        assert!(
            d.reasons
                .iter()
                .any(|r| r.code == "GATE018" && r.message.contains("GATE007"))
        );
        // From 1.0.1 the only step is 1.1.0: held, the pin stays, the reason names the change.
        let d = one(&ce("1.0.1"), &unsafe_catalog(), &policy(""));
        assert_eq!(verdict(&d), (ExtVerdict::Hold, Some("1.0.1")));
        let r = d
            .reasons
            .iter()
            .find(|r| r.code == "GATE007")
            .expect("GATE007");
        assert!(
            r.message.starts_with("acme-db.v1.1.0 SCH") && r.message.contains("maximum"),
            "{}",
            r.message
        );
        assert_eq!(
            d.next.as_ref().map(|s| s.bundle.as_str()),
            Some("acme-db.v1.1.0")
        );
        // Warn reports and moves; Ignore does not look.
        let d = one(
            &ce("1.0.1"),
            &unsafe_catalog(),
            &policy("  crdSafety: Warn\n"),
        );
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.1.0")));
        assert!(
            d.reasons
                .iter()
                .any(|r| r.code == "GATE007" && r.effect == Effect::Warn)
        );
        let d = one(
            &ce("1.0.1"),
            &unsafe_catalog(),
            &policy("  crdSafety: Ignore\n"),
        );
        assert_eq!((d.decision, d.reasons.len()), (ExtVerdict::Move, 0));
    }

    #[test]
    fn gate004_a_catalog_without_bundle_objects_cannot_be_checked() {
        let cfg = catalog(
            &[("1.0.0", None, None, false), ("1.0.1", None, None, false)],
            &[],
        );
        let d = one(&ce("1.0.0"), &cfg, &policy(""));
        assert_eq!(
            (d.decision, codes(&d)[0]),
            (ExtVerdict::Hold, ("GATE004", Effect::Hold))
        );
        assert!(
            d.reasons[0].message.contains("no olm.bundle.object"),
            "{}",
            d.reasons[0].message
        );
        let d = one(&ce("1.0.0"), &cfg, &policy("  crdSafety: Ignore\n"));
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.0.1")));
        // A package the catalog does not have.
        let mut x = ce("1.0.0");
        x["spec"]["source"]["catalog"]["packageName"] = json!("other");
        let d = one(&x, &cfg, &policy(""));
        assert_eq!(
            (d.decision, codes(&d)),
            (ExtVerdict::Hold, vec![("GATE004", Effect::Hold)])
        );
    }

    #[test]
    fn gate009_the_pin_moves_only_inside_a_window() {
        let p = policy(
            "  maintenanceWindows:\n  - {days: [Sat], start: \"02:00\", duration: 4h, timeZone: Europe/Berlin}\n",
        );
        let d = one(&ce("1.0.0"), &safe_catalog(), &p);
        assert_eq!(verdict(&d), (ExtVerdict::Wait, Some("1.0.0")));
        assert_eq!(codes(&d), [("GATE009", Effect::Wait)]);
        let next: Timestamp = "2026-09-26T00:00:00Z".parse().expect("ts");
        assert_eq!(d.requeue_at, Some(next));
        assert_eq!(
            d.next.as_ref().map(|s| s.version.to_string()),
            Some("1.1.0".into())
        );
        let d = run_at(&ce("1.0.0"), &safe_catalog(), &[p], next, None).remove(0);
        assert_eq!(
            (d.decision, d.pin.as_deref(), d.requeue_at),
            (ExtVerdict::Move, Some("1.1.0"), None)
        );
    }

    /// Two selected catalogs with the package, known one by one (as the operator fetches
    /// them): a step both offer at the same highest priority would not resolve in OLM v1, so
    /// the pin stays (GATE020, upstream's message); a higher priority decides, and the step's
    /// bundle (its CRDs) is the winner's.
    #[test]
    fn gate020_a_step_two_catalogs_offer_at_the_same_priority_is_not_taken() {
        let p = policy("");
        let cat = |name: &str, priority: Option<i64>| {
            let mut c = json!({"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
                "metadata": {"name": name, "labels": {"olm.operatorframework.io/metadata.name": name}},
                "spec": {"source": {"type": "Image", "image": {"ref": format!("example.com/{name}:latest")}}}});
            if let Some(pr) = priority {
                c["spec"]["priority"] = json!(pr);
            }
            c
        };
        let (safe, unsafe_) = (Arc::new(safe_catalog()), Arc::new(unsafe_catalog()));
        let run = |docs: &[J], contents: &super::super::catalogs::Contents| {
            let o = objects(docs);
            let mut merged = DeclarativeConfig::default();
            for c in contents.values() {
                merged.merge((**c).clone());
            }
            evaluate(&ExtContext {
                policies: std::slice::from_ref(&p),
                objects: &o,
                catalog: &merged,
                contents,
                now: now(),
                kube: None,
            })
            .remove(0)
        };
        let both: super::super::catalogs::Contents = [
            ("a".to_string(), safe.clone()),
            ("b".to_string(), safe.clone()),
        ]
        .into();
        let d = run(
            &[ce("1.0.0"), crd(None), cat("a", None), cat("b", None)],
            &both,
        );
        assert_eq!(verdict(&d), (ExtVerdict::Hold, Some("1.0.0")));
        let msgs: Vec<&str> = d
            .reasons
            .iter()
            .filter(|r| r.code == "GATE020")
            .map(|r| r.message.as_str())
            .collect();
        assert_eq!(
            msgs,
            [
                "ClusterExtension acme-db: a pin to 1.1.0 would not resolve: error upgrading from currently installed version \"1.0.0\": found bundles for package \"acme-db\" matching version \"1.1.0\" in channels [stable] in multiple catalogs with the same priority [a b]",
                "ClusterExtension acme-db: a pin to 1.0.1 would not resolve: error upgrading from currently installed version \"1.0.0\": found bundles for package \"acme-db\" matching version \"1.0.1\" in channels [stable] in multiple catalogs with the same priority [a b]",
            ]
        );
        // A catalog the extension does not select does not count.
        let mut only_a = ce("1.0.0");
        only_a["spec"]["source"]["catalog"]["selector"] =
            json!({"matchLabels": {"olm.operatorframework.io/metadata.name": "a"}});
        let d = run(&[only_a, crd(None), cat("a", None), cat("b", None)], &both);
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.1.0")));
        // b's priority is higher: 1.1.0 from b. Its CRD adds a maximum (b holds the unsafe
        // content), so crdSafety passes 1.1.0 over for 1.0.1, whose CRD is unchanged.
        let mixed: super::super::catalogs::Contents = [
            ("a".to_string(), safe.clone()),
            ("b".to_string(), unsafe_.clone()),
        ]
        .into();
        let d = run(
            &[ce("1.0.0"), crd(None), cat("a", None), cat("b", Some(10))],
            &mixed,
        );
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.0.1")), "{d:?}");
        assert!(has(&d, "GATE018") && !has(&d, "GATE020"), "{d:?}");
        // a's priority is higher: 1.1.0 from a, whose CRD is safe.
        let d = run(
            &[ce("1.0.0"), crd(None), cat("a", Some(10)), cat("b", None)],
            &mixed,
        );
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.1.0")), "{d:?}");
    }

    #[test]
    fn gate010_min_age_counts_from_the_last_step_and_the_catalog_content() {
        let p = policy("  minAge: 48h\n");
        // The last step was long ago, and no catalog says otherwise: moves.
        assert_eq!(
            one(&ce("1.0.0"), &safe_catalog(), &p).decision,
            ExtVerdict::Move
        );
        // The catalog was unpacked yesterday: wait until it has soaked.
        let cat = json!({"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
            "metadata": {"name": "operatorhubio", "labels": {"olm.operatorframework.io/metadata.name": "operatorhubio"}},
            "status": {"lastUnpacked": "2026-09-19T10:00:00Z"}});
        let o = objects(&[ce("1.0.0"), crd(None), cat.clone()]);
        let cfg = safe_catalog();
        let ctx = |o: &'_ Objects| -> Vec<ExtensionDecision> {
            evaluate(&ExtContext {
                policies: std::slice::from_ref(&p),
                objects: o,
                catalog: &cfg,
                contents: &Default::default(),
                now: now(),
                kube: None,
            })
        };
        let d = ctx(&o).remove(0);
        assert_eq!(codes(&d), [("GATE010", Effect::Wait)]);
        assert_eq!(
            d.requeue_at,
            Some("2026-09-21T10:00:00Z".parse().expect("ts"))
        );
        // A catalog the extension does not select does not count.
        let mut x = ce("1.0.0");
        x["spec"]["source"]["catalog"]["selector"] =
            json!({"matchLabels": {"olm.operatorframework.io/metadata.name": "other"}});
        let d = ctx(&objects(&[x, crd(None), cat])).remove(0);
        assert_eq!(d.decision, ExtVerdict::Move);
        // The last step was an hour ago.
        let mut x = ce("1.0.0");
        x["metadata"]["annotations"][PINNED_AT_ANNOTATION] = json!("2026-09-20T09:00:00Z");
        let d = one(&x, &safe_catalog(), &p);
        assert_eq!(
            (d.decision, codes(&d)),
            (ExtVerdict::Wait, vec![("GATE010", Effect::Wait)])
        );
        // Neither is known: cannot be judged.
        x["metadata"]["annotations"] = json!({});
        let d = one(&x, &safe_catalog(), &p);
        assert_eq!(
            (d.decision, codes(&d)),
            (ExtVerdict::Hold, vec![("GATE010", Effect::Hold)])
        );
    }

    #[test]
    fn gate011_paused_holds() {
        let d = one(&ce("1.0.0"), &safe_catalog(), &policy("  paused: true\n"));
        assert_eq!(
            (d.decision, codes(&d)),
            (ExtVerdict::Hold, vec![("GATE011", Effect::Hold)])
        );
        assert_eq!(d.pin.as_deref(), Some("1.0.0"));
    }

    #[test]
    fn gate012_the_override_moves_the_pin_to_the_named_successor() {
        let mut x = ce("1.0.1");
        x["metadata"]["annotations"][APPROVE_VERSION_ANNOTATION] = json!("1.1.0");
        let d = one(&x, &unsafe_catalog(), &policy("  paused: true\n"));
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.1.0")));
        assert!(has(&d, "GATE007") && has(&d, "GATE011"));
        assert_eq!(d.reasons.last().map(|r| r.code), Some("GATE012"));
        // A version that is no direct successor does nothing.
        x["metadata"]["annotations"][APPROVE_VERSION_ANNOTATION] = json!("2.0.0");
        let d = one(&x, &unsafe_catalog(), &policy(""));
        assert_eq!(verdict(&d), (ExtVerdict::Hold, Some("1.0.1")));
        // It picks among the successors: the lower one instead of the one the gate chooses.
        let mut x = ce("1.0.0");
        x["metadata"]["annotations"][APPROVE_VERSION_ANNOTATION] = json!("1.0.1");
        let d = one(&x, &safe_catalog(), &policy(""));
        assert_eq!(verdict(&d), (ExtVerdict::Move, Some("1.0.1")));
        // Never during a rollout.
        let mut x = ce("1.0.1");
        x["metadata"]["annotations"][APPROVE_VERSION_ANNOTATION] = json!("1.1.0");
        x["status"]["conditions"][0]["status"] = json!("False");
        let d = one(&x, &unsafe_catalog(), &policy(""));
        assert_eq!((d.decision, d.pin), (ExtVerdict::Wait, None));
    }

    #[test]
    fn gate013_min_kube_version_of_the_step() {
        let cfg = catalog(
            &[
                ("1.0.0", None, None, true),
                ("1.0.1", None, Some("1.31.0"), true),
            ],
            &[],
        );
        let d = one(&ce("1.0.0"), &cfg, &policy(""));
        assert_eq!(
            (d.decision, codes(&d)),
            (ExtVerdict::Hold, vec![("GATE013", Effect::Hold)])
        );
        let d = run_at(&ce("1.0.0"), &cfg, &[policy("")], now(), None).remove(0);
        assert_eq!(
            (d.decision, codes(&d)),
            (ExtVerdict::Move, vec![("GATE014", Effect::Info)])
        );
    }

    #[test]
    fn gate016_and_gate019_nothing_moves_before_the_last_step_is_installed() {
        let p = policy("");
        let cfg = safe_catalog();
        let mut x = ce("1.0.0");
        x["status"] = json!({});
        let d = one(&x, &cfg, &p);
        assert_eq!(
            (d.decision, d.pin.clone(), codes(&d)),
            (ExtVerdict::Wait, None, vec![("GATE016", Effect::Wait)])
        );
        assert!(d.reasons[0].message.contains("no installed bundle yet"));
        // Generation not observed.
        let mut x = ce("1.0.0");
        x["metadata"]["generation"] = json!(4);
        let d = one(&x, &cfg, &p);
        assert!(
            d.reasons[0].message.contains("not observed generation 4"),
            "{}",
            d.reasons[0].message
        );
        // The pin moved to 1.1.0 and OLM v1 is on its way.
        let mut x = ce("1.0.0");
        x["spec"]["source"]["catalog"]["version"] = json!("1.1.0");
        x["status"]["conditions"][1] = json!({"type": "Progressing", "status": "True", "reason": "Retrying", "observedGeneration": 3, "message": "unpacking"});
        let d = one(&x, &cfg, &p);
        assert_eq!((d.decision, d.pin.clone()), (ExtVerdict::Wait, None));
        assert!(
            d.reasons[0].message.contains(
                "to the pinned 1.1.0 is in progress (Progressing True/Retrying: unpacking)"
            ),
            "{}",
            d.reasons[0].message
        );
        // OLM v1 gave up: hold.
        x["status"]["conditions"][1]["status"] = json!("False");
        x["status"]["conditions"][1]["reason"] = json!("Blocked");
        let d = one(&x, &cfg, &p);
        assert_eq!(
            (d.decision, codes(&d)),
            (ExtVerdict::Hold, vec![("GATE019", Effect::Hold)])
        );
        // Installed not True.
        let mut x = ce("1.0.0");
        x["status"]["conditions"][0]["status"] = json!("Unknown");
        assert_eq!(one(&x, &cfg, &p).decision, ExtVerdict::Wait);
    }

    #[test]
    fn gate017_a_range_or_no_version_is_pinned_to_the_installed_one() {
        let p = policy("  paused: true\n");
        for (version, pinned) in [
            ("", false),
            (">=1.0.0", false),
            ("1.x", false),
            ("=1.0.0", true),
            ("v1.0.0", true),
            ("1.0.0", true),
        ] {
            let mut x = ce("1.0.0");
            x["spec"]["source"]["catalog"]["version"] = json!(version);
            let d = one(&x, &safe_catalog(), &p);
            assert_eq!(has(&d, "GATE017"), !pinned, "{version:?}");
            assert_eq!(d.pin.as_deref(), Some("1.0.0"));
            assert_eq!(d.changes_pin(), version != "1.0.0", "{version:?}");
        }
        // A registry+v1 release is build metadata, which a pin ignores.
        let mut x = ce("1.0.0");
        x["status"]["install"]["bundle"]["version"] = json!("1.0.0+2");
        let d = one(&x, &safe_catalog(), &p);
        assert_eq!(
            (d.pin.as_deref(), has(&d, "GATE017")),
            (Some("1.0.0"), false)
        );
    }

    #[test]
    fn several_policies_the_worst_wins_and_reasons_name_their_policy() {
        let mut strict = policy("  maxVersionJump: patch\n");
        strict.name = "strict".into();
        let ps = [policy(""), strict];
        let d = run_at(&ce("1.0.1"), &safe_catalog(), &ps, now(), None).remove(0);
        assert_eq!(d.policies, ["db", "strict"]);
        assert_eq!(d.decision, ExtVerdict::Hold);
        assert!(
            d.reasons[0].message.ends_with("(UpgradePolicy strict)"),
            "{}",
            d.reasons[0].message
        );
    }
}
