//! CRD version deprecation and compatibility across upgrade edges and along paths (CRV codes),
//! plus the per-version-pair schema comparison (SCH codes, see [`super::schema`]).
//!
//! Path facts are carried by [`History`]: the versions any bundle on some path to the old
//! bundle used as storage version (the cluster's `status.storedVersions` can hold every one of
//! them, because removing entries is a manual migration), and the versions every path marked
//! `deprecated`.

use std::collections::{BTreeMap, BTreeSet};

use super::facts::Facts;
use super::policy::Policy;
use super::schema::{self, Change};
use crate::bundle::crd::{Crd, compare_version_priority};
use crate::diag::Code;
use crate::diag::Severity::{Error, Warning};
use crate::diag::{Finding, Location};
use crate::fbc::node::{Node, Pos, Value};

codes! {
    STORED_VERSION_REMOVED = "CRV001", Error, "A CRD version that a bundle on the upgrade path used as storage version is missing from the new CRD's spec.versions: OLM v0 refuses the upgrade (\"risk of data loss\"), OLM v1's preflight fails, the API server rejects the CRD.";
    SERVED_REMOVED_UNDEPRECATED = "CRV002", Error, "A served CRD version stops being served (removed or served: false) without a bundle on the path having marked it deprecated: clients of that version break without warning.";
    WARNING_NOT_DEPRECATED = "CRV003", Error, "A CRD version sets deprecationWarning without deprecated: true (the API server rejects the CRD).";
    STORAGE_COUNT = "CRV004", Error, "A CRD does not have exactly one storage version (the API server rejects it).";
    STORAGE_SWITCH_NO_WEBHOOK = "CRV005", Error, "The storage version changes to one with a different schema and no conversion webhook: stored objects are read with only apiVersion rewritten (fields pruned or misread).";
    SERVED_SCHEMAS_NO_WEBHOOK = "CRV006", Error, "Several served versions have different schemas and no conversion webhook: the API server converts by rewriting apiVersion only.";
    WEBHOOK_NOT_DECLARED = "CRV007", Error, "A CRD uses Webhook conversion but the CSV declares no ConversionWebhook listing it in conversionCRDs: OLM does not wire the webhook.";
    WEBHOOK_INSTALL_MODES = "CRV008", Error, "The CSV has a conversion webhook but does not support only the AllNamespaces install mode, which OLM requires for conversion webhooks.";
    IMMUTABLE_CHANGED = "CRV009", Error, "A CRD's scope or kind changed across an upgrade (the API server refuses once the CRD is established); a warning when singular or listKind changed (clients break).";
    CRD_DROPPED = "CRV010", Warning, "A CRD owned by the old bundle is not in the new one: OLM leaves it on the cluster, with its objects, and nothing reconciles them.";
}

/// What users arriving at a bundle may have on their cluster, per CRD name.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct History {
    /// CRD → version → a bundle that used it as storage version (may be in storedVersions).
    pub stored: BTreeMap<String, BTreeMap<String, String>>,
    /// CRD → versions that every path to the bundle marked deprecated.
    pub deprecated: BTreeMap<String, BTreeSet<String>>,
}

impl History {
    /// The history of a user who installed `f` and nothing before it.
    pub fn own(f: &Facts<'_>) -> History {
        let mut h = History::default();
        for c in &f.crds {
            for v in c.storage() {
                h.stored
                    .entry(c.name.to_string())
                    .or_default()
                    .insert(v.name.to_string(), f.name.clone());
            }
            let dep: BTreeSet<String> = c
                .versions
                .iter()
                .filter(|v| v.deprecated)
                .map(|v| v.name.to_string())
                .collect();
            if !dep.is_empty() {
                h.deprecated.insert(c.name.to_string(), dep);
            }
        }
        h
    }

    /// Adds the stored versions of a predecessor (`other`'s `stored`), returning whether any was
    /// new.
    pub fn union_stored(&mut self, other: &BTreeMap<String, BTreeMap<String, String>>) -> bool {
        let mut changed = false;
        for (crd, vs) in other {
            let mine = self.stored.entry(crd.clone()).or_default();
            for (v, origin) in vs {
                if !mine.contains_key(v) {
                    mine.insert(v.clone(), origin.clone());
                    changed = true;
                }
            }
        }
        changed
    }
}

/// Whether `c` is converted by a webhook once installed: its own strategy, or OLM's rewrite for
/// a CRD listed by a ConversionWebhook of the CSV.
fn webhook(f: &Facts<'_>, c: &Crd<'_>) -> bool {
    c.webhook_conversion() || f.conversion_crds.contains(&c.name)
}

fn loc(c: &Crd<'_>, pos: Pos) -> Option<Location> {
    Some(Location::new(c.file.clone(), pos.line, pos.col))
}

fn hit(code: &'static Code, f: &Facts<'_>, c: &Crd<'_>, pos: Pos, msg: String) -> Finding {
    Finding::new(code, msg).at(loc(c, pos)).about(f.subject())
}

/// A schema with the `description` of every schema node removed, as canonical JSON (for "same
/// schema" tests). Only schema nodes lose it: a property *named* `description` (a key of
/// `properties`) and values (`enum`, `default`, `example`, CEL rules) are kept as they are.
pub fn schema_key(n: Option<&Node>) -> String {
    use crate::fbc::node::Entry;
    /// Keys whose value is a schema or a list of schemas, or a map of name to schema.
    const SCHEMAS: [&str; 6] = [
        "items",
        "additionalProperties",
        "not",
        "allOf",
        "anyOf",
        "oneOf",
    ];
    const MAP: [&str; 3] = ["properties", "patternProperties", "definitions"];
    fn schema(n: &Node, depth: usize) -> Node {
        let Value::Map(m) = &n.value else {
            return n.clone();
        };
        if depth > 256 {
            return n.clone();
        }
        let entries = m
            .iter()
            .filter(|e| e.key != "description")
            .map(|e| {
                let k = e.key.as_str();
                let value = if SCHEMAS.contains(&k) {
                    match &e.value.value {
                        Value::Seq(s) => Node::new(
                            e.value.pos,
                            Value::Seq(s.iter().map(|x| schema(x, depth + 1)).collect()),
                        ),
                        _ => schema(&e.value, depth + 1),
                    }
                } else if MAP.contains(&k) {
                    match &e.value.value {
                        Value::Map(props) => Node::new(
                            e.value.pos,
                            Value::Map(
                                props
                                    .iter()
                                    .map(|p| Entry {
                                        key: p.key.clone(),
                                        key_pos: p.key_pos,
                                        value: schema(&p.value, depth + 1),
                                    })
                                    .collect(),
                            ),
                        ),
                        _ => e.value.clone(),
                    }
                } else {
                    e.value.clone()
                };
                Entry {
                    key: e.key.clone(),
                    key_pos: e.key_pos,
                    value,
                }
            })
            .collect();
        Node::new(n.pos, Value::Map(entries))
    }
    n.map_or_else(String::new, |n| schema(n, 0).to_json())
}

/// Checks the CRD rules of one bundle.
pub fn bundle(f: &Facts<'_>, out: &mut Vec<Finding>) {
    for c in &f.crds {
        for v in &c.versions {
            if let Some((_, pos)) = v.deprecation_warning
                && !v.deprecated
            {
                out.push(
                    hit(
                        &WARNING_NOT_DEPRECATED,
                        f,
                        c,
                        pos,
                        format!(
                            "{} {}: deprecationWarning can only be set for deprecated versions",
                            c.name, v.name
                        ),
                    )
                    .help("set deprecated: true on the version, or drop deprecationWarning"),
                );
            }
        }
        let storage: Vec<&str> = c.storage().map(|v| v.name).collect();
        if !c.versions.is_empty() && storage.len() != 1 {
            out.push(
                hit(
                    &STORAGE_COUNT,
                    f,
                    c,
                    c.pos(),
                    format!(
                        "{}: must have exactly one version marked as storage version, has {} ({})",
                        c.name,
                        storage.len(),
                        storage.join(", ")
                    ),
                )
                .help("mark exactly one version storage: true"),
            );
        }
        if c.webhook_conversion() && !f.conversion_crds.contains(&c.name) {
            let pos = crate::bundle::load::pos_at(c.doc, &["spec", "conversion", "strategy"]);
            out.push(
                hit(&WEBHOOK_NOT_DECLARED, f, c, pos, format!("{} uses Webhook conversion, but no ConversionWebhook of the CSV lists it in conversionCRDs", c.name))
                    .help("add a webhookdefinitions entry of type ConversionWebhook with this CRD in conversionCRDs; OLM points the CRD at that webhook and injects its CA"),
            );
        }
    }
    if !f.conversion_crds.is_empty() {
        let others: Vec<&str> = f
            .install_modes
            .iter()
            .copied()
            .filter(|m| *m != "AllNamespaces")
            .collect();
        if !f.install_modes.contains(&"AllNamespaces") || !others.is_empty() {
            let pos = f.csv.map_or(Pos::default(), |(_, d)| {
                crate::bundle::load::pos_at(d, &["spec", "installModes"])
            });
            out.push(
                Finding::new(&WEBHOOK_INSTALL_MODES, format!("the CSV has conversion webhooks but supports install modes {:?}: OLM requires AllNamespaces only", f.install_modes))
                    .at(Some(f.csv_loc(pos)))
                    .about(f.subject())
                    .help("a conversion webhook serves the whole cluster: support only AllNamespaces"),
            );
        }
    }
}

/// The served versions of `c` whose schema differs from the first served one's, when the CRD
/// converts with strategy None: `(first, other, where other is written)`.
fn served_mismatches<'a>(f: &Facts<'a>, c: &Crd<'a>) -> Vec<(&'a str, &'a str, Pos)> {
    if webhook(f, c) {
        return Vec::new();
    }
    let served: Vec<_> = c.served().filter(|v| v.schema.is_some()).collect();
    let Some(first) = served.first() else {
        return Vec::new();
    };
    let key = schema_key(first.schema);
    served[1..]
        .iter()
        .filter(|v| schema_key(v.schema) != key)
        .map(|v| (first.name, v.name, v.pos))
        .collect()
}

/// Whether `f`'s CRD `crd` serves `a` and `b` with different schemas under strategy None.
fn had_mismatch(f: &Facts<'_>, crd: &str, a: &str, b: &str) -> bool {
    let Some(c) = f.crd(crd) else {
        return false;
    };
    if webhook(f, c) {
        return false;
    }
    let schema = |n: &str| {
        c.version(n)
            .filter(|v| v.served && v.schema.is_some())
            .map(|v| schema_key(v.schema))
    };
    matches!((schema(a), schema(b)), (Some(x), Some(y)) if x != y)
}

/// CRV006, ratcheted: served versions with different schemas and no conversion webhook, unless
/// every bundle users come from (`before`; none for a bundle checked on its own) already served
/// the same two versions that way. A problem the cluster already has is not the upgrade's.
pub fn served_schemas(f: &Facts<'_>, before: &[&Facts<'_>], out: &mut Vec<Finding>) {
    for c in &f.crds {
        for (first, other, pos) in served_mismatches(f, c) {
            if !before.is_empty() && before.iter().all(|o| had_mismatch(o, c.name, first, other)) {
                continue;
            }
            out.push(
                hit(&SERVED_SCHEMAS_NO_WEBHOOK, f, c, pos, format!("{}: served versions {first} and {other} have different schemas, and conversion is None", c.name))
                    .help("with strategy None the API server only rewrites apiVersion: add a conversion webhook (webhookdefinitions type ConversionWebhook), or make the schemas equal"),
            );
        }
    }
}

/// Checks the edge `old -> new` for users whose path to `old` is summarised by `hist`.
pub fn edge(
    old: &Facts<'_>,
    new: &Facts<'_>,
    hist: &History,
    policy: &Policy,
    out: &mut Vec<Finding>,
) {
    for oc in &old.crds {
        let Some(nc) = new.crd(oc.name) else {
            out.push(
                Finding::new(&CRD_DROPPED, format!("CRD {} is not in the new bundle", oc.name))
                    .at(Some(new.csv_loc(Pos::default())))
                    .about(new.subject())
                    .help("keep shipping the CRD while objects of it may exist, or document how users migrate them"),
            );
            continue;
        };
        stored(oc, nc, new, hist, out);
        served(oc, nc, new, hist, out);
        storage_switch(oc, new, nc, out);
        immutable(oc, nc, new, out);
        schemas(oc, nc, new, policy, out);
    }
}

fn stored(oc: &Crd<'_>, nc: &Crd<'_>, new: &Facts<'_>, hist: &History, out: &mut Vec<Finding>) {
    let Some(vs) = hist.stored.get(oc.name) else {
        return;
    };
    for (v, origin) in vs {
        if nc.version(v).is_none() {
            let pos = crate::bundle::load::pos_at(nc.doc, &["spec", "versions"]);
            out.push(
                hit(&STORED_VERSION_REMOVED, new, nc, pos, format!("risk of data loss updating {:?}: new CRD removes version {v} that is listed as a stored version on the existing CRD (storage version in {origin})", nc.name))
                    .help(format!("keep {v} in spec.versions (served: false is fine) until a storage migration has rewritten every object and removed {v} from status.storedVersions")),
            );
        }
    }
}

fn served(oc: &Crd<'_>, nc: &Crd<'_>, new: &Facts<'_>, hist: &History, out: &mut Vec<Finding>) {
    let deprecated = hist.deprecated.get(oc.name);
    for v in oc.served() {
        let still = nc.version(v.name).is_some_and(|x| x.served);
        if still || deprecated.is_some_and(|d| d.contains(v.name)) {
            continue;
        }
        let (what, pos) = match nc.version(v.name) {
            Some(x) => ("sets served: false on", x.pos),
            None => (
                "removes",
                crate::bundle::load::pos_at(nc.doc, &["spec", "versions"]),
            ),
        };
        out.push(
            hit(&SERVED_REMOVED_UNDEPRECATED, new, nc, pos, format!("{} {what} served version {}, which no bundle on the path marked deprecated", nc.name, v.name))
                .help(format!("first release a bundle that marks {} deprecated: true (clients get warnings), then stop serving it; every path to the old bundle must pass such a release (a user who installed a bundle directly only saw its own marks)", v.name)),
        );
    }
}

fn storage_switch(oc: &Crd<'_>, new: &Facts<'_>, nc: &Crd<'_>, out: &mut Vec<Finding>) {
    let (Some(os), Some(ns)) = (oc.storage().next(), nc.storage().next()) else {
        return;
    };
    if os.name == ns.name || webhook(new, nc) {
        return;
    }
    // How objects stored as the old storage version are read: the new CRD's schema for that
    // version if it still has it, else the old one.
    let before = nc.version(os.name).map_or(os.schema, |v| v.schema);
    if schema_key(before) == schema_key(ns.schema) {
        return;
    }
    out.push(
        hit(&STORAGE_SWITCH_NO_WEBHOOK, new, nc, ns.pos, format!("{} switches storage from {} to {} with different schemas and no conversion webhook", nc.name, os.name, ns.name))
            .help("add a conversion webhook (CSV webhookdefinitions, type ConversionWebhook), or keep the storage version"),
    );
}

fn immutable(oc: &Crd<'_>, nc: &Crd<'_>, new: &Facts<'_>, out: &mut Vec<Finding>) {
    if oc.scope != nc.scope {
        let pos = crate::bundle::load::pos_at(nc.doc, &["spec", "scope"]);
        out.push(
            hit(&IMMUTABLE_CHANGED, new, nc, pos, format!("{}: scope changed : {:?} -> {:?}", nc.name, oc.scope, nc.scope))
                .help("the scope of an established CRD cannot change: define a new CRD (new group or plural) instead"),
        );
    }
    for ((k, a), (_, b)) in oc.names.iter().zip(nc.names.iter()) {
        if a != b && !(a.is_empty() || b.is_empty()) {
            let pos = crate::bundle::load::pos_at(nc.doc, &["spec", "names", k]);
            // kind cannot change once the CRD is Established; singular and listKind can, but
            // clients and tooling that use them break.
            let mut f = hit(
                &IMMUTABLE_CHANGED,
                new,
                nc,
                pos,
                format!("{}: spec.names.{k} changed : {a:?} -> {b:?}", nc.name),
            );
            if *k == "kind" {
                f.help = Some(
                    "the kind of an established CRD cannot change: keep it, or define a new CRD"
                        .into(),
                );
            } else {
                f.severity = Warning;
                f.help = Some(format!(
                    "the API server accepts a new {k}, but clients, scripts and RBAC tooling that use the old one break: keep it"
                ));
            }
            out.push(f);
        }
    }
}

/// What to do about a schema change (OLM v1 refuses every one of them).
fn schema_help(code: &str) -> &'static str {
    match code {
        "SCH001" => {
            "keep the field in this version (mark it deprecated in its description); drop it only in a new CRD version"
        }
        "SCH002" => {
            "keep the default of this version; a different default belongs in a new CRD version"
        }
        "SCH003" => "keep every old enum value (adding values is fine)",
        "SCH004" => "keep the old maximum or raise it; existing objects may exceed the new one",
        "SCH005" => "keep the old minimum or lower it; existing objects may fall below the new one",
        "SCH006" => {
            "make the new field optional (with a default applied by the operator), or require it only in a new CRD version"
        }
        "SCH007" => {
            "keep the type; add a new field, or change it in a new CRD version with a conversion webhook"
        }
        "SCH008" => "keep the pattern, or make sure every existing value matches the new one",
        "SCH009" => "keep nullable as it was; objects holding null would stop validating",
        "SCH010" => {
            "keep the oneOf branches as they were (an added branch can make an object match two branches, which oneOf rejects); change them in a new CRD version"
        }
        "SCH014" => {
            "this only loosens validation, so OLM v0 and existing objects are fine, but OLM v1's CRD preflight (crdify) refuses the upgrade: keep the old schema where OLM v1 installs this operator, or change it in a new CRD version"
        }
        "SCH011" => {
            "existing objects may fail the new rule: write it as a transition rule (oldSelf) that ratchets, or add it in a new CRD version"
        }
        "SCH013" => {
            "flatten the schema (real CRDs nest a few dozen levels), or review the change below the limit by hand and lower this code's severity in the policy file"
        }
        _ => {
            "review the change: OLM v1 refuses unknown schema changes; if it is safe, lower this code's severity in the policy file"
        }
    }
}

fn push_changes(
    new: &Facts<'_>,
    nc: &Crd<'_>,
    prefix: &str,
    changes: Vec<Change>,
    olmv1: bool,
    out: &mut Vec<Finding>,
) {
    for ch in changes {
        // crdify repeats the path in removal messages; it is already in front.
        let suffix = format!(" : {}", ch.path);
        let msg = ch.message.strip_suffix(&suffix).unwrap_or(&ch.message);
        let mut f = hit(
            ch.code,
            new,
            nc,
            ch.pos,
            format!("{prefix}: {}: {msg}", ch.path),
        );
        f.path = Some(ch.path);
        f.help = Some(schema_help(ch.code.code).into());
        if olmv1 && ch.code.code == schema::PREFLIGHT_ONLY.code {
            f.severity = crate::diag::Severity::Error;
            f.message.push_str(" (refused by OLM v1's CRD preflight)");
        }
        out.push(f);
    }
}

fn schemas(oc: &Crd<'_>, nc: &Crd<'_>, new: &Facts<'_>, policy: &Policy, out: &mut Vec<Finding>) {
    let same = schema::Options {
        enum_additions_allowed: policy.enum_additions_allowed,
        field_removal: true,
    };
    // Same version, old CRD -> new CRD.
    for ov in &oc.versions {
        if let (Some(a), Some(b)) = (ov.schema, nc.version(ov.name).and_then(|v| v.schema)) {
            let changes = schema::compare(a, b, &same);
            push_changes(
                new,
                nc,
                &format!("{} {}", nc.name, ov.name),
                changes,
                policy.preflight_olmv1,
                out,
            );
        }
    }
    // Served version pairs of the new CRD, minus what the old CRD already had (ratcheting).
    if policy.ignore_served_under_webhook && webhook(new, nc) {
        return;
    }
    let pair = schema::Options {
        field_removal: false,
        ..same
    };
    let mut served: Vec<_> = nc.served().filter(|v| v.schema.is_some()).collect();
    served.sort_by(|a, b| compare_version_priority(b.name, a.name));
    for (i, a) in served.iter().enumerate() {
        for b in &served[i + 1..] {
            let (Some(sa), Some(sb)) = (a.schema, b.schema) else {
                continue;
            };
            let mut changes = schema::compare(sa, sb, &pair);
            // Only pairs the old CRD served count as already there (crdify builds the old
            // pairs from served versions too).
            let old_served = |n: &str| oc.version(n).filter(|v| v.served).and_then(|v| v.schema);
            if let (Some(oa), Some(ob)) = (old_served(a.name), old_served(b.name)) {
                let before = schema::compare(oa, ob, &pair);
                changes.retain(|c| {
                    !before
                        .iter()
                        .any(|x| x.code == c.code && x.path == c.path && x.message == c.message)
                });
            }
            push_changes(
                new,
                nc,
                &format!("{} {} -> {}", nc.name, a.name, b.name),
                changes,
                policy.preflight_olmv1,
                out,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::schema_key;
    use crate::fbc::node::Node;

    fn node(text: &str) -> Node {
        let mut docs = Vec::new();
        crate::fbc::yaml::parse_documents(text, |d| docs.push(d)).expect("yaml");
        docs.remove(0)
    }

    #[test]
    fn schema_key_drops_descriptions_of_schemas_only() {
        let a = node(
            "type: object\ndescription: A.\nproperties:\n  description: {type: string, description: text}\n  n: {type: integer, enum: [1], description: N.}\n",
        );
        let b = node(
            "type: object\nproperties:\n  description: {type: string}\n  n: {type: integer, enum: [1]}\n",
        );
        assert_eq!(schema_key(Some(&a)), schema_key(Some(&b)));
        // A field named `description` whose type changes is a different schema.
        let c = node(
            "type: object\nproperties:\n  description: {type: integer}\n  n: {type: integer, enum: [1]}\n",
        );
        assert_ne!(schema_key(Some(&b)), schema_key(Some(&c)));
        // Values keep their `description` keys (a default object, an enum of objects).
        let d = node("type: object\ndefault: {description: x}\n");
        let e = node("type: object\ndefault: {description: y}\n");
        assert_ne!(schema_key(Some(&d)), schema_key(Some(&e)));
        let items = node(
            "type: array\nitems: {type: object, description: I, properties: {description: {type: string}}}\n",
        );
        assert!(schema_key(Some(&items)).contains("\"description\":{\"type\":\"string\"}"));
    }
}
