//! A namespace resolved as OLM's catalog operator resolves it: the inputs of
//! `catalog/operator.go::syncResolvingNamespace` and `step_resolver.go::ResolveSteps` (the
//! one OperatorGroup, the catalogs of the namespace and of the global namespace, the
//! Subscriptions), and what OLM does with the answer: the bundles it installs or upgrades, the
//! Subscriptions it creates for dependencies and the ones whose `currentCSV` moves.

use std::collections::HashSet;

use super::entry::{Entry, SourceKey};
use super::resolver::{EntryRef, Failure, Kind, Resolver};
use super::solver::{Constraint, Identifier};
use super::source::{Snapshot, catalog_snapshot, existing_snapshot};
use super::state::ClusterState;
use crate::fbc::decl::DeclarativeConfig;

/// `exclusionAnnotation` on an OperatorGroup.
pub const EXCLUDE_GLOBAL: &str = "olm.operatorframework.io/exclude-global-namespace-resolution";

/// One catalog's content, for the CatalogSource `key` (its priority comes from the
/// CatalogSource object when there is one, else 0).
#[derive(Debug, Clone)]
pub struct CatalogContent<'c> {
    pub key: SourceKey,
    pub cfg: &'c DeclarativeConfig,
}

/// What to resolve.
#[derive(Debug, Clone)]
pub struct Request<'c> {
    /// The namespace.
    pub namespace: String,
    /// OLM's global catalog namespace (`olm`; `openshift-marketplace` on OpenShift).
    pub global_namespace: String,
    /// The cluster's objects.
    pub state: &'c ClusterState,
    /// The catalogs' content.
    pub catalogs: Vec<CatalogContent<'c>>,
}

/// What OLM does to a bundle it chose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Installs it (nothing of its package installed by the Subscription).
    Install,
    /// Upgrades the installed CSV named.
    Upgrade(String),
}

/// Why a bundle is in the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PulledBy {
    /// A Subscription of the namespace.
    Subscription(String),
    /// A requirement of another chosen bundle: its CSV and the requirement's text.
    Requirement { bundle: String, text: String },
}

/// One bundle OLM installs or upgrades.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chosen {
    pub csv: String,
    pub package: String,
    /// The `olm.package` version, as the catalog writes it.
    pub version: String,
    pub channel: String,
    pub catalog: SourceKey,
    pub bundle_path: String,
    pub action: Action,
    pub pulled_by: Option<PulledBy>,
    /// The Subscription OLM creates for it (a dependency no Subscription covers).
    pub new_subscription: Option<String>,
    /// Whether OLM does nothing for it (its Subscriptions' `currentCSV` already names it).
    pub up_to_date: bool,
}

/// An installed CSV that stays.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stay {
    pub csv: String,
    /// The Subscription that installed it, if any.
    pub subscription: Option<String>,
}

/// The answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub chosen: Vec<Chosen>,
    pub stays: Vec<Stay>,
    /// (Subscription, the `currentCSV` OLM writes).
    pub updated: Vec<(String, String)>,
}

/// A resolution: the catalogs it read and its answer or failure; the resolver is kept for
/// the explanation.
pub struct Resolution {
    /// The catalogs read, in `Find` order (the namespace's installed CSVs first).
    pub catalogs: Vec<SourceKey>,
    /// No Subscription in the namespace: OLM does not resolve it.
    pub nothing_to_do: bool,
    /// OLM does not resolve the namespace now: every Subscription waits on the InstallPlan it
    /// has (`nothingToUpdate`); the answer is what it decides once one of them moves on.
    pub waiting_on_plans: bool,
    pub result: Result<Plan, Failure>,
    /// For a failure the solver proved: the explanation.
    pub explanation: Option<super::explain::Explanation>,
}

/// `ResolveSteps` for `req.namespace`.
pub fn resolve(req: &Request<'_>) -> Resolution {
    let ns = req.namespace.as_str();
    let state = &recorded(req.state, ns);
    // Errors before any catalog is read.
    let fail = |e: String| Resolution {
        catalogs: Vec::new(),
        nothing_to_do: false,
        waiting_on_plans: false,
        result: Err(Failure::Error(e)),
        explanation: None,
    };
    if state.subscriptions_in(ns).next().is_none() {
        return Resolution {
            catalogs: Vec::new(),
            nothing_to_do: true,
            waiting_on_plans: false,
            result: Ok(Plan {
                chosen: Vec::new(),
                stays: Vec::new(),
                updated: Vec::new(),
            }),
            explanation: None,
        };
    }
    let ogs: Vec<_> = state
        .operator_groups
        .iter()
        .filter(|o| o.namespace == ns)
        .collect();
    if ogs.len() != 1 {
        return fail(format!(
            "expected 1 OperatorGroup in the namespace, found {}",
            ogs.len()
        ));
    }
    let mut namespaces = vec![ns.to_string()];
    if !ogs[0].exclude_global {
        namespaces.push(req.global_namespace.clone());
    }
    let mut snapshots = match existing_snapshot(state, ns) {
        Ok(s) => vec![s],
        Err(e) => return fail(e),
    };
    for c in &req.catalogs {
        if !namespaces.contains(&c.key.namespace) {
            continue;
        }
        let priority = state
            .catalog_sources
            .iter()
            .find(|s| s.name == c.key.name && s.namespace == c.key.namespace)
            .map_or(0, |s| s.priority);
        snapshots.push(catalog_snapshot(c.cfg, c.key.clone(), priority));
    }
    let mut r = resolve_with(ns, state, &snapshots);
    r.waiting_on_plans = state
        .subscriptions_in(ns)
        .all(|s| s.has_install_plan && s.state == "UpgradePending");
    r
}

/// The Subscriptions as OLM records them before it resolves (`syncResolvingNamespace` runs
/// `ensureSubscriptionCSVState` on each first, and resolves only after the update): a
/// `status.currentCSV` whose CSV exists in the namespace becomes `installedCSV` (state
/// `AtLatestKnown`); a missing one makes the state `UpgradePending`.
fn recorded(state: &ClusterState, ns: &str) -> ClusterState {
    let mut out = state.clone();
    for s in out.subscriptions.iter_mut().filter(|s| s.namespace == ns) {
        if s.current_csv.is_empty() {
            continue;
        }
        if state
            .csvs
            .iter()
            .any(|c| c.namespace == ns && c.name == s.current_csv)
        {
            s.installed_csv = s.current_csv.clone();
            s.state = "AtLatestKnown".into();
        } else {
            s.state = "UpgradePending".into();
        }
    }
    out
}

/// The resolution of `ns` over prepared snapshots: the namespace's installed CSVs and the
/// catalogs it reads (what [`resolve`] builds; a caller resolving many Subscriptions over
/// the same catalogs builds them once). The OperatorGroup rule is [`resolve`]'s.
pub fn resolve_with(ns: &str, state: &ClusterState, snapshots: &[Snapshot]) -> Resolution {
    let subs: Vec<_> = state.subscriptions_in(ns).cloned().collect();
    let mut r = Resolver::new(snapshots);
    let outcome = r.resolve(ns, &subs);
    let explanation = match &outcome {
        Err(Failure::NotSatisfiable(n)) => Some(super::explain::explain(&r, n)),
        _ => None,
    };
    let result = outcome.map(|o| plan(&r, state, ns, &subs, &o));
    Resolution {
        catalogs: snapshots.iter().map(|s| s.key.clone()).collect(),
        nothing_to_do: false,
        waiting_on_plans: false,
        result,
        explanation,
    }
}

/// Why each chosen bundle is there: the first chosen Subscription (in Subscription order),
/// else the first chosen bundle's requirement (in the order they were met), that lists it.
fn pulled_by(r: &Resolver<'_>, chosen: &HashSet<&Identifier>, x: EntryRef) -> Option<PulledBy> {
    let id = Identifier::from(r.entry(x).id());
    let is_chosen = |i: &Identifier| chosen.contains(i);
    for v in r.variables.values() {
        if let Kind::Subscription(name) = &v.kind
            && is_chosen(&v.id)
            && v.constraints
                .iter()
                .any(|c| matches!(c.inner(), Constraint::Dependency(ids) if ids.contains(&id)))
        {
            return Some(PulledBy::Subscription(name.clone()));
        }
    }
    r.requirements
        .iter()
        .find(|q| {
            q.candidates.contains(&x) && is_chosen(&Identifier::from(r.entry(q.subject).id()))
        })
        .map(|q| PulledBy::Requirement {
            bundle: r.entry(q.subject).name.clone(),
            text: q.text.clone(),
        })
}

fn plan(
    r: &Resolver<'_>,
    state: &ClusterState,
    ns: &str,
    subs: &[super::state::Subscription],
    o: &super::resolver::Outcome,
) -> Plan {
    let chosen_ids: HashSet<&Identifier> = o.chosen.iter().collect();
    let mut chosen = Vec::new();
    let mut updated = Vec::new();
    for &(x, ref replaces) in &o.operators {
        let e: &Entry = r.entry(x);
        let matching: Vec<_> = subs
            .iter()
            .filter(|s| s.package == e.source.package)
            .filter(|s| s.channel.is_empty() || s.channel == e.source.channel)
            .filter(|s| {
                let k = SourceKey::new(&s.catalog, &s.catalog_namespace);
                k.is_empty() || k == e.source.catalog
            })
            .collect();
        // `hasExistingCurrentCSV`.
        let exists = |s: &super::state::Subscription| {
            !s.current_csv.is_empty()
                && state
                    .csvs
                    .iter()
                    .any(|c| c.namespace == ns && c.name == s.current_csv)
        };
        let up_to_date = !matching.is_empty()
            && matching
                .iter()
                .all(|s| exists(s) && s.current_csv == e.name);
        let new_subscription = matching.is_empty().then(|| {
            [
                e.source.package.as_str(),
                e.source.channel.as_str(),
                e.source.catalog.name.as_str(),
                e.source.catalog.namespace.as_str(),
            ]
            .join("-")
        });
        if !up_to_date {
            for s in &matching {
                if s.current_csv != e.name {
                    updated.push((s.name.clone(), e.name.clone()));
                }
            }
        }
        chosen.push(Chosen {
            csv: e.name.clone(),
            package: e.source.package.clone(),
            version: e.package_version().unwrap_or_default().to_string(),
            channel: e.source.channel.clone(),
            catalog: e.source.catalog.clone(),
            bundle_path: e.bundle_path.clone(),
            action: if replaces.is_empty() {
                Action::Install
            } else {
                Action::Upgrade(replaces.clone())
            },
            pulled_by: pulled_by(r, &chosen_ids, x),
            new_subscription,
            up_to_date,
        });
    }
    let mut stays = Vec::new();
    for id in &o.chosen {
        if let Some(v) = r.variables.get(id)
            && let Kind::Bundle(x) = v.kind
            && r.entry(x).source.catalog.is_virtual()
        {
            stays.push(Stay {
                csv: r.entry(x).name.clone(),
                subscription: r.entry(x).source.subscription.clone(),
            });
        }
    }
    Plan {
        chosen,
        stays,
        updated,
    }
}
