//! Where an install stands, read from the objects OLM writes (operator.md §6.3): CatalogSource
//! READY, Subscription resolved, InstallPlan approved and complete, CSV `Succeeded`. Pure: the
//! caller reads the objects (a cluster, a test double) and acts on the [`Outcome`]; the same
//! objects always give the same lines, so a caller can print each line once as it first appears.

use serde_json::Value;

/// The objects an install waits on, as last read. `None`: not there (or not looked at).
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The CatalogSource the Subscription uses.
    pub catalog_source: Option<Value>,
    /// The Subscription.
    pub subscription: Option<Value>,
    /// The InstallPlan the Subscription references (`status.installPlanRef`).
    pub install_plan: Option<Value>,
    /// The CSV the Subscription resolved to (`status.currentCSV`).
    pub csv: Option<Value>,
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Keep watching: OLM is at the step described.
    Wait(String),
    /// The Subscription's current InstallPlan waits for approval (`spec.approved: false`).
    Approve {
        /// The InstallPlan's name.
        plan: String,
        /// Its `resourceVersion`, as the approval's precondition.
        resource_version: String,
        /// Every CSV it installs (dependencies included).
        csvs: Vec<String>,
    },
    /// OLM gave up: its reason and message.
    Failed {
        /// OLM's reason: `ResolutionFailed`, `BundleUnpackFailed`, `InstallPlanFailed`,
        /// `CSVFailed`.
        reason: String,
        /// OLM's message, with its own reason where it has one.
        message: String,
    },
    /// The CSV is `Succeeded`.
    Done {
        /// The installed CSV.
        csv: String,
    },
}

/// The progress lines reached so far, in order, and what to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// One line per step reached (stable text: no timestamps).
    pub lines: Vec<String>,
    /// The next move.
    pub outcome: Outcome,
}

fn s<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// The condition of `type` with `status: "True"`, if any.
fn true_condition<'a>(obj: &'a Value, ty: &str) -> Option<&'a Value> {
    obj.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == ty && c["status"] == "True")
}

fn reason_message(c: &Value) -> String {
    let (r, m) = (s(c, "/reason"), s(c, "/message"));
    match (r.is_empty(), m.is_empty()) {
        (false, false) => format!("{r}: {m}"),
        (false, true) => r.to_string(),
        _ => m.to_string(),
    }
}

fn failed(reason: &str, message: String) -> Outcome {
    Outcome::Failed {
        reason: reason.into(),
        message,
    }
}

/// Reads the snapshot. `catalog` names the CatalogSource (`namespace/name`) for the lines.
/// `pinned` is the one CSV to install (`--version`): only a plan that installs it is ever
/// approved, and the install is done once it has succeeded, whatever newer version OLM has
/// found meanwhile (after `startingCSV`, OLM makes a follow-up plan for the channel's next
/// version as soon as the pinned CSV exists, cluster.md R5.5).
pub fn assess(snap: &Snapshot, catalog: &str, pinned: Option<&str>) -> Assessment {
    let mut lines = Vec::new();
    let outcome = walk(snap, catalog, pinned, &mut lines);
    Assessment { lines, outcome }
}

/// The Subscription conditions OLM retries on its own (cluster.md R5.6): the install goes on
/// waiting and tells the condition. `ResolutionFailed`/`ConstraintsNotSatisfiable` is not
/// retried until something changes, and `BundleUnpackFailed`/`ErrorPreventedUnpacking` is
/// fatal: those stop it.
fn retried(ty: &str, reason: &str) -> bool {
    match ty {
        "ResolutionFailed" => reason != "ConstraintsNotSatisfiable",
        "BundleUnpackFailed" => reason != "ErrorPreventedUnpacking",
        _ => false,
    }
}

fn walk(snap: &Snapshot, catalog: &str, pinned: Option<&str>, lines: &mut Vec<String>) -> Outcome {
    // 1. The catalog.
    let Some(cs) = &snap.catalog_source else {
        return Outcome::Wait(format!("CatalogSource {catalog} to exist"));
    };
    let state = s(cs, "/status/connectionState/lastObservedState");
    if state != "READY" {
        let why = match s(cs, "/status/reason") {
            "" => String::new(),
            r => format!(" ({r}: {})", s(cs, "/status/message")),
        };
        let now = if state.is_empty() {
            "no state yet"
        } else {
            state
        };
        return Outcome::Wait(format!(
            "CatalogSource {catalog} to be READY (it is {now}{why})"
        ));
    }
    lines.push(format!("CatalogSource {catalog} is READY"));

    // 2. The Subscription's resolution.
    let Some(sub) = &snap.subscription else {
        return Outcome::Wait("the Subscription to exist".into());
    };
    let sub_name = s(sub, "/metadata/name");
    let current = s(sub, "/status/currentCSV");
    let plan_name = s(sub, "/status/installPlanRef/name");
    // The pinned CSV exists: OLM may already point the Subscription at the next version's
    // plan, which is not ours to approve. What is left is the CSV.
    let pinned_csv = pinned.and_then(|p| {
        snap.csv
            .as_ref()
            .filter(|c| s(c, "/metadata/name") == p)
            .map(|_| p)
    });
    if let Some(p) = pinned_csv
        && current != p
    {
        return csv_step(snap, p, lines);
    }
    for ty in ["ResolutionFailed", "BundleUnpackFailed"] {
        if let Some(c) = true_condition(sub, ty) {
            let why = reason_message(c);
            if retried(ty, s(c, "/reason")) {
                lines.push(format!(
                    "Subscription {sub_name}: {ty} ({why}); OLM retries"
                ));
                return Outcome::Wait(format!(
                    "Subscription {sub_name} to be resolved (last: {ty}: {why})"
                ));
            }
            return failed(ty, why);
        }
    }
    if current.is_empty() || plan_name.is_empty() {
        let unpacking = true_condition(sub, "BundleUnpacking")
            .map(|c| format!(" ({})", reason_message(c)))
            .unwrap_or_default();
        return Outcome::Wait(format!("Subscription {sub_name} to be resolved{unpacking}"));
    }
    lines.push(format!(
        "Subscription {sub_name} resolved to {current} (InstallPlan {plan_name})"
    ));

    // 3. The InstallPlan.
    let csv_phase = snap
        .csv
        .as_ref()
        .filter(|c| s(c, "/metadata/name") == current)
        .map(|c| s(c, "/status/phase"));
    let plan = snap
        .install_plan
        .as_ref()
        .filter(|p| s(p, "/metadata/name") == plan_name);
    match plan {
        // Deleted after it ran (plans are garbage-collected): the CSV tells the rest.
        None if csv_phase.is_some() => {}
        None => {
            if let Some(c) = true_condition(sub, "InstallPlanFailed") {
                return failed("InstallPlanFailed", reason_message(c));
            }
            return Outcome::Wait(format!("InstallPlan {plan_name} to exist"));
        }
        Some(p) => {
            let csvs: Vec<String> = p
                .pointer("/spec/clusterServiceVersionNames")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let approved = p.pointer("/spec/approved").and_then(Value::as_bool) == Some(true);
            match s(p, "/status/phase") {
                "" | "Planning" => {
                    return Outcome::Wait(format!("InstallPlan {plan_name} to be planned"));
                }
                "RequiresApproval" if !approved => {
                    lines.push(format!(
                        "InstallPlan {plan_name} requires approval (installs {})",
                        csvs.join(", ")
                    ));
                    // Approve only the Subscription's current plan for its current CSV
                    // (operator.md §2.5, §3.10), and when pinned, only the pinned CSV's.
                    if !csvs.iter().any(|c| c == current) {
                        return Outcome::Wait(format!("InstallPlan {plan_name} to name {current}"));
                    }
                    if let Some(p) = pinned
                        && !csvs.iter().any(|c| c == p)
                    {
                        return Outcome::Wait(format!(
                            "InstallPlan {plan_name} to install the pinned {p} (it installs {})",
                            csvs.join(", ")
                        ));
                    }
                    return Outcome::Approve {
                        plan: plan_name.to_string(),
                        resource_version: s(p, "/metadata/resourceVersion").to_string(),
                        csvs,
                    };
                }
                "RequiresApproval" => {
                    lines.push(format!(
                        "InstallPlan {plan_name} requires approval (installs {})",
                        csvs.join(", ")
                    ));
                    lines.push(format!("InstallPlan {plan_name} approved"));
                    return Outcome::Wait(format!("InstallPlan {plan_name} to start"));
                }
                "Installing" => {
                    lines.push(format!("InstallPlan {plan_name} is Installing"));
                    if csv_phase.is_none() {
                        let m = s(p, "/status/message");
                        let m = if m.is_empty() {
                            String::new()
                        } else {
                            format!(" ({m})")
                        };
                        return Outcome::Wait(format!("InstallPlan {plan_name} to complete{m}"));
                    }
                }
                "Complete" => {
                    lines.push(format!("InstallPlan {plan_name} is Complete"));
                }
                "Failed" => {
                    let c = p
                        .pointer("/status/conditions")
                        .and_then(Value::as_array)
                        .and_then(|a| a.iter().find(|c| c["type"] == "Installed"));
                    let message = match c {
                        Some(c) => reason_message(c),
                        None => s(p, "/status/message").to_string(),
                    };
                    return failed("InstallPlanFailed", message);
                }
                other => {
                    return Outcome::Wait(format!(
                        "InstallPlan {plan_name} (phase {other:?}) to complete"
                    ));
                }
            }
        }
    }

    csv_step(snap, current, lines)
}

/// 4. The CSV.
fn csv_step(snap: &Snapshot, current: &str, lines: &mut Vec<String>) -> Outcome {
    let Some(csv) = snap
        .csv
        .as_ref()
        .filter(|c| s(c, "/metadata/name") == current)
    else {
        return Outcome::Wait(format!("ClusterServiceVersion {current} to exist"));
    };
    let phase = s(csv, "/status/phase");
    let (reason, message) = (s(csv, "/status/reason"), s(csv, "/status/message"));
    if !phase.is_empty() {
        let detail = match (reason.is_empty(), message.is_empty()) {
            (true, _) => String::new(),
            (false, true) => format!(" ({reason})"),
            (false, false) => format!(" ({reason}: {message})"),
        };
        lines.push(format!(
            "ClusterServiceVersion {current} is {phase}{detail}"
        ));
    }
    match phase {
        "Succeeded" => Outcome::Done {
            csv: current.to_string(),
        },
        "Failed" => failed("CSVFailed", format!("{reason}: {message}")),
        _ => Outcome::Wait(format!("ClusterServiceVersion {current} to succeed")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ready() -> Value {
        json!({"metadata": {"name": "c"}, "status": {"connectionState": {"lastObservedState": "READY"}}})
    }

    fn resolved() -> Value {
        json!({"metadata": {"name": "p"}, "status": {"state": "UpgradePending",
            "currentCSV": "p.v1.0.0", "installPlanRef": {"name": "install-abc"}}})
    }

    fn plan(phase: &str, approved: bool) -> Value {
        json!({"metadata": {"name": "install-abc", "resourceVersion": "7"},
            "spec": {"approved": approved, "clusterServiceVersionNames": ["p.v1.0.0", "dep.v2.0.0"]},
            "status": {"phase": phase}})
    }

    fn csv(phase: &str, reason: &str, message: &str) -> Value {
        json!({"metadata": {"name": "p.v1.0.0"},
            "status": {"phase": phase, "reason": reason, "message": message}})
    }

    fn snap(cs: Option<Value>, sub: Option<Value>, p: Option<Value>, c: Option<Value>) -> Snapshot {
        Snapshot {
            catalog_source: cs,
            subscription: sub,
            install_plan: p,
            csv: c,
        }
    }

    #[test]
    fn waits_for_the_catalog_with_its_reason() {
        let cs = json!({"status": {"connectionState": {"lastObservedState": "TRANSIENT_FAILURE"},
            "reason": "RegistryServerError", "message": "pod not ready"}});
        let a = assess(&snap(Some(cs), None, None, None), "olm/c", None);
        assert!(a.lines.is_empty());
        assert_eq!(
            a.outcome,
            Outcome::Wait(
                "CatalogSource olm/c to be READY (it is TRANSIENT_FAILURE (RegistryServerError: pod not ready))"
                    .into()
            )
        );
    }

    #[test]
    fn resolution_failed_stops_with_olms_message() {
        let sub = json!({"metadata": {"name": "p"}, "status": {"conditions": [
            {"type": "CatalogSourcesUnhealthy", "status": "False"},
            {"type": "ResolutionFailed", "status": "True", "reason": "ConstraintsNotSatisfiable",
             "message": "no operators found in package p in the catalog referenced by subscription p"}]}});
        let a = assess(&snap(Some(ready()), Some(sub), None, None), "olm/c", None);
        assert_eq!(a.lines, ["CatalogSource olm/c is READY"]);
        assert_eq!(
            a.outcome,
            failed(
                "ResolutionFailed",
                "ConstraintsNotSatisfiable: no operators found in package p in the catalog referenced by subscription p".into()
            )
        );
        // A condition that is not True does not stop anything.
        let sub = json!({"metadata": {"name": "p"}, "status": {"conditions": [
            {"type": "ResolutionFailed", "status": "False"}]}});
        let a = assess(&snap(Some(ready()), Some(sub), None, None), "olm/c", None);
        assert_eq!(
            a.outcome,
            Outcome::Wait("Subscription p to be resolved".into())
        );
    }

    #[test]
    fn a_manual_plan_asks_for_approval_then_installs() {
        let a = assess(
            &snap(Some(ready()), Some(resolved()), Some(plan("", false)), None),
            "olm/c",
            None,
        );
        assert_eq!(
            a.outcome,
            Outcome::Wait("InstallPlan install-abc to be planned".into())
        );
        let a = assess(
            &snap(
                Some(ready()),
                Some(resolved()),
                Some(plan("RequiresApproval", false)),
                None,
            ),
            "olm/c",
            None,
        );
        assert_eq!(
            a.lines.last().unwrap(),
            "InstallPlan install-abc requires approval (installs p.v1.0.0, dep.v2.0.0)"
        );
        assert_eq!(
            a.outcome,
            Outcome::Approve {
                plan: "install-abc".into(),
                resource_version: "7".into(),
                csvs: vec!["p.v1.0.0".into(), "dep.v2.0.0".into()]
            }
        );
        let a = assess(
            &snap(
                Some(ready()),
                Some(resolved()),
                Some(plan("Installing", true)),
                None,
            ),
            "olm/c",
            None,
        );
        assert_eq!(
            a.outcome,
            Outcome::Wait("InstallPlan install-abc to complete".into())
        );
    }

    #[test]
    fn a_plan_for_another_csv_is_not_approved() {
        let mut p = plan("RequiresApproval", false);
        p["spec"]["clusterServiceVersionNames"] = json!(["p.v0.9.0"]);
        let a = assess(
            &snap(Some(ready()), Some(resolved()), Some(p), None),
            "olm/c",
            None,
        );
        assert!(matches!(a.outcome, Outcome::Wait(_)), "{:?}", a.outcome);
    }

    #[test]
    fn csv_phases_are_lines_and_succeeded_is_done() {
        let a = assess(
            &snap(
                Some(ready()),
                Some(resolved()),
                Some(plan("Complete", true)),
                Some(csv(
                    "Installing",
                    "InstallWaiting",
                    "waiting for deployment",
                )),
            ),
            "olm/c",
            None,
        );
        assert_eq!(
            a.lines,
            [
                "CatalogSource olm/c is READY",
                "Subscription p resolved to p.v1.0.0 (InstallPlan install-abc)",
                "InstallPlan install-abc is Complete",
                "ClusterServiceVersion p.v1.0.0 is Installing (InstallWaiting: waiting for deployment)",
            ]
        );
        assert!(matches!(a.outcome, Outcome::Wait(_)));
        // The plan may be gone (garbage-collected) once the CSV exists.
        let a = assess(
            &snap(
                Some(ready()),
                Some(resolved()),
                None,
                Some(csv(
                    "Succeeded",
                    "InstallSucceeded",
                    "install strategy completed with no errors",
                )),
            ),
            "olm/c",
            None,
        );
        assert_eq!(
            a.outcome,
            Outcome::Done {
                csv: "p.v1.0.0".into()
            }
        );
    }

    #[test]
    fn failures_carry_olms_reason() {
        let a = assess(
            &snap(
                Some(ready()),
                Some(resolved()),
                Some(plan("Complete", true)),
                Some(csv("Failed", "InstallCheckFailed", "install timeout")),
            ),
            "olm/c",
            None,
        );
        assert_eq!(
            a.outcome,
            failed("CSVFailed", "InstallCheckFailed: install timeout".into())
        );
        let mut p = plan("Failed", true);
        p["status"]["conditions"] = json!([{"type": "Installed", "status": "False",
            "reason": "InstallComponentFailed", "message": "error creating csv p.v1.0.0"}]);
        let a = assess(
            &snap(Some(ready()), Some(resolved()), Some(p), None),
            "olm/c",
            None,
        );
        assert_eq!(
            a.outcome,
            failed(
                "InstallPlanFailed",
                "InstallComponentFailed: error creating csv p.v1.0.0".into()
            )
        );
    }

    #[test]
    fn conditions_olm_retries_keep_the_install_waiting_with_the_last_reason() {
        // ResolutionFailed/ErrorPreventedResolution and BundleUnpackFailed/BundleUnpackFailed
        // are retried by OLM (cluster.md R5.6); before, either stopped the install at once.
        let cond = |ty: &str, reason: &str, message: &str| {
            json!({"metadata": {"name": "p"}, "status": {"conditions": [
                {"type": ty, "status": "True", "reason": reason, "message": message}]}})
        };
        let sub = cond(
            "ResolutionFailed",
            "ErrorPreventedResolution",
            "expected 1 OperatorGroup in the namespace, found 0",
        );
        let a = assess(&snap(Some(ready()), Some(sub), None, None), "olm/c", None);
        assert_eq!(
            a.lines,
            [
                "CatalogSource olm/c is READY",
                "Subscription p: ResolutionFailed (ErrorPreventedResolution: expected 1 OperatorGroup in the namespace, found 0); OLM retries"
            ]
        );
        assert_eq!(
            a.outcome,
            Outcome::Wait("Subscription p to be resolved (last: ResolutionFailed: ErrorPreventedResolution: expected 1 OperatorGroup in the namespace, found 0)".into())
        );
        let sub = cond(
            "BundleUnpackFailed",
            "BundleUnpackFailed",
            "Bundle unpacking failed - DeadlineExceeded: Job was active longer than specified deadline. Auto-retry in ~5 min after job cleanup (TTL)",
        );
        let a = assess(&snap(Some(ready()), Some(sub), None, None), "olm/c", None);
        assert!(
            matches!(&a.outcome, Outcome::Wait(w) if w.contains("last: BundleUnpackFailed: BundleUnpackFailed: Bundle unpacking failed - DeadlineExceeded")),
            "{:?}",
            a.outcome
        );
        // What OLM does not retry stops it.
        let sub = cond(
            "BundleUnpackFailed",
            "ErrorPreventedUnpacking",
            "bad bundle",
        );
        let a = assess(&snap(Some(ready()), Some(sub), None, None), "olm/c", None);
        assert_eq!(
            a.outcome,
            failed(
                "BundleUnpackFailed",
                "ErrorPreventedUnpacking: bad bundle".into()
            )
        );
    }

    #[test]
    fn a_pinned_version_approves_only_its_plan_and_is_done_when_it_succeeds() {
        // --version p.v1.0.0: its plan is approved.
        let a = assess(
            &snap(
                Some(ready()),
                Some(resolved()),
                Some(plan("RequiresApproval", false)),
                None,
            ),
            "olm/c",
            Some("p.v1.0.0"),
        );
        assert!(
            matches!(a.outcome, Outcome::Approve { .. }),
            "{:?}",
            a.outcome
        );
        // Once p.v1.0.0 exists OLM points the Subscription at the follow-up plan for
        // p.v1.1.0 (cluster.md R5.5): it is not approved, and the install is done when the
        // pinned CSV succeeds.
        let follow = json!({"metadata": {"name": "p"}, "status": {"state": "UpgradePending",
            "currentCSV": "p.v1.1.0", "installedCSV": "p.v1.0.0",
            "installPlanRef": {"name": "install-next"}}});
        let next = json!({"metadata": {"name": "install-next", "resourceVersion": "9"},
            "spec": {"approved": false, "clusterServiceVersionNames": ["p.v1.1.0"]},
            "status": {"phase": "RequiresApproval"}});
        for (phase, done) in [("Installing", false), ("Succeeded", true)] {
            let a = assess(
                &snap(
                    Some(ready()),
                    Some(follow.clone()),
                    Some(next.clone()),
                    Some(csv(phase, "InstallSucceeded", "x")),
                ),
                "olm/c",
                Some("p.v1.0.0"),
            );
            match (done, &a.outcome) {
                (true, Outcome::Done { csv }) => assert_eq!(csv, "p.v1.0.0"),
                (false, Outcome::Wait(w)) => {
                    assert_eq!(w, "ClusterServiceVersion p.v1.0.0 to succeed")
                }
                _ => panic!("{phase}: {:?}", a.outcome),
            }
        }
        // Unpinned, the same state is the follow-up plan's approval.
        let a = assess(
            &snap(Some(ready()), Some(follow), Some(next.clone()), None),
            "olm/c",
            None,
        );
        assert!(matches!(a.outcome, Outcome::Approve { ref plan, .. } if plan == "install-next"));
        // A plan for another CSV while the pinned one is not there yet: never approved.
        let other = json!({"metadata": {"name": "p"}, "status": {"state": "UpgradePending",
            "currentCSV": "p.v1.1.0", "installPlanRef": {"name": "install-next"}}});
        let a = assess(
            &snap(Some(ready()), Some(other), Some(next), None),
            "olm/c",
            Some("p.v1.0.0"),
        );
        assert_eq!(
            a.outcome,
            Outcome::Wait(
                "InstallPlan install-next to install the pinned p.v1.0.0 (it installs p.v1.1.0)"
                    .into()
            )
        );
    }
}
