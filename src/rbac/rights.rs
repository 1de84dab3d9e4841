//! Rights one by one: each granted rule broken down (as `BreakdownRule` does) into one verb on
//! one resource (and name) for one subject in one scope, so that two bundles' rights compare
//! whatever their roles are called (OLM v1's role names change with their rules), and grouped
//! back into lines for people.

use std::collections::BTreeSet;

use serde::Serialize;

use super::grants::{Grant, Granted, Scope, Subject};
use super::rule::{breakdown, breakdown_len};

/// One verb on one resource (or non-resource URL) for one subject in one scope.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Right {
    /// Who.
    pub subject: Subject,
    /// Where.
    pub scope: Scope,
    /// The API group (empty for a non-resource URL).
    pub group: String,
    /// The resource, or the non-resource URL.
    pub resource: String,
    /// The resource name (empty: every name).
    pub name: String,
    /// The verb.
    pub verb: String,
}

/// Rights one bundle's grants may break down into at most ([`of`]): 70 times the 1,430 of
/// the largest of the fixture bundles (opendatahub-operator 3.4.0-ea.2), while one crafted
/// rule of 100 groups, resources and names and 10 verbs is ten million. Past it, what lists
/// every right (`bundle permissions -o json`, `--diff`) is refused, naming the rule.
pub const MAX_RIGHTS: u64 = 100_000;

/// The grants break down into more than [`MAX_RIGHTS`] rights.
#[derive(Debug, Clone)]
pub struct TooMany {
    /// The grant that went past the bound.
    pub grant: Grant,
    /// The rights of that grant's rule alone.
    pub rights: u64,
    /// The rights of the grants before it.
    pub before: u64,
}

impl std::fmt::Display for TooMany {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.grant.rule;
        let at = match &self.grant.origin {
            Some(o) if o.path.is_empty() => format!("{}:{}: ", o.file.display(), o.pos.line),
            Some(o) => format!("{}:{}: {}: ", o.file.display(), o.pos.line, o.path),
            None => String::new(),
        };
        let rule = r.compact_cut(160);
        write!(
            f,
            "{at}the rule {} of {} grants {} rights ({} apiGroups x {} resources x {} verbs x {} resourceNames{}){}: more than the {MAX_RIGHTS} olmctl lists one by one",
            crate::text::esc(rule),
            crate::text::esc(&self.grant.binding),
            self.rights,
            r.api_groups.len(),
            r.resources.len(),
            r.verbs.len(),
            r.resource_names.len().max(1),
            if r.non_resource_urls.is_empty() {
                String::new()
            } else {
                format!(
                    ", + {} nonResourceURLs x {} verbs",
                    r.non_resource_urls.len(),
                    r.verbs.len()
                )
            },
            if self.before == 0 {
                String::new()
            } else {
                format!(
                    ", {} with the rules before it",
                    self.before.saturating_add(self.rights)
                )
            },
        )
    }
}

/// The rights of one grant (bounded by its caller: [`of`]).
pub fn of_grant(g: &Grant) -> Vec<Right> {
    breakdown(&g.rule)
        .into_iter()
        .map(|r| Right {
            subject: g.subject.clone(),
            scope: g.scope.clone(),
            group: r.api_groups.first().cloned().unwrap_or_default(),
            resource: r
                .resources
                .first()
                .or(r.non_resource_urls.first())
                .cloned()
                .unwrap_or_default(),
            name: r.resource_names.first().cloned().unwrap_or_default(),
            verb: r.verbs.first().cloned().unwrap_or_default(),
        })
        .collect()
}

/// Every right `granted` gives; refused past [`MAX_RIGHTS`] before any is made.
pub fn of(granted: &Granted) -> Result<BTreeSet<Right>, Box<TooMany>> {
    let mut total: u64 = 0;
    for g in &granted.grants {
        let n = breakdown_len(&g.rule);
        if total.saturating_add(n) > MAX_RIGHTS {
            return Err(Box::new(TooMany {
                grant: g.clone(),
                rights: n,
                before: total,
            }));
        }
        total += n;
    }
    Ok(granted.grants.iter().flat_map(of_grant).collect())
}

/// Rights grouped for reading: one subject, scope, group, resource and name, with its verbs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Line {
    /// Who.
    pub subject: Subject,
    /// Where (`cluster` or `namespace`).
    #[serde(flatten)]
    pub scope: Scope,
    /// The API group.
    pub api_group: String,
    /// The resource or non-resource URL.
    pub resource: String,
    /// The resource name, if the right is limited to one.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_name: String,
    /// The verbs, sorted.
    pub verbs: Vec<String>,
}

impl Line {
    /// `apps deployments [name]: get, list` (the core group is written `core`).
    pub fn describe(&self) -> String {
        let group = if self.api_group.is_empty() && !self.resource.starts_with('/') {
            "core"
        } else {
            &self.api_group
        };
        let mut s = if group.is_empty() {
            self.resource.clone()
        } else {
            format!("{group} {}", self.resource)
        };
        if !self.resource_name.is_empty() {
            s.push_str(&format!(" [{}]", self.resource_name));
        }
        format!("{s}: {}", self.verbs.join(", "))
    }
}

/// `rights` grouped into lines, in (subject, scope, group, resource, name) order.
pub fn lines<'a>(rights: impl IntoIterator<Item = &'a Right>) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    for r in rights {
        if let Some(last) = out.last_mut()
            && last.subject == r.subject
            && last.scope == r.scope
            && last.api_group == r.group
            && last.resource == r.resource
            && last.resource_name == r.name
        {
            if !last.verbs.contains(&r.verb) {
                last.verbs.push(r.verb.clone());
                last.verbs.sort();
            }
            continue;
        }
        out.push(Line {
            subject: r.subject.clone(),
            scope: r.scope.clone(),
            api_group: r.group.clone(),
            resource: r.resource.clone(),
            resource_name: r.name.clone(),
            verbs: vec![r.verb.clone()],
        });
    }
    out
}

/// What an upgrade from `old` to `new` adds and removes.
#[derive(Debug, Clone, Default)]
pub struct Diff {
    /// Rights `new` gives that `old` did not.
    pub added: BTreeSet<Right>,
    /// Rights `old` gave that `new` does not.
    pub removed: BTreeSet<Right>,
}

/// The rights `new` adds to and removes from `old`.
pub fn diff(old: &BTreeSet<Right>, new: &BTreeSet<Right>) -> Diff {
    Diff {
        added: new.difference(old).cloned().collect(),
        removed: old.difference(new).cloned().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::grants::RoleRef;
    use crate::rbac::rule::Rule;

    fn grant(rule: Rule, scope: Scope) -> Grant {
        Grant {
            subject: Subject {
                kind: "ServiceAccount".into(),
                name: "op".into(),
                namespace: "ns".into(),
            },
            scope,
            rule,
            role: RoleRef {
                kind: "ClusterRole".into(),
                name: "r".into(),
                namespace: String::new(),
            },
            binding: "ClusterRoleBinding r".into(),
            origin: None,
        }
    }

    #[test]
    fn rights_compare_whatever_the_roles_are_called() {
        let old = Granted {
            grants: vec![grant(
                Rule::resource(&[""], &["configmaps", "secrets"], &["get", "list"]),
                Scope::Cluster,
            )],
            ..Granted::default()
        };
        let mut renamed = grant(
            Rule::resource(&[""], &["configmaps"], &["get", "list", "watch"]),
            Scope::Cluster,
        );
        renamed.role.name = "other".into();
        let new = Granted {
            grants: vec![renamed],
            ..Granted::default()
        };
        let d = diff(&of(&old).unwrap(), &of(&new).unwrap());
        let added: Vec<String> = lines(&d.added).iter().map(Line::describe).collect();
        let removed: Vec<String> = lines(&d.removed).iter().map(Line::describe).collect();
        assert_eq!(added, ["core configmaps: watch"]);
        assert_eq!(removed, ["core secrets: get, list"]);
    }
}
