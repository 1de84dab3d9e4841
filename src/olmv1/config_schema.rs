//! The validation of a ClusterExtension's inline configuration (`watchNamespace`,
//! `deploymentConfig`) against the schema operator-controller builds for a registry+v1 bundle,
//! with the messages it gives:
//!
//! - the schema: `rukpak/bundle/registryv1bundleconfig.json` (the same file in operator-controller
//!   v1.10 and at df2c201d; a frozen JSON schema, draft-07: OLM v0's SubscriptionConfig without `selector`, the
//!   Kubernetes types by `$ref`), vendored as `registryv1bundleconfig.json` beside this file,
//!   with `watchNamespace` shaped by the bundle's install modes (`rukpak/bundle/registryv1.go ::
//!   buildBundleConfigSchema, buildWatchNamespaceProperty, selectNamespaceFormat`: absent for
//!   AllNamespaces only, required without AllNamespaces, a namespace name with the
//!   `ownNamespaceInstallMode` or `singleNamespaceInstallMode` format of `config.go ::
//!   validateConfigWithSchema` when only one of those modes is supported);
//! - the validator: santhosh-tekuri/jsonschema v6 (read at 89d3b9e; operator-controller pins
//!   v6.0.2 and v6.0.3) (`validator.go :: validate, objValidate,
//!   arrValidate, strValidate, condValidate, validateRef`) for the keywords the schema uses:
//!   `type`, `format` (`date-time` and the two install-mode formats; `int32` and `int64` are
//!   unknown formats and not asserted), `minLength`, `maxLength`, `pattern` (only the namespace
//!   name pattern is ever used), `$ref`
//!   (draft-07: its siblings are ignored), `properties`, `additionalProperties`, `required`,
//!   `items`, `allOf`, `anyOf`, `oneOf`; its error tree (a `Reference` per `$ref`, `AllOf`,
//!   `AnyOf`, `OneOf` over their subschemas' errors, a `Group` where one schema has several)
//!   and its flattened `BasicOutput` (`output.go :: output`, whose quirk gives a unit below a
//!   `$ref` the reference's message, "validation failed");
//! - the messages: `config.go :: formatSchemaError, formatSingleError` ("unknown field",
//!   "invalid type for field ...", "multiple errors found: ..."), prefixed as
//!   `UnmarshalConfig` ("invalid configuration: ") and `extractBundleConfigOptions` ("invalid
//!   ClusterExtension configuration: ") prefix them.
//!
//! Upstream visits an object's properties in Go map order, which is random: with several
//! errors its order, and which of several unknown fields it names, vary from run to run. Here
//! properties are visited in sorted order.

use std::sync::OnceLock;

use serde_json::Value;

/// operator-controller's `registryv1bundleconfig.json`.
const SCHEMA: &str = include_str!("registryv1bundleconfig.json");

/// The vendored schema (its `$ref`s resolve here).
fn schema() -> &'static Value {
    static S: OnceLock<Value> = OnceLock::new();
    S.get_or_init(|| serde_json::from_str(SCHEMA).unwrap_or(Value::Null))
}

/// `namespaceNamePattern` and `namespaceNameMaxLength` of `registryv1.go`.
const NAMESPACE_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const NAMESPACE_MAX_LENGTH: usize = 63;
/// `config.FormatOwnNamespaceInstallMode`, `config.FormatSingleNamespaceInstallMode`.
const OWN_FORMAT: &str = "ownNamespaceInstallMode";
const SINGLE_FORMAT: &str = "singleNamespaceInstallMode";

/// `buildBundleConfigSchema`: the schema for a bundle supporting `modes`. Only its root is
/// built here (a few KB): `components`, which holds the Kubernetes types, is left out, as the
/// `$ref`s into it resolve against [`schema`].
fn schema_for(modes: &std::collections::BTreeSet<String>) -> Value {
    let mut s = Value::Object(
        schema()
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.as_str() != "components")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    let own = modes.contains("OwnNamespace");
    let single = modes.contains("SingleNamespace");
    let all = modes.contains("AllNamespaces");
    let props = &mut s["properties"];
    if own || single {
        // buildWatchNamespaceProperty.
        let mut ns = serde_json::json!({
            "type": "string",
            "minLength": 1,
            "maxLength": NAMESPACE_MAX_LENGTH,
            "pattern": NAMESPACE_PATTERN,
        });
        match (own, single) {
            (true, false) => ns["format"] = OWN_FORMAT.into(),
            (false, true) => ns["format"] = SINGLE_FORMAT.into(),
            _ => {}
        }
        if all {
            props["watchNamespace"] = serde_json::json!({"anyOf": [{"type": "null"}, ns]});
        } else {
            props["watchNamespace"] = ns;
            s["required"] = serde_json::json!(["watchNamespace"]);
        }
    } else if let Some(p) = props.as_object_mut() {
        p.remove("watchNamespace");
    }
    s
}

/// What the formats compare with: the ClusterExtension's install namespace.
struct Ctx<'a> {
    install_namespace: &'a str,
}

/// A custom format's check (`validateConfigWithSchema`'s `RegisterFormat`s) or `date-time`;
/// `None` when `s` is valid or the format is not asserted.
fn format_error(format: &str, s: &str, ctx: &Ctx) -> Option<String> {
    let q = crate::range::go_quote;
    let ns = ctx.install_namespace;
    match format {
        "date-time" if !is_date_time(s) => Some("not an RFC 3339 date-time".into()),
        OWN_FORMAT if !ns.is_empty() && s != ns => Some(format!(
            "invalid value {}: must be {} (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode",
            q(s),
            q(ns)
        )),
        SINGLE_FORMAT if !ns.is_empty() && s == ns => Some(format!(
            "invalid value {}: must be different from {} (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace",
            q(s),
            q(ns)
        )),
        _ => None,
    }
}

/// `pattern`: the one pattern the schema uses, a DNS label (RFC 1123); others match.
fn pattern_matches(pattern: &str, s: &str) -> bool {
    if pattern != NAMESPACE_PATTERN {
        return true;
    }
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// What failed, as jsonschema v6's error kinds (`kind/kind.go`).
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Group,
    Reference,
    AllOf,
    AnyOf,
    /// The two subschemas that both matched, or none matched.
    OneOf(Option<(usize, usize)>),
    FalseSchema,
    Type {
        got: &'static str,
        want: Vec<String>,
    },
    Required(Vec<String>),
    AdditionalProperties(Vec<String>),
    Format {
        got: Value,
        want: String,
        err: String,
    },
    MinLength {
        got: usize,
        want: usize,
    },
    MaxLength {
        got: usize,
        want: usize,
    },
    Pattern {
        got: String,
        want: String,
    },
}

/// `kind.*.LocalizedString`.
fn message(k: &Kind) -> String {
    match k {
        Kind::Group | Kind::Reference => "validation failed".into(),
        Kind::AllOf => "allOf failed".into(),
        Kind::AnyOf => "anyOf failed".into(),
        Kind::OneOf(None) => "oneOf failed, none matched".into(),
        Kind::OneOf(Some((a, b))) => format!("oneOf failed, subschemas {a}, {b} matched"),
        Kind::FalseSchema => "false schema".into(),
        Kind::Type { got, want } => format!("got {got}, want {}", want.join(" or ")),
        Kind::Required(m) if m.len() == 1 => format!("missing property {}", quote(&m[0])),
        Kind::Required(m) => format!("missing properties {}", join_quoted(m)),
        Kind::AdditionalProperties(p) => {
            format!("additional properties {} not allowed", join_quoted(p))
        }
        Kind::Format { got, want, err } => format!("{} is not valid {want}: {err}", display(got)),
        Kind::MinLength { got, want } => format!("minLength: got {got}, want {want}"),
        Kind::MaxLength { got, want } => format!("maxLength: got {got}, want {want}"),
        Kind::Pattern { got, want } => {
            format!("{} does not match pattern {}", quote(got), quote(want))
        }
    }
}

/// `kind.display`.
fn display(v: &Value) -> String {
    match v {
        Value::String(s) => quote(s),
        Value::Array(_) | Value::Object(_) => "value".into(),
        other => other.to_string(),
    }
}

/// `kind.quote`: Go's `%q` with single quotes.
fn quote(s: &str) -> String {
    let q = crate::range::go_quote(s)
        .replace("\\\"", "\"")
        .replace('\'', "\\'");
    format!("'{}'", &q[1..q.len() - 1])
}

fn join_quoted(items: &[String]) -> String {
    items
        .iter()
        .map(|s| quote(s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A `ValidationError`: where in the instance, what, and the errors below it.
#[derive(Debug, Clone)]
struct VErr {
    at: Vec<String>,
    kind: Kind,
    causes: Vec<VErr>,
}

fn err(at: &[String], kind: Kind) -> VErr {
    VErr {
        at: at.to_vec(),
        kind,
        causes: Vec::new(),
    }
}

/// jsonschema's type of a JSON value (`typeOf`: every number is a "number").
fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `Types.ToStrings`: the types a schema allows, in jsonschema's order.
fn types(sch: &Value) -> Option<Vec<String>> {
    let given: Vec<&str> = match sch.get("type")? {
        Value::String(t) => vec![t.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let order = [
        "null", "boolean", "number", "integer", "string", "array", "object",
    ];
    Some(
        order
            .iter()
            .filter(|t| given.contains(t))
            .map(|t| t.to_string())
            .collect(),
    )
}

fn is_integer(v: &Value) -> bool {
    v.as_i64().is_some()
        || v.as_u64().is_some()
        || v.as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.is_finite())
}

fn digits(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// `format.go :: validateDateTime` (RFC 3339): `yyyy-mm-ddThh:mm:ss[.frac](Z|±hh:mm)`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 20 || !s.is_ascii() {
        return false;
    }
    let (date, time) = (&s[..10], &s[11..]);
    if !matches!(&s[10..11], "t" | "T") {
        return false;
    }
    let d: Vec<&str> = date.split('-').collect();
    let (Some(y), Some(m), Some(day)) = (
        d.first().filter(|p| p.len() == 4).and_then(|p| digits(p)),
        d.get(1).filter(|p| p.len() == 2).and_then(|p| digits(p)),
        d.get(2).filter(|p| p.len() == 2).and_then(|p| digits(p)),
    ) else {
        return false;
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if d.len() != 3 || day == 0 || day > days {
        return false;
    }
    let (clock, zone) = match time.find(['Z', 'z', '+', '-']) {
        Some(i) => (&time[..i], &time[i..]),
        None => return false,
    };
    // Fractional seconds: one digit or more.
    let clock = match clock.split_once('.') {
        Some((c, frac)) if !frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()) => c,
        Some(_) => return false,
        None => clock,
    };
    let c: Vec<Option<u32>> = clock
        .split(':')
        .map(|p| if p.len() == 2 { digits(p) } else { None })
        .collect();
    let ok_clock =
        matches!(c.as_slice(), [Some(h), Some(mi), Some(sec)] if *h < 24 && *mi < 60 && *sec <= 60);
    let ok_zone = matches!(zone, "Z" | "z")
        || (zone.len() == 6
            && zone.as_bytes()[3] == b':'
            && digits(&zone[1..3]).is_some_and(|h| h < 24)
            && digits(&zone[4..6]).is_some_and(|m| m < 60));
    ok_clock && ok_zone
}

/// `validator.validate` of `v` (at `at`) against `sch`; `None` when it is valid.
fn validate(sch: &Value, v: &Value, at: &[String], ctx: &Ctx) -> Option<VErr> {
    if let Some(b) = sch.as_bool() {
        return (!b).then(|| err(at, Kind::FalseSchema));
    }
    let t = type_of(v);
    if let Some(want) = types(sch).filter(|w| !w.is_empty()) {
        let matched = want.iter().any(|w| w == t)
            || (want.iter().any(|w| w == "integer") && t == "number" && is_integer(v));
        if !matched {
            return Some(err(at, Kind::Type { got: t, want }));
        }
    }
    if let (Some(f), Some(s)) = (sch.get("format").and_then(Value::as_str), v.as_str())
        && let Some(e) = format_error(f, s, ctx)
    {
        return Some(err(
            at,
            Kind::Format {
                got: v.clone(),
                want: f.to_string(),
                err: e,
            },
        ));
    }
    // Draft-07: a `$ref` is the whole schema.
    if let Some(r) = sch.get("$ref").and_then(Value::as_str) {
        return reference(r, v, at, ctx);
    }
    let mut errors = Vec::new();
    // strValidate (lengths in runes).
    if let Value::String(st) = v {
        let len = st.chars().count();
        let limit = |k: &str| sch.get(k).and_then(Value::as_u64).map(|n| n as usize);
        if let Some(want) = limit("minLength")
            && len < want
        {
            errors.push(err(at, Kind::MinLength { got: len, want }));
        }
        if let Some(want) = limit("maxLength")
            && len > want
        {
            errors.push(err(at, Kind::MaxLength { got: len, want }));
        }
        if let Some(p) = sch.get("pattern").and_then(Value::as_str)
            && !pattern_matches(p, st)
        {
            errors.push(err(
                at,
                Kind::Pattern {
                    got: st.clone(),
                    want: p.to_string(),
                },
            ));
        }
    }
    if let Value::Object(obj) = v {
        if let Some(required) = sch.get("required").and_then(Value::as_array) {
            let missing: Vec<String> = required
                .iter()
                .filter_map(Value::as_str)
                .filter(|r| !obj.contains_key(*r))
                .map(str::to_string)
                .collect();
            if !missing.is_empty() {
                errors.push(err(at, Kind::Required(missing)));
            }
        }
        let props = sch.get("properties").and_then(Value::as_object);
        let mut keys: Vec<&String> = obj.keys().collect();
        keys.sort();
        let mut additional = Vec::new();
        for k in keys {
            let child = || {
                let mut c = at.to_vec();
                c.push(k.clone());
                c
            };
            if let Some(ps) = props.and_then(|p| p.get(k)) {
                errors.extend(validate(ps, &obj[k], &child(), ctx));
            } else {
                match sch.get("additionalProperties") {
                    Some(Value::Bool(false)) => additional.push(k.clone()),
                    Some(a @ Value::Object(_)) => {
                        errors.extend(validate(a, &obj[k], &child(), ctx))
                    }
                    _ => {}
                }
            }
        }
        if !additional.is_empty() {
            errors.push(err(at, Kind::AdditionalProperties(additional)));
        }
    }
    if let (Value::Array(items), Some(item_schema)) = (v, sch.get("items"))
        && item_schema.is_object()
    {
        for (i, item) in items.iter().enumerate() {
            let mut c = at.to_vec();
            c.push(i.to_string());
            errors.extend(validate(item_schema, item, &c, ctx));
        }
    }
    // condValidate.
    let subschemas = |kw: &str| {
        sch.get(kw)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let all_of: Vec<VErr> = subschemas("allOf")
        .iter()
        .filter_map(|s| validate(s, v, at, ctx))
        .collect();
    if !all_of.is_empty() {
        errors.push(VErr {
            at: at.to_vec(),
            kind: Kind::AllOf,
            causes: all_of,
        });
    }
    let any_of = subschemas("anyOf");
    if !any_of.is_empty() {
        let failed: Vec<VErr> = any_of
            .iter()
            .filter_map(|s| validate(s, v, at, ctx))
            .collect();
        if failed.len() == any_of.len() {
            errors.push(VErr {
                at: at.to_vec(),
                kind: Kind::AnyOf,
                causes: failed,
            });
        }
    }
    let one_of = subschemas("oneOf");
    if !one_of.is_empty() {
        let mut matched = None;
        let mut failed = Vec::new();
        for (i, s) in one_of.iter().enumerate() {
            match (validate(s, v, at, ctx), matched) {
                (Some(e), None) => failed.push(e),
                (Some(_), Some(_)) => {}
                (None, None) => matched = Some(i),
                (None, Some(first)) => {
                    errors.push(err(at, Kind::OneOf(Some((first, i)))));
                    break;
                }
            }
        }
        if matched.is_none() {
            errors.push(VErr {
                at: at.to_vec(),
                kind: Kind::OneOf(None),
                causes: failed,
            });
        }
    }
    match errors.len() {
        0 => None,
        1 => errors.pop(),
        _ => Some(VErr {
            at: at.to_vec(),
            kind: Kind::Group,
            causes: errors,
        }),
    }
}

/// `validateRef`: the referenced schema's errors under a `Reference` (a group's errors
/// directly).
fn reference(r: &str, v: &Value, at: &[String], ctx: &Ctx) -> Option<VErr> {
    let target = r
        .strip_prefix('#')
        .and_then(|p| schema().pointer(p))
        .unwrap_or(&Value::Bool(true));
    let e = validate(target, v, at, ctx)?;
    let causes = if e.kind == Kind::Group {
        e.causes
    } else {
        vec![e]
    };
    Some(VErr {
        at: at.to_vec(),
        kind: Kind::Reference,
        causes,
    })
}

/// An `OutputUnit` of the basic (flat) output.
#[derive(Debug)]
struct Unit {
    at: String,
    kind: Option<Kind>,
    errors: Vec<Unit>,
}

/// `jsonPtr` of an instance location.
fn pointer(at: &[String]) -> String {
    at.iter()
        .map(|t| format!("/{}", t.replace('~', "~0").replace('/', "~1")))
        .collect()
}

/// `ValidationError.skip`: a reference with one cause.
fn skip(e: &VErr) -> bool {
    e.causes.len() == 1 && e.kind == Kind::Reference
}

/// `ValidationError.output` with `flatten`: every cause a unit carrying the cause's kind, its
/// own units after it; a skipped reference is replaced by its first unit, which keeps the
/// reference's kind.
fn output(e: &VErr) -> Unit {
    let mut out = Unit {
        at: pointer(&e.at),
        kind: None,
        errors: Vec::new(),
    };
    for cause in &e.causes {
        let mut unit = output(cause);
        if skip(cause) && !unit.errors.is_empty() {
            unit = unit.errors.remove(0);
        }
        let below = std::mem::take(&mut unit.errors);
        unit.kind = Some(cause.kind.clone());
        out.errors.push(unit);
        out.errors.extend(below);
    }
    if out.errors.is_empty() {
        out.kind = Some(e.kind.clone());
    }
    out
}

/// `buildFieldPath`: a JSON pointer with dots for slashes.
fn field_path(at: &str) -> String {
    at.trim_start_matches('/').replace('/', ".")
}

/// `formatSingleError`.
fn format_single(u: &Unit) -> String {
    let Some(k) = &u.kind else {
        return String::new();
    };
    let path = field_path(&u.at);
    let q = crate::range::go_quote;
    match k {
        Kind::Required(m) => format!("required field {} is missing", q(&m[0])),
        Kind::AdditionalProperties(p) => format!("unknown field {}", q(&p[0])),
        Kind::Type { .. } if path.is_empty() => format!("invalid type: {}", message(k)),
        Kind::Type { got: "null", .. } => format!("required field {} is missing", q(&path)),
        Kind::Type { .. } => format!("invalid type for field {}: {}", q(&path), message(k)),
        Kind::Format { .. } if path.is_empty() => format!("invalid format: {}", message(k)),
        Kind::Format { .. } => format!("invalid format for field {}: {}", q(&path), message(k)),
        Kind::MaxLength { got, want } if !path.is_empty() => format!(
            "field {} must have maximum length of {want} (len={got})",
            q(&path)
        ),
        Kind::MinLength { got, want } if !path.is_empty() => format!(
            "field {} must have minimum length of {want} (len={got})",
            q(&path)
        ),
        Kind::Pattern { want, .. } if !path.is_empty() => {
            format!("field {} must match pattern {}", q(&path), q(want))
        }
        Kind::AnyOf if path.is_empty() => "invalid value".into(),
        Kind::AnyOf => format!("invalid value for field {}", q(&path)),
        other => message(other),
    }
}

/// A ClusterExtension's inline configuration for a bundle.
#[derive(Debug, Clone, Copy)]
pub struct Config<'a> {
    /// The install modes the bundle supports.
    pub install_modes: &'a std::collections::BTreeSet<String>,
    /// `spec.namespace`.
    pub install_namespace: &'a str,
    /// `watchNamespace`, when given.
    pub watch_namespace: Option<&'a str>,
    /// `deploymentConfig`, when given.
    pub deployment_config: Option<&'a Value>,
}

/// Validates a ClusterExtension's inline configuration as operator-controller's
/// `UnmarshalConfig` does with the bundle's schema; the error is its message as
/// `extractBundleConfigOptions` reports it.
pub fn check(config: &Config) -> Result<(), String> {
    let mut doc = serde_json::Map::new();
    if let Some(ns) = config.watch_namespace {
        doc.insert("watchNamespace".into(), Value::from(ns));
    }
    if let Some(dc) = config.deployment_config {
        doc.insert("deploymentConfig".into(), dc.clone());
    }
    let ctx = Ctx {
        install_namespace: config.install_namespace,
    };
    let Some(e) = validate(
        &schema_for(config.install_modes),
        &Value::Object(doc),
        &[],
        &ctx,
    ) else {
        return Ok(());
    };
    // The root `kind.Schema` error: a group's errors, or the one error.
    let root = VErr {
        at: Vec::new(),
        kind: Kind::Group,
        causes: if e.kind == Kind::Group {
            e.causes
        } else {
            vec![e]
        },
    };
    let messages: Vec<String> = output(&root)
        .errors
        .iter()
        .map(format_single)
        .filter(|m| !m.is_empty())
        .collect();
    let formatted = match messages.as_slice() {
        [] => "validation failed".to_string(),
        [one] => one.clone(),
        many => format!("multiple errors found:\n  - {}", many.join("\n  - ")),
    };
    Err(format!(
        "invalid ClusterExtension configuration: invalid configuration: {formatted}"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn modes(m: &[&str]) -> std::collections::BTreeSet<String> {
        m.iter().map(|s| s.to_string()).collect()
    }

    /// A deploymentConfig for an AllNamespaces bundle installed in `ns`.
    fn check(v: Value) -> Result<(), String> {
        let all = modes(&["AllNamespaces"]);
        super::check(&Config {
            install_modes: &all,
            install_namespace: "ns",
            watch_namespace: None,
            deployment_config: Some(&v),
        })
    }

    fn watch(m: &[&str], ns: Option<&str>) -> Result<(), String> {
        let m = modes(m);
        super::check(&Config {
            install_modes: &m,
            install_namespace: "ns",
            watch_namespace: ns,
            deployment_config: None,
        })
    }

    /// `config_test.go`'s watchNamespace cases, by install modes.
    #[test]
    fn the_watch_namespace_follows_the_install_modes() {
        let unknown = format!("{PREFIX}unknown field \"watchNamespace\"");
        let missing = format!("{PREFIX}required field \"watchNamespace\" is missing");
        assert_eq!(watch(&["AllNamespaces"], Some("x")), Err(unknown.clone()));
        assert_eq!(
            watch(&["AllNamespaces", "MultiNamespace"], Some("x")),
            Err(unknown)
        );
        assert_eq!(watch(&["AllNamespaces"], None), Ok(()));
        assert_eq!(watch(&["OwnNamespace"], None), Err(missing.clone()));
        assert_eq!(
            watch(&["MultiNamespace", "OwnNamespace"], None),
            Err(missing)
        );
        assert_eq!(watch(&["OwnNamespace"], Some("ns")), Ok(()));
        assert_eq!(
            watch(&["OwnNamespace"], Some("other")),
            Err(format!(
                "{PREFIX}invalid format for field \"watchNamespace\": 'other' is not valid ownNamespaceInstallMode: invalid value \"other\": must be \"ns\" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode"
            ))
        );
        assert_eq!(watch(&["SingleNamespace"], Some("other")), Ok(()));
        assert_eq!(
            watch(&["SingleNamespace"], Some("ns")),
            Err(format!(
                "{PREFIX}invalid format for field \"watchNamespace\": 'ns' is not valid singleNamespaceInstallMode: invalid value \"ns\": must be different from \"ns\" (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace"
            ))
        );
        assert_eq!(
            watch(&["SingleNamespace", "OwnNamespace"], Some("ns")),
            Ok(())
        );
        assert_eq!(
            watch(
                &["AllNamespaces", "OwnNamespace", "SingleNamespace"],
                Some("w")
            ),
            Ok(())
        );
        // Not a namespace name: the length and the pattern, both reported.
        assert_eq!(
            watch(&["SingleNamespace", "OwnNamespace"], Some("")),
            Err(format!(
                "{PREFIX}multiple errors found:\n  - field \"watchNamespace\" must have minimum length of 1 (len=0)\n  - field \"watchNamespace\" must match pattern \"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$\""
            ))
        );
        // Optional (AllNamespaces too): anyOf [null, namespace], the failures of both listed.
        assert_eq!(
            watch(&["AllNamespaces", "OwnNamespace"], Some("other")),
            Err(format!(
                "{PREFIX}multiple errors found:\n  - invalid value for field \"watchNamespace\"\n  - invalid type for field \"watchNamespace\": got string, want null\n  - invalid format for field \"watchNamespace\": 'other' is not valid ownNamespaceInstallMode: invalid value \"other\": must be \"ns\" (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode"
            ))
        );
    }

    const PREFIX: &str = "invalid ClusterExtension configuration: invalid configuration: ";

    #[test]
    fn the_vendored_schema_loads() {
        assert_eq!(schema()["type"], "object");
        assert!(schema()["properties"]["deploymentConfig"].is_object());
        assert!(schema()["properties"]["watchNamespace"].is_object());
        assert!(
            schema_for(&modes(&["AllNamespaces"]))["properties"]
                .get("watchNamespace")
                .is_none()
        );
    }

    /// Everything SubscriptionConfig offers, as operator-controller's regression cases use it.
    #[test]
    fn a_valid_deployment_config_passes() {
        assert_eq!(
            check(json!({
                "env": [{"name": "A", "value": "1"},
                        {"name": "B", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "envFrom": [{"configMapRef": {"name": "c"}}],
                "volumes": [{"name": "v", "configMap": {"name": "c", "defaultMode": 420}}],
                "volumeMounts": [{"name": "v", "mountPath": "/v"}],
                "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                                 "tolerationSeconds": 30}],
                "resources": {"limits": {"memory": "128Mi", "cpu": 1},
                              "requests": {"cpu": "100m"}},
                "nodeSelector": {"disk": "ssd"},
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchExpressions":
                        [{"key": "a", "operator": "In", "values": ["b"]}]}]}}},
                "annotations": {"a": "b"},
            })),
            Ok(())
        );
        assert_eq!(check(json!({})), Ok(()));
    }

    /// `config_test.go`'s case: v0's `selector` is not part of v1's deploymentConfig.
    #[test]
    fn an_unknown_field_is_named() {
        assert_eq!(
            check(json!({"selector": {"matchLabels": {"app": "test"}}})),
            Err(format!("{PREFIX}unknown field \"selector\""))
        );
    }

    #[test]
    fn a_wrong_type_outside_a_reference_names_the_field() {
        assert_eq!(
            check(json!("not-an-object")),
            Err(format!(
                "{PREFIX}invalid type for field \"deploymentConfig\": got string, want object"
            ))
        );
        assert_eq!(
            check(json!({"nodeSelector": {"disk": 1}})),
            Err(format!(
                "{PREFIX}invalid type for field \"deploymentConfig.nodeSelector.disk\": got number, want string"
            ))
        );
        assert_eq!(
            check(json!({"env": {"name": "A"}})),
            Err(format!(
                "{PREFIX}invalid type for field \"deploymentConfig.env\": got object, want array"
            ))
        );
    }

    /// Below a `$ref`, jsonschema's flattened output gives the unit the reference's kind, so
    /// upstream's message is "validation failed" (a missing required `name`, a wrong type).
    #[test]
    fn an_error_below_a_reference_is_validation_failed() {
        assert_eq!(
            check(json!({"env": [{"value": "1"}]})),
            Err(format!("{PREFIX}validation failed"))
        );
        assert_eq!(
            check(json!({"tolerations": [{"tolerationSeconds": "30"}]})),
            Err(format!("{PREFIX}validation failed"))
        );
    }

    #[test]
    fn several_errors_are_listed() {
        assert_eq!(
            check(json!({"nodeSelector": {"a": 1}, "selector": {}, "annotations": {"b": true}})),
            Err(format!(
                "{PREFIX}multiple errors found:\n  - invalid type for field \"deploymentConfig.annotations.b\": got boolean, want string\n  - invalid type for field \"deploymentConfig.nodeSelector.a\": got number, want string\n  - unknown field \"selector\""
            ))
        );
    }

    #[test]
    fn output_flattens_as_jsonschema_does() {
        // Reference → AllOf → [Reference → Type]: the skipped reference keeps only its first
        // unit (the allOf), with the reference's kind.
        let leaf = err(
            &["a".into()],
            Kind::Type {
                got: "string",
                want: vec!["object".into()],
            },
        );
        let inner_ref = VErr {
            at: vec!["a".into()],
            kind: Kind::Reference,
            causes: vec![leaf],
        };
        let all_of = VErr {
            at: vec!["a".into()],
            kind: Kind::AllOf,
            causes: vec![inner_ref],
        };
        let root = VErr {
            at: Vec::new(),
            kind: Kind::Group,
            causes: vec![all_of],
        };
        let units = output(&root).errors;
        let got: Vec<(String, Option<Kind>)> = units
            .iter()
            .map(|u| (u.at.clone(), u.kind.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/a".to_string(), Some(Kind::AllOf)),
                ("/a".to_string(), Some(Kind::Reference)),
            ]
        );
        assert_eq!(
            units.iter().map(format_single).collect::<Vec<_>>(),
            ["allOf failed", "validation failed"]
        );
    }

    #[test]
    fn date_times_are_rfc3339() {
        for ok in [
            "2026-11-27T21:43:30Z",
            "2024-02-29T00:00:00.5+01:00",
            "2026-01-01t23:59:60z",
        ] {
            assert!(is_date_time(ok), "{ok}");
        }
        for bad in [
            "2026-11-27",
            "2025-02-29T00:00:00Z",
            "2026-11-27 21:43:30Z",
            "2026-11-27T24:00:00Z",
            "2026-11-27T21:43:30+0100",
        ] {
            assert!(!is_date_time(bad), "{bad}");
        }
    }

    /// JSON values built from the deploymentConfig's own field names, nested, of any type.
    fn config_strategy() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<f64>()
                .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
            "[a-z0-9:TZ.+-]{0,24}".prop_map(Value::from),
        ];
        let keys = prop_oneof![
            Just("env"),
            Just("name"),
            Just("value"),
            Just("valueFrom"),
            Just("volumes"),
            Just("configMap"),
            Just("tolerations"),
            Just("resources"),
            Just("limits"),
            Just("affinity"),
            Just("nodeAffinity"),
            Just("nodeSelector"),
            Just("annotations"),
            Just("selector"),
            Just("creationTimestamp"),
            Just("metadata"),
            Just("x"),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map(keys.clone(), inner, 0..5).prop_map(|m| {
                    Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
                }),
            ]
        })
    }

    proptest::proptest! {
        /// Any value: a result, never a panic; a refusal always carries upstream's prefix and
        /// a message.
        #[test]
        fn validation_never_panics(v in config_strategy()) {
            if let Err(e) = check(v) {
                proptest::prop_assert!(e.starts_with(PREFIX) && e.len() > PREFIX.len(), "{}", e);
            }
        }
    }

    #[test]
    fn quotes_are_jsonschemas() {
        assert_eq!(quote("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(
            message(&Kind::Required(vec!["x".into(), "y".into()])),
            "missing properties 'x', 'y'"
        );
    }
}
