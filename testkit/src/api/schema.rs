//! Structural-schema handling of custom resources, as kube-apiserver does it: pruning of unknown
//! fields, defaulting, and validation against a CRD version's `schema.openAPIV3Schema` (rules
//! R2.1, R2.2, R2.13, R2.14 and R2.15 of `../shared/reference/cluster.md`).
//!
//! Every piece names the upstream function it follows. Revisions read:
//! - kubernetes/apiextensions-apiserver @ `1aa2717a` (master, 2026-07-22):
//!   `pkg/apiserver/schema/pruning/algorithm.go`, `pkg/apiserver/schema/options.go`,
//!   `pkg/apiserver/schema/defaulting/{algorithm,prunenulls}.go`, `pkg/apiserver/schema/convert.go`,
//!   `pkg/apiserver/validation/{validation,formats}.go`, `pkg/apiserver/schema/listtype/validation.go`,
//!   `pkg/apiserver/schema/objectmeta/validation.go`, `pkg/apiserver/customresource_handler.go`,
//!   `pkg/registry/customresource/{strategy,validator}.go`;
//! - kubernetes/kube-openapi @ `d427ff9e` (the revision that apiextensions-apiserver pins):
//!   `pkg/validation/validate/*.go`, `pkg/validation/errors/*.go`, `pkg/validation/strfmt/*.go`,
//!   `pkg/internal/third_party/govalidator/*.go`;
//! - go-openapi/swag `conv/v0.27.1` (`IsFloat64AJSONInteger`, `ConvertInt32`, `FormatFloat64`);
//! - kubernetes/apimachinery @ `eed236ce`: `pkg/util/validation/field/{errors,path}.go`,
//!   `pkg/api/errors/errors.go :: NewInvalid`, `pkg/util/errors/errors.go :: aggregate.Error`.
//!
//! The apiserver's order on a write (R2.13–R2.15): the CR codec decodes, then
//! [`prune`]s (`unstructuredSchemaCoercer.apply`), drops non-nullable nulls without defaults
//! ([`prune_nulls`]), then applies [`default`]s (`unstructuredDefaulter`); [`decode`] runs the
//! three in that order. The strategy then [`validate`]s.
//!
//! Conventions and what is *not* modelled:
//! - Go iterates maps in random order; where upstream's error order depends on that (properties
//!   of an object, keys of a map), this module goes through the keys sorted by bytes.
//! - Number types follow the apiserver's JSON decoding (`sigs.k8s.io/json`, "preserve ints"): a
//!   JSON number that fits an int64 is an `int64`, anything else a `float64`. serde_json's
//!   integer/float split is used the same way (a u64 above `i64::MAX` counts as a float64).
//! - `metadata` at the root: [`validate`] checks it only against what the schema itself declares
//!   under `properties.metadata` (as `ValidateCustomResource` does). The ObjectMeta rules
//!   (name/generateName as a DNS subdomain, labels, finalizers …) come from
//!   `validator.go :: validateObjectMetaDeclaratively`, outside `ValidateCustomResource`: they are
//!   the caller's, as are the TypeMeta check (`ValidateTypeMeta`), the scale subresource
//!   checks, and the coercion of unknown `metadata` fields (`objectmeta.Coerce`).
//! - Embedded resources (`x-kubernetes-embedded-resource`): `apiVersion` and `kind` are
//!   validated (`objectmeta.validateEmbeddedResource`); their `metadata` is not.
//! - `x-kubernetes-validations` (CEL) are evaluated by [`super::cel`] for the part of CEL it
//!   models; [`cel_rules`] lists them.
//! - Updates are validated as creates: CRD validation ratcheting (`ValidateCustomResourceUpdate`
//!   with `CRDValidationRatcheting`, which drops errors of unchanged fields) is not modelled.
//! - `pattern`: Go's RE2 syntax is translated to the `regex` crate (`\d`, `\w`, `\s`, `\b` are
//!   made ASCII as in Go); an invalid pattern's message carries the `regex` crate's error text,
//!   not Go's.
//! - Formats: all of kube-apiserver's CRD formats are checked; `uri` (Go's
//!   `url.ParseRequestURI`), `email` (`net/mail.ParseAddress`) and `ipv6` (`net.ParseIP`) by
//!   simplified re-implementations; Go's `unicode.IsPrint` (for `%q`) is approximated.
//! - A nesting deeper than [`MAX_DEPTH`] (objects plus schemas) is not descended into, so that
//!   no input can exhaust the stack.

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::sync::{Mutex, OnceLock};

use regex::Regex;
use serde_json::{Map, Value};

use olmctl::gojson::write_string as push_go_json_string;
pub use olmctl::gojson::{go_float_g, to_string as go_json};

/// Deepest nesting of data plus schema this module descends into.
pub const MAX_DEPTH: usize = 256;

const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";
const EMBEDDED: &str = "x-kubernetes-embedded-resource";
const INT_OR_STRING: &str = "x-kubernetes-int-or-string";
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

// ---------------------------------------------------------------------------------------------
// Field errors (k8s.io/apimachinery/pkg/util/validation/field/errors.go)
// ---------------------------------------------------------------------------------------------

/// The field error types of k8s.io/apimachinery/pkg/util/validation/field (`ErrorType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// `ErrorTypeRequired`.
    Required,
    /// `ErrorTypeInvalid`.
    Invalid,
    /// `ErrorTypeTypeInvalid`.
    TypeInvalid,
    /// `ErrorTypeNotSupported`.
    NotSupported,
    /// `ErrorTypeTooLong`.
    TooLong,
    /// `ErrorTypeTooMany`.
    TooMany,
    /// `ErrorTypeForbidden`.
    Forbidden,
    /// `ErrorTypeDuplicate`.
    Duplicate,
    /// `ErrorTypeNotFound`.
    NotFound,
    /// `ErrorTypeTooFew`.
    TooFew,
    /// `ErrorTypeTooShort`.
    TooShort,
    /// `ErrorTypeInternal`.
    Internal,
}

impl ErrorType {
    /// The `CauseType` string (`ErrorType`'s value), e.g. `FieldValueRequired`.
    pub fn cause_type(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::TooFew => "FieldValueTooFew",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::TooShort => "FieldValueTooShort",
        }
    }

    /// `ErrorType.String()`: the canonical message, e.g. `Required value`.
    pub fn text(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::TooFew => "Too few",
            ErrorType::Internal => "Internal error",
            ErrorType::TooShort => "Too short",
        }
    }
}

/// One `field.Error`. `bad_value` holds the Go value as JSON; `None` is Go's `nil` (for
/// [`ErrorType::TooMany`] it stands for upstream's `omitValue`).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// The kind of error.
    pub error_type: ErrorType,
    /// The field path as `field.Path.String()` prints it (`spec.items[0].name`; `<nil>` for
    /// upstream's nil path).
    pub field: String,
    /// The offending value.
    pub bad_value: Option<Value>,
    /// The detail text.
    pub detail: String,
    /// The value is `field.OmitValueType{}`: the body names no value.
    pub omit_value: bool,
}

impl FieldError {
    fn new(error_type: ErrorType, field: &str, bad_value: Option<Value>, detail: &str) -> Self {
        FieldError {
            error_type,
            field: field.to_string(),
            bad_value,
            detail: detail.to_string(),
            omit_value: false,
        }
    }

    /// `field.Invalid(path, field.OmitValueType{}, detail)`: `<field>: Invalid value: <detail>`.
    pub fn invalid_omitting_value(field: &str, detail: &str) -> Self {
        FieldError {
            omit_value: true,
            ..Self::new(ErrorType::Invalid, field, None, detail)
        }
    }

    /// `field.Required`.
    pub fn required(field: &str, detail: &str) -> Self {
        Self::new(ErrorType::Required, field, Some(Value::from("")), detail)
    }

    /// `field.Forbidden`.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        Self::new(ErrorType::Forbidden, field, Some(Value::from("")), detail)
    }

    /// `field.Invalid`.
    pub fn invalid(field: &str, value: Option<Value>, detail: &str) -> Self {
        Self::new(ErrorType::Invalid, field, value, detail)
    }

    /// `field.TypeInvalid`.
    pub fn type_invalid(field: &str, value: Option<Value>, detail: &str) -> Self {
        Self::new(ErrorType::TypeInvalid, field, value, detail)
    }

    /// `field.Duplicate`.
    pub fn duplicate(field: &str, value: Option<Value>) -> Self {
        Self::new(ErrorType::Duplicate, field, value, "")
    }

    /// `field.NotSupported`: the detail lists the valid values, each quoted.
    pub fn not_supported(field: &str, value: Option<Value>, valid: &[String]) -> Self {
        let detail = if valid.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, value, &detail)
    }

    /// `field.TooLong` (the value is omitted; a negative `max` means "unknown").
    pub fn too_long(field: &str, max: i64) -> Self {
        let detail = if max >= 0 {
            format!(
                "may not be more than {} {}",
                max,
                if max == 1 { "byte" } else { "bytes" }
            )
        } else {
            "value is too long".to_string()
        };
        Self::new(
            ErrorType::TooLong,
            field,
            Some(Value::from("<value omitted>")),
            &detail,
        )
    }

    /// `field.TooMany` (a negative `actual` is omitted from the message).
    pub fn too_many(field: &str, actual: i64, max: i64) -> Self {
        let detail = if max >= 0 {
            format!(
                "must have at most {} {}",
                max,
                if max == 1 { "item" } else { "items" }
            )
        } else {
            "has too many items".to_string()
        };
        let value = (actual >= 0).then(|| Value::from(actual));
        Self::new(ErrorType::TooMany, field, value, &detail)
    }

    /// `field.ErrorType.String()`'s cause type: "FieldValueRequired", "FieldValueInvalid", ...
    pub fn cause_type(&self) -> &'static str {
        self.error_type.cause_type()
    }

    /// `Error.ErrorBody()`: the message without the field, exactly as Go prints it.
    pub fn body(&self) -> String {
        let mut s = match self.error_type {
            ErrorType::Required
            | ErrorType::Forbidden
            | ErrorType::TooLong
            | ErrorType::TooShort
            | ErrorType::Internal => self.error_type.text().to_string(),
            ErrorType::TooMany | ErrorType::TooFew if self.bad_value.is_none() => {
                self.error_type.text().to_string()
            }
            _ if self.omit_value => self.error_type.text().to_string(),
            _ => format!(
                "{}: {}",
                self.error_type.text(),
                go_value_v(self.bad_value.as_ref())
            ),
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

/// `Error.Error()`: `<field>: <body>`.
impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

// ---------------------------------------------------------------------------------------------
// Go printing: %v, %q, encoding/json
// ---------------------------------------------------------------------------------------------

/// How `ErrorBody` prints a bad value: `%v` for int64/float64/bool, `%q` for strings,
/// `json.Marshal` for everything else (so `nil` is `null`).
fn go_value_v(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".to_string(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => match num(n) {
            Num::I(i) => i.to_string(),
            Num::F(f) => go_float_g(f),
        },
        Some(Value::String(s)) => go_quote(s),
        Some(other) => go_json(other),
    }
}

/// An approximation of Go's `unicode.IsPrint` (categories L, M, N, P, S and U+0020).
fn go_is_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x20 || (0x7f..0xa0).contains(&u) {
        return false;
    }
    if u < 0x7f {
        return true;
    }
    if c.is_whitespace() || c.is_control() {
        return false;
    }
    !matches!(u,
        0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f
        | 0x202a..=0x202e | 0x2060..=0x206f | 0xe000..=0xf8ff | 0xfeff | 0xfff9..=0xfffb
        | 0xf0000..)
}

/// Go's `strconv.Quote`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if go_is_print(c) => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

// The Go JSON encoding (floats, strings, values) is the library's: olmctl::gojson.

// ---------------------------------------------------------------------------------------------
// Numbers as the apiserver decodes them (int64 or float64)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

fn num(n: &serde_json::Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::I(i),
        None => Num::F(n.as_f64().unwrap_or(f64::NAN)),
    }
}

impl Num {
    fn as_f64(self) -> f64 {
        match self {
            Num::I(i) => i as f64,
            Num::F(f) => f,
        }
    }
}

/// Go's `int64(f)` on amd64: out of range (and NaN) gives `math.MinInt64`.
fn go_f64_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// go-openapi/swag `conv.IsFloat64AJSONInteger`.
fn is_float64_a_json_integer(f: f64) -> bool {
    const MAX_JSON_FLOAT: f64 = 9_007_199_254_740_991.0;
    if f.is_nan() || f.is_infinite() || !(-MAX_JSON_FLOAT..=MAX_JSON_FLOAT).contains(&f) {
        return false;
    }
    let rounded = f.round();
    if f == rounded {
        return true;
    }
    if rounded == 0.0 {
        return false;
    }
    let diff = (f - rounded).abs();
    if diff == 0.0 {
        return true;
    }
    diff < 1e-9 * rounded.abs()
}

// ---------------------------------------------------------------------------------------------
// Schema accessors (schema/convert.go :: NewStructural, validation.go :: ConvertJSONSchemaProps)
// ---------------------------------------------------------------------------------------------

fn get<'a>(s: &'a Value, key: &str) -> Option<&'a Value> {
    s.as_object()?.get(key)
}

fn flag(s: &Value, key: &str) -> bool {
    get(s, key).and_then(Value::as_bool) == Some(true)
}

fn properties(s: &Value) -> Option<&Map<String, Value>> {
    get(s, "properties")?.as_object()
}

fn property<'a>(s: &'a Value, key: &str) -> Option<&'a Value> {
    properties(s)?.get(key)
}

/// `items` when it is one schema (an array of schemas is not structural).
fn items(s: &Value) -> Option<&Value> {
    get(s, "items").filter(|v| v.is_object())
}

/// `additionalProperties`: a schema, or a bool (`StructuralOrBool`).
#[derive(Clone, Copy)]
enum Additional<'a> {
    Schema(&'a Value),
    Allows(bool),
}

impl<'a> Additional<'a> {
    fn schema(self) -> Option<&'a Value> {
        match self {
            Additional::Schema(s) => Some(s),
            Additional::Allows(_) => None,
        }
    }
}

fn additional(s: &Value) -> Option<Additional<'_>> {
    match get(s, "additionalProperties")? {
        Value::Bool(b) => Some(Additional::Allows(*b)),
        v @ Value::Object(_) => Some(Additional::Schema(v)),
        _ => None,
    }
}

/// `Generic.Default.Object` (a `null` default is no default).
fn default_of(s: &Value) -> Option<&Value> {
    get(s, "default").filter(|v| !v.is_null())
}

fn nullable(s: &Value) -> bool {
    flag(s, "nullable")
}

fn f64_kw(s: &Value, key: &str) -> Option<f64> {
    get(s, key)?.as_f64()
}

fn i64_kw(s: &Value, key: &str) -> Option<i64> {
    let v = get(s, key)?;
    v.as_i64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(go_f64_to_i64))
}

fn str_kw<'a>(s: &'a Value, key: &str) -> Option<&'a str> {
    get(s, key)?.as_str()
}

fn sorted_keys(m: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = m.keys().cloned().collect();
    keys.sort();
    keys
}

// ---------------------------------------------------------------------------------------------
// Pruning (pruning/algorithm.go)
// ---------------------------------------------------------------------------------------------

/// `UnknownFieldPathOptions.AppendKey`.
fn unknown_key(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{}.{}", path, key)
    }
}

/// Deletes fields the schema does not specify (`PruneWithOptions(obj, s, isResourceRoot=true,
/// TrackUnknownFieldPaths)`): at the root `apiVersion`, `kind` and `metadata` are kept (their
/// contents are not pruned here); `x-kubernetes-preserve-unknown-fields` keeps a subtree (but
/// its declared properties are pruned normally); `additionalProperties` covers unknown keys;
/// `x-kubernetes-embedded-resource` keeps `apiVersion`/`kind`/`metadata`.
///
/// Returns the pruned paths as upstream reports them, sorted: no leading dot, keys joined by
/// `.`, list indexes as `[i]` (`spec.foo`, `spec.items[0].bar`); the apiserver warns
/// `unknown field "<path>"` for each (R2.13).
pub fn prune(schema: &Value, obj: &mut Value) -> Vec<String> {
    let mut out = Vec::new();
    prune_node(obj, Some(schema), true, "", &mut out, 0);
    out.sort();
    out
}

/// `pruning.prune`. `root` stands for the root clone with `XEmbeddedResource = true`.
fn prune_node(
    x: &mut Value,
    s: Option<&Value>,
    root: bool,
    path: &str,
    out: &mut Vec<String>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(s) = s
        && flag(s, PRESERVE)
    {
        skip_prune(x, Some(s), root, path, out, depth);
        return;
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in sorted_keys(m) {
                    out.push(unknown_key(path, &k));
                }
                m.clear();
                return;
            };
            let embedded = root || flag(s, EMBEDDED);
            let ap = additional(s);
            for k in sorted_keys(m) {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                let child = unknown_key(path, &k);
                if let Some(prop) = property(s, &k) {
                    if let Some(v) = m.get_mut(&k) {
                        prune_node(v, Some(prop), false, &child, out, depth + 1);
                    }
                } else if let Some(ap) = ap {
                    if let Some(v) = m.get_mut(&k) {
                        prune_node(v, ap.schema(), false, &child, out, depth + 1);
                    }
                } else {
                    if !META_FIELDS.contains(&k.as_str()) || !path.is_empty() {
                        out.push(child);
                    }
                    m.remove(&k);
                }
            }
        }
        Value::Array(a) => {
            let it = s.and_then(items);
            for (i, v) in a.iter_mut().enumerate() {
                prune_node(v, it, false, &format!("{}[{}]", path, i), out, depth + 1);
            }
        }
        _ => {}
    }
}

/// `pruning.skipPrune`: below `x-kubernetes-preserve-unknown-fields`, unknown keys stay,
/// declared properties and `additionalProperties` are pruned normally, list items inherit.
fn skip_prune(
    x: &mut Value,
    s: Option<&Value>,
    root: bool,
    path: &str,
    out: &mut Vec<String>,
    depth: usize,
) {
    let Some(s) = s else { return };
    if depth > MAX_DEPTH {
        return;
    }
    match x {
        Value::Object(m) => {
            let embedded = root || flag(s, EMBEDDED);
            let ap = additional(s);
            for k in sorted_keys(m) {
                if embedded && META_FIELDS.contains(&k.as_str()) {
                    continue;
                }
                let child = unknown_key(path, &k);
                let Some(v) = m.get_mut(&k) else { continue };
                if let Some(prop) = property(s, &k) {
                    prune_node(v, Some(prop), false, &child, out, depth + 1);
                } else if let Some(ap) = ap {
                    prune_node(v, ap.schema(), false, &child, out, depth + 1);
                }
            }
        }
        Value::Array(a) => {
            let it = items(s);
            for (i, v) in a.iter_mut().enumerate() {
                skip_prune(v, it, false, &format!("{}[{}]", path, i), out, depth + 1);
            }
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Defaulting (defaulting/prunenulls.go, defaulting/algorithm.go)
// ---------------------------------------------------------------------------------------------

/// `defaulting.getSchemaForField`.
fn schema_for_field<'a>(key: &str, s: Option<&'a Value>) -> Option<&'a Value> {
    let s = s?;
    if let Some(p) = property(s, key) {
        return Some(p);
    }
    additional(s).and_then(Additional::schema)
}

/// Removes `null`s the schema neither allows (`nullable`) nor defaults
/// (`PruneNonNullableNullsWithoutDefaults`); runs after pruning, before defaulting. Only object
/// keys are removed; `null` list items stay.
pub fn prune_nulls(schema: &Value, obj: &mut Value) {
    prune_nulls_node(obj, Some(schema), 0);
}

fn prune_nulls_node(x: &mut Value, s: Option<&Value>, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match x {
        Value::Object(m) => {
            for k in sorted_keys(m) {
                let fs = schema_for_field(&k, s);
                let drop = m.get(&k).is_some_and(Value::is_null)
                    && fs.is_some_and(|fs| !nullable(fs) && default_of(fs).is_none());
                if drop {
                    m.remove(&k);
                } else if let Some(v) = m.get_mut(&k) {
                    prune_nulls_node(v, fs, depth + 1);
                }
            }
        }
        Value::Array(a) => {
            let it = s.and_then(items);
            for v in a.iter_mut() {
                prune_nulls_node(v, it, depth + 1);
            }
        }
        _ => {}
    }
}

/// Applies `default`s (`defaulting.Default`): a property's default is deep-copied in when the
/// key is absent, or when its value is `null` and the property is not `nullable`; the same for
/// `null` values under `additionalProperties` and `null` list items; recursion goes into
/// objects, `additionalProperties` and list items (and into defaults just applied).
pub fn default(schema: &Value, obj: &mut Value) {
    default_node(obj, Some(schema), 0);
}

fn default_node(x: &mut Value, s: Option<&Value>, depth: usize) {
    let Some(s) = s else { return };
    if depth > MAX_DEPTH {
        return;
    }
    match x {
        Value::Object(m) => {
            if let Some(props) = properties(s) {
                for (k, prop) in props {
                    let Some(d) = default_of(prop) else { continue };
                    let apply = match m.get(k) {
                        None => true,
                        Some(Value::Null) => !nullable(prop),
                        Some(_) => false,
                    };
                    if apply {
                        m.insert(k.clone(), d.clone());
                    }
                }
            }
            let ap = additional(s);
            for k in sorted_keys(m) {
                let Some(v) = m.get_mut(&k) else { continue };
                if let Some(prop) = property(s, &k) {
                    default_node(v, Some(prop), depth + 1);
                } else if let Some(ap) = ap {
                    let aps = ap.schema();
                    if v.is_null() && aps.is_some_and(|a| !nullable(a)) {
                        *v = aps.and_then(default_of).cloned().unwrap_or(Value::Null);
                    }
                    default_node(v, aps, depth + 1);
                }
            }
        }
        Value::Array(a) => {
            let it = items(s);
            for v in a.iter_mut() {
                if v.is_null() && it.is_some_and(|i| !nullable(i)) {
                    *v = it.and_then(default_of).cloned().unwrap_or(Value::Null);
                }
                default_node(v, it, depth + 1);
            }
        }
        _ => {}
    }
}

/// What the CR codec does to a decoded custom resource, in upstream's order
/// (`unstructuredSchemaCoercer.apply` then `unstructuredDefaulter.Default`): [`prune`],
/// [`prune_nulls`], [`default`]. Returns the pruned paths. For CRDs with
/// `spec.preserveUnknownFields: true` the caller calls only [`default`].
pub fn decode(schema: &Value, obj: &mut Value) -> Vec<String> {
    let pruned = prune(schema, obj);
    prune_nulls(schema, obj);
    default(schema, obj);
    pruned
}

// ---------------------------------------------------------------------------------------------
// Validation: kube-openapi's SchemaValidator (validate/schema.go and friends)
// ---------------------------------------------------------------------------------------------

/// `openapierrors` codes (errors/schema.go); `Plain` is any error that is not a
/// `*errors.Validation` (kube-openapi's `errors.New`/`fmt.Errorf` ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Code {
    InvalidType,
    Required,
    TooLong,
    TooShort,
    Pattern,
    Enum,
    MultipleOf,
    Max,
    Min,
    Unique,
    MaxItems,
    MinItems,
    TooFewProperties,
    TooManyProperties,
    UnallowedProperty,
    MultipleOfMustBePositive,
    Plain,
}

/// An `*errors.Validation` (or a plain error).
#[derive(Debug, Clone)]
struct OErr {
    code: Code,
    name: String,
    value: Option<Value>,
    valid: Option<i64>,
    values: Vec<Value>,
    message: String,
}

impl OErr {
    fn new(code: Code, name: &str, value: Option<Value>, message: String) -> Self {
        OErr {
            code,
            name: name.to_string(),
            value,
            valid: None,
            values: Vec::new(),
            message,
        }
    }

    fn plain(message: String) -> Self {
        Self::new(Code::Plain, "", None, message)
    }

    fn valid(mut self, valid: i64) -> Self {
        self.valid = Some(valid);
        self
    }
}

/// `validate.Result`: errors (kept unique by message, `AddErrors`) and the match count.
#[derive(Debug, Default)]
struct Res {
    errors: Vec<OErr>,
    count: i64,
}

impl Res {
    fn err(e: OErr) -> Self {
        Res {
            errors: vec![e],
            count: 0,
        }
    }

    fn add(&mut self, e: OErr) {
        if !self.errors.iter().any(|x| x.message == e.message) {
            self.errors.push(e);
        }
    }

    fn merge(&mut self, other: Res) {
        for e in other.errors {
            self.add(e);
        }
        self.count += other.count;
    }

    fn inc(&mut self) {
        self.count += 1;
    }

    fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

/// `errors.InvalidType` with a string value.
fn invalid_type(path: &str, type_name: &str, value: &str) -> OErr {
    OErr::new(
        Code::InvalidType,
        path,
        Some(Value::from(value)),
        format!(
            "{} in body must be of type {}: {}",
            path,
            type_name,
            go_quote(value)
        ),
    )
}

/// The schema's type list after `ConvertJSONSchemaProps` (int-or-string is integer,string).
fn schema_types(s: &Value) -> Vec<&str> {
    if flag(s, INT_OR_STRING) {
        return vec!["integer", "string"];
    }
    match str_kw(s, "type") {
        Some(t) if !t.is_empty() => vec![t],
        _ => Vec::new(),
    }
}

/// Formats kube-apiserver validates in CRDs (`supportedVersionedFormats`, normalized without
/// dashes), all of them in kube-openapi's `strfmt.Default`.
const STRING_FORMATS: [&str; 26] = [
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

/// `StripUnsupportedFormatsPostProcessorForVersion`: the format left after the apiserver drops
/// the ones it does not support for the type.
fn effective_format<'a>(s: &'a Value, types: &[&str]) -> &'a str {
    let f = str_kw(s, "format").unwrap_or("");
    if f.is_empty() {
        return "";
    }
    let schema_type = if types.len() == 1 { types[0] } else { "" };
    let keep = match schema_type {
        "" | "string" => STRING_FORMATS.contains(&f.replace('-', "").as_str()),
        "integer" => f == "int32" || f == "int64",
        "number" => f == "float" || f == "double",
        _ => false,
    };
    if keep { f } else { "" }
}

/// `ValidateCustomResource(nil, obj, validator)` for the schema, then the embedded-resource
/// checks (`objectmeta.Validate`, apiVersion/kind only) and the list-type invariants
/// (`listtype.ValidateListSetsAndMaps`), in the order `customResourceStrategy.Validate` appends
/// them. Every error, none dropped (CEL rules are not evaluated: see [`cel_rules`]).
///
/// Field paths as upstream prints them: from the schema validation `spec.replicas`,
/// `spec.items[0].name`, map keys dotted (`spec.labels.foo`, kube-openapi joins them with `.`),
/// and `<nil>` for kube-openapi's errors without a path (anyOf/oneOf/allOf/not summaries, the
/// int32/int64 range checks); from the list-type and embedded-resource checks map keys as
/// `[key]` (`field.Path.Key`).
pub fn validate(schema: &Value, obj: &Value) -> Vec<FieldError> {
    let res = validate_node(schema, "", obj, 0);
    let mut errs = to_field_errors(res);
    embedded_node("", obj, Some(schema), &mut errs, 0);
    if let Value::Object(m) = obj {
        list_map_node("", schema, m, &mut errs, 0);
    }
    errs
}

/// `validation.go :: kubeOpenAPIResultToFieldErrors` with `fldPath == nil`.
fn to_field_errors(res: Res) -> Vec<FieldError> {
    let mut out = Vec::new();
    for e in res.errors {
        if e.code == Code::Plain {
            out.push(FieldError::invalid(
                "<nil>",
                Some(Value::from("")),
                &e.message,
            ));
            continue;
        }
        let path = if !e.name.is_empty() && e.name != "." {
            e.name.strip_prefix('.').unwrap_or(&e.name).to_string()
        } else {
            "<nil>".to_string()
        };
        let value = || e.value.clone().or_else(|| Some(Value::from("")));
        out.push(match e.code {
            Code::Required => FieldError::required(&path, ""),
            Code::Enum => {
                let values: Vec<String> = e
                    .values
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => go_json(other),
                    })
                    .collect();
                FieldError::not_supported(&path, e.value.clone(), &values)
            }
            Code::TooLong => FieldError::too_long(&path, e.valid.unwrap_or(-1)),
            Code::MaxItems | Code::TooManyProperties => {
                let actual = e.value.as_ref().and_then(Value::as_i64).unwrap_or(-1);
                FieldError::too_many(&path, actual, e.valid.unwrap_or(-1))
            }
            Code::InvalidType => FieldError::type_invalid(&path, value(), &e.message),
            _ => FieldError::invalid(&path, value(), &e.message),
        });
    }
    out
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Null,
    Bool,
    Str,
    Num(Num),
    Array,
    Object,
}

fn kind_of(v: &Value) -> Kind {
    match v {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::String(_) => Kind::Str,
        Value::Number(n) => Kind::Num(num(n)),
        Value::Array(_) => Kind::Array,
        Value::Object(_) => Kind::Object,
    }
}

impl PartialEq for Num {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Num::I(a), Num::I(b)) => a == b,
            (Num::F(a), Num::F(b)) => a == b,
            _ => false,
        }
    }
}

/// `SchemaValidator.Validate`: the validators in upstream's order (type, schemaProps, string,
/// format, number, slice, common (enum), object), each where it applies, with the match
/// counting that anyOf/oneOf use to pick the errors they report.
fn validate_node(s: &Value, path: &str, data: &Value, depth: usize) -> Res {
    let mut res = Res::default();
    if depth > MAX_DEPTH {
        return res;
    }
    let types = schema_types(s);
    let format = effective_format(s, &types);
    let kind = kind_of(data);
    if kind == Kind::Null {
        res.merge(type_validate(&types, nullable(s), format, path, data));
        res.merge(common_validate(s, path, data));
        return res;
    }
    if !types.is_empty() || !format.is_empty() {
        res.merge(type_validate(&types, nullable(s), format, path, data));
        res.inc();
    }
    res.merge(schema_props_validate(s, path, data, depth));
    res.inc();
    if let Value::String(text) = data {
        res.merge(string_validate(s, path, text));
        res.inc();
        if STRING_FORMATS.contains(&format.replace('-', "").as_str()) {
            if !format_validates(format, text) {
                res.add(invalid_type(path, format, text));
            }
            res.inc();
        }
    }
    if let Kind::Num(n) = kind {
        res.merge(number_validate(s, &types, format, path, n));
        res.inc();
    }
    if let Value::Array(a) = data {
        res.merge(slice_validate(s, path, a, depth));
        res.inc();
    }
    res.merge(common_validate(s, path, data));
    res.inc();
    if let Value::Object(m) = data {
        res.merge(object_validate(s, path, m, depth));
        res.inc();
    }
    res.inc();
    res
}

/// `typeValidator.Validate` (type.go), with `schemaInfoForType` for unstructured values.
fn type_validate(types: &[&str], nullable: bool, format: &str, path: &str, data: &Value) -> Res {
    let ok = Res {
        errors: Vec::new(),
        count: 1,
    };
    let (sch_type, data_format) = match kind_of(data) {
        Kind::Null => {
            if !types.is_empty() && !types.contains(&"null") && !nullable {
                return Res::err(invalid_type(path, &types.join(","), "null"));
            }
            return ok;
        }
        Kind::Bool => ("boolean", ""),
        Kind::Str => ("string", ""),
        Kind::Num(Num::I(_)) => ("integer", "int64"),
        Kind::Num(Num::F(_)) => ("number", "float64"),
        Kind::Array => ("array", ""),
        Kind::Object => ("object", ""),
    };
    let is_str_or_slice = matches!(data, Value::String(_) | Value::Array(_));
    let is_float_int = match kind_of(data) {
        Kind::Num(Num::F(f)) => is_float64_a_json_integer(f) && types.contains(&"integer"),
        _ => false,
    };
    let is_int_float = sch_type == "integer" && types.contains(&"number");
    let has_format = !format.is_empty();
    let format_matches =
        types.contains(&sch_type) || data_format == format || is_float_int || is_int_float;
    if !is_str_or_slice && has_format && !format_matches {
        return Res::err(invalid_type(path, format, data_format));
    }
    let numeric = types.contains(&"number") || types.contains(&"integer");
    if !numeric && has_format && is_str_or_slice {
        return ok;
    }
    if !(types.contains(&sch_type) || is_float_int || is_int_float) {
        return Res::err(invalid_type(path, &types.join(","), sch_type));
    }
    ok
}

fn sub_schemas<'a>(s: &'a Value, key: &str) -> Vec<&'a Value> {
    match get(s, key) {
        Some(Value::Array(a)) => a.iter().collect(),
        _ => Vec::new(),
    }
}

/// `schemaPropsValidator.Validate` (schema_props.go): anyOf, oneOf, allOf, not.
fn schema_props_validate(s: &Value, path: &str, data: &Value, depth: usize) -> Res {
    let mut main = Res::default();
    let any_of = sub_schemas(s, "anyOf");
    if !any_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        for sub in any_of {
            let r = validate_node(sub, path, data, depth + 1);
            if r.is_valid() {
                best = None;
                first_success = Some(r);
                break;
            }
            if best.as_ref().is_none_or(|b| r.count > b.count) {
                best = Some(r);
            }
        }
        if first_success.is_none() {
            main.add(OErr::plain(format!(
                "{} must validate at least one schema (anyOf)",
                go_quote(path)
            )));
        }
        if let Some(b) = best {
            main.merge(b);
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    let one_of = sub_schemas(s, "oneOf");
    if !one_of.is_empty() {
        let mut best: Option<Res> = None;
        let mut first_success: Option<Res> = None;
        let mut validated = 0;
        for sub in one_of {
            let r = validate_node(sub, path, data, depth + 1);
            if r.is_valid() {
                validated += 1;
                best = None;
                if first_success.is_none() {
                    first_success = Some(r);
                }
                continue;
            }
            if validated == 0 && best.as_ref().is_none_or(|b| r.count > b.count) {
                best = Some(r);
            }
        }
        if validated != 1 {
            let additional = if validated == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {} valid alternatives", validated)
            };
            main.add(OErr::plain(format!(
                "{} must validate one and only one schema (oneOf). {}",
                go_quote(path),
                additional
            )));
            if let Some(b) = best {
                main.merge(b);
            }
        } else if let Some(f) = first_success {
            main.merge(f);
        }
    }
    let all_of = sub_schemas(s, "allOf");
    if !all_of.is_empty() {
        let mut validated = 0;
        let total = all_of.len();
        for sub in all_of {
            let r = validate_node(sub, path, data, depth + 1);
            if r.is_valid() {
                validated += 1;
            }
            main.merge(r);
        }
        if validated != total {
            let additional = if validated == 0 {
                ". None validated"
            } else {
                ""
            };
            main.add(OErr::plain(format!(
                "{} must validate all the schemas (allOf){}",
                go_quote(path),
                additional
            )));
        }
    }
    if let Some(not) = get(s, "not").filter(|n| n.is_object())
        && validate_node(not, path, data, depth + 1).is_valid()
    {
        main.add(OErr::plain(format!(
            "{} must not validate the schema (not)",
            go_quote(path)
        )));
    }
    main.inc();
    main
}

/// `stringValidator.Validate` (validator.go): maxLength, minLength (runes), pattern; the first
/// failure only.
fn string_validate(s: &Value, path: &str, data: &str) -> Res {
    let runes = data.chars().count() as i64;
    if let Some(max) = i64_kw(s, "maxLength")
        && runes > max
    {
        let msg = format!("{} in body should be at most {} chars long", path, max);
        return Res::err(OErr::new(Code::TooLong, path, Some(Value::from(data)), msg).valid(max));
    }
    if let Some(min) = i64_kw(s, "minLength")
        && runes < min
    {
        let msg = format!("{} in body should be at least {} chars long", path, min);
        return Res::err(OErr::new(Code::TooShort, path, Some(Value::from(data)), msg).valid(min));
    }
    if let Some(pattern) = str_kw(s, "pattern").filter(|p| !p.is_empty()) {
        let shown = match go_regex(pattern) {
            Ok(re) if re.is_match(data) => return Res::default(),
            Ok(_) => pattern.to_string(),
            Err(e) => format!("{}, but pattern is invalid: {}", pattern, e),
        };
        let msg = format!("{} in body should match '{}'", path, shown);
        return Res::err(OErr::new(Code::Pattern, path, Some(Value::from(data)), msg));
    }
    Res::default()
}

/// `IsValueValidAgainstRange` (values.go): the error text when `val` does not fit the type and
/// format.
fn range_error(
    val: Num,
    type_name: &str,
    format: &str,
    prefix: &str,
    path: &str,
) -> Option<String> {
    let rep = match val {
        Num::I(i) => i.to_string(),
        Num::F(f) => format!("{}", f),
    };
    let bad = match type_name {
        "integer" => match format {
            "int32" => rep.parse::<i32>().is_err(),
            _ => rep.parse::<i64>().is_err(),
        },
        _ => match format {
            "float" | "float32" => rep
                .parse::<f64>()
                .map(|x| x.is_finite() && (x as f32).is_infinite())
                .unwrap_or(true),
            _ => false,
        },
    };
    bad.then(|| {
        if format.is_empty() {
            format!(
                "{} value must be of type {} (default format) in {}",
                prefix, type_name, path
            )
        } else {
            format!(
                "{} value must be of type {} with format {} in {}",
                prefix, type_name, format, path
            )
        }
    })
}

fn bound_message(path: &str, is_max: bool, exclusive: bool, bound: &str) -> String {
    let relation = match (is_max, exclusive) {
        (true, false) => "less than or equal to",
        (true, true) => "less than",
        (false, false) => "greater than or equal to",
        (false, true) => "greater than",
    };
    format!("{} in body should be {} {}", path, relation, bound)
}

/// `Maximum`/`Minimum` on float64 (values.go).
fn bound_f(path: &str, data: f64, bound: f64, exclusive: bool, is_max: bool) -> Option<OErr> {
    let fails = if is_max {
        (!exclusive && data > bound) || (exclusive && data >= bound)
    } else {
        (!exclusive && data < bound) || (exclusive && data <= bound)
    };
    fails.then(|| {
        let code = if is_max { Code::Max } else { Code::Min };
        let msg = bound_message(path, is_max, exclusive, &go_float_g(bound));
        OErr::new(code, path, Some(Value::from(data)), msg)
    })
}

/// `MaximumNativeType`/`MinimumNativeType` (values.go).
fn bound_native(path: &str, val: Num, bound: f64, exclusive: bool, is_max: bool) -> Option<OErr> {
    match val {
        Num::I(data) => {
            let b = go_f64_to_i64(bound);
            let fails = if is_max {
                (!exclusive && data > b) || (exclusive && data >= b)
            } else {
                (!exclusive && data < b) || (exclusive && data <= b)
            };
            fails.then(|| {
                let code = if is_max { Code::Max } else { Code::Min };
                let msg = bound_message(path, is_max, exclusive, &b.to_string());
                OErr::new(code, path, Some(Value::from(data)), msg)
            })
        }
        Num::F(data) => bound_f(path, data, bound, exclusive, is_max),
    }
}

fn multiple_of_positive(path: &str, factor: Value, shown: &str) -> OErr {
    let msg = format!(
        "factor MultipleOf declared for {} must be positive: {}",
        path, shown
    );
    OErr::new(Code::MultipleOfMustBePositive, path, Some(factor), msg)
}

fn not_multiple_of(path: &str, shown: &str, value: Value) -> OErr {
    let msg = format!("{} in body should be a multiple of {}", path, shown);
    OErr::new(Code::MultipleOf, path, Some(value), msg)
}

/// `MultipleOf` on float64 (values.go).
fn multiple_of_f(path: &str, data: f64, factor: f64) -> Option<OErr> {
    if factor <= 0.0 {
        return Some(multiple_of_positive(
            path,
            Value::from(factor),
            &go_float_g(factor),
        ));
    }
    let mult = if factor < 1.0 {
        1.0 / factor * data
    } else {
        data / factor
    };
    (!is_float64_a_json_integer(mult))
        .then(|| not_multiple_of(path, &go_float_g(factor), Value::from(data)))
}

/// `MultipleOfNativeType` (values.go).
fn multiple_of_native(path: &str, val: Num, factor: f64) -> Option<OErr> {
    match val {
        Num::I(data) => {
            let f = go_f64_to_i64(factor);
            if f <= 0 {
                return Some(multiple_of_positive(path, Value::from(f), &f.to_string()));
            }
            (data.wrapping_div(f).wrapping_mul(f) != data)
                .then(|| not_multiple_of(path, &f.to_string(), Value::from(data)))
        }
        Num::F(data) => multiple_of_f(path, data, factor),
    }
}

/// `numberValidator.Validate` (validator.go): the range of the type/format, then multipleOf,
/// minimum, maximum (merged in that order).
fn number_validate(s: &Value, types: &[&str], format: &str, path: &str, val: Num) -> Res {
    let type_name = match types {
        ["integer"] => "integer",
        ["number"] => "number",
        _ => "",
    };
    let format = match (type_name, format) {
        ("integer", "int32" | "int64") | ("number", "float" | "double") => format,
        _ => "",
    };
    let data = val.as_f64();
    let mut res = Res::default();
    if let Some(e) = range_error(val, type_name, format, "Checked", path) {
        res.add(OErr::plain(e));
    }
    let mut r_mult = Res::default();
    if let Some(factor) = f64_kw(s, "multipleOf") {
        match range_error(Num::F(factor), type_name, format, "MultipleOf", path) {
            None => r_mult.add_opt(multiple_of_native(path, val, factor)),
            Some(e) => {
                r_mult.add(OErr::plain(e));
                r_mult.add_opt(multiple_of_f(path, data, factor));
            }
        }
    }
    let mut r_max = Res::default();
    if let Some(max) = f64_kw(s, "maximum") {
        let excl = flag(s, "exclusiveMaximum");
        match range_error(Num::F(max), type_name, format, "Maximum boundary", path) {
            None => r_max.add_opt(bound_native(path, val, max, excl, true)),
            Some(e) => {
                r_max.add(OErr::plain(e));
                r_max.add_opt(bound_f(path, data, max, excl, true));
            }
        }
    }
    let mut r_min = Res::default();
    if let Some(min) = f64_kw(s, "minimum") {
        let excl = flag(s, "exclusiveMinimum");
        match range_error(Num::F(min), type_name, format, "Minimum boundary", path) {
            None => r_min.add_opt(bound_native(path, val, min, excl, false)),
            Some(e) => {
                r_min.add(OErr::plain(e));
                r_min.add_opt(bound_f(path, data, min, excl, false));
            }
        }
    }
    res.merge(r_mult);
    res.merge(r_min);
    res.merge(r_max);
    res.inc();
    res
}

impl Res {
    fn add_opt(&mut self, e: Option<OErr>) {
        if let Some(e) = e {
            self.add(e);
        }
    }
}

/// `reflect.DeepEqual` of two unstructured values (int64 and float64 differ).
fn go_deep_equal(a: &Value, b: &Value) -> bool {
    deep_equal_at(a, b, 0)
}

fn deep_equal_at(a: &Value, b: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => num(x) == num(y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| deep_equal_at(p, q, depth + 1))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| deep_equal_at(p, q, depth + 1)))
        }
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    }
}

/// `schemaSliceValidator.Validate` (slice_validator.go): items, minItems, maxItems, uniqueItems.
fn slice_validate(s: &Value, path: &str, a: &[Value], depth: usize) -> Res {
    let mut res = Res::default();
    if let Some(it) = items(s) {
        for (i, v) in a.iter().enumerate() {
            res.merge(validate_node(it, &format!("{}[{}]", path, i), v, depth + 1));
        }
    }
    let size = a.len() as i64;
    if let Some(min) = i64_kw(s, "minItems")
        && size < min
    {
        let msg = format!("{} in body should have at least {} items", path, min);
        res.add(OErr::new(Code::MinItems, path, Some(Value::from(size)), msg).valid(min));
    }
    if let Some(max) = i64_kw(s, "maxItems")
        && size > max
    {
        let msg = format!("{} in body should have at most {} items", path, max);
        res.add(OErr::new(Code::MaxItems, path, Some(Value::from(size)), msg).valid(max));
    }
    if flag(s, "uniqueItems") {
        let dup = a
            .iter()
            .enumerate()
            .any(|(i, v)| a[..i].iter().any(|u| go_deep_equal(v, u)));
        if dup {
            let msg = format!("{} in body shouldn't contain duplicates", path);
            res.add(OErr::new(Code::Unique, path, None, msg));
        }
    }
    res.inc();
    res
}

/// Go's `string(rune(x))` for an int64.
fn go_rune_string(x: i64) -> String {
    u32::try_from(x)
        .ok()
        .and_then(char::from_u32)
        .unwrap_or('\u{fffd}')
        .to_string()
}

/// One step of `basicCommonValidator.Validate`: `data` converted to the enum value's Go type
/// (when convertible) and compared with `reflect.DeepEqual`.
fn go_enum_match(data: &Value, e: &Value) -> bool {
    match (kind_of(data), kind_of(e)) {
        (Kind::Null, _) | (_, Kind::Null) => false,
        (Kind::Num(Num::I(a)), Kind::Num(Num::I(b))) => a == b,
        (Kind::Num(Num::I(a)), Kind::Num(Num::F(b))) => a as f64 == b,
        (Kind::Num(Num::I(a)), Kind::Str) => e.as_str() == Some(go_rune_string(a).as_str()),
        (Kind::Num(Num::F(a)), Kind::Num(Num::F(b))) => a == b,
        (Kind::Num(Num::F(a)), Kind::Num(Num::I(b))) => go_f64_to_i64(a) == b,
        (Kind::Str, Kind::Str) | (Kind::Bool, Kind::Bool) => data == e,
        (Kind::Array, Kind::Array) | (Kind::Object, Kind::Object) => go_deep_equal(data, e),
        _ => false,
    }
}

/// A rough `fmt.Sprintf("%v", values)` (only used to tell enum messages apart).
fn go_sprint_values(values: &[Value]) -> String {
    let parts: Vec<String> = values
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Null => "<nil>".to_string(),
            other => go_value_v(Some(other)),
        })
        .collect();
    format!("[{}]", parts.join(" "))
}

/// `basicCommonValidator.Validate` (validator.go): enum.
fn common_validate(s: &Value, path: &str, data: &Value) -> Res {
    let Some(Value::Array(values)) = get(s, "enum") else {
        return Res::default();
    };
    if values.is_empty() || values.iter().any(|e| go_enum_match(data, e)) {
        return Res::default();
    }
    let msg = format!(
        "{} in body should be one of {}",
        path,
        go_sprint_values(values)
    );
    let value = (!data.is_null()).then(|| data.clone());
    let mut e = OErr::new(Code::Enum, path, value, msg);
    e.values = values.clone();
    Res::err(e)
}

/// `objectValidator.Validate` (object_validator.go): minProperties, maxProperties,
/// additionalProperties (false: forbidden keys; schema: validated), properties, required.
fn object_validate(s: &Value, path: &str, m: &Map<String, Value>, depth: usize) -> Res {
    let mut res = Res::default();
    let size = m.len() as i64;
    if let Some(min) = i64_kw(s, "minProperties")
        && size < min
    {
        let msg = format!("{} in body should have at least {} properties", path, min);
        res.add(OErr::new(Code::TooFewProperties, path, Some(Value::from(size)), msg).valid(min));
    }
    if let Some(max) = i64_kw(s, "maxProperties")
        && size > max
    {
        let msg = format!("{} in body should have at most {} properties", path, max);
        res.add(OErr::new(Code::TooManyProperties, path, Some(Value::from(size)), msg).valid(max));
    }
    let props = properties(s);
    let declared = |k: &str| props.is_some_and(|p| p.contains_key(k));
    let keys = sorted_keys(m);
    match additional(s) {
        Some(Additional::Allows(false)) => {
            for k in keys.iter().filter(|k| !declared(k)) {
                let msg = format!("{}.{} in body is a forbidden property", path, k);
                res.add(OErr::new(
                    Code::UnallowedProperty,
                    path,
                    Some(Value::from(k.as_str())),
                    msg,
                ));
            }
        }
        Some(Additional::Schema(ap)) => {
            for k in keys.iter().filter(|k| !declared(k)) {
                if let Some(v) = m.get(k) {
                    res.merge(validate_node(ap, &format!("{}.{}", path, k), v, depth + 1));
                }
            }
        }
        _ => {}
    }
    if let Some(props) = props {
        let mut names: Vec<&String> = props.keys().collect();
        names.sort();
        for name in names {
            let (Some(v), Some(ps)) = (m.get(name), props.get(name)) else {
                continue;
            };
            let child = if path.is_empty() {
                name.clone()
            } else {
                format!("{}.{}", path, name)
            };
            res.merge(validate_node(ps, &child, v, depth + 1));
        }
    }
    if let Some(Value::Array(required)) = get(s, "required") {
        for k in required.iter().filter_map(Value::as_str) {
            if !m.contains_key(k) {
                let name = format!("{}.{}", path, k);
                let msg = format!("{} in body is required", name);
                res.add(OErr::new(Code::Required, &name, None, msg));
            }
        }
    }
    res
}

// ---------------------------------------------------------------------------------------------
// Formats (validation/formats.go, strfmt, govalidator)
// ---------------------------------------------------------------------------------------------

/// `strfmt.Default.Validates(format, data)` for the formats kube-apiserver keeps.
fn format_validates(format: &str, data: &str) -> bool {
    match format.replace('-', "").as_str() {
        "bsonobjectid" => data.len() == 24 && data.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(data),
        "email" => is_email(data),
        "hostname" => is_hostname(data),
        "ipv4" => parse_ip_sloppy(data) && data.contains('.'),
        "ipv6" => parse_ip_sloppy(data) && data.contains(':'),
        "cidr" => is_cidr(data),
        "mac" => is_mac(data),
        "uuid" => builtin_match(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            data,
        ),
        "uuid3" => builtin_match(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            data,
        ),
        "uuid4" => builtin_match(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            data,
        ),
        "uuid5" => builtin_match(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            data,
        ),
        "isbn" => is_isbn(data, 10) || is_isbn(data, 13),
        "isbn10" => is_isbn(data, 10),
        "isbn13" => is_isbn(data, 13),
        "creditcard" => is_credit_card(data),
        "ssn" => data.len() == 11 && builtin_match(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$", data),
        "hexcolor" => builtin_match(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", data),
        "rgbcolor" => builtin_match(
            r"^rgb\(\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*\)$",
            data,
        ),
        "byte" => builtin_match(
            r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
            data,
        ),
        "password" => true,
        "date" => is_date(data),
        "duration" => is_duration(data),
        "datetime" => is_date_time(data),
        "k8sshortname" => {
            data.len() <= 63 && builtin_match(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", data)
        }
        "k8slongname" => {
            data.len() <= 253
                && builtin_match(
                    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
                    data,
                )
        }
        _ => true,
    }
}

fn regex_cache() -> &'static Mutex<HashMap<String, Result<Regex, String>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Result<Regex, String>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Compiles a (Rust syntax) regex once.
fn cached_regex(pattern: &str) -> Result<Regex, String> {
    let mut cache = regex_cache().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(r) = cache.get(pattern) {
        return r.clone();
    }
    let compiled = regex::RegexBuilder::new(pattern)
        .size_limit(64 << 20)
        .build()
        .map_err(|e| {
            // Go's shape, "error parsing regexp: <what>: `<expr>`", with the regex crate's <what>.
            let text = e.to_string();
            let what = text
                .lines()
                .rev()
                .find_map(|l| l.strip_prefix("error: "))
                .unwrap_or(&text);
            format!("error parsing regexp: {}: `{}`", what.trim(), pattern)
        });
    if cache.len() > 4096 {
        cache.clear();
    }
    cache.insert(pattern.to_string(), compiled.clone());
    compiled
}

fn builtin_match(pattern: &str, data: &str) -> bool {
    cached_regex(pattern)
        .map(|r| r.is_match(data))
        .unwrap_or(false)
}

/// Go (RE2) regex syntax in the `regex` crate: `\d \w \s \b` and their negations are ASCII
/// as in Go, `\Q…\E` quotes.
fn translate_go_regex(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut in_class = false;
    let mut class_start = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let n = chars[i + 1];
            i += 2;
            let (inner, negated) = match n {
                'd' => ("0-9", false),
                'D' => ("0-9", true),
                'w' => ("0-9A-Za-z_", false),
                'W' => ("0-9A-Za-z_", true),
                's' => ("\\t\\n\\f\\r ", false),
                'S' => ("\\t\\n\\f\\r ", true),
                'b' | 'B' if !in_class => {
                    out.push_str(if n == 'b' { "(?-u:\\b)" } else { "(?-u:\\B)" });
                    class_start = false;
                    continue;
                }
                'Q' => {
                    let mut lit = String::new();
                    while i < chars.len() && !(chars[i] == '\\' && chars.get(i + 1) == Some(&'E')) {
                        lit.push(chars[i]);
                        i += 1;
                    }
                    if i < chars.len() {
                        i += 2;
                    }
                    for lc in lit.chars() {
                        if in_class {
                            let _ = write!(out, "\\x{{{:x}}}", lc as u32);
                        } else {
                            out.push_str(&regex::escape(&lc.to_string()));
                        }
                    }
                    class_start = false;
                    continue;
                }
                _ => {
                    out.push('\\');
                    out.push(n);
                    class_start = false;
                    continue;
                }
            };
            match (in_class, negated) {
                (false, false) => {
                    let _ = write!(out, "[{}]", inner);
                }
                (false, true) | (true, true) => {
                    let _ = write!(out, "[^{}]", inner);
                }
                (true, false) => out.push_str(inner),
            }
            class_start = false;
            continue;
        }
        if in_class {
            if c == '[' && chars.get(i + 1) == Some(&':') {
                // a POSIX class such as [:alpha:]
                let rest: String = chars[i..].iter().collect();
                if let Some(end) = rest.find(":]") {
                    out.push_str(&rest[..end + 2]);
                    i += rest[..end + 2].chars().count();
                    class_start = false;
                    continue;
                }
            }
            if c == '[' {
                out.push_str("\\[");
                i += 1;
                class_start = false;
                continue;
            }
            if c == ']' && !class_start {
                in_class = false;
            }
            if c == '&' || c == '~' || (c == '-' && chars.get(i + 1) == Some(&'-')) {
                // set operators in the regex crate, plain characters in Go
                out.push('\\');
            }
            out.push(c);
            class_start = class_start && c == '^';
            i += 1;
            continue;
        }
        if c == '[' {
            in_class = true;
            class_start = true;
            out.push(c);
            if chars.get(i + 1) == Some(&'^') {
                out.push('^');
                i += 1;
            }
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// `regexp.Compile` of a schema `pattern` (cached).
pub(crate) fn go_regex(pattern: &str) -> Result<Regex, String> {
    cached_regex(&translate_go_regex(pattern))
}

/// `strfmt.IsDate`: `time.Parse("2006-01-02", s)`.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let part = &b[r];
        part.iter().all(u8::is_ascii_digit).then(|| {
            part.iter()
                .fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'))
        })
    };
    let (Some(y), Some(m), Some(d)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `strfmt.IsDateTime`.
fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    let Ok(re) =
        cached_regex(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
    else {
        return false;
    };
    match re.captures(parts[1]) {
        Some(c) => {
            let g = |i: usize| c.get(i).map(|m| m.as_str()).unwrap_or("");
            g(1) <= "23" && g(2) <= "59" && g(3) <= "59"
        }
        None => false,
    }
}

/// Go's `time.ParseDuration`.
fn go_parse_duration(s: &str) -> bool {
    const LIMIT: u64 = 1 << 63;
    let mut s = s.as_bytes();
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return true;
    }
    if s.is_empty() {
        return false;
    }
    let mut d: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return false;
        }
        let before = s.len();
        let mut v: u64 = 0;
        let mut i = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return false;
            }
            v = v * 10 + u64::from(s[i] - b'0');
            if v > LIMIT {
                return false;
            }
            i += 1;
        }
        s = &s[i..];
        let pre = s.len() != before;
        let mut post = false;
        let mut f: u64 = 0;
        let mut scale = 1.0f64;
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let pl = s.len();
            let mut i = 0;
            let mut overflow = false;
            while i < s.len() && s[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(s[i] - b'0');
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            s = &s[i..];
            post = pl != s.len();
        }
        if !pre && !post {
            return false;
        }
        let mut i = 0;
        while i < s.len() && !(s[i] == b'.' || s[i].is_ascii_digit()) {
            i += 1;
        }
        if i == 0 {
            return false;
        }
        let unit: u64 = match &s[..i] {
            b"ns" => 1,
            b"us" => 1_000,
            u if u == "µs".as_bytes() || u == "μs".as_bytes() => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => return false,
        };
        s = &s[i..];
        if v > LIMIT / unit {
            return false;
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return false;
            }
        }
        d += v;
        if d > LIMIT {
            return false;
        }
    }
    neg || d < LIMIT
}

/// `strfmt.IsDuration`: Go's `time.ParseDuration`, else strfmt's lenient `<n> <unit>` form.
fn is_duration(s: &str) -> bool {
    if go_parse_duration(s) {
        return true;
    }
    let Ok(re) = cached_regex(r"(([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+))") else {
        return false;
    };
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let fold = |x: &str| x.to_lowercase().replace('μ', "µ");
    let mut ok = false;
    for c in re.captures_iter(s) {
        let factor = c.get(2).map(|m| m.as_str()).unwrap_or("");
        if factor.parse::<i64>().is_err() {
            return false;
        }
        let unit = c
            .get(3)
            .map(|m| m.as_str().trim().to_lowercase())
            .unwrap_or_default();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || fold(variant) == fold(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's forked `parseIPv4` (k8s.io/utils/net `ParseIPSloppy`: leading zeros allowed).
fn parse_ipv4_sloppy(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.trim_start_matches('0').len() <= 3
                && p.parse::<u32>().map(|n| n <= 255).unwrap_or(false)
        })
}

/// `netutils.ParseIPSloppy(s) != nil` (IPv6 through the standard library's parser).
fn parse_ip_sloppy(s: &str) -> bool {
    parse_ipv4_sloppy(s) || s.parse::<std::net::Ipv6Addr>().is_ok()
}

/// `netutils.ParseCIDRSloppy`.
fn is_cidr(s: &str) -> bool {
    let Some((addr, mask)) = s.split_once('/') else {
        return false;
    };
    let bits = if parse_ipv4_sloppy(addr) {
        32
    } else if addr.parse::<std::net::Ipv6Addr>().is_ok() {
        128
    } else {
        return false;
    };
    !mask.is_empty()
        && mask.bytes().all(|b| b.is_ascii_digit())
        && mask.trim_start_matches('0').len() <= 3
        && mask.parse::<u32>().map(|n| n <= bits).unwrap_or(false)
}

/// `net.ParseMAC`.
fn is_mac(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 14 {
        return false;
    }
    let hex2 = |x: &[u8]| x.len() >= 2 && x[0].is_ascii_hexdigit() && x[1].is_ascii_hexdigit();
    if b[2] == b':' || b[2] == b'-' {
        if !(b.len() + 1).is_multiple_of(3) {
            return false;
        }
        let n = (b.len() + 1) / 3;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n).all(|i| {
            let x = &b[i * 3..];
            hex2(x) && (i == n - 1 || x[2] == b[2])
        })
    } else if b[4] == b'.' {
        if !(b.len() + 1).is_multiple_of(5) {
            return false;
        }
        let n = 2 * (b.len() + 1) / 5;
        if n != 6 && n != 8 && n != 20 {
            return false;
        }
        (0..n / 2).all(|i| {
            let x = &b[i * 5..];
            hex2(x) && hex2(&x[2..]) && (i == n / 2 - 1 || x[4] == b'.')
        })
    } else {
        false
    }
}

/// `strfmt.IsHostname`.
fn is_hostname(s: &str) -> bool {
    let pattern = r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$";
    builtin_match(pattern, s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// `govalidator.IsISBN`.
fn is_isbn(s: &str, version: u32) -> bool {
    let sanitized: Vec<u8> = s
        .bytes()
        .filter(|b| !b" \t\n\r\x0b\x0c-".contains(b))
        .collect();
    let digit = |b: u8| i32::from(b) - i32::from(b'0');
    if version == 10 {
        let shape = sanitized.len() == 10
            && sanitized[..9].iter().all(u8::is_ascii_digit)
            && (sanitized[9].is_ascii_digit() || sanitized[9] == b'X');
        if !shape {
            return false;
        }
        let mut sum: i32 = (0..9).map(|i| (i as i32 + 1) * digit(sanitized[i])).sum();
        sum += if sanitized[9] == b'X' {
            100
        } else {
            10 * digit(sanitized[9])
        };
        sum % 11 == 0
    } else {
        if sanitized.len() != 13 || !sanitized.iter().all(u8::is_ascii_digit) {
            return false;
        }
        let sum: i32 = (0..12).map(|i| [1, 3][i % 2] * digit(sanitized[i])).sum();
        digit(sanitized[12]) - ((10 - (sum % 10)) % 10) == 0
    }
}

/// `govalidator.IsCreditCard`.
fn is_credit_card(s: &str) -> bool {
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    let pattern = r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$";
    if !builtin_match(pattern, &digits) {
        return false;
    }
    let mut sum = 0u32;
    let mut double = false;
    for b in digits.bytes().rev() {
        let mut n = u32::from(b - b'0');
        if double {
            n *= 2;
            sum += if n >= 10 { n % 10 + 1 } else { n };
        } else {
            sum += n;
        }
        double = !double;
    }
    sum.is_multiple_of(10)
}

fn valid_percent_escapes(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            if !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
            {
                return false;
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    true
}

/// A simplified `url.ParseRequestURI(s) == nil` (`govalidator.IsRequestURI`): an absolute URI
/// with a scheme, or an absolute path; no control characters, valid `%` escapes, a numeric
/// port.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if s.starts_with('/') {
        return valid_percent_escapes(s.split('?').next().unwrap_or(""));
    }
    let Some(colon) = s.find(':') else {
        return false;
    };
    let scheme = &s[..colon];
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
    if !scheme_ok {
        return false;
    }
    let rest = &s[colon + 1..];
    let rest = rest.split('?').next().unwrap_or("");
    if let Some(after) = rest.strip_prefix("//") {
        let authority = after.split('/').next().unwrap_or("");
        let hostport = authority.rsplit('@').next().unwrap_or("");
        let port = if let Some(stripped) = hostport.strip_prefix('[') {
            match stripped.split_once(']') {
                None => return false,
                Some((_, "")) => None,
                Some((_, tail)) => match tail.strip_prefix(':') {
                    Some(p) => Some(p),
                    None => return false,
                },
            }
        } else {
            hostport.rsplit_once(':').map(|(_, p)| p)
        };
        if let Some(p) = port
            && !p.bytes().all(|b| b.is_ascii_digit())
        {
            return false;
        }
        return valid_percent_escapes(after);
    }
    valid_percent_escapes(rest)
}

/// A simplified `net/mail.ParseAddress(s)` succeeding with a non-empty address: `local@domain`
/// or `Name <local@domain>`, with dot-atom or quoted local parts and dot-atom or literal
/// domains.
fn is_email(s: &str) -> bool {
    let s = s.trim();
    let addr = match (s.rfind('<'), s.ends_with('>')) {
        (Some(open), true) => &s[open + 1..s.len() - 1],
        (None, false) => s,
        _ => return false,
    };
    let Some(at) = addr.rfind('@') else {
        return false;
    };
    let (local, domain) = (&addr[..at], &addr[at + 1..]);
    let atext = |c: char| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii();
    let dot_atom =
        |x: &str| !x.is_empty() && x.split('.').all(|p| !p.is_empty() && p.chars().all(atext));
    let local_ok =
        dot_atom(local) || (local.len() >= 2 && local.starts_with('"') && local.ends_with('"'));
    let domain_ok = dot_atom(domain) || (domain.starts_with('[') && domain.ends_with(']'));
    local_ok && domain_ok
}

// ---------------------------------------------------------------------------------------------
// List types (listtype/validation.go) and embedded resources (objectmeta/validation.go)
// ---------------------------------------------------------------------------------------------

/// `field.Path.Child` from a path string (`""` is the nil root).
fn fchild(path: &str, name: &str) -> String {
    if name.is_empty() {
        format!("{}[]", path)
    } else if path.is_empty() {
        name.to_string()
    } else {
        format!("{}.{}", path, name)
    }
}

/// `field.Path.Key`.
fn fkey(path: &str, key: &str) -> String {
    format!("{}[{}]", path, key)
}

/// `ValidateListSetsAndMaps`.
fn list_map_node(
    path: &str,
    s: &Value,
    obj: &Map<String, Value>,
    out: &mut Vec<FieldError>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let keys = sorted_keys(obj);
    if let Some(Additional::Schema(ap)) = additional(s) {
        for k in &keys {
            if let Some(v) = obj.get(k) {
                list_value(&fkey(path, k), ap, v, out, depth + 1);
            }
        }
    }
    if let Some(props) = properties(s) {
        for k in &keys {
            if let (Some(sub), Some(v)) = (props.get(k), obj.get(k)) {
                list_value(&fchild(path, k), sub, v, out, depth + 1);
            }
        }
    }
}

/// `validationListSetAndMaps`.
fn list_value(path: &str, s: &Value, v: &Value, out: &mut Vec<FieldError>, depth: usize) {
    match v {
        Value::Array(a) => list_array(path, s, a, out, depth),
        Value::Object(m) => list_map_node(path, s, m, out, depth),
        _ => {}
    }
}

/// `validateListSetsAndMapsArray`.
fn list_array(path: &str, s: &Value, a: &[Value], out: &mut Vec<FieldError>, depth: usize) {
    match str_kw(s, "x-kubernetes-list-type") {
        Some("set") => {
            for i in non_unique(&a.iter().map(SetKey::of).collect::<Vec<_>>()) {
                out.push(FieldError::duplicate(
                    &format!("{}[{}]", path, i),
                    Some(a[i].clone()),
                ));
            }
        }
        Some("map") => out.extend(list_map(path, s, a)),
        _ => {}
    }
    if let Some(it) = items(s) {
        for (i, v) in a.iter().enumerate() {
            list_value(&format!("{}[{}]", path, i), it, v, out, depth + 1);
        }
    }
}

/// A value as a Go map key in `validateListSet`: scalars by Go `==` (int64 and float64
/// differ), compound values by their JSON.
#[derive(PartialEq, Eq, Hash)]
enum SetKey {
    Null,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
    Compound(String),
    Unspecified,
}

impl SetKey {
    fn of(v: &Value) -> SetKey {
        match v {
            Value::Null => SetKey::Null,
            Value::Bool(b) => SetKey::Bool(*b),
            Value::Number(n) => match num(n) {
                Num::I(i) => SetKey::Int(i),
                Num::F(f) => SetKey::Float(if f == 0.0 { 0 } else { f.to_bits() }),
            },
            Value::String(s) => SetKey::Str(s.clone()),
            other => SetKey::Compound(go_json(other)),
        }
    }
}

/// `validateListSet`: the index of each value's second appearance.
fn non_unique(keys: &[SetKey]) -> Vec<usize> {
    let mut seen: HashMap<&SetKey, usize> = HashMap::new();
    let mut out = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        let times = seen.entry(k).or_insert(0);
        *times += 1;
        if *times == 2 {
            out.push(i);
        }
    }
    out
}

/// `validateListMap`.
fn list_map(path: &str, s: &Value, a: &[Value]) -> Vec<FieldError> {
    for (i, x) in a.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            return vec![FieldError::invalid(
                &format!("{}[{}]", path, i),
                Some(x.clone()),
                "must be an object for an array of list-type map",
            )];
        }
    }
    if a.len() <= 1 {
        return Vec::new();
    }
    let key_fields: Vec<&str> = match get(s, "x-kubernetes-list-map-keys") {
        Some(Value::Array(k)) => k.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let mut errs = Vec::new();
    if key_fields.len() == 1 {
        let field = key_fields[0];
        let values: Vec<Option<&Value>> = a
            .iter()
            .map(|x| x.as_object().and_then(|m| m.get(field)))
            .collect();
        let keys: Vec<SetKey> = values
            .iter()
            .map(|v| v.map(SetKey::of).unwrap_or(SetKey::Unspecified))
            .collect();
        for i in non_unique(&keys) {
            let shown = match values[i] {
                None => Value::Object(Map::new()),
                Some(v) => {
                    let mut m = Map::new();
                    m.insert(field.to_string(), v.clone());
                    Value::Object(m)
                }
            };
            errs.push(FieldError::duplicate(
                &format!("{}[{}]", path, i),
                Some(shown),
            ));
        }
        return errs;
    }
    let maps: Vec<Value> = a
        .iter()
        .map(|x| {
            let mut m = Map::new();
            if let Some(o) = x.as_object() {
                for f in &key_fields {
                    if let Some(v) = o.get(*f) {
                        m.insert(f.to_string(), v.clone());
                    }
                }
            }
            Value::Object(m)
        })
        .collect();
    let keys: Vec<SetKey> = maps.iter().map(SetKey::of).collect();
    for i in non_unique(&keys) {
        errs.push(FieldError::duplicate(
            &format!("{}[{}]", path, i),
            Some(maps[i].clone()),
        ));
    }
    errs
}

/// `objectmeta.validate` (with `isResourceRoot = false`, as the strategy calls it).
fn embedded_node(
    path: &str,
    x: &Value,
    s: Option<&Value>,
    out: &mut Vec<FieldError>,
    depth: usize,
) {
    let Some(s) = s else { return };
    if depth > MAX_DEPTH {
        return;
    }
    match x {
        Value::Object(m) => {
            if flag(s, EMBEDDED) {
                validate_embedded_resource(path, m, out);
            }
            for k in sorted_keys(m) {
                let Some(v) = m.get(&k) else { continue };
                if let Some(prop) = property(s, &k) {
                    embedded_node(&fchild(path, &k), v, Some(prop), out, depth + 1);
                } else if let Some(ap) = additional(s) {
                    embedded_node(&fkey(path, &k), v, ap.schema(), out, depth + 1);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                embedded_node(&format!("{}[{}]", path, i), v, items(s), out, depth + 1);
            }
        }
        _ => {}
    }
}

/// `objectmeta.validateEmbeddedResource`, without the ObjectMeta part.
fn validate_embedded_resource(path: &str, x: &Map<String, Value>, out: &mut Vec<FieldError>) {
    let api_version = fchild(path, "apiVersion");
    let kind_path = fchild(path, "kind");
    if !x.contains_key("apiVersion") {
        out.push(FieldError::required(&api_version, ""));
    }
    if !x.contains_key("kind") {
        out.push(FieldError::required(&kind_path, ""));
    }
    if let Some(v) = x.get("apiVersion") {
        match v.as_str() {
            None => out.push(FieldError::invalid(
                &api_version,
                Some(v.clone()),
                "must be a string",
            )),
            Some("") => out.push(FieldError::invalid(
                &api_version,
                Some(Value::from("")),
                "must not be empty",
            )),
            // schema.ParseGroupVersion
            Some(gv) if gv != "/" && gv.matches('/').count() > 1 => out.push(FieldError::invalid(
                &api_version,
                Some(Value::from(gv)),
                &format!("unexpected GroupVersion string: {}", gv),
            )),
            Some(_) => {}
        }
    }
    if let Some(v) = x.get("kind") {
        match v.as_str() {
            None => out.push(FieldError::invalid(
                &kind_path,
                Some(v.clone()),
                "must be a string",
            )),
            Some("") => out.push(FieldError::invalid(
                &kind_path,
                Some(Value::from("")),
                "must not be empty",
            )),
            Some(kind) => {
                // utilvalidation.IsDNS1035Label(strings.ToLower(kind))
                let lower = kind.to_lowercase();
                let mut errs = Vec::new();
                if lower.len() > 63 {
                    errs.push("must be no more than 63 characters".to_string());
                }
                if !builtin_match(r"^[a-z]([-a-z0-9]*[a-z0-9])?$", &lower) {
                    errs.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
                }
                if !errs.is_empty() {
                    out.push(FieldError::invalid(
                        &kind_path,
                        Some(Value::from(kind)),
                        &format!(
                            "may have mixed case, but should otherwise match: {}",
                            errs.join(",")
                        ),
                    ));
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The 422 Status (k8s.io/apimachinery/pkg/api/errors :: NewInvalid)
// ---------------------------------------------------------------------------------------------

/// `ErrorList.ToAggregate().Error()`: messages deduplicated; one as is, several in `[a, b]`.
fn aggregate_message(errors: &[FieldError]) -> Option<String> {
    let mut seen = HashSet::new();
    let mut msgs = Vec::new();
    for e in errors {
        let m = e.to_string();
        if seen.insert(m.clone()) {
            msgs.push(m);
        }
    }
    match msgs.len() {
        0 => None,
        1 => msgs.pop(),
        _ => Some(format!("[{}]", msgs.join(", "))),
    }
}

fn invalid_message(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> String {
    let qualified = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{}.{}", kind, group)
    };
    match aggregate_message(errors) {
        None => format!("{} {} is invalid", qualified, go_quote(name)),
        Some(agg) => format!("{} {} is invalid: {}", qualified, go_quote(name), agg),
    }
}

/// The 422 `Status` the apiserver writes for a CR that fails validation (R2.1, R2.2;
/// `errors.NewInvalid(GroupKind, name, errs)`): `details.kind` is the Kind, each cause carries
/// `reason` (the cause type), `message` (the body) and `field`. Empty `name`, `group` and
/// `causes` are left out as Go's `omitempty` does.
pub fn invalid_status(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> Value {
    let mut details = Map::new();
    if !name.is_empty() {
        details.insert("name".into(), Value::from(name));
    }
    if !group.is_empty() {
        details.insert("group".into(), Value::from(group));
    }
    details.insert("kind".into(), Value::from(kind));
    if !errors.is_empty() {
        let causes: Vec<Value> = errors.iter().map(cause).collect();
        details.insert("causes".into(), Value::Array(causes));
    }
    let mut status = Map::new();
    status.insert("kind".into(), Value::from("Status"));
    status.insert("apiVersion".into(), Value::from("v1"));
    status.insert("metadata".into(), Value::Object(Map::new()));
    status.insert("status".into(), Value::from("Failure"));
    status.insert(
        "message".into(),
        Value::from(invalid_message(kind, group, name, errors)),
    );
    status.insert("reason".into(), Value::from("Invalid"));
    status.insert("details".into(), Value::Object(details));
    status.insert("code".into(), Value::from(422));
    Value::Object(status)
}

fn cause(e: &FieldError) -> Value {
    let mut c = Map::new();
    c.insert("reason".into(), Value::from(e.cause_type()));
    let body = e.body();
    if !body.is_empty() {
        c.insert("message".into(), Value::from(body));
    }
    if !e.field.is_empty() {
        c.insert("field".into(), Value::from(e.field.as_str()));
    }
    Value::Object(c)
}

/// The bytes of [`invalid_status`] as the apiserver's JSON serializer writes them
/// (`json.Encoder`: struct field order, HTML-escaped strings, a trailing newline).
pub fn invalid_status_body(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> String {
    let mut out = String::from(
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"#,
    );
    push_go_json_string(&mut out, &invalid_message(kind, group, name, errors));
    out.push_str(r#","reason":"Invalid","details":{"#);
    let mut first = true;
    let mut field = |out: &mut String, key: &str| {
        if !first {
            out.push(',');
        }
        first = false;
        push_go_json_string(out, key);
        out.push(':');
    };
    if !name.is_empty() {
        field(&mut out, "name");
        push_go_json_string(&mut out, name);
    }
    if !group.is_empty() {
        field(&mut out, "group");
        push_go_json_string(&mut out, group);
    }
    field(&mut out, "kind");
    push_go_json_string(&mut out, kind);
    if !errors.is_empty() {
        field(&mut out, "causes");
        out.push('[');
        for (i, e) in errors.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(r#"{"reason":"#);
            push_go_json_string(&mut out, e.cause_type());
            let body = e.body();
            if !body.is_empty() {
                out.push_str(r#","message":"#);
                push_go_json_string(&mut out, &body);
            }
            if !e.field.is_empty() {
                out.push_str(r#","field":"#);
                push_go_json_string(&mut out, &e.field);
            }
            out.push('}');
        }
        out.push(']');
    }
    out.push_str("},\"code\":422}\n");
    out
}

// ---------------------------------------------------------------------------------------------
// CEL rules (not evaluated)
// ---------------------------------------------------------------------------------------------

/// The `x-kubernetes-validations` rules of a schema, which this module does not evaluate, as
/// (path, rule): the path of the value the rule applies to, with `[*]` for every list item or
/// map value (`spec.items[*].name`; `""` for the root).
pub fn cel_rules(schema: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    cel_node(schema, "", &mut out, 0);
    out
}

fn cel_node(s: &Value, path: &str, out: &mut Vec<(String, String)>, depth: usize) {
    if depth > MAX_DEPTH || !s.is_object() {
        return;
    }
    if let Some(Value::Array(rules)) = get(s, "x-kubernetes-validations") {
        for r in rules {
            if let Some(rule) = str_kw(r, "rule") {
                out.push((path.to_string(), rule.to_string()));
            }
        }
    }
    if let Some(props) = properties(s) {
        for name in sorted_keys(props) {
            if let Some(p) = props.get(&name) {
                cel_node(p, &unknown_key(path, &name), out, depth + 1);
            }
        }
    }
    if let Some(ap) = additional(s).and_then(Additional::schema) {
        cel_node(ap, &format!("{}[*]", path), out, depth + 1);
    }
    if let Some(it) = items(s) {
        cel_node(it, &format!("{}[*]", path), out, depth + 1);
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for sub in sub_schemas(s, key) {
            cel_node(sub, path, out, depth + 1);
        }
    }
    if let Some(not) = get(s, "not") {
        cel_node(not, path, out, depth + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A CR schema whose `spec.f` is `field`.
    fn spec_f(field: Value) -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"f": field}}}})
    }

    fn cr(f: Value) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
               "spec": {"f": f}})
    }

    fn messages(schema: &Value, obj: &Value) -> Vec<String> {
        validate(schema, obj)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// One failing and one passing value per keyword, with the exact `Error()` texts.
    #[test]
    fn keywords() {
        let cases: Vec<(&str, Value, Value, Vec<&str>, Value)> = vec![
            (
                "type integer",
                json!({"type": "integer"}),
                json!("x"),
                vec![
                    r#"spec.f: Invalid value: "string": spec.f in body must be of type integer: "string""#,
                ],
                json!(5),
            ),
            (
                "integer accepts a number without fraction",
                json!({"type": "integer"}),
                json!(5.5),
                vec![
                    r#"spec.f: Invalid value: "number": spec.f in body must be of type integer: "number""#,
                    r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.f"#,
                ],
                json!(5.0),
            ),
            (
                "type number",
                json!({"type": "number"}),
                json!("1.5"),
                vec![
                    r#"spec.f: Invalid value: "string": spec.f in body must be of type number: "string""#,
                ],
                json!(1.5),
            ),
            (
                "number accepts an integer",
                json!({"type": "number"}),
                json!(true),
                vec![
                    r#"spec.f: Invalid value: "boolean": spec.f in body must be of type number: "boolean""#,
                ],
                json!(2),
            ),
            (
                "type string",
                json!({"type": "string"}),
                json!(5),
                vec![
                    r#"spec.f: Invalid value: "integer": spec.f in body must be of type string: "integer""#,
                ],
                json!("five"),
            ),
            (
                "type boolean",
                json!({"type": "boolean"}),
                json!("true"),
                vec![
                    r#"spec.f: Invalid value: "string": spec.f in body must be of type boolean: "string""#,
                ],
                json!(false),
            ),
            (
                "type object",
                json!({"type": "object"}),
                json!([]),
                vec![
                    r#"spec.f: Invalid value: "array": spec.f in body must be of type object: "array""#,
                ],
                json!({}),
            ),
            (
                "type array",
                json!({"type": "array"}),
                json!({}),
                vec![
                    r#"spec.f: Invalid value: "object": spec.f in body must be of type array: "object""#,
                ],
                json!([]),
            ),
            (
                "null on a non-nullable field",
                json!({"type": "string"}),
                json!(null),
                vec![
                    r#"spec.f: Invalid value: "null": spec.f in body must be of type string: "null""#,
                ],
                json!("x"),
            ),
            (
                "nullable",
                json!({"type": "string", "nullable": true, "maxLength": 1}),
                json!("xx"),
                vec!["spec.f: Too long: may not be more than 1 byte"],
                json!(null),
            ),
            (
                "x-kubernetes-int-or-string",
                json!({"x-kubernetes-int-or-string": true}),
                json!(true),
                vec![
                    r#"spec.f: Invalid value: "boolean": spec.f in body must be of type integer,string: "boolean""#,
                ],
                json!("50%"),
            ),
            (
                "x-kubernetes-int-or-string takes integers",
                json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]}),
                json!(1.5),
                vec![
                    r#"spec.f: Invalid value: "number": spec.f in body must be of type integer,string: "number""#,
                    r#"<nil>: Invalid value: "": "spec.f" must validate at least one schema (anyOf)"#,
                    r#"spec.f: Invalid value: "number": spec.f in body must be of type integer: "number""#,
                    r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.f"#,
                ],
                json!(3),
            ),
            (
                "enum of strings",
                json!({"type": "string", "enum": ["a", "b"]}),
                json!("c"),
                vec![r#"spec.f: Unsupported value: "c": supported values: "a", "b""#],
                json!("b"),
            ),
            (
                "enum of integers",
                json!({"type": "integer", "enum": [1, 2]}),
                json!(3),
                vec![r#"spec.f: Unsupported value: 3: supported values: "1", "2""#],
                json!(2),
            ),
            (
                "pattern",
                json!({"type": "string", "pattern": "^[a-z]+$"}),
                json!("A1"),
                vec![r#"spec.f: Invalid value: "A1": spec.f in body should match '^[a-z]+$'"#],
                json!("abc"),
            ),
            (
                "pattern with Go's ASCII \\d",
                json!({"type": "string", "pattern": "^\\d+$"}),
                json!("١٢"),
                vec![r#"spec.f: Invalid value: "١٢": spec.f in body should match '^\d+$'"#],
                json!("12"),
            ),
            (
                "format int32",
                json!({"type": "integer", "format": "int32"}),
                json!(2147483648_i64),
                vec![
                    r#"<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.f"#,
                ],
                json!(2147483647),
            ),
            (
                "format int64",
                json!({"type": "integer", "format": "int64"}),
                json!(1e20),
                vec![
                    r#"spec.f: Invalid value: "float64": spec.f in body must be of type int64: "float64""#,
                    r#"<nil>: Invalid value: "": Checked value must be of type integer with format int64 in spec.f"#,
                ],
                json!(9007199254740991_i64),
            ),
            (
                "format date-time",
                json!({"type": "string", "format": "date-time"}),
                json!("yesterday"),
                vec![
                    r#"spec.f: Invalid value: "yesterday": spec.f in body must be of type date-time: "yesterday""#,
                ],
                json!("2024-02-29T03:04:05.123Z"),
            ),
            (
                "format date",
                json!({"type": "string", "format": "date"}),
                json!("2023-02-29"),
                vec![
                    r#"spec.f: Invalid value: "2023-02-29": spec.f in body must be of type date: "2023-02-29""#,
                ],
                json!("2024-02-29"),
            ),
            (
                "format byte",
                json!({"type": "string", "format": "byte"}),
                json!("not base64!"),
                vec![
                    r#"spec.f: Invalid value: "not base64!": spec.f in body must be of type byte: "not base64!""#,
                ],
                json!("aGVsbG8="),
            ),
            (
                "format duration",
                json!({"type": "string", "format": "duration"}),
                json!("soon"),
                vec![
                    r#"spec.f: Invalid value: "soon": spec.f in body must be of type duration: "soon""#,
                ],
                json!("1h30m"),
            ),
            (
                "format uuid",
                json!({"type": "string", "format": "uuid"}),
                json!("123"),
                vec![r#"spec.f: Invalid value: "123": spec.f in body must be of type uuid: "123""#],
                json!("123e4567-e89b-12d3-a456-426614174000"),
            ),
            (
                "format ipv4",
                json!({"type": "string", "format": "ipv4"}),
                json!("1.2.3"),
                vec![
                    r#"spec.f: Invalid value: "1.2.3": spec.f in body must be of type ipv4: "1.2.3""#,
                ],
                json!("010.0.0.1"),
            ),
            (
                "unknown formats pass",
                json!({"type": "string", "format": "int-or-string", "maxLength": 2}),
                json!("abc"),
                vec!["spec.f: Too long: may not be more than 2 bytes"],
                json!("ok"),
            ),
            (
                "maximum",
                json!({"type": "integer", "maximum": 9}),
                json!(10),
                vec!["spec.f: Invalid value: 10: spec.f in body should be less than or equal to 9"],
                json!(9),
            ),
            (
                "exclusiveMaximum",
                json!({"type": "number", "maximum": 9, "exclusiveMaximum": true}),
                json!(9),
                vec!["spec.f: Invalid value: 9: spec.f in body should be less than 9"],
                json!(8.5),
            ),
            (
                "minimum",
                json!({"type": "integer", "minimum": 1}),
                json!(0),
                vec![
                    "spec.f: Invalid value: 0: spec.f in body should be greater than or equal to 1",
                ],
                json!(1),
            ),
            (
                "exclusiveMinimum",
                json!({"type": "number", "minimum": 0.5, "exclusiveMinimum": true}),
                json!(0.5),
                vec!["spec.f: Invalid value: 0.5: spec.f in body should be greater than 0.5"],
                json!(0.75),
            ),
            (
                "multipleOf (integers)",
                json!({"type": "integer", "multipleOf": 3}),
                json!(4),
                vec!["spec.f: Invalid value: 4: spec.f in body should be a multiple of 3"],
                json!(6),
            ),
            (
                "multipleOf (numbers)",
                json!({"type": "number", "multipleOf": 0.5}),
                json!(0.3),
                vec!["spec.f: Invalid value: 0.3: spec.f in body should be a multiple of 0.5"],
                json!(1.5),
            ),
            (
                "maxLength counts runes",
                json!({"type": "string", "maxLength": 3}),
                json!("abcd"),
                vec!["spec.f: Too long: may not be more than 3 bytes"],
                json!("ééé"),
            ),
            (
                "minLength",
                json!({"type": "string", "minLength": 2}),
                json!("a"),
                vec![
                    r#"spec.f: Invalid value: "a": spec.f in body should be at least 2 chars long"#,
                ],
                json!("ab"),
            ),
            (
                "minItems",
                json!({"type": "array", "minItems": 1}),
                json!([]),
                vec!["spec.f: Invalid value: 0: spec.f in body should have at least 1 items"],
                json!([1]),
            ),
            (
                "maxItems",
                json!({"type": "array", "maxItems": 1}),
                json!([1, 2]),
                vec!["spec.f: Too many: 2: must have at most 1 item"],
                json!([1]),
            ),
            (
                "uniqueItems",
                json!({"type": "array", "uniqueItems": true}),
                json!([1, 1]),
                vec![r#"spec.f: Invalid value: "": spec.f in body shouldn't contain duplicates"#],
                json!([1, 1.0]),
            ),
            (
                "minProperties",
                json!({"type": "object", "minProperties": 1}),
                json!({}),
                vec!["spec.f: Invalid value: 0: spec.f in body should have at least 1 properties"],
                json!({"a": 1}),
            ),
            (
                "maxProperties",
                json!({"type": "object", "maxProperties": 1}),
                json!({"a": 1, "b": 2}),
                vec!["spec.f: Too many: 2: must have at most 1 item"],
                json!({"a": 1}),
            ),
            (
                "required",
                json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}),
                json!({}),
                vec!["spec.f.a: Required value"],
                json!({"a": ""}),
            ),
            (
                "additionalProperties schema (map keys are dotted)",
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                json!({"k": 1}),
                vec![
                    r#"spec.f.k: Invalid value: "integer": spec.f.k in body must be of type string: "integer""#,
                ],
                json!({"k": "v"}),
            ),
            (
                "additionalProperties false",
                json!({"type": "object", "additionalProperties": false}),
                json!({"x": 1}),
                vec![r#"spec.f: Invalid value: "x": spec.f.x in body is a forbidden property"#],
                json!({}),
            ),
            (
                "items",
                json!({"type": "array", "items": {"type": "integer"}}),
                json!([1, "a"]),
                vec![
                    r#"spec.f[1]: Invalid value: "string": spec.f[1] in body must be of type integer: "string""#,
                ],
                json!([1, 2]),
            ),
            (
                "anyOf",
                json!({"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]}),
                json!(3),
                vec![
                    r#"<nil>: Invalid value: "": "spec.f" must validate at least one schema (anyOf)"#,
                    "spec.f: Invalid value: 3: spec.f in body should be greater than or equal to 5",
                ],
                json!(7),
            ),
            (
                "oneOf",
                json!({"type": "integer", "oneOf": [{"minimum": 1}, {"minimum": 2}]}),
                json!(3),
                vec![
                    r#"<nil>: Invalid value: "": "spec.f" must validate one and only one schema (oneOf). Found 2 valid alternatives"#,
                ],
                json!(1),
            ),
            (
                "allOf",
                json!({"type": "integer", "allOf": [{"minimum": 1}, {"maximum": 5}]}),
                json!(7),
                vec![
                    "spec.f: Invalid value: 7: spec.f in body should be less than or equal to 5",
                    r#"<nil>: Invalid value: "": "spec.f" must validate all the schemas (allOf)"#,
                ],
                json!(4),
            ),
            (
                "not",
                json!({"type": "string", "not": {"enum": ["x"]}}),
                json!("x"),
                vec![r#"<nil>: Invalid value: "": "spec.f" must not validate the schema (not)"#],
                json!("y"),
            ),
            (
                "x-kubernetes-list-type set",
                json!({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}),
                json!(["a", "b", "a", "a"]),
                vec![r#"spec.f[2]: Duplicate value: "a""#],
                json!(["a", "b"]),
            ),
            (
                "x-kubernetes-list-type map",
                json!({"type": "array", "x-kubernetes-list-type": "map",
                       "x-kubernetes-list-map-keys": ["name"],
                       "items": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                json!([{"name": "a"}, {"name": "b"}, {"name": "a"}]),
                vec![r#"spec.f[2]: Duplicate value: {"name":"a"}"#],
                json!([{"name": "a"}, {"name": "b"}]),
            ),
            (
                "x-kubernetes-list-type map with two keys",
                json!({"type": "array", "x-kubernetes-list-type": "map",
                       "x-kubernetes-list-map-keys": ["port", "protocol"],
                       "items": {"type": "object"}}),
                json!([{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "TCP", "x": 1}]),
                vec![r#"spec.f[1]: Duplicate value: {"port":80,"protocol":"TCP"}"#],
                json!([{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}]),
            ),
            (
                "x-kubernetes-embedded-resource",
                json!({"type": "object", "x-kubernetes-embedded-resource": true,
                       "x-kubernetes-preserve-unknown-fields": true}),
                json!({"kind": "Pod_", "apiVersion": "a/b/c"}),
                vec![
                    r#"spec.f.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                    r#"spec.f.kind: Invalid value: "Pod_": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
                ],
                json!({"kind": "Pod", "apiVersion": "v1"}),
            ),
        ];
        for (name, field, bad, want, good) in cases {
            let schema = spec_f(field);
            assert_eq!(messages(&schema, &cr(bad)), want, "{}: failing value", name);
            assert_eq!(
                messages(&schema, &cr(good)),
                Vec::<String>::new(),
                "{}: passing value",
                name
            );
        }
    }

    #[test]
    fn field_error_parts() {
        let schema = json!({"type": "object", "required": ["spec"], "properties": {
            "spec": {"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 9}}}}});
        let errs = validate(&schema, &json!({"spec": {"replicas": 10}}));
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].error_type, ErrorType::Invalid);
        assert_eq!(errs[0].cause_type(), "FieldValueInvalid");
        assert_eq!(errs[0].field, "spec.replicas");
        assert_eq!(errs[0].bad_value, Some(json!(10)));
        assert_eq!(
            errs[0].body(),
            "Invalid value: 10: spec.replicas in body should be less than or equal to 9"
        );
        assert_eq!(
            errs[0].to_string(),
            "spec.replicas: Invalid value: 10: spec.replicas in body should be less than or equal to 9"
        );
        // required at the root: the path has no leading dot
        assert_eq!(
            messages(&schema, &json!({"kind": "Widget"})),
            vec!["spec: Required value"]
        );
        // a root of the wrong type: kube-openapi's empty path becomes field.Path's nil
        assert_eq!(
            messages(&schema, &json!("x")),
            vec![r#"<nil>: Invalid value: "string":  in body must be of type object: "string""#]
        );
        // root-level map keys (additionalProperties) as kube-openapi prints them
        let map = json!({"type": "object", "additionalProperties": {"type": "integer"}});
        assert_eq!(
            messages(&map, &json!({"k": "v"})),
            vec![r#"k: Invalid value: "string": .k in body must be of type integer: "string""#]
        );
        let ft = [
            (
                FieldError::required("a", ""),
                "FieldValueRequired",
                "Required value",
            ),
            (
                FieldError::forbidden("a", "no"),
                "FieldValueForbidden",
                "Forbidden: no",
            ),
            (
                FieldError::too_long("a", 1),
                "FieldValueTooLong",
                "Too long: may not be more than 1 byte",
            ),
            (
                FieldError::too_many("a", -1, 2),
                "FieldValueTooMany",
                "Too many: must have at most 2 items",
            ),
            (
                FieldError::duplicate("a", Some(json!([1.5, "<"]))),
                "FieldValueDuplicate",
                r#"Duplicate value: [1.5,"\u003c"]"#,
            ),
            (
                FieldError::invalid("a", Some(json!(1e6)), "x"),
                "FieldValueInvalid",
                "Invalid value: 1e+06: x",
            ),
            (
                FieldError::invalid("a", None, "x"),
                "FieldValueInvalid",
                "Invalid value: null: x",
            ),
            (
                FieldError::type_invalid("a", Some(json!(true)), "x"),
                "FieldValueTypeInvalid",
                "Invalid value: true: x",
            ),
            (
                FieldError::not_supported("a", Some(json!("q\"")), &["b".into()]),
                "FieldValueNotSupported",
                r#"Unsupported value: "q\"": supported values: "b""#,
            ),
        ];
        for (e, cause, body) in ft {
            assert_eq!((e.cause_type(), e.body().as_str()), (cause, body));
        }
    }

    #[test]
    fn go_printing() {
        for (f, v, j) in [
            (1e6, "1e+06", "1000000"),
            (123456.0, "123456", "123456"),
            (1234567.0, "1.234567e+06", "1234567"),
            (0.0001, "0.0001", "0.0001"),
            (0.00001, "1e-05", "0.00001"),
            (1e-7, "1e-07", "1e-7"),
            (1.5, "1.5", "1.5"),
            (-2.0, "-2", "-2"),
            (1e21, "1e+21", "1e+21"),
            (1e20, "1e+20", "100000000000000000000"),
        ] {
            assert_eq!(go_float_g(f), v, "%v of {}", f);
            assert_eq!(olmctl::gojson::json_float(f), j, "json of {}", f);
        }
        assert_eq!(go_quote("a\"b\\\n\u{0}\u{a0}é"), r#""a\"b\\\n\x00\u00a0é""#);
        assert_eq!(
            go_json(&json!({"b": [1, 2.5, null], "a": "<&>"})),
            r#"{"a":"\u003c\u0026\u003e","b":[1,2.5,null]}"#
        );
    }

    #[test]
    fn enum_follows_go_conversions() {
        let e = |en: Value, v: Value| messages(&spec_f(json!({"enum": en})), &cr(v)).is_empty();
        assert!(e(json!([1]), json!(1.0)), "float64 1 converts to int64 1");
        assert!(e(json!([1.5]), json!(1.5)));
        assert!(
            e(json!(["a"]), json!(97)),
            "int64 97 converts to the string \"a\""
        );
        assert!(!e(json!(["1"]), json!(1)));
        assert!(e(json!([{"a": 1}]), json!({"a": 1})));
        assert!(
            !e(json!([{"a": 1}]), json!({"a": 1.0})),
            "DeepEqual tells int64 from float64"
        );
        assert!(
            !e(json!(["a", null]), json!(null)),
            "null never matches an enum"
        );
        assert_eq!(
            messages(
                &spec_f(json!({"nullable": true, "enum": ["a", null, 2]})),
                &cr(json!(null))
            ),
            vec![r#"spec.f: Unsupported value: null: supported values: "a", "null", "2""#]
        );
    }

    #[test]
    fn prune_exceptions() {
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "a": {"type": "string"},
                "list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {"v": {"type": "string"}}}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {
                    "typed": {"type": "object", "properties": {"t": {"type": "string"}}}}},
                "template": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {
                    "spec": {"type": "object", "properties": {"s": {"type": "string"}}}}},
                "scalars": {"type": "object", "additionalProperties": true}}},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}});
        let mut obj = json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w1", "unknownMeta": 1},
            "junk": 1,
            "spec": {
                "a": "x", "b": "y",
                "list": [{"x": 1, "y": 2}, {"z": 3}],
                "labels": {"k": {"v": "1", "w": "2"}},
                "free": {"anything": {"deep": true}, "typed": {"t": "1", "u": "2"}},
                "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "x": 1},
                             "spec": {"s": "1", "gone": 2}, "extra": 3},
                "scalars": {"s": "kept", "o": {"dropped": 1}},
                "metadata": {"not": "root"}},
            "status": {"anything": [1, {"deep": 2}]}});
        let pruned = prune(&schema, &mut obj);
        assert_eq!(
            pruned,
            vec![
                "junk",
                "spec.b",
                "spec.free.typed.u",
                "spec.labels.k.w",
                "spec.list[0].y",
                "spec.list[1].z",
                "spec.metadata",
                "spec.scalars.o.dropped",
                "spec.template.extra",
                "spec.template.spec.gone",
            ]
        );
        assert_eq!(
            obj,
            json!({
                "apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w1", "unknownMeta": 1},
                "spec": {
                    "a": "x",
                    "list": [{"x": 1}, {}],
                    "labels": {"k": {"v": "1"}},
                    "free": {"anything": {"deep": true}, "typed": {"t": "1"}},
                    "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "x": 1},
                                 "spec": {"s": "1"}},
                    "scalars": {"s": "kept", "o": {}}},
                "status": {"anything": [1, {"deep": 2}]}})
        );
        // a schema-less root keeps only apiVersion, kind and metadata
        let mut bare = json!({"apiVersion": "v1", "kind": "K", "metadata": {}, "spec": {"a": 1}});
        assert_eq!(prune(&json!({}), &mut bare), vec!["spec"]);
        assert_eq!(
            bare,
            json!({"apiVersion": "v1", "kind": "K", "metadata": {}})
        );
        // list items below x-kubernetes-preserve-unknown-fields inherit it
        let mut list = json!({"l": [{"keep": 1}]});
        let s = json!({"properties": {"l": {"type": "array", "x-kubernetes-preserve-unknown-fields": true,
                                             "items": {"type": "object"}}}});
        assert!(prune(&s, &mut list).is_empty());
        assert_eq!(list, json!({"l": [{"keep": 1}]}));
    }

    #[test]
    fn defaulting() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "absent": {"type": "string", "default": "d"},
            "null": {"type": "string", "default": "d"},
            "nullableNull": {"type": "string", "nullable": true, "default": "d"},
            "set": {"type": "integer", "default": 1},
            "nested": {"type": "object", "default": {}, "properties": {
                "inner": {"type": "integer", "default": 7}}},
            "noDefaultNull": {"type": "string"},
            "map": {"type": "object", "additionalProperties": {"type": "string", "default": "m"}},
            "list": {"type": "array", "items": {"type": "object", "default": {"x": 1},
                                                 "properties": {"y": {"type": "integer", "default": 2}}}}}}}});
        let mut obj = json!({"spec": {"null": null, "nullableNull": null, "set": 5, "noDefaultNull": null,
                                      "map": {"k": null, "l": "v"}, "list": [null, {}]}});
        let pruned = decode(&schema, &mut obj);
        assert!(pruned.is_empty());
        assert_eq!(
            obj,
            json!({"spec": {
                "absent": "d", "null": "d", "nullableNull": null, "set": 5,
                "nested": {"inner": 7},
                "map": {"k": "m", "l": "v"},
                "list": [{"x": 1, "y": 2}, {"y": 2}]}})
        );
        // default alone does not drop nulls: that is prune_nulls' job
        let mut obj = json!({"spec": {"noDefaultNull": null}});
        default(&schema, &mut obj);
        assert_eq!(obj["spec"]["noDefaultNull"], Value::Null);
        prune_nulls(&schema, &mut obj);
        assert!(obj["spec"].get("noDefaultNull").is_none());
    }

    #[test]
    fn status_422() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "mode": {"type": "string", "enum": ["a", "b"]},
            "replicas": {"type": "integer", "maximum": 9}}}}});
        let errs = validate(&schema, &json!({"spec": {"mode": "x", "replicas": 10}}));
        let want = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Widget.example.com \"w1\" is invalid: [spec.mode: Unsupported value: \"x\": supported values: \"a\", \"b\", spec.replicas: Invalid value: 10: spec.replicas in body should be less than or equal to 9]",
            "reason": "Invalid",
            "details": {"name": "w1", "group": "example.com", "kind": "Widget", "causes": [
                {"reason": "FieldValueNotSupported", "message": "Unsupported value: \"x\": supported values: \"a\", \"b\"", "field": "spec.mode"},
                {"reason": "FieldValueInvalid", "message": "Invalid value: 10: spec.replicas in body should be less than or equal to 9", "field": "spec.replicas"}]},
            "code": 422});
        assert_eq!(invalid_status("Widget", "example.com", "w1", &errs), want);
        assert_eq!(
            invalid_status_body("Widget", "example.com", "w1", &errs),
            format!(
                "{}\n",
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Widget.example.com \"w1\" is invalid: [spec.mode: Unsupported value: \"x\": supported values: \"a\", \"b\", spec.replicas: Invalid value: 10: spec.replicas in body should be less than or equal to 9]","reason":"Invalid","details":{"name":"w1","group":"example.com","kind":"Widget","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: \"x\": supported values: \"a\", \"b\"","field":"spec.mode"},{"reason":"FieldValueInvalid","message":"Invalid value: 10: spec.replicas in body should be less than or equal to 9","field":"spec.replicas"}]},"code":422}"#
            )
        );
        // one error: no brackets; Go's encoder escapes <, > and &
        let one = [FieldError::invalid(
            "<nil>",
            Some(json!("")),
            "\"spec\" must validate at least one schema (anyOf)",
        )];
        let body = invalid_status_body("Widget", "example.com", "w1", &one);
        assert!(body.contains(r#""message":"Widget.example.com \"w1\" is invalid: \u003cnil\u003e: Invalid value: \"\": \"spec\" must validate at least one schema (anyOf)""#), "{}", body);
        assert_eq!(
            invalid_status("Widget", "", "w1", &[])["message"],
            json!("Widget \"w1\" is invalid")
        );
    }

    #[test]
    fn cel_rules_are_listed() {
        let schema = json!({"type": "object", "x-kubernetes-validations": [{"rule": "has(self.spec)"}],
            "properties": {"spec": {"type": "object", "properties": {"items": {"type": "array", "items": {
                "type": "object", "x-kubernetes-validations": [{"rule": "self.a < 3", "message": "small"}]}}}}}});
        assert_eq!(
            cel_rules(&schema),
            vec![
                (String::new(), "has(self.spec)".to_string()),
                ("spec.items[*]".to_string(), "self.a < 3".to_string()),
            ]
        );
    }

    #[test]
    fn go_regex_translation() {
        for (p, yes, no) in [
            (r"^\w+$", "a_1", "é"),
            (r"^\s$", " ", "\u{a0}"),
            (r"^[\d-]+$", "1-2", "x"),
            (r"^[^\D]$", "5", "x"),
            (r"^a&b~c$", "a&b~c", "ab"),
            (r"^[a&~-]+$", "&~-", "b"),
            (r"^\Q.*\E$", ".*", "ab"),
            (r"^[[:alpha:]]+$", "ab", "1"),
            (r"\bword\b", "a word here", "swordfish"),
            (r"^[]a]+$", "]a", "b"),
            (r"^\/x\-$", "/x-", "x"),
        ] {
            let re = go_regex(p).unwrap_or_else(|e| panic!("{}: {}", p, e));
            assert!(re.is_match(yes), "{} should match {:?}", p, yes);
            assert!(!re.is_match(no), "{} should not match {:?}", p, no);
        }
        let bad = messages(
            &spec_f(json!({"type": "string", "pattern": "("})),
            &cr(json!("x")),
        );
        assert_eq!(bad.len(), 1);
        assert!(bad[0].starts_with(r#"spec.f: Invalid value: "x": spec.f in body should match '(, but pattern is invalid: error parsing regexp: "#), "{}", bad[0]);
    }

    #[test]
    fn formats() {
        for (f, yes, no) in [
            (
                "date-time",
                "2024-01-02t03:04:05+01:00",
                "2024-01-02T24:00:00Z",
            ),
            ("datetime", "2024-01-02T03:04:05.5Z", "2024-01-02"),
            ("byte", "AAAA", ""),
            ("duration", "3 days", "5"),
            ("duration", "-1.5h", "1x"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("ipv6", "::1", "1.2.3.4"),
            ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b:3c:4d"),
            ("hostname", "example.com", "-bad-.com"),
            ("k8s-short-name", "abc-1", "Abc"),
            ("k8s-long-name", "a.b-c", "a..b"),
            ("bsonobjectid", "507f1f77bcf86cd799439011", "507f1f77"),
            ("isbn", "0321751043", "0321751044"),
            ("creditcard", "4111 1111 1111 1111", "4111 1111 1111 1112"),
            ("ssn", "123-45-6789", "123456789"),
            ("hexcolor", "#fff", "fff0"),
            ("rgbcolor", "rgb(1, 2, 255)", "rgb(256,0,0)"),
            ("uri", "https://example.com:8443/a%20b", "example.com"),
            ("email", "Jo <jo@example.com>", "jo.example.com"),
            (
                "uuid4",
                "123e4567-e89b-42d3-a456-426614174000",
                "123e4567-e89b-12d3-a456-426614174000",
            ),
        ] {
            assert!(format_validates(f, yes), "{} should accept {:?}", f, yes);
            assert!(!format_validates(f, no), "{} should reject {:?}", f, no);
        }
        // formats the apiserver strips for the type are not checked
        let s = spec_f(json!({"type": "integer", "format": "date-time"}));
        assert!(messages(&s, &cr(json!(3))).is_empty());
    }

    /// Bad schemas and odd values never panic.
    #[test]
    fn never_panics() {
        let schemas = vec![
            json!(null),
            json!("string"),
            json!(5),
            json!({"type": 5, "properties": [], "items": [{"type": "string"}], "required": "a"}),
            json!({"minimum": "x", "maximum": null, "multipleOf": 0, "maxLength": -1, "pattern": "(["}),
            json!({"type": "integer", "multipleOf": -2.5, "minimum": 1e300, "maximum": -1e300, "format": "int32"}),
            json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": [1, "a"],
                   "items": {"default": {"a": null}}, "uniqueItems": true, "minItems": 1.5}),
            json!({"additionalProperties": {"additionalProperties": false, "default": 3}, "x-kubernetes-embedded-resource": true,
                   "anyOf": [null, {"not": {}}], "oneOf": [{}, {}], "allOf": [{"enum": []}], "not": 3, "enum": [null]}),
            json!({"x-kubernetes-preserve-unknown-fields": true, "items": {}, "x-kubernetes-validations": [{"rule": 1}, "r"]}),
        ];
        let mut deep = json!(1);
        // deeper than MAX_DEPTH (serde_json's own clone and drop recurse, so not much deeper)
        for _ in 0..600 {
            deep = Value::Array(vec![deep]);
        }
        let values = vec![
            json!(null),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(-0.0),
            json!(1e308),
            json!("\u{0}\u{fffd}"),
            json!([null, [], {}, 1, 1.0, "1"]),
            json!({"apiVersion": 3, "kind": [], "metadata": "x", "": {"": null}}),
            deep,
        ];
        for s in &schemas {
            for v in &values {
                let mut x = v.clone();
                let _ = decode(s, &mut x);
                for e in validate(s, &x) {
                    let _ = e.to_string();
                }
                let _ = invalid_status_body("K", "g", "n", &validate(s, v));
                let _ = cel_rules(s);
                let mut y = json!({"spec": v.clone(), "list": [v.clone()]});
                let _ = decode(
                    &json!({"properties": {"spec": s, "list": {"items": s}}}),
                    &mut y,
                );
                let _ = validate(
                    &json!({"properties": {"spec": s, "list": {"items": s}}}),
                    &y,
                );
            }
        }
    }

    // ------------------------------------------------------------------------------------
    // The shared fixtures: every alm-examples CR against its CRD's schema
    // ------------------------------------------------------------------------------------

    fn fixtures_root() -> Option<std::path::PathBuf> {
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        [
            "../../shared/fixtures/operators",
            "../shared/fixtures/operators",
        ]
        .iter()
        .map(|p| here.join(p))
        .find(|p| p.is_dir())
    }

    fn manifests_dirs(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "manifests") {
                    out.push(p.clone());
                }
                manifests_dirs(&p, out);
            }
        }
    }

    fn yaml_docs(text: &str) -> Result<Vec<Value>, String> {
        let mut options = serde_saphyr::Options::default();
        let mut budget = serde_saphyr::Budget::default();
        budget.max_depth = 1_000;
        budget.max_nodes = 50_000_000;
        budget.max_events = 100_000_000;
        options.budget = Some(budget);
        serde_saphyr::from_multiple_with_options::<Value>(text, options).map_err(|e| e.to_string())
    }

    /// The schema of `version` in a CRD (v1, or v1beta1's per-version or top-level one).
    fn crd_schema<'a>(crd: &'a Value, version: &str) -> Option<&'a Value> {
        let spec = crd.get("spec")?;
        let per_version = spec
            .get("versions")?
            .as_array()?
            .iter()
            .find(|v| v["name"] == version);
        per_version
            .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
            .or_else(|| spec.pointer("/validation/openAPIV3Schema"))
    }

    #[test]
    fn fixture_alm_examples() {
        let Some(root) = fixtures_root() else {
            println!("fixture run skipped: ../shared/fixtures is not there");
            return;
        };
        let mut dirs = Vec::new();
        manifests_dirs(&root, &mut dirs);
        let (mut files, mut parse_errors, mut crds, mut schemas, mut rules) = (0, 0, 0, 0, 0);
        let (mut examples, mut valid, mut invalid, mut unmatched, mut bad_json) = (0, 0, 0, 0, 0);
        let mut pruned_examples = 0;
        let mut failures: Vec<String> = Vec::new();
        let mut by_text: HashMap<String, usize> = HashMap::new();
        let mut by_package: HashMap<String, usize> = HashMap::new();
        let mut pruned_lines: Vec<String> = Vec::new();
        for dir in &dirs {
            let mut docs = Vec::new();
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
                if ext != "yaml" && ext != "yml" {
                    continue;
                }
                files += 1;
                let Ok(text) = std::fs::read_to_string(&p) else {
                    continue;
                };
                match yaml_docs(&text) {
                    Ok(d) => docs.extend(d),
                    Err(_) => parse_errors += 1,
                }
            }
            let crd_docs: Vec<&Value> = docs
                .iter()
                .filter(|d| d["kind"] == "CustomResourceDefinition")
                .collect();
            crds += crd_docs.len();
            for crd in &crd_docs {
                for v in crd["spec"]["versions"].as_array().into_iter().flatten() {
                    if let Some(s) = crd_schema(crd, v["name"].as_str().unwrap_or("")) {
                        schemas += 1;
                        rules += cel_rules(s).len();
                        // defaults of an empty object, then validation: must not panic
                        let mut empty =
                            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "n"}});
                        decode(s, &mut empty);
                        let _ = validate(s, &empty);
                    }
                }
            }
            for csv in docs.iter().filter(|d| d["kind"] == "ClusterServiceVersion") {
                let Some(text) = csv
                    .pointer("/metadata/annotations/alm-examples")
                    .and_then(Value::as_str)
                else {
                    continue;
                };
                let Ok(Value::Array(list)) = serde_json::from_str::<Value>(text) else {
                    bad_json += 1;
                    continue;
                };
                for ex in list {
                    examples += 1;
                    let api_version = ex["apiVersion"].as_str().unwrap_or("");
                    let (group, version) =
                        api_version.rsplit_once('/').unwrap_or(("", api_version));
                    let kind = ex["kind"].as_str().unwrap_or("");
                    let schema = crd_docs
                        .iter()
                        .find(|c| c["spec"]["group"] == group && c["spec"]["names"]["kind"] == kind)
                        .and_then(|c| crd_schema(c, version));
                    let Some(schema) = schema else {
                        unmatched += 1;
                        continue;
                    };
                    let mut obj = ex.clone();
                    let pruned = decode(schema, &mut obj);
                    let rel = dir.strip_prefix(&root).unwrap_or(dir).display().to_string();
                    let package = rel.split('/').next().unwrap_or("").to_string();
                    if !pruned.is_empty() {
                        pruned_examples += 1;
                        if pruned_lines.len() < 12 {
                            pruned_lines.push(format!("{} {}: {}", rel, kind, pruned.join(", ")));
                        }
                    }
                    let errs = validate(schema, &obj);
                    if errs.is_empty() {
                        valid += 1;
                    } else {
                        invalid += 1;
                        *by_package.entry(package).or_default() += 1;
                        let name = ex
                            .pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        for e in &errs {
                            *by_text
                                .entry(e.body().chars().take(60).collect())
                                .or_default() += 1;
                        }
                        failures.push(format!(
                            "{} {}/{} {:?}: {}",
                            rel,
                            kind,
                            name,
                            pruned,
                            errs.iter()
                                .map(ToString::to_string)
                                .collect::<Vec<_>>()
                                .join(" | ")
                        ));
                    }
                }
            }
        }
        println!(
            "fixture run: {} manifests dirs, {} YAML files ({} unparsable), {} CRDs, {} version schemas, {} CEL rules not evaluated",
            dirs.len(),
            files,
            parse_errors,
            crds,
            schemas,
            rules
        );
        println!(
            "alm-examples: {} CRs ({} CSVs with unparsable alm-examples), {} without a CRD in the bundle, {} valid, {} invalid, {} with pruned fields",
            examples, bad_json, unmatched, valid, invalid, pruned_examples
        );
        let mut kinds: Vec<_> = by_text.into_iter().collect();
        kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
        for (text, n) in kinds.iter().take(15) {
            println!("  {:5} × {}", n, text);
        }
        let mut packages: Vec<_> = by_package.into_iter().collect();
        packages.sort();
        println!("invalid CRs by package: {:?}", packages);
        println!("pruned fields (first examples):");
        for line in &pruned_lines {
            println!("  {}", line);
        }
        println!(
            "failures (first {} of {}):",
            failures.len().min(40),
            failures.len()
        );
        // one line per package and kind, so that the sample is varied
        let mut seen = HashSet::new();
        for f in failures
            .iter()
            .filter(|f| {
                let mut w = f.split_whitespace();
                let pkg = w
                    .next()
                    .unwrap_or("")
                    .split('/')
                    .next()
                    .unwrap_or("")
                    .to_string();
                seen.insert((
                    pkg,
                    w.next()
                        .unwrap_or("")
                        .split('/')
                        .next()
                        .unwrap_or("")
                        .to_string(),
                ))
            })
            .take(40)
        {
            println!("  {}", f);
        }
        assert!(
            schemas > 0 && examples > 0,
            "the fixtures hold CRDs and examples"
        );
    }
}
