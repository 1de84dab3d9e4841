//! `olmctl list-operands PACKAGE` (kubectl-operator `list-operands`, `pkg/action/
//! operator_list_operands.go :: OperatorListOperands`): the custom resources of the CRDs an
//! installed operator's CSV owns, in the namespaces its OperatorGroup targets (and every
//! cluster-scoped one), sorted by apiVersion, kind, namespace and name.
//!
//! Upstream finds the CSV through OLM's `Operator` object (`<package>.<namespace>`,
//! `status.components.refs`); here it is the installed CSV of the namespace's Subscription to
//! the package, which is the CSV that `Operator` object lists for an install by Subscription.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::text;

/// Why the operands cannot be listed (upstream's messages, with what to do).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OperandsError {
    /// No Subscription to the package in the namespace (`findOperator`'s not found).
    NotFound {
        /// The package.
        package: String,
        /// The namespace.
        namespace: String,
    },
    /// The Subscription has no installed CSV.
    NoCsv {
        /// The package.
        package: String,
    },
    /// The CSV owns no CRD (`unzip`).
    NoOwnedCrds {
        /// `namespace/csv`.
        csv: String,
    },
    /// The CSV is not `Succeeded` (`unzip`).
    NotSucceeded {
        /// `namespace/csv`.
        csv: String,
        /// Its phase.
        phase: String,
    },
    /// Not exactly one OperatorGroup (`listAll`).
    OperatorGroups {
        /// How many.
        count: usize,
        /// The namespace.
        namespace: String,
    },
}

impl fmt::Display for OperandsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperandsError::NotFound { package, namespace } => write!(
                f,
                "package {package:?} not found in namespace {namespace:?} (no Subscription to it: pass --namespace)"
            ),
            OperandsError::NoCsv { package } => write!(
                f,
                "could not find underlying CSV for operator {package} (its Subscription has no installed CSV yet)"
            ),
            OperandsError::NoOwnedCrds { csv } => write!(
                f,
                "no owned CustomResourceDefinitions specified on CSV {csv}, no custom resources to display"
            ),
            OperandsError::NotSucceeded { csv, phase } => write!(
                f,
                "CSV {csv} underlying operator is not in a succeeded state ({phase}): custom resource list may not be accurate"
            ),
            OperandsError::OperatorGroups { count, namespace } => write!(
                f,
                "unexpected number ({count}) of operator groups found in namespace {namespace}"
            ),
        }
    }
}

impl std::error::Error for OperandsError {}

/// The installed CSV's name of the Subscription to `package` in the namespace.
pub fn installed_csv(
    subs: &[Value],
    package: &str,
    namespace: &str,
) -> Result<String, OperandsError> {
    let sub = subs
        .iter()
        .find(|s| text(s, "/spec/name") == package)
        .ok_or_else(|| OperandsError::NotFound {
            package: package.into(),
            namespace: namespace.into(),
        })?;
    match text(sub, "/status/installedCSV") {
        "" => Err(OperandsError::NoCsv {
            package: package.into(),
        }),
        c => Ok(c.into()),
    }
}

/// The owned CRDs of a CSV as (CRD name, version), checked as `unzip` checks them.
pub fn owned(csv: &Value) -> Result<Vec<(String, String)>, OperandsError> {
    let key = format!(
        "{}/{}",
        text(csv, "/metadata/namespace"),
        text(csv, "/metadata/name")
    );
    let owned: Vec<(String, String)> = csv
        .pointer("/spec/customresourcedefinitions/owned")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|d| {
            (
                text(d, "/name").to_string(),
                text(d, "/version").to_string(),
            )
        })
        .filter(|(n, _)| !n.is_empty())
        .collect();
    if owned.is_empty() {
        return Err(OperandsError::NoOwnedCrds { csv: key });
    }
    match text(csv, "/status/phase") {
        "Succeeded" => Ok(owned),
        phase => Err(OperandsError::NotSucceeded {
            csv: key,
            phase: if phase.is_empty() { "no phase" } else { phase }.into(),
        }),
    }
}

/// The resource to list for an owned CRD: group, the CSV's version, kind, plural (from the CRD
/// object: `spec.group`, `spec.names`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kind {
    /// `spec.group`.
    pub group: String,
    /// The version the CSV names.
    pub version: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
}

/// The [`Kind`] of a CRD object at `version`.
pub fn kind(crd: &Value, version: &str) -> Kind {
    Kind {
        group: text(crd, "/spec/group").into(),
        version: version.into(),
        kind: text(crd, "/spec/names/kind").into(),
        plural: text(crd, "/spec/names/plural").into(),
    }
}

/// The namespaces the namespace's only OperatorGroup targets (`status.namespaces`; `[""]` or
/// none: all).
pub fn target_namespaces(groups: &[Value], namespace: &str) -> Result<Vec<String>, OperandsError> {
    match groups {
        [og] => Ok(og
            .pointer("/status/namespaces")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()),
        _ => Err(OperandsError::OperatorGroups {
            count: groups.len(),
            namespace: namespace.into(),
        }),
    }
}

/// One operand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// The namespace (`""` for a cluster-scoped one).
    pub namespace: String,
    /// The name.
    pub name: String,
    /// `creationTimestamp`.
    pub created: String,
}

/// The objects within the target namespaces (`list` and `inNamespace`: cluster-scoped ones
/// always; all of them when there are no target namespaces or one is `""`), sorted as
/// `listAll` sorts them.
pub fn select(objects: Vec<Value>, namespaces: &[String]) -> Vec<Value> {
    let all = namespaces.is_empty() || namespaces.iter().any(String::is_empty);
    let mut out: Vec<Value> = objects
        .into_iter()
        .filter(|o| {
            let ns = text(o, "/metadata/namespace");
            all || ns.is_empty() || namespaces.iter().any(|n| n == ns)
        })
        .collect();
    let key = |o: &Value| {
        [
            "/apiVersion",
            "/kind",
            "/metadata/namespace",
            "/metadata/name",
        ]
        .map(|p| text(o, p).to_string())
    };
    out.sort_by_key(key);
    out
}

/// The table rows of selected objects.
pub fn rows(objects: &[Value]) -> Vec<Row> {
    objects
        .iter()
        .map(|o| Row {
            api_version: text(o, "/apiVersion").into(),
            kind: text(o, "/kind").into(),
            namespace: text(o, "/metadata/namespace").into(),
            name: text(o, "/metadata/name").into(),
            created: text(o, "/metadata/creationTimestamp").into(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(av: &str, kind: &str, ns: &str, name: &str) -> Value {
        json!({"apiVersion": av, "kind": kind, "metadata": {"namespace": ns, "name": name}})
    }

    #[test]
    fn operands_outside_the_target_namespaces_are_left_out_and_the_rest_sorted() {
        let objs = vec![
            obj("example.com/v1", "Widget", "b", "w2"),
            obj("example.com/v1", "Widget", "elsewhere", "w9"),
            obj("example.com/v1", "Gadget", "", "g1"),
            obj("example.com/v1", "Widget", "a", "w1"),
        ];
        let got = rows(&select(objs.clone(), &["a".into(), "b".into()]));
        let names: Vec<&str> = got.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["g1", "w1", "w2"]);
        assert_eq!(select(objs.clone(), &[]).len(), 4);
        assert_eq!(select(objs, &["".into()]).len(), 4);
    }

    #[test]
    fn a_csv_without_owned_crds_or_not_succeeded_is_refused() {
        let csv = json!({"metadata": {"name": "p.v1", "namespace": "ops"}, "spec": {},
                         "status": {"phase": "Succeeded"}});
        assert!(matches!(
            owned(&csv),
            Err(OperandsError::NoOwnedCrds { .. })
        ));
        let csv = json!({"metadata": {"name": "p.v1", "namespace": "ops"},
            "spec": {"customresourcedefinitions": {"owned": [{"name": "widgets.example.com", "version": "v1", "kind": "Widget"}]}},
            "status": {"phase": "Installing"}});
        assert_eq!(
            owned(&csv).unwrap_err().to_string(),
            "CSV ops/p.v1 underlying operator is not in a succeeded state (Installing): custom resource list may not be accurate"
        );
    }

    #[test]
    fn exactly_one_operator_group_is_expected() {
        let og = json!({"status": {"namespaces": ["a", "b"]}});
        assert_eq!(
            target_namespaces(std::slice::from_ref(&og), "ops").unwrap(),
            ["a", "b"]
        );
        assert!(target_namespaces(&[og.clone(), og], "ops").is_err());
    }
}
