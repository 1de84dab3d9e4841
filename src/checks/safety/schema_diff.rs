//! The keyword-by-keyword comparison of one property present in both schemas, for
//! [`super::schema::compare`]: each crdify check consumes its keywords, and whatever is left and
//! differs becomes the unhandled diff.

use std::collections::{BTreeMap, BTreeSet};

use super::schema_change::{
    CEL, Change, DEFAULT, ENUM, MAXIMUM, MINIMUM, NULLABLE, ONE_OF, Options, PATTERN,
    PREFLIGHT_ONLY, REQUIRED, TYPE, UNHANDLED,
};
use crate::diag::Code;
use crate::fbc::node::{Node, Value, write_go_float, write_json_string};

/// How many characters of a value a message shows.
pub(super) const SHOWN_CHARS: usize = 120;

/// The value of `key` in an object (the last one if repeated); `null` counts as absent.
pub(super) fn get<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    match &node.value {
        Value::Map(entries) => entries
            .iter()
            .rev()
            .find(|e| e.key == key)
            .map(|e| &e.value)
            .filter(|v| !matches!(v.value, Value::Null)),
        _ => None,
    }
}

/// A keyword whose value does not have the expected type (left to the unhandled diff).
struct BadShape;
type Shaped<T = ()> = Result<T, BadShape>;

fn num(n: Option<&Node>) -> Shaped<Option<f64>> {
    match n.map(|n| &n.value) {
        None => Ok(None),
        Some(Value::Number(f)) => Ok(Some(*f)),
        Some(_) => Err(BadShape),
    }
}

fn flag(n: Option<&Node>) -> Shaped<bool> {
    match n.map(|n| &n.value) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(BadShape),
    }
}

fn text(n: Option<&Node>) -> Shaped<Option<&str>> {
    match n.map(|n| &n.value) {
        None => Ok(None),
        Some(Value::Str(s)) => Ok(Some(s)),
        Some(_) => Err(BadShape),
    }
}

fn list(n: Option<&Node>) -> Shaped<&[Node]> {
    match n.map(|n| &n.value) {
        None => Ok(&[]),
        Some(Value::Seq(items)) => Ok(items),
        Some(_) => Err(BadShape),
    }
}

/// Structural equality: objects by their (last-wins) keys, numbers as f64. Iterative.
pub(super) fn same(a: &Node, b: &Node) -> bool {
    let mut stack = vec![(a, b)];
    while let Some((a, b)) = stack.pop() {
        match (&a.value, &b.value) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(x), Value::Bool(y)) if x == y => {}
            (Value::Number(x), Value::Number(y)) if x == y => {}
            (Value::Str(x), Value::Str(y)) if x == y => {}
            (Value::Seq(x), Value::Seq(y)) if x.len() == y.len() => stack.extend(x.iter().zip(y)),
            (Value::Map(_), Value::Map(_)) => {
                let (x, y) = (a.sorted_entries(), b.sorted_entries());
                if x.len() != y.len() || x.iter().zip(&y).any(|(p, q)| p.key != q.key) {
                    return false;
                }
                stack.extend(x.iter().zip(&y).map(|(p, q)| (&p.value, &q.value)));
            }
            _ => return false,
        }
    }
    true
}

fn same_opt(a: Option<&Node>, b: Option<&Node>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => same(a, b),
        _ => false,
    }
}

/// Compact JSON of a value, cut to [`SHOWN_CHARS`] characters; `<none>` when absent.
fn shown(n: Option<&Node>) -> String {
    let Some(n) = n else {
        return "<none>".to_string();
    };
    let json = n.to_json();
    match json.char_indices().nth(SHOWN_CHARS - 1) {
        Some((cut, _)) if json[cut..].chars().nth(1).is_some() => format!("{}…", &json[..cut]),
        _ => json,
    }
}

fn quoted(s: &str) -> String {
    let mut out = String::new();
    write_json_string(&mut out, s);
    out
}

fn go_num(f: f64) -> String {
    let mut out = String::new();
    write_go_float(&mut out, f);
    out
}

/// One property present in both schemas, being compared.
struct Cmp<'a> {
    path: &'a str,
    old: &'a Node,
    new: &'a Node,
    /// Keywords a check has dealt with (the unhandled diff skips them).
    handled: BTreeSet<&'static str>,
    out: &'a mut Vec<Change>,
}

impl<'a> Cmp<'a> {
    fn pair(&self, key: &str) -> (Option<&'a Node>, Option<&'a Node>) {
        (get(self.old, key), get(self.new, key))
    }

    fn report(&mut self, code: &'static Code, message: String) {
        self.out.push(Change {
            code,
            path: self.path.to_string(),
            message,
            pos: self.new.pos,
        });
    }
}

pub(super) fn compare_property(
    path: &str,
    old: &Node,
    new: &Node,
    opts: &Options,
    out: &mut Vec<Change>,
) {
    let schema_like = |n: &Node| matches!(n.value, Value::Map(_) | Value::Null);
    let mut c = Cmp {
        path,
        old,
        new,
        handled: BTreeSet::new(),
        out,
    };
    if !schema_like(old) || !schema_like(new) {
        if !same(old, new) {
            let message = format!(
                "unhandled changes found: schema: {} -> {}",
                shown(Some(old)),
                shown(Some(new))
            );
            c.report(&UNHANDLED, message);
        }
        return;
    }
    c.handled.insert("description");
    for key in ["properties", "items", "additionalProperties"] {
        let (o, n) = c.pair(key);
        if [o, n]
            .iter()
            .flatten()
            .all(|n| matches!(n.value, Value::Map(_)))
        {
            c.handled.insert(key); // Compared as properties of their own.
            // crdify's unhandled diff of the parent sees a changed additionalProperties schema
            // too (its comparators do not blank it): OLM v1 refuses the parent as well.
            if key == "additionalProperties" && !same_opt(o, n) {
                c.report(
                    &PREFLIGHT_ONLY,
                    "unhandled changes found: additionalProperties (crdify reports a change inside an additionalProperties schema on its parent too)".into(),
                );
            }
        }
    }
    let _ = check_default(&mut c);
    let _ = check_enum(&mut c, opts);
    for key in ["maximum", "maxItems", "maxLength", "maxProperties"] {
        let _ = check_bound(&mut c, key, &MAXIMUM, true);
    }
    for key in ["minimum", "minItems", "minLength", "minProperties"] {
        let _ = check_bound(&mut c, key, &MINIMUM, false);
    }
    let _ = check_exclusive(&mut c, "exclusiveMaximum", &MAXIMUM);
    let _ = check_exclusive(&mut c, "exclusiveMinimum", &MINIMUM);
    let _ = check_required(&mut c);
    let _ = check_type(&mut c);
    let _ = check_pattern(&mut c);
    let _ = check_nullable(&mut c);
    let _ = check_one_of(&mut c);
    let _ = check_cel(&mut c);
    check_unhandled(&mut c);
}

fn check_default(c: &mut Cmp) -> Shaped {
    c.handled.insert("default");
    let message = match c.pair("default") {
        (None, Some(_)) => "default added when there was none previously".to_string(),
        (Some(_), None) => "default value removed".to_string(),
        (Some(a), Some(b)) if !same(a, b) => {
            format!(
                "default value changed: {} -> {}",
                shown(Some(a)),
                shown(Some(b))
            )
        }
        _ => return Ok(()),
    };
    c.report(&DEFAULT, message);
    Ok(())
}

fn check_enum(c: &mut Cmp, opts: &Options) -> Shaped {
    let (o, n) = c.pair("enum");
    let (o, n) = (list(o)?, list(n)?);
    c.handled.insert("enum");
    if o.is_empty() && !n.is_empty() {
        c.report(
            &ENUM,
            "enum constraint added when there was none previously".into(),
        );
        return Ok(());
    }
    // Values not found in the other list, as compact JSON sorted and listed like Go's `%v`.
    // Values compare by their canonical JSON (keys sorted, duplicates dropped: what `same`
    // compares), looked up in a set: lists of thousands of values on both sides are read
    // once each, not each against each.
    let missing = |from: &[Node], other: &[Node]| {
        let others: BTreeSet<String> = other.iter().map(Node::to_json).collect();
        let json: BTreeSet<String> = from
            .iter()
            .map(Node::to_json)
            .filter(|v| !others.contains(v))
            .collect();
        (!json.is_empty()).then(|| format!("[{}]", Vec::from_iter(json).join(" ")))
    };
    if let Some(removed) = missing(o, n) {
        c.report(&ENUM, format!("allowed enum values removed: {removed}"));
    }
    if !opts.enum_additions_allowed
        && !o.is_empty()
        && let Some(added) = missing(n, o)
    {
        c.report(&ENUM, format!("allowed enum values added: {added}"));
    }
    Ok(())
}

fn check_bound(c: &mut Cmp, key: &'static str, code: &'static Code, upper: bool) -> Shaped {
    let (o, n) = c.pair(key);
    let (o, n) = (num(o)?, num(n)?);
    c.handled.insert(key);
    let tighter = if upper { "decreased" } else { "increased" };
    let message = match (o, n) {
        (None, Some(v)) => {
            format!(
                "{key} constraint added when there was none previously: {}",
                go_num(v)
            )
        }
        (Some(a), Some(b)) if (upper && b < a) || (!upper && b > a) => {
            format!("{key} {tighter}: {} -> {}", go_num(a), go_num(b))
        }
        _ => return Ok(()),
    };
    c.report(code, message);
    Ok(())
}

fn check_exclusive(c: &mut Cmp, key: &'static str, code: &'static Code) -> Shaped {
    let (o, n) = c.pair(key);
    let (o, n) = (flag(o)?, flag(n)?);
    c.handled.insert(key);
    if !o && n {
        c.report(code, format!("{key} added"));
    } else if o && !n {
        // Loosens the bound; crdify has no check for it, so it is unhandled.
        c.report(&PREFLIGHT_ONLY, format!("{key} removed"));
    }
    Ok(())
}

fn check_required(c: &mut Cmp) -> Shaped {
    let (o, n) = c.pair("required");
    let (o, n) = (list(o)?, list(n)?);
    c.handled.insert("required");
    let name = |n: &Node| n.as_str().map_or_else(|| n.to_json(), str::to_string);
    let old: BTreeSet<String> = o.iter().map(name).collect();
    let added: BTreeSet<String> = n.iter().map(name).filter(|s| !old.contains(s)).collect();
    if !added.is_empty() {
        let names: Vec<String> = added.into_iter().collect();
        c.report(
            &REQUIRED,
            format!("new required fields: [{}]", names.join(" ")),
        );
    }
    Ok(())
}

fn check_type(c: &mut Cmp) -> Shaped {
    let (ot, nt) = c.pair("type");
    let (ot, nt) = (text(ot)?.unwrap_or(""), text(nt)?.unwrap_or(""));
    let (oi, ni) = c.pair("x-kubernetes-int-or-string");
    let (oi, ni) = (flag(oi)?, flag(ni)?);
    c.handled.extend(["type", "x-kubernetes-int-or-string"]);
    // Becoming int-or-string accepts whatever the old type accepted.
    let widened = ni && !oi;
    if widened {
        // Accepts whatever the old type accepted; crdify sees the type change anyway.
        c.report(
            &PREFLIGHT_ONLY,
            format!("type changed : {} -> \"int-or-string\"", quoted(ot)),
        );
        return Ok(());
    }
    let from = if oi && !ni {
        "int-or-string"
    } else if ot != nt {
        ot
    } else {
        return Ok(());
    };
    let message = format!("type changed : {} -> {}", quoted(from), quoted(nt));
    c.report(&TYPE, message);
    Ok(())
}

fn check_pattern(c: &mut Cmp) -> Shaped {
    let (o, n) = c.pair("pattern");
    let (o, n) = (text(o)?, text(n)?);
    c.handled.insert("pattern");
    let message = match (o, n) {
        (None, Some(p)) => format!("pattern added: {}", quoted(p)),
        (Some(a), Some(b)) if a != b => format!("pattern changed: {} -> {}", quoted(a), quoted(b)),
        (Some(_), None) => "pattern removed".to_string(),
        _ => return Ok(()),
    };
    c.report(&PATTERN, message);
    Ok(())
}

fn check_nullable(c: &mut Cmp) -> Shaped {
    let (o, n) = c.pair("nullable");
    let (o, n) = (flag(o)?, flag(n)?);
    c.handled.insert("nullable");
    if o != n {
        let message = if n {
            "nullable added"
        } else {
            "nullable removed"
        };
        c.report(&NULLABLE, message.to_string());
    }
    Ok(())
}

fn check_one_of(c: &mut Cmp) -> Shaped {
    let (o, n) = c.pair("oneOf");
    let (o, n) = (list(o)?, list(n)?);
    c.handled.insert("oneOf");
    if o.is_empty() && !n.is_empty() {
        c.report(
            &ONE_OF,
            "oneOf constraint added when there was none previously".into(),
        );
        return Ok(());
    }
    // Branches compare as a set (reordering is no change). A removed branch rejects what it
    // matched; an added one can make an object match two branches, which oneOf rejects.
    // As sets of canonical JSON (see `check_enum`).
    let (old, new): (BTreeSet<String>, BTreeSet<String>) = (
        o.iter().map(Node::to_json).collect(),
        n.iter().map(Node::to_json).collect(),
    );
    if !old.is_subset(&new) {
        c.report(&ONE_OF, "allowed oneOf schemas removed".into());
    }
    if !o.is_empty() && !new.is_subset(&old) {
        c.report(&ONE_OF, "allowed oneOf schemas added".into());
    }
    Ok(())
}

/// The fields of a CEL rule entry besides `rule` itself.
const CEL_FIELDS: [&str; 5] = [
    "message",
    "messageExpression",
    "reason",
    "fieldPath",
    "optionalOldSelf",
];

fn check_cel(c: &mut Cmp) -> Shaped {
    let (o, n) = c.pair("x-kubernetes-validations");
    let (o, n) = (list(o)?, list(n)?);
    c.handled.insert("x-kubernetes-validations");
    let rule = |n: &Node| {
        get(n, "rule")
            .and_then(Node::as_str)
            .map_or_else(|| n.to_json(), str::to_string)
    };
    let mut old: BTreeMap<String, &Node> = BTreeMap::new();
    for entry in o {
        old.entry(rule(entry)).or_insert(entry);
    }
    let new_rules: BTreeSet<String> = n.iter().map(rule).collect();
    for r in old.keys().filter(|r| !new_rules.contains(*r)) {
        // Removing a rule loosens validation; crdify reports it as unhandled.
        c.report(&PREFLIGHT_ONLY, format!("CEL rule removed: {}", quoted(r)));
    }
    let mut seen = BTreeSet::new();
    for entry in n {
        let r = rule(entry);
        if !seen.insert(r.clone()) {
            continue;
        }
        let message = match old.get(&r) {
            None => format!("CEL rule added: {}", quoted(&r)),
            Some(prev) => {
                let changed: Vec<&str> = CEL_FIELDS
                    .into_iter()
                    .filter(|f| !same_opt(get(prev, f), get(entry, f)))
                    .collect();
                if changed.is_empty() {
                    continue;
                }
                format!("CEL rule changed: {} ({})", quoted(&r), changed.join(", "))
            }
        };
        c.report(&CEL, message);
    }
    Ok(())
}

/// `x-kubernetes-list-type` absent on one side and `atomic` on the other: atomic is the
/// default for lists (apiextensions' structural schema, `x-kubernetes-list-type`: "Defaults to
/// atomic"), so neither the API server nor any client sees a change. crdify has no comparator
/// for it and reports it as unhandled, which OLM v1's preflight refuses
/// (operator-controller `internal/operator-controller/rukpak/preflights/crdupgradesafety/
/// crdupgradesafety.go`, `defaultConfig`: `UnhandledEnforcement: EnforcementPolicyError`):
/// SCH014, like the other changes only that preflight refuses. Other list-type changes
/// (`atomic` to `set` or `map`, and back) change how apply merges lists and stay SCH012.
fn check_list_type(c: &mut Cmp) {
    let (o, n) = c.pair("x-kubernetes-list-type");
    let atomic = |x: Option<&Node>| x.and_then(Node::as_str) == Some("atomic");
    if (o.is_none() && atomic(n)) || (atomic(o) && n.is_none()) {
        c.handled.insert("x-kubernetes-list-type");
        c.report(
            &PREFLIGHT_ONLY,
            format!(
                "unhandled changes found: x-kubernetes-list-type: {} -> {} (atomic is the default: no change for the API server or any client; crdify reports it as unhandled)",
                shown(o),
                shown(n)
            ),
        );
    }
}

fn check_unhandled(c: &mut Cmp) {
    check_list_type(c);
    let (old, new) = (c.old.sorted_entries(), c.new.sorted_entries());
    let keys: BTreeSet<&str> = old.iter().chain(&new).map(|e| e.key.as_str()).collect();
    let mut parts = Vec::new();
    for key in keys.into_iter().filter(|k| !c.handled.contains(k)) {
        let (o, n) = c.pair(key);
        if !same_opt(o, n) {
            parts.push(format!("{key}: {} -> {}", shown(o), shown(n)));
        }
    }
    if !parts.is_empty() {
        c.report(
            &UNHANDLED,
            format!("unhandled changes found: {}", parts.join("; ")),
        );
    }
}
