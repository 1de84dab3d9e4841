//! `olmctl upgrade SUBSCRIPTION` (kubectl-operator `upgrade`, `internal/pkg/action/
//! operator_upgrade.go :: OperatorUpgrade.Run`): the Subscription's waiting InstallPlan is
//! approved, then followed to `Complete`, and the CSV it installed is the answer
//! (`helpers.go :: approveInstallPlan`, `getCSV`). With `--channel`, the Subscription is moved
//! to that channel first and the plan OLM makes for it is the one approved (upstream binds
//! `--channel` and never reads it).
//!
//! The upgrade gate: when an UpgradePolicy of olmctl-operator covers the Subscription (its
//! `spec.selector` matches the Subscription's labels), the plan is the gate's to approve:
//! it is never approved here, so that no upgrade passes the policy's rules; its decision
//! (`Approved`, `Held`, `Waiting`, with the reasons the policy's status gives) is reported and
//! followed.

use std::fmt;

use serde_json::Value;

use super::text;
use crate::status::DECISION_ANNOTATION;

/// Why there is nothing to upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UpgradeError {
    /// No Subscription of that name, nor for that package.
    NotFound {
        /// The name given.
        name: String,
        /// The namespace.
        namespace: String,
    },
    /// Several Subscriptions subscribe to the package given.
    Ambiguous {
        /// The package.
        package: String,
        /// Their names.
        subscriptions: Vec<String>,
    },
    /// `status.installPlanRef` is not set.
    NoPlan {
        /// The Subscription.
        subscription: String,
    },
    /// `installedCSV == currentCSV`.
    AtLatest {
        /// The Subscription.
        subscription: String,
        /// The installed CSV.
        csv: String,
    },
}

impl fmt::Display for UpgradeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UpgradeError::NotFound { name, namespace } => write!(
                f,
                "subscription {name:?} not found in namespace {namespace}, nor a subscription for package {name:?} (see `olmctl status -n {namespace}`)"
            ),
            UpgradeError::Ambiguous {
                package,
                subscriptions,
            } => write!(
                f,
                "package {package:?} has {} subscriptions ({}): name one",
                subscriptions.len(),
                subscriptions.join(", ")
            ),
            UpgradeError::NoPlan { subscription } => write!(
                f,
                "subscription {subscription:?} does not reference an install plan (OLM has not resolved it yet: see `olmctl status`)"
            ),
            UpgradeError::AtLatest { subscription, csv } => write!(
                f,
                "subscription {subscription:?}: operator is already at latest version ({csv})"
            ),
        }
    }
}

impl std::error::Error for UpgradeError {}

/// The Subscription named `name`, else the only one whose package (`spec.name`) is `name`
/// (kubectl-operator's `findSubscriptionForPackage` finds it by package).
pub fn find<'a>(subs: &'a [Value], name: &str, namespace: &str) -> Result<&'a Value, UpgradeError> {
    if let Some(s) = subs.iter().find(|s| text(s, "/metadata/name") == name) {
        return Ok(s);
    }
    let by_package: Vec<&Value> = subs
        .iter()
        .filter(|s| text(s, "/spec/name") == name)
        .collect();
    match by_package.as_slice() {
        [one] => Ok(one),
        [] => Err(UpgradeError::NotFound {
            name: name.into(),
            namespace: namespace.into(),
        }),
        many => Err(UpgradeError::Ambiguous {
            package: name.into(),
            subscriptions: many
                .iter()
                .map(|s| text(s, "/metadata/name").to_string())
                .collect(),
        }),
    }
}

/// What the upgrade gate says of a Subscription it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gate {
    /// The covering policies, `namespace/name`.
    pub policies: Vec<String>,
    /// Its decision on the pending plan (the Subscription's [`DECISION_ANNOTATION`]), if made.
    pub decision: Option<String>,
    /// The reasons the policies' status gives (`CODE effect: message`).
    pub reasons: Vec<String>,
    /// When a waiting plan is looked at again (`nextCheck`).
    pub next_check: Option<String>,
}

fn labels(sub: &Value) -> std::collections::BTreeMap<String, String> {
    sub["metadata"]["labels"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The gate's view of `sub` from the UpgradePolicies of its namespace (`None`: none covers it,
/// as olmctl-operator's `controller.rs` decides coverage: `spec.selector` matching the
/// Subscription's labels). A policy the gate's reader refuses covers nothing (olmctl-operator
/// reports it in the policy's status).
pub fn gate(sub: &Value, policies: &[Value]) -> Option<Gate> {
    let name = text(sub, "/metadata/name");
    let plan = text(sub, "/status/installPlanRef/name");
    let labels = labels(sub);
    let mut g = Gate {
        policies: Vec::new(),
        decision: None,
        reasons: Vec::new(),
        next_check: None,
    };
    for p in policies {
        let Ok(doc) = serde_json::to_string(p) else {
            continue;
        };
        let Ok(parsed) = crate::gate::policy::parse(&doc) else {
            continue;
        };
        if !parsed.selector.matches(&labels) {
            continue;
        }
        g.policies
            .push(format!("{}/{}", parsed.namespace, parsed.name));
        let entries = p.pointer("/status/subscriptions").and_then(Value::as_array);
        for e in entries.into_iter().flatten() {
            if text(e, "/name") != name || text(e, "/installPlan") != plan {
                continue;
            }
            for r in e["reasons"].as_array().into_iter().flatten() {
                g.reasons.push(format!(
                    "{} {}: {}",
                    text(r, "/code"),
                    text(r, "/effect"),
                    text(r, "/message")
                ));
            }
            if let Some(n) = e["nextCheck"].as_str() {
                g.next_check = Some(n.to_string());
            }
        }
    }
    if g.policies.is_empty() {
        return None;
    }
    g.decision = sub["metadata"]["annotations"][DECISION_ANNOTATION]
        .as_str()
        .and_then(|a| a.split_once(": "))
        .filter(|(p, _)| *p == plan && !plan.is_empty())
        .map(|(_, d)| d.trim().to_string());
    Some(g)
}

/// The next step of an upgrade.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// OLM has not made the plan for the Subscription's current CSV yet: read again.
    Resolving,
    /// Approve this plan (its resourceVersion the precondition).
    Approve {
        /// The plan.
        plan: String,
        /// Its resourceVersion.
        resource_version: String,
        /// The CSVs it installs.
        csvs: Vec<String>,
    },
    /// The gate decides on the plan (never approved here).
    Gate {
        /// The plan.
        plan: String,
        /// What the gate says.
        gate: Gate,
    },
    /// Approved, being installed: read again.
    Installing {
        /// The plan.
        plan: String,
        /// Its phase.
        phase: String,
    },
    /// Done: the plan is `Complete`.
    Done {
        /// The plan.
        plan: String,
        /// The CSV it installed (`getCSV`: the last ClusterServiceVersion step).
        csv: String,
    },
    /// The plan failed.
    Failed {
        /// The plan.
        plan: String,
        /// OLM's reason and message.
        message: String,
    },
}

/// The CSVs a plan installs (`spec.clusterServiceVersionNames`).
fn csv_names(plan: &Value) -> Vec<String> {
    plan.pointer("/spec/clusterServiceVersionNames")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// Whether the Subscription has nothing to upgrade to (`getInstallPlan`'s checks).
pub fn check(sub: &Value) -> Result<(), UpgradeError> {
    let name = text(sub, "/metadata/name").to_string();
    if text(sub, "/status/installPlanRef/name").is_empty() {
        return Err(UpgradeError::NoPlan { subscription: name });
    }
    let installed = text(sub, "/status/installedCSV");
    if installed == text(sub, "/status/currentCSV") {
        return Err(UpgradeError::AtLatest {
            subscription: name,
            csv: installed.into(),
        });
    }
    Ok(())
}

/// The next step, from the Subscription, its plan (`status.installPlanRef`, read) and the
/// gate's view ([`gate`]). A plan that does not install the Subscription's current CSV is an
/// older one (OLM has not written the new one yet): [`Next::Resolving`].
pub fn next(sub: &Value, plan: Option<&Value>, gate: Option<Gate>) -> Next {
    let Some(plan) = plan else {
        return Next::Resolving;
    };
    let name = text(plan, "/metadata/name").to_string();
    let csvs = csv_names(plan);
    let current = text(sub, "/status/currentCSV");
    if !current.is_empty() && !csvs.iter().any(|c| c == current) {
        return Next::Resolving;
    }
    match text(plan, "/status/phase") {
        "Complete" => {
            let steps = plan.pointer("/status/plan").and_then(Value::as_array);
            let csv = steps
                .into_iter()
                .flatten()
                .filter(|s| text(s, "/resource/kind") == "ClusterServiceVersion")
                .map(|s| text(s, "/resource/name").to_string())
                .next_back()
                .or_else(|| csvs.last().cloned())
                .unwrap_or_default();
            return Next::Done { plan: name, csv };
        }
        "Failed" => {
            let conds = plan.pointer("/status/conditions").and_then(Value::as_array);
            let message = conds
                .into_iter()
                .flatten()
                .find(|c| text(c, "/type") == "Installed")
                .map(|c| format!("{}: {}", text(c, "/reason"), text(c, "/message")))
                .unwrap_or_else(|| "the InstallPlan failed".into());
            return Next::Failed {
                plan: name,
                message,
            };
        }
        _ => {}
    }
    if plan.pointer("/spec/approved") == Some(&Value::Bool(true)) {
        return Next::Installing {
            plan: name,
            phase: text(plan, "/status/phase").to_string(),
        };
    }
    match gate {
        Some(gate) => Next::Gate { plan: name, gate },
        None => Next::Approve {
            plan: name,
            resource_version: text(plan, "/metadata/resourceVersion").into(),
            csvs,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sub(labels: Value, decision: Option<&str>) -> Value {
        let mut s = json!({"metadata": {"name": "p", "namespace": "ops", "labels": labels},
            "spec": {"name": "p-pkg", "channel": "stable"},
            "status": {"installedCSV": "p.v1.0.0", "currentCSV": "p.v1.1.0",
                       "installPlanRef": {"name": "install-2"}}});
        if let Some(d) = decision {
            s["metadata"]["annotations"] = json!({DECISION_ANNOTATION: d});
        }
        s
    }

    fn plan(approved: bool, phase: &str) -> Value {
        json!({"metadata": {"name": "install-2", "resourceVersion": "42"},
               "spec": {"approval": "Manual", "approved": approved,
                        "clusterServiceVersionNames": ["p.v1.1.0"]},
               "status": {"phase": phase, "plan": [
                   {"resource": {"kind": "CustomResourceDefinition", "name": "w.example.com"}},
                   {"resource": {"kind": "ClusterServiceVersion", "name": "p.v1.1.0"}}]}})
    }

    fn policy(selector: Value) -> Value {
        json!({"apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
               "metadata": {"name": "default", "namespace": "ops"},
               "spec": {"selector": selector, "maxVersionJump": "minor"},
               "status": {"subscriptions": [{"name": "p", "installPlan": "install-2", "decision": "Held",
                   "reasons": [{"code": "GATE003", "effect": "hold", "message": "CRD w removes v1"}]}]}})
    }

    #[test]
    fn a_waiting_plan_is_approved_then_followed_to_its_csv() {
        let s = sub(json!({}), None);
        assert_eq!(check(&s), Ok(()));
        assert_eq!(
            next(&s, Some(&plan(false, "RequiresApproval")), None),
            Next::Approve {
                plan: "install-2".into(),
                resource_version: "42".into(),
                csvs: vec!["p.v1.1.0".into()]
            }
        );
        assert!(matches!(
            next(&s, Some(&plan(true, "Installing")), None),
            Next::Installing { .. }
        ));
        assert_eq!(
            next(&s, Some(&plan(true, "Complete")), None),
            Next::Done {
                plan: "install-2".into(),
                csv: "p.v1.1.0".into()
            }
        );
    }

    #[test]
    fn an_older_plan_means_olm_is_still_resolving() {
        let mut s = sub(json!({}), None);
        s["status"]["currentCSV"] = json!("p.v1.2.0");
        assert_eq!(
            next(&s, Some(&plan(false, "RequiresApproval")), None),
            Next::Resolving
        );
    }

    #[test]
    fn a_covered_subscription_is_left_to_the_gate_with_its_reasons() {
        let s = sub(json!({"tier": "prod"}), Some("install-2: Held"));
        let covering = policy(json!({"matchLabels": {"tier": "prod"}}));
        let other = policy(json!({"matchLabels": {"tier": "dev"}}));
        assert_eq!(gate(&s, std::slice::from_ref(&other)), None);
        let g = gate(&s, &[covering, other]).expect("covered");
        assert_eq!(g.policies, ["ops/default"]);
        assert_eq!(g.decision.as_deref(), Some("Held"));
        assert_eq!(g.reasons, ["GATE003 hold: CRD w removes v1"]);
        let n = next(&s, Some(&plan(false, "RequiresApproval")), Some(g));
        assert!(matches!(n, Next::Gate { .. }), "{n:?}");
    }

    #[test]
    fn nothing_to_upgrade_is_said_as_kubectl_operator_says_it() {
        let mut s = sub(json!({}), None);
        s["status"]["currentCSV"] = json!("p.v1.0.0");
        assert!(
            check(&s)
                .unwrap_err()
                .to_string()
                .contains("operator is already at latest version (p.v1.0.0)")
        );
        s["status"]["installPlanRef"] = Value::Null;
        assert!(matches!(check(&s), Err(UpgradeError::NoPlan { .. })));
    }

    #[test]
    fn a_subscription_is_found_by_name_or_by_its_package() {
        let a = json!({"metadata": {"name": "a"}, "spec": {"name": "pkg"}});
        let b = json!({"metadata": {"name": "b"}, "spec": {"name": "other"}});
        let subs = [a.clone(), b];
        assert_eq!(find(&subs, "a", "ns"), Ok(&subs[0]));
        assert_eq!(find(&subs, "pkg", "ns"), Ok(&subs[0]));
        assert!(matches!(
            find(&subs, "nope", "ns"),
            Err(UpgradeError::NotFound { .. })
        ));
        let mut c = a;
        c["metadata"]["name"] = json!("c");
        let subs = [subs[0].clone(), c];
        assert!(matches!(
            find(&subs, "pkg", "ns"),
            Err(UpgradeError::Ambiguous { .. })
        ));
    }
}
