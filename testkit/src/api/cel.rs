//! `x-kubernetes-validations` of custom resources, for the CEL that OLM v1's CRDs (and CRDs
//! like them) use: kube-apiserver's CEL validator
//! (`apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go :: Validator.Validate,
//! validateExpressions`) over a small interpreter of the expressions it meets.
//!
//! - A rule runs where its schema node has a value (`self`); a transition rule (one that names
//!   `oldSelf`) only on an update whose old object has a value at the same path (object
//!   properties and map values correlate by key; list items do not, as for atomic lists).
//! - A rule that is false is refused as `validateExpressions` refuses it (`fieldErrorForReason`):
//!   `field.Invalid(path, value, message)` with the value itself (`spec.namespace: Invalid
//!   value: "Not_A_Label": namespace must be a valid DNS1123 label`), omitted for an object or
//!   array (`spec.source: Invalid value: catalog is required ...`); the rule's `message`, else
//!   `failed rule: <rule>`; `fieldPath` and `reason` are honoured. A rule that cannot be
//!   evaluated is `field.Invalid(path, <schema type>, "<error> evaluating rule: <message or
//!   rule>")` (`ruleErrorString`).
//! - The language modelled: literals (strings with Go/CEL escapes, integers, booleans), `self`,
//!   `oldSelf`, field selection, `has(x.f)`, `!`, `&&`, `||`, `? :`, `==`, `!=`, `<`, `<=`, `>`,
//!   `>=`, and the functions `matches`, `find` (the Kubernetes regex library), `substring`,
//!   `size`, `isURL`, `url(...).getScheme()` (the Kubernetes URL library; a URL is what Go's
//!   `url.Parse` accepts with a scheme and a host).
//!
//! Not modelled: everything else of CEL (a rule that uses it is not evaluated:
//! [`unsupported_rules`] lists them), `messageExpression`, cost limits, rules under
//! `x-kubernetes-preserve-unknown-fields` values, correlation of list items by map keys.

use serde_json::Value;

use super::schema::FieldError;

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
enum V {
    Json(Value),
    Bool(bool),
    Int(i64),
    Str(String),
    /// `url(s)`: the parsed URL's scheme.
    Url(String),
}

impl V {
    fn of(v: &Value) -> V {
        match v {
            Value::Bool(b) => V::Bool(*b),
            Value::String(s) => V::Str(s.clone()),
            Value::Number(n) if n.is_i64() => V::Int(n.as_i64().unwrap_or_default()),
            other => V::Json(other.clone()),
        }
    }
}

/// The parsed expression.
#[derive(Debug, Clone)]
enum E {
    Lit(V),
    Ident(String),
    Select(Box<E>, String),
    Has(Box<E>, String),
    Not(Box<E>),
    And(Box<E>, Box<E>),
    Or(Box<E>, Box<E>),
    Cond(Box<E>, Box<E>, Box<E>),
    Cmp(String, Box<E>, Box<E>),
    Call(String, Vec<E>),
    Method(Box<E>, String, Vec<E>),
}

/// The operators and punctuation, two-character ones first.
const OPS: [&str; 16] = [
    "==", "!=", "<=", ">=", "&&", "||", "<", ">", "!", "?", ":", ".", "(", ")", ",", "-",
];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Int(i64),
    Op(&'static str),
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    'outer: while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
            continue;
        }
        if ch == '\'' || ch == '"' {
            let q = ch;
            let mut s = String::new();
            i += 1;
            while i < c.len() && c[i] != q {
                if c[i] == '\\' && i + 1 < c.len() {
                    i += 1;
                    s.push(match c[i] {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                } else {
                    s.push(c[i]);
                }
                i += 1;
            }
            if i >= c.len() {
                return Err("unterminated string".into());
            }
            i += 1;
            out.push(Tok::Str(s));
            continue;
        }
        if ch.is_ascii_digit() {
            let start = i;
            while i < c.len() && c[i].is_ascii_digit() {
                i += 1;
            }
            let n: String = c[start..i].iter().collect();
            out.push(Tok::Int(n.parse().map_err(|e| format!("{e}"))?));
            continue;
        }
        if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(c[start..i].iter().collect()));
            continue;
        }
        for op in OPS {
            let len = op.chars().count();
            if c[i..].iter().take(len).copied().eq(op.chars()) {
                out.push(Tok::Op(op));
                i += len;
                continue 'outer;
            }
        }
        return Err(format!("unexpected {ch:?}"));
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected {op}"))
        }
    }
    fn expr(&mut self) -> Result<E, String> {
        let c = self.or()?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(E::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }
    fn or(&mut self) -> Result<E, String> {
        let mut l = self.and()?;
        while self.eat("||") {
            l = E::Or(Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> Result<E, String> {
        let mut l = self.cmp()?;
        while self.eat("&&") {
            l = E::And(Box::new(l), Box::new(self.cmp()?));
        }
        Ok(l)
    }
    fn cmp(&mut self) -> Result<E, String> {
        let l = self.unary()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if self.eat(op) {
                return Ok(E::Cmp(op.into(), Box::new(l), Box::new(self.unary()?)));
            }
        }
        Ok(l)
    }
    fn unary(&mut self) -> Result<E, String> {
        if self.eat("!") {
            return Ok(E::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return match self.unary()? {
                E::Lit(V::Int(n)) => Ok(E::Lit(V::Int(-n))),
                _ => Err("unsupported negation".into()),
            };
        }
        self.postfix()
    }
    fn args(&mut self) -> Result<Vec<E>, String> {
        let mut args = Vec::new();
        if self.eat(")") {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(")") {
                return Ok(args);
            }
            self.expect(",")?;
        }
    }
    fn postfix(&mut self) -> Result<E, String> {
        let mut e = self.primary()?;
        while self.eat(".") {
            let Some(Tok::Ident(name)) = self.peek().cloned() else {
                return Err("expected a name after .".into());
            };
            self.pos += 1;
            e = if self.eat("(") {
                E::Method(Box::new(e), name, self.args()?)
            } else {
                E::Select(Box::new(e), name)
            };
        }
        Ok(e)
    }
    fn primary(&mut self) -> Result<E, String> {
        let t = self.peek().cloned().ok_or("unexpected end")?;
        self.pos += 1;
        match t {
            Tok::Str(s) => Ok(E::Lit(V::Str(s))),
            Tok::Int(n) => Ok(E::Lit(V::Int(n))),
            Tok::Op("(") => {
                let e = self.expr()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Ident(id) if id == "true" || id == "false" => Ok(E::Lit(V::Bool(id == "true"))),
            Tok::Ident(id) if id == "self" || id == "oldSelf" => Ok(E::Ident(id)),
            Tok::Ident(id) => {
                self.expect("(")?;
                let args = self.args()?;
                if id == "has" {
                    return match args.into_iter().next() {
                        Some(E::Select(of, field)) => Ok(E::Has(of, field)),
                        _ => Err("has() takes a field selection".into()),
                    };
                }
                if !matches!(id.as_str(), "isURL" | "url") {
                    return Err(format!("unsupported function {id}"));
                }
                Ok(E::Call(id, args))
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }
}

/// Parses a rule; `Err` for what is not modelled.
fn parse(rule: &str) -> Result<E, String> {
    let mut p = Parser {
        toks: lex(rule)?,
        pos: 0,
    };
    let e = p.expr()?;
    if p.pos != p.toks.len() {
        return Err("trailing tokens".into());
    }
    Ok(e)
}

/// Whether the expression names `oldSelf` (a transition rule).
fn uses_old_self(e: &E) -> bool {
    match e {
        E::Ident(id) => id == "oldSelf",
        E::Lit(_) => false,
        E::Select(x, _) | E::Has(x, _) | E::Not(x) => uses_old_self(x),
        E::And(a, b) | E::Or(a, b) | E::Cmp(_, a, b) => uses_old_self(a) || uses_old_self(b),
        E::Cond(c, a, b) => uses_old_self(c) || uses_old_self(a) || uses_old_self(b),
        E::Call(_, args) => args.iter().any(uses_old_self),
        E::Method(x, _, args) => uses_old_self(x) || args.iter().any(uses_old_self),
    }
}

/// `url.Parse` with a scheme and a host: `scheme://host...`.
fn url_scheme(s: &str) -> Option<String> {
    let (scheme, rest) = s.split_once("://")?;
    let ok_scheme = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (ok_scheme && !host.is_empty() && !s.contains(char::is_whitespace)).then(|| scheme.into())
}

fn regex(p: &str) -> Result<regex::Regex, String> {
    super::schema::go_regex(p)
}

struct Env<'a> {
    this: &'a Value,
    old: Option<&'a Value>,
}

fn eval(e: &E, env: &Env) -> Result<V, String> {
    let truth = |e: &E| match eval(e, env)? {
        V::Bool(b) => Ok(b),
        other => Err(format!("no such overload: {other:?} is not a bool")),
    };
    let string = |e: &E| match eval(e, env)? {
        V::Str(s) => Ok(s),
        other => Err(format!("no such overload: {other:?} is not a string")),
    };
    Ok(match e {
        E::Lit(v) => v.clone(),
        E::Ident(id) if id == "self" => V::of(env.this),
        E::Ident(_) => V::of(env.old.ok_or("oldSelf without an old value")?),
        E::Select(of, f) => match eval(of, env)? {
            V::Json(Value::Object(m)) => V::of(m.get(f).ok_or(format!("no such key: {f}"))?),
            _ => return Err(format!("no such key: {f}")),
        },
        E::Has(of, f) => match eval(of, env)? {
            V::Json(Value::Object(m)) => V::Bool(m.contains_key(f)),
            _ => return Err("has() on a non-object".into()),
        },
        E::Not(x) => V::Bool(!truth(x)?),
        // CEL's logical operators commute errors away when the other side decides.
        E::And(a, b) => match (truth(a), truth(b)) {
            (Ok(false), _) | (_, Ok(false)) => V::Bool(false),
            (Ok(true), Ok(true)) => V::Bool(true),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        },
        E::Or(a, b) => match (truth(a), truth(b)) {
            (Ok(true), _) | (_, Ok(true)) => V::Bool(true),
            (Ok(false), Ok(false)) => V::Bool(false),
            (Err(e), _) | (_, Err(e)) => return Err(e),
        },
        E::Cond(c, a, b) => {
            if truth(c)? {
                eval(a, env)?
            } else {
                eval(b, env)?
            }
        }
        E::Cmp(op, a, b) => {
            let (a, b) = (eval(a, env)?, eval(b, env)?);
            match op.as_str() {
                "==" => V::Bool(a == b),
                "!=" => V::Bool(a != b),
                _ => {
                    let (V::Int(x), V::Int(y)) = (&a, &b) else {
                        return Err("no such overload for comparison".into());
                    };
                    V::Bool(match op.as_str() {
                        "<" => x < y,
                        "<=" => x <= y,
                        ">" => x > y,
                        _ => x >= y,
                    })
                }
            }
        }
        E::Call(f, args) if f == "isURL" => {
            V::Bool(url_scheme(&string(args.first().ok_or("isURL()")?)?).is_some())
        }
        E::Call(_, args) => {
            let s = string(args.first().ok_or("url()")?)?;
            V::Url(url_scheme(&s).ok_or(format!(
                "URL parse error during conversion from string: {s}"
            ))?)
        }
        E::Method(of, m, args) => {
            let recv = eval(of, env)?;
            let arg = |i: usize| -> Result<V, String> {
                eval(args.get(i).ok_or(format!("{m}: missing argument"))?, env)
            };
            match (m.as_str(), recv) {
                ("getScheme", V::Url(s)) => V::Str(s),
                ("matches", V::Str(s)) => {
                    let V::Str(p) = arg(0)? else {
                        return Err("matches: not a string".into());
                    };
                    V::Bool(regex(&p)?.is_match(&s))
                }
                ("find", V::Str(s)) => {
                    let V::Str(p) = arg(0)? else {
                        return Err("find: not a string".into());
                    };
                    V::Str(
                        regex(&p)?
                            .find(&s)
                            .map(|m| m.as_str().to_string())
                            .unwrap_or_default(),
                    )
                }
                ("substring", V::Str(s)) => {
                    let V::Int(n) = arg(0)? else {
                        return Err("substring: not an int".into());
                    };
                    let chars: Vec<char> = s.chars().collect();
                    let n = usize::try_from(n).map_err(|_| "substring: negative index")?;
                    if n > chars.len() {
                        return Err(format!("index out of range: {n}"));
                    }
                    V::Str(chars[n..].iter().collect())
                }
                ("size", V::Str(s)) => V::Int(s.chars().count() as i64),
                ("size", V::Json(Value::Array(a))) => V::Int(a.len() as i64),
                ("size", V::Json(Value::Object(o))) => V::Int(o.len() as i64),
                (m, other) => return Err(format!("no such overload: {m} on {other:?}")),
            }
        }
    })
}

/// A schema node's rules, and where in its value they apply.
fn rules(s: &Value) -> Vec<&Value> {
    s.get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .map(|r| r.iter().collect())
        .unwrap_or_default()
}

fn schema_type(s: &Value) -> String {
    s.get("type")
        .and_then(Value::as_str)
        .unwrap_or("object")
        .to_string()
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(s: &Value, v: &Value, old: Option<&Value>, path: &str, out: &mut Vec<FieldError>) {
    for r in rules(s) {
        let Some(rule) = r.get("rule").and_then(Value::as_str) else {
            continue;
        };
        let Ok(expr) = parse(rule) else {
            continue;
        };
        if old.is_none() && uses_old_self(&expr) {
            continue;
        }
        let result = eval(&expr, &Env { this: v, old });
        if result == Ok(V::Bool(true)) {
            continue;
        }
        // `ruleErrorString`, `ruleMessageOrDefault`.
        let error_string = r
            .get("message")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(|m| m.trim().to_string())
            .unwrap_or_else(|| rule.trim().to_string());
        let message = match r.get("message").and_then(Value::as_str) {
            Some(m) if !m.is_empty() => m.trim().to_string(),
            _ => format!("failed rule: {error_string}"),
        };
        let field = match r.get("fieldPath").and_then(Value::as_str) {
            Some(fp) => format!("{path}{fp}"),
            None => path.to_string(),
        };
        let ty = schema_type(s);
        out.push(match (result, r.get("reason").and_then(Value::as_str)) {
            // An evaluation error (`no such key`, ...): the schema type as the value.
            (Err(e), _) => FieldError::invalid(
                path,
                Some(Value::String(ty)),
                &format!("{e} evaluating rule: {error_string}"),
            ),
            (_, Some("FieldValueRequired")) => FieldError::required(&field, &message),
            (_, Some("FieldValueForbidden")) => FieldError::forbidden(&field, &message),
            (_, Some("FieldValueDuplicate")) => FieldError::duplicate(&field, Some(v.clone())),
            // A false rule: the value itself, omitted for objects and arrays.
            _ if ty == "object" || ty == "array" => {
                FieldError::invalid_omitting_value(&field, &message)
            }
            _ => FieldError::invalid(&field, Some(v.clone()), &message),
        });
    }
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    match v {
        Value::Object(m) => {
            let props = s.get("properties").and_then(Value::as_object);
            let additional = s.get("additionalProperties").filter(|a| a.is_object());
            for (k, child) in m {
                let cs = props.and_then(|p| p.get(k)).or(additional);
                if let Some(cs) = cs {
                    let o = old.and_then(|o| o.get(k));
                    walk(cs, child, o, &join(path, k), out);
                }
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.get("items") {
                for (i, item) in items.iter().enumerate() {
                    walk(is, item, None, &format!("{path}[{i}]"), out);
                }
            }
        }
        _ => {}
    }
}

/// The CEL rules of `schema` that `obj` (with `old`, on an update) breaks, as kube-apiserver
/// reports them.
pub fn validate(schema: &Value, obj: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut out = Vec::new();
    walk(schema, obj, old, "", &mut out);
    out
}

/// The rules of `schema` this module does not evaluate (their CEL is not modelled).
pub fn unsupported_rules(schema: &Value) -> Vec<String> {
    super::schema::cel_rules(schema)
        .into_iter()
        .filter(|(_, r)| parse(r).is_err())
        .map(|(p, r)| format!("{p}: {r}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn crd(path: &str) -> Value {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/data/olmv1-crds")
                .join(path),
        )
        .expect("crd");
        let doc: Value = serde_saphyr::from_str(&text).expect("yaml");
        doc["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
    }

    fn messages(errs: &[FieldError]) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    /// Every rule of operator-controller's and catalogd's CRDs is modelled.
    #[test]
    fn olm_v1_rules_are_all_modelled() {
        for f in [
            "clusterextensions-v1.10.yaml",
            "clusterextensions-v1.11.yaml",
            "clustercatalogs.yaml",
        ] {
            assert_eq!(unsupported_rules(&crd(f)), Vec::<String>::new(), "{f}");
        }
    }

    #[test]
    fn cluster_extension_rules() {
        let s = crd("clusterextensions-v1.11.yaml");
        let ce = |ns: &str, version: &str| {
            json!({"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
                "metadata": {"name": "x"},
                "spec": {"namespace": ns, "source": {"sourceType": "Catalog",
                    "catalog": {"packageName": "p", "version": version}}}})
        };
        assert_eq!(
            messages(&validate(&s, &ce("ns", ">=1.2, <2"), None)),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(&validate(&s, &ce("Not_A_Label", "not a range"), None)),
            [
                "spec.namespace: Invalid value: \"Not_A_Label\": namespace must be a valid DNS1123 label",
                "spec.source.catalog.version: Invalid value: \"not a range\": invalid version expression",
            ]
        );
        // Transition rules: the namespace is immutable.
        let old = ce("ns", "1.0.0");
        assert_eq!(
            messages(&validate(&s, &ce("other", "1.0.0"), Some(&old))),
            ["spec.namespace: Invalid value: \"other\": namespace is immutable"]
        );
        // sourceType Catalog needs catalog.
        let mut no_catalog = ce("ns", "1.0.0");
        no_catalog["spec"]["source"]
            .as_object_mut()
            .expect("source")
            .remove("catalog");
        let errs = messages(&validate(&s, &no_catalog, None));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with(
                "spec.source: Invalid value: catalog is required when sourceType is Catalog"
            ),
            "{errs:?}"
        );
    }

    #[test]
    fn cluster_catalog_image_references() {
        let s = crd("clustercatalogs.yaml");
        let cc = |r: &str, poll: Option<i64>| {
            let mut image = json!({"ref": r});
            if let Some(p) = poll {
                image["pollIntervalMinutes"] = json!(p);
            }
            json!({"apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
                "metadata": {"name": "c"},
                "spec": {"source": {"type": "Image", "image": image}}})
        };
        let digest = format!("quay.io/x/catalog@sha256:{}", "a".repeat(64));
        for ok in [
            cc("quay.io/x/catalog:v1", Some(10)),
            cc(&digest, None),
            cc("127.0.0.1:5000/catalog:v1", None),
        ] {
            assert_eq!(
                messages(&validate(&s, &ok, None)),
                Vec::<String>::new(),
                "{ok}"
            );
        }
        let errs = messages(&validate(&s, &cc("quay.io/x/catalog", None), None));
        assert_eq!(
            errs,
            [
                "spec.source.image.ref: Invalid value: \"quay.io/x/catalog\": must end with a digest or a tag"
            ]
        );
        let errs = messages(&validate(&s, &cc(&digest, Some(5)), None));
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].starts_with("spec.source.image: Invalid value: cannot specify pollIntervalMinutes while using digest-based"),
            "{errs:?}"
        );
    }

    #[test]
    fn the_interpreter() {
        let env = |v: Value| v;
        let run = |rule: &str, v: Value| {
            let this = env(v);
            eval(
                &parse(rule).expect("parses"),
                &Env {
                    this: &this,
                    old: None,
                },
            )
        };
        assert_eq!(run("self.size() >= 3", json!("abc")), Ok(V::Bool(true)));
        assert_eq!(
            run("'a:b'.find(':.*$').substring(1)", json!(null)),
            Ok(V::Str("b".into()))
        );
        assert_eq!(
            run("has(self.x) ? self.x == 1 : true", json!({})),
            Ok(V::Bool(true))
        );
        assert_eq!(
            run("has(self.x) || self.y == 2", json!({"y": 2})),
            Ok(V::Bool(true))
        );
        assert_eq!(
            run(
                "isURL(self) ? (url(self).getScheme() == \"http\" || url(self).getScheme() == \"https\") : true",
                json!("ftp://h/x")
            ),
            Ok(V::Bool(false))
        );
        assert!(run("self.nope == 1", json!({})).is_err());
        assert!(parse("self.all(x, x > 1)").is_err(), "not modelled");
    }
}
