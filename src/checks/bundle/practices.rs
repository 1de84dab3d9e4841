//! Good practices (GP codes): operator-framework/api's `GoodPracticesValidator`, without its
//! holes. Every code is a warning: OLM installs such bundles, they are just harder to run well.
//!
//! Differences from upstream:
//! - resource requests are checked per key (upstream passes a container that requests only one
//!   of cpu and memory) and for init containers too; a limit counts as the request, because
//!   Kubernetes defaults a missing request to the limit;
//! - CRD-creating permissions include rules on every API group (`*`), and leave out rules
//!   restricted by `resourceNames` (those cannot create, and patch only the named CRDs, usually
//!   the operator's own, e.g. to inject a conversion CA bundle);
//! - the CSV name is taken apart at the last `.v`, so `my.vault.v1.0.0` is fine; names that do
//!   not contain `spec.version` are left to CSV018, and release naming (`spec.release` set) to
//!   BND011.

use std::collections::BTreeSet;
use std::path::Path;

use super::Ctx;
use crate::bundle::load::{field, keys, list_at, pos_at, str_at};
use crate::diag::Severity::Warning;
use crate::fbc::node::{Node, Value};

codes! {
    RESOURCE_REQUESTS = "GP001", Warning, "A container or init container of a CSV deployment does not request cpu and memory.";
    CRD_DESCRIPTION = "GP002", Warning, "An owned or required CRD of the CSV has no description.";
    CHANNEL_NAMING = "GP003", Warning, "A channel name does not start with candidate, stable or fast (the channel-naming convention).";
    CRD_PERMISSIONS = "GP004", Warning, "The CSV's permissions let the operator create or patch CustomResourceDefinitions.";
    NAME_VERSION = "GP005", Warning, "The CSV name's version part (after the last `.v`) is not a semantic version.";
    NAME_CONVENTION = "GP006", Warning, "The CSV name is not <operator-name>.v<semver>.";
}

const CHANNEL_PREFIXES: [&str; 3] = ["candidate", "stable", "fast"];

pub(super) fn check(cx: &mut Ctx<'_>) {
    channels(cx);
    let Some((file, csv)) = cx.bundle.csv() else {
        return;
    };
    let file: &Path = file;
    resource_requests(cx, file, csv);
    crd_descriptions(cx, file, csv);
    crd_permissions(cx, file, csv);
    name(cx, file, csv);
}

/// Whether a quantity is given (a non-empty string or a number).
fn has_quantity(n: Option<&Node>) -> bool {
    match n.map(|n| &n.value) {
        Some(Value::Str(s)) => !s.trim().is_empty(),
        Some(Value::Number(_)) => true,
        _ => false,
    }
}

fn resource_requests(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    for (d, dep) in list_at(csv, &["spec", "install", "spec", "deployments"])
        .iter()
        .enumerate()
    {
        let dname = str_at(dep, &["name"]).unwrap_or("");
        for list in ["initContainers", "containers"] {
            let containers = list_at(dep, &["spec", "template", "spec", list]);
            for (i, c) in containers.iter().enumerate() {
                let cname = str_at(c, &["name"]).unwrap_or("");
                let missing: Vec<&str> = ["cpu", "memory"]
                    .into_iter()
                    .filter(|k| {
                        !has_quantity(field(c, &["resources", "requests", k]))
                            && !has_quantity(field(c, &["resources", "limits", k]))
                    })
                    .collect();
                if missing.is_empty() {
                    continue;
                }
                let what = if list == "containers" {
                    "container"
                } else {
                    "init container"
                };
                let base =
                    format!("spec.install.spec.deployments[{d}].spec.template.spec.{list}[{i}]");
                let (path, pos) = match field(c, &["resources", "requests"]) {
                    Some(r) => (format!("{base}.resources.requests"), r.pos),
                    None => match field(c, &["resources"]) {
                        Some(r) => (format!("{base}.resources"), r.pos),
                        None => (base, c.pos),
                    },
                };
                cx.push(
                    &RESOURCE_REQUESTS,
                    format!(
                        "{what} {cname:?} of deployment {dname:?} requests no {}; some clusters or quotas reject pods without requests",
                        missing.join(" and no ")
                    ),
                    file,
                    pos,
                    Some(&path),
                )
                .help = Some(format!(
                    "set resources.requests.{} (see https://sdk.operatorframework.io/docs/best-practices/managing-resources/)",
                    missing.join(" and resources.requests.")
                ));
            }
        }
    }
}

fn crd_descriptions(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    for section in ["owned", "required"] {
        for (i, d) in list_at(csv, &["spec", "customresourcedefinitions", section])
            .iter()
            .enumerate()
        {
            if str_at(d, &["description"]).is_some_and(|s| !s.trim().is_empty()) {
                continue;
            }
            let n = str_at(d, &["name"]).unwrap_or("");
            cx.push(
                &CRD_DESCRIPTION,
                format!("{section} CRD {n:?} has an empty description"),
                file,
                d.pos,
                Some(&format!(
                    "spec.customresourcedefinitions.{section}[{i}].description"
                )),
            )
            .help = Some(
                "say in one sentence what the resource is for; OperatorHub and the console show it"
                    .into(),
            );
        }
    }
}

fn channels(cx: &mut Ctx<'_>) {
    let Some(a) = cx.bundle.annotations.as_ref() else {
        return;
    };
    let file = a.path.clone();
    let bad = |c: &str| !c.is_empty() && !CHANNEL_PREFIXES.iter().any(|p| c.starts_with(p));
    let mut reported = BTreeSet::new();
    for key in [keys::CHANNELS, keys::DEFAULT_CHANNEL] {
        let Some(value) = cx.bundle.annotation(key) else {
            continue;
        };
        let names: Vec<&str> = value
            .split(',')
            .map(str::trim)
            .filter(|c| bad(c) && !reported.contains(*c))
            .collect();
        if names.is_empty() {
            continue;
        }
        reported.extend(names.iter().map(|c| c.to_string()));
        let pos = pos_at(&a.node, &[key]);
        let quoted: Vec<String> = names.iter().map(|c| format!("{c:?}")).collect();
        cx.push(
            &CHANNEL_NAMING,
            format!(
                "channel(s) [{}] are not following the recommended naming convention (candidate*, stable*, fast*)",
                quoted.join(" ")
            ),
            &file,
            pos,
            Some(&format!("annotations[{key:?}]")),
        )
        .help = Some(
            "name channels by stability, e.g. stable or stable-v1 (https://olm.operatorframework.io/docs/best-practices/channel-naming)"
                .into(),
        );
    }
}

/// Whether a list of strings (the node at `path` of `rule`) contains one of `wanted`.
pub(super) fn any_of(rule: &Node, key: &str, wanted: &[&str]) -> bool {
    list_at(rule, &[key])
        .iter()
        .filter_map(Node::as_str)
        .any(|s| wanted.contains(&s))
}

/// One rule of the CSV's install permissions: its section (`permissions` or
/// `clusterPermissions`), service account, JSON path and the rule.
pub(super) struct CsvRule<'a> {
    pub section: &'static str,
    /// The entry's index in its section.
    pub index: usize,
    pub service_account: &'a str,
    pub path: String,
    pub rule: &'a Node,
}

/// Every rule of the CSV's `permissions` and `clusterPermissions`, in order.
pub(super) fn csv_rules(csv: &Node) -> Vec<CsvRule<'_>> {
    let mut out = Vec::new();
    for section in ["permissions", "clusterPermissions"] {
        for (p, perm) in list_at(csv, &["spec", "install", "spec", section])
            .iter()
            .enumerate()
        {
            let sa = str_at(perm, &["serviceAccountName"]).unwrap_or("");
            for (r, rule) in list_at(perm, &["rules"]).iter().enumerate() {
                out.push(CsvRule {
                    section,
                    index: p,
                    service_account: sa,
                    path: format!("spec.install.spec.{section}[{p}].rules[{r}]"),
                    rule,
                });
            }
        }
    }
    out
}

fn crd_permissions(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    for r in csv_rules(csv) {
        let rule = r.rule;
        let grants = any_of(rule, "apiGroups", &["apiextensions.k8s.io", "*"])
            && any_of(rule, "resources", &["customresourcedefinitions", "*"])
            && any_of(rule, "verbs", &["create", "patch", "*"])
            && list_at(rule, &["resourceNames"]).is_empty();
        if !grants {
            continue;
        }
        cx.push(
            &CRD_PERMISSIONS,
            format!(
                "{}[{}] lets service account {:?} create or patch CustomResourceDefinitions; an operator should not deploy or manage other operators' APIs",
                r.section, r.index, r.service_account
            ),
            file,
            rule.pos,
            Some(&r.path),
        )
        .help = Some("ship CRDs in the bundle and let OLM manage them; use OLM dependencies for other operators' APIs, and narrow the rule (resourceNames, or no create/patch)".into());
    }
}

fn name(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let Some(n) = str_at(csv, &["metadata", "name"]).filter(|n| !n.is_empty()) else {
        return; // CSV010
    };
    if str_at(csv, &["spec", "release"]).is_some_and(|r| !r.is_empty()) {
        return; // release naming, checked by BND011
    }
    if let Some(v) = str_at(csv, &["spec", "version"])
        && semver::Version::parse(v).is_ok()
        && !n.contains(v)
    {
        return; // CSV018
    }
    let pos = pos_at(csv, &["metadata", "name"]);
    let split = n
        .rsplit_once(".v")
        .filter(|(_, ver)| ver.starts_with(|c: char| c.is_ascii_digit()));
    match split {
        None => {
            cx.push(
                &NAME_CONVENTION,
                format!("csv.metadata.Name {n} is not following the recommended naming convention: <operator-name>.v<semver> e.g. memcached-operator.v0.0.1"),
                file,
                pos,
                Some("metadata.name"),
            )
            .help = Some("name the CSV <operator-name>.v<spec.version>".into());
        }
        Some((op, ver)) => {
            if op.is_empty() {
                cx.push(
                    &NAME_CONVENTION,
                    format!("csv.metadata.Name {n} has no operator name before `.v`"),
                    file,
                    pos,
                    Some("metadata.name"),
                )
                .help = Some("name the CSV <operator-name>.v<spec.version>".into());
            } else if let Err(e) = semver::Version::parse(ver) {
                cx.push(
                    &NAME_VERSION,
                    format!("csv.metadata.Name {n} is not following the versioning convention (MAJOR.MINOR.PATCH e.g 0.0.1): {ver:?} is not a semantic version ({e})"),
                    file,
                    pos,
                    Some("metadata.name"),
                )
                .help = Some("end the name with .v<spec.version>, e.g. memcached-operator.v0.0.1 (https://semver.org/)".into());
            }
        }
    }
}
