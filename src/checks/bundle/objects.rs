//! Objects (OBJ codes), an optional suite: operator-framework/api's `ObjectValidator` (which
//! operator-sdk does not expose) on the bundle's PodDisruptionBudgets, PriorityClasses, Roles
//! and ClusterRoles: settings that block node drains, take over every pod's priority, or let an
//! operator weaken cluster-wide safety. Run with `--select objects` (or `name=objects`).
//!
//! Differences from upstream, all where upstream's own rule is more lenient than its intent:
//! - `maxUnavailable` is checked for the value `0` or `"0%"` (upstream flags every string
//!   value, e.g. `"50%"`, because a string IntOrString's integer part is 0);
//! - RBAC rules match `*` in apiGroups and resources too (upstream compares exact strings, so
//!   `apiGroups: ["*"], resources: ["*"], verbs: ["*"]` passes), and an SCC rule without
//!   `resourceNames` covers every SCC, the default ones included: a warning of its own (OBJ006;
//!   upstream reports only default names in `resourceNames`, OBJ005);
//! - the CSV's `permissions` and `clusterPermissions` are audited like Role and ClusterRole
//!   manifests (OLM creates Roles and ClusterRoles from them; upstream audits manifests only).

use std::path::Path;

use super::Ctx;
use super::practices::any_of;
use crate::bundle::load::{field, kind_of, list_at, str_at};
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::{Node, Value};

codes! {
    PDB_MAX_UNAVAILABLE = "OBJ001", Error, "A PodDisruptionBudget sets maxUnavailable to 0 or 0%: no pod may ever be evicted, so node drains block.";
    PDB_MIN_AVAILABLE = "OBJ002", Error, "A PodDisruptionBudget sets minAvailable to 100%: no pod may ever be evicted, so node drains block.";
    PRIORITY_GLOBAL_DEFAULT = "OBJ003", Error, "A PriorityClass sets globalDefault: true, so it applies to every pod of the cluster without a priority class.";
    RBAC_PDB = "OBJ004", Warning, "An RBAC rule grants create, update or patch on PodDisruptionBudgets, which could impact cluster stability.";
    RBAC_DEFAULT_SCC = "OBJ005", Error, "An RBAC rule grants delete, update or patch on OpenShift's default SecurityContextConstraints by name.";
    RBAC_ANY_SCC = "OBJ006", Warning, "An RBAC rule grants delete, update or patch on every SecurityContextConstraints (no resourceNames), OpenShift's default ones included.";
}

/// OpenShift's default SecurityContextConstraints (as of 4.5, the list upstream uses).
pub const DEFAULT_SCCS: [&str; 8] = [
    "privileged",
    "restricted",
    "anyuid",
    "hostaccess",
    "hostmount-anyuid",
    "hostnetwork",
    "node-exporter",
    "nonroot",
];

pub(super) fn check(cx: &mut Ctx<'_>) {
    let bundle = cx.bundle;
    for (file, doc) in bundle.first_docs() {
        let name = str_at(doc, &["metadata", "name"]).unwrap_or("");
        match kind_of(doc) {
            Some("PodDisruptionBudget") => pdb(cx, file, doc, name),
            Some("PriorityClass") => {
                if let Some(g) = field(doc, &["globalDefault"])
                    && matches!(g.value, Value::Bool(true))
                {
                    cx.push(
                        &PRIORITY_GLOBAL_DEFAULT,
                        format!("PriorityClass {name}: globalDefault field cannot be set to true"),
                        file,
                        g.pos,
                        Some("globalDefault"),
                    )
                    .help = Some("set globalDefault: false and reference the class from the operator's pods (priorityClassName)".into());
                }
            }
            Some(kind @ ("Role" | "ClusterRole")) => {
                for (r, rule) in list_at(doc, &["rules"]).iter().enumerate() {
                    audit(
                        cx,
                        file,
                        rule,
                        &format!("{kind} {name}"),
                        &format!("rules[{r}]"),
                    );
                }
            }
            _ => {}
        }
    }
    if let Some((file, csv)) = bundle.csv() {
        for r in super::practices::csv_rules(csv) {
            let who = format!(
                "the CSV's {} of service account {:?}",
                r.section, r.service_account
            );
            audit(cx, file, r.rule, &who, &r.path);
        }
    }
}

fn pdb(cx: &mut Ctx<'_>, file: &Path, doc: &Node, name: &str) {
    if let Some(m) = field(doc, &["spec", "maxUnavailable"]) {
        let zero = match &m.value {
            Value::Number(n) => *n == 0.0,
            Value::Str(s) => s.trim() == "0%" || s.trim() == "0",
            _ => false,
        };
        if zero {
            cx.push(
                &PDB_MAX_UNAVAILABLE,
                format!("PodDisruptionBudget {name}: maxUnavailable field cannot be set to 0 or 0%"),
                file,
                m.pos,
                Some("spec.maxUnavailable"),
            )
            .help = Some("allow at least one disruption (maxUnavailable: 1), or run more replicas and use minAvailable below 100%".into());
        }
    }
    if let Some(m) = field(doc, &["spec", "minAvailable"])
        && m.as_str().is_some_and(|s| s.trim() == "100%")
    {
        cx.push(
            &PDB_MIN_AVAILABLE,
            format!("PodDisruptionBudget {name}: minAvailable field cannot be set to 100%"),
            file,
            m.pos,
            Some("spec.minAvailable"),
        )
        .help = Some("use a lower minAvailable, or maxUnavailable: 1".into());
    }
}

/// One RBAC rule: PodDisruptionBudget writes (warning) and default SCC changes (error).
fn audit(cx: &mut Ctx<'_>, file: &Path, rule: &Node, who: &str, path: &str) {
    if any_of(rule, "apiGroups", &["policy", "*"])
        && any_of(rule, "resources", &["poddisruptionbudgets", "*"])
        && any_of(rule, "verbs", &["create", "update", "patch", "*"])
    {
        cx.push(
            &RBAC_PDB,
            format!("{who}: RBAC includes permission to create/update poddisruptionbudgets, which could impact cluster stability"),
            file,
            rule.pos,
            Some(path),
        )
        .help = Some("ship the PodDisruptionBudget in the bundle (OLM creates it) instead of letting the operator write PDBs".into());
    }
    let names = list_at(rule, &["resourceNames"]);
    let defaults: Vec<&str> = names
        .iter()
        .filter_map(Node::as_str)
        .filter(|n| DEFAULT_SCCS.contains(n))
        .collect();
    let writes_sccs = any_of(rule, "apiGroups", &["security.openshift.io", "*"])
        && any_of(rule, "resources", &["securitycontextconstraints", "*"])
        && any_of(rule, "verbs", &["delete", "update", "patch", "*"]);
    if writes_sccs && !defaults.is_empty() {
        cx.push(
            &RBAC_DEFAULT_SCC,
            format!("{who}: RBAC includes permission to modify default securitycontextconstraints, which could impact cluster stability ({})", defaults.join(", ")),
            file,
            rule.pos,
            Some(path),
        )
        .help = Some("create an SCC of your own and grant `use` on it; never change the defaults".into());
    } else if writes_sccs && names.is_empty() {
        cx.push(
            &RBAC_ANY_SCC,
            format!("{who}: RBAC lets it modify every SecurityContextConstraints (no resourceNames), OpenShift's default ones included"),
            file,
            rule.pos,
            Some(path),
        )
        .help = Some("restrict update, patch and delete to the operator's own SCCs with resourceNames (create needs a rule of its own, without resourceNames)".into());
    }
}
