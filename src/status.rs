//! Where OLM installs stand, as `olmctl status` (`kubectl olm status`) shows them: one row per
//! Subscription with its package, channel, installed and current CSV, state, the installed
//! CSV's phase, its InstallPlan when that waits for approval (with the CSVs it would install)
//! and the upgrade gate's decision on that plan (olmctl-operator's [`DECISION_ANNOTATION`]).
//! A plan that waits for approval but that no Subscription points at any more (an older plan
//! OLM left behind, operator.md §3.11) has a row of its own, without a Subscription.
//!
//! Pure: the caller lists the objects (a cluster, a test double); the same objects always give
//! the same rows, sorted by namespace, then Subscription, then plan.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

/// The annotation olmctl-operator writes on a Subscription whose pending InstallPlan it judged:
/// `<InstallPlan>: <Approved|Held|Waiting>`.
pub const DECISION_ANNOTATION: &str = "olmctl.dev/gate-decision";

/// One row: a Subscription, or a pending InstallPlan no Subscription points at.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// The namespace.
    pub namespace: String,
    /// The Subscription's name; `None` for a pending plan no Subscription points at.
    pub subscription: Option<String>,
    /// The package (`spec.name`).
    pub package: Option<String>,
    /// The channel (`spec.channel`; none: the package's default channel).
    pub channel: Option<String>,
    /// `status.installedCSV`.
    #[serde(rename = "installedCSV")]
    pub installed_csv: Option<String>,
    /// `status.currentCSV`.
    #[serde(rename = "currentCSV")]
    pub current_csv: Option<String>,
    /// `status.state`.
    pub state: Option<String>,
    /// The installed CSV's `status.phase`.
    pub csv_phase: Option<String>,
    /// The InstallPlan waiting for approval (`spec.approval: Manual`, not approved, not
    /// `Complete` or `Failed`).
    pub pending_plan: Option<String>,
    /// The CSVs that plan would install (`spec.clusterServiceVersionNames`).
    #[serde(rename = "pendingCSVs")]
    pub pending_csvs: Vec<String>,
    /// The gate's decision on that plan: `Approved`, `Held` or `Waiting`.
    pub gate: Option<String>,
}

fn text(v: &Value, ptr: &str) -> Option<String> {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn key(v: &Value) -> (String, String) {
    (
        text(v, "/metadata/namespace").unwrap_or_default(),
        text(v, "/metadata/name").unwrap_or_default(),
    )
}

/// Whether an InstallPlan waits for approval.
pub fn pending(plan: &Value) -> bool {
    plan.pointer("/spec/approval").and_then(Value::as_str) == Some("Manual")
        && plan.pointer("/spec/approved").and_then(Value::as_bool) != Some(true)
        && !matches!(
            plan.pointer("/status/phase").and_then(Value::as_str),
            Some("Complete" | "Failed")
        )
}

/// The decision a Subscription's annotation records for the plan `plan`.
fn decision(sub: &Value, plan: &str) -> Option<String> {
    let a = sub
        .pointer("/metadata/annotations")?
        .get(DECISION_ANNOTATION)?
        .as_str()?;
    let (p, d) = a.split_once(": ")?;
    (p == plan && !d.trim().is_empty()).then(|| d.trim().to_string())
}

fn csv_names(plan: &Value) -> Vec<String> {
    let names = plan.pointer("/spec/clusterServiceVersionNames");
    let names = names.and_then(Value::as_array).into_iter().flatten();
    names
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// The rows of these objects (any namespaces; objects of other kinds are ignored).
pub fn rows(subscriptions: &[Value], csvs: &[Value], plans: &[Value]) -> Vec<Row> {
    let csvs: BTreeMap<(String, String), &Value> = csvs.iter().map(|c| (key(c), c)).collect();
    let plans: BTreeMap<(String, String), &Value> = plans
        .iter()
        .filter(|p| pending(p))
        .map(|p| (key(p), p))
        .filter(|(k, _)| !k.1.is_empty())
        .collect();
    let mut referenced = BTreeSet::new();
    let mut out = Vec::new();
    for sub in subscriptions {
        let (ns, name) = key(sub);
        if name.is_empty() {
            continue;
        }
        let installed = text(sub, "/status/installedCSV");
        let plan = text(sub, "/status/installPlanRef/name")
            .or_else(|| text(sub, "/status/installplan/name"))
            .map(|p| (ns.clone(), p));
        let pending = plan.as_ref().and_then(|k| plans.get(k).map(|p| (k, *p)));
        if let Some(k) = &plan {
            referenced.insert(k.clone());
        }
        out.push(Row {
            subscription: Some(name),
            package: text(sub, "/spec/name"),
            channel: text(sub, "/spec/channel"),
            current_csv: text(sub, "/status/currentCSV"),
            state: text(sub, "/status/state"),
            csv_phase: installed
                .as_ref()
                .and_then(|c| csvs.get(&(ns.clone(), c.clone())))
                .and_then(|c| text(c, "/status/phase")),
            installed_csv: installed,
            pending_plan: pending.map(|(k, _)| k.1.clone()),
            pending_csvs: pending.map(|(_, p)| csv_names(p)).unwrap_or_default(),
            gate: pending.and_then(|(k, _)| decision(sub, &k.1)),
            namespace: ns,
        });
    }
    for (k, p) in &plans {
        if !referenced.contains(k) {
            out.push(Row {
                namespace: k.0.clone(),
                pending_plan: Some(k.1.clone()),
                pending_csvs: csv_names(p),
                ..Row::default()
            });
        }
    }
    // Subscriptions first in a namespace (`None` sorts first, so compare on "has none").
    out.sort_by(|a, b| {
        (
            &a.namespace,
            a.subscription.is_none(),
            &a.subscription,
            &a.pending_plan,
        )
            .cmp(&(
                &b.namespace,
                b.subscription.is_none(),
                &b.subscription,
                &b.pending_plan,
            ))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sub(ns: &str, name: &str, status: Value, annotation: Option<&str>) -> Value {
        let mut s = json!({"metadata": {"namespace": ns, "name": name},
                           "spec": {"name": format!("{name}-pkg"), "channel": "stable"},
                           "status": status});
        if let Some(a) = annotation {
            s["metadata"]["annotations"] = json!({ DECISION_ANNOTATION: a });
        }
        s
    }

    fn plan(ns: &str, name: &str, approval: &str, approved: bool, phase: &str) -> Value {
        json!({"metadata": {"namespace": ns, "name": name},
               "spec": {"approval": approval, "approved": approved,
                        "clusterServiceVersionNames": ["a.v2", "dep.v1"]},
               "status": {"phase": phase}})
    }

    fn csv(ns: &str, name: &str, phase: &str) -> Value {
        json!({"metadata": {"namespace": ns, "name": name}, "status": {"phase": phase}})
    }

    #[test]
    fn a_pending_plan_shows_with_its_csvs_and_the_gate_decision_on_it() {
        let s = sub(
            "ns",
            "a",
            json!({"installedCSV": "a.v1", "currentCSV": "a.v2", "state": "UpgradePending",
                   "installPlanRef": {"name": "install-1"}}),
            Some("install-1: Held"),
        );
        let r = rows(
            &[s],
            &[
                csv("ns", "a.v1", "Succeeded"),
                csv("other", "a.v1", "Failed"),
            ],
            &[plan("ns", "install-1", "Manual", false, "RequiresApproval")],
        );
        assert_eq!(
            r,
            [Row {
                namespace: "ns".into(),
                subscription: Some("a".into()),
                package: Some("a-pkg".into()),
                channel: Some("stable".into()),
                installed_csv: Some("a.v1".into()),
                current_csv: Some("a.v2".into()),
                state: Some("UpgradePending".into()),
                csv_phase: Some("Succeeded".into()),
                pending_plan: Some("install-1".into()),
                pending_csvs: vec!["a.v2".into(), "dep.v1".into()],
                gate: Some("Held".into()),
            }]
        );
    }

    #[test]
    fn approved_automatic_and_finished_plans_are_not_pending() {
        for p in [
            plan("ns", "install-1", "Manual", true, "Installing"),
            plan("ns", "install-1", "Automatic", true, "Installing"),
            plan("ns", "install-1", "Manual", false, "Failed"),
            plan("ns", "install-1", "Manual", false, "Complete"),
        ] {
            let s = sub(
                "ns",
                "a",
                json!({"installPlanRef": {"name": "install-1"}}),
                Some("install-1: Approved"),
            );
            let r = rows(&[s], &[], &[p]);
            assert_eq!(r.len(), 1);
            assert_eq!((&r[0].pending_plan, &r[0].gate), (&None, &None));
        }
    }

    #[test]
    fn a_decision_on_another_plan_is_not_shown() {
        let s = sub(
            "ns",
            "a",
            json!({"installPlanRef": {"name": "install-2"}}),
            Some("install-1: Held"),
        );
        let r = rows(
            &[s],
            &[],
            &[plan("ns", "install-2", "Manual", false, "RequiresApproval")],
        );
        assert_eq!(r[0].pending_plan.as_deref(), Some("install-2"));
        assert_eq!(r[0].gate, None);
    }

    #[test]
    fn rows_sort_by_namespace_then_subscription_and_left_behind_plans_follow() {
        let r = rows(
            &[
                sub("b", "z", json!({}), None),
                sub(
                    "b",
                    "m",
                    json!({"installPlanRef": {"name": "install-9"}}),
                    None,
                ),
                sub("a", "q", json!({}), None),
            ],
            &[],
            &[
                plan("b", "install-1", "Manual", false, "RequiresApproval"),
                plan("b", "install-9", "Manual", false, "RequiresApproval"),
                plan("a", "install-3", "Manual", false, ""),
            ],
        );
        let got: Vec<(&str, Option<&str>, Option<&str>)> = r
            .iter()
            .map(|r| {
                (
                    r.namespace.as_str(),
                    r.subscription.as_deref(),
                    r.pending_plan.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("a", Some("q"), None),
                ("a", None, Some("install-3")),
                ("b", Some("m"), Some("install-9")),
                ("b", Some("z"), None),
                ("b", None, Some("install-1")),
            ]
        );
    }

    #[test]
    fn malformed_objects_give_empty_cells_and_nameless_ones_no_row() {
        let r = rows(
            &[
                json!({"metadata": 3}),
                json!("x"),
                json!({"metadata": {"name": "s"}, "spec": 1, "status": {"installPlanRef": 2}}),
            ],
            &[json!(null)],
            &[json!({"spec": {"approval": "Manual"}})],
        );
        assert_eq!(
            r,
            [Row {
                subscription: Some("s".into()),
                ..Row::default()
            }]
        );
    }
}
