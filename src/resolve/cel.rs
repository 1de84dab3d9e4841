//! The CEL rules of `olm.constraint` `cel`: the subset of the Common Expression Language that
//! operator-framework/api `pkg/constraints/cel.go` rules use, over its environment (the
//! variable `properties`, a list of `{type, value}` maps, and `semver_compare(a, b)`, blang's
//! `Compare` of two `ParseTolerant` versions).
//!
//! Supported: literals (int, double, string, bool, null, lists, maps), `properties`, field
//! selection and indexing, `! - * / % + - < <= > >= == != in && || ?:`, the macros `exists`,
//! `all`, `exists_one`, `filter`, `map` and `has`, and the functions `size`, `contains`,
//! `startsWith`, `endsWith`, `int`, `string` and `semver_compare`. A rule outside the subset is
//! refused when it is compiled, naming what is not supported. `&&` and `||` absorb errors as
//! CEL's do (`error || true` is `true`); an evaluation error makes the predicate false, as in
//! OLM's `celPredicate.Test`.

use std::cmp::Ordering;
use std::rc::Rc;

use serde_json::Value as Json;

use super::entry::{Property, parse_tolerant};

/// A value during evaluation.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
    Str(Rc<str>),
    List(Rc<Vec<Val>>),
    Map(Rc<Vec<(Val, Val)>>),
}

type Res = Result<Val, String>;

/// An expression.
#[derive(Debug, Clone)]
enum Expr {
    Lit(Val),
    Ident(String),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    Select(Box<Expr>, String),
    Has(Box<Expr>, String),
    Index(Box<Expr>, Box<Expr>),
    Call(String, Option<Box<Expr>>, Vec<Expr>),
    Macro(String, Box<Expr>, String, Box<Expr>, Option<Box<Expr>>),
    Unary(char, Box<Expr>),
    Binary(String, Box<Expr>, Box<Expr>),
    /// `a && b && ...` or `a || b || ...`, flat (cel-go balances these chains).
    Logic(bool, Vec<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// A compiled rule.
#[derive(Debug, Clone)]
pub struct Program {
    expr: Rc<Expr>,
}

// `Rc` is not `Send`: the program is compiled per resolution and stays on its thread.
impl Program {
    /// `CelEnvironment.Validate`: parses `rule`; a rule whose result is plainly not a bool is
    /// refused with OLM's `cel expressions must have type Bool`.
    pub fn compile(rule: &str) -> Result<Program, String> {
        let toks = lex(rule)?;
        let mut p = Parser {
            toks,
            at: 0,
            depth: 0,
        };
        let e = p.expr()?;
        if p.at < p.toks.len() {
            return Err(format!(
                "ERROR: <input>: Syntax error: unexpected {}",
                p.toks[p.at].text()
            ));
        }
        if !maybe_bool(&e) {
            return Err("cel expressions must have type Bool".into());
        }
        Ok(Program { expr: Rc::new(e) })
    }

    /// `CelProgram.Evaluate` with `properties` bound to `props` (each value decoded from
    /// JSON; one that does not decode is `null`, as OLM leaves it nil).
    pub fn evaluate(&self, props: &[Property]) -> Result<bool, String> {
        let list: Vec<Val> = props
            .iter()
            .map(|p| match &p.json {
                Some(v) => Val::Map(Rc::new(vec![
                    (Val::Str("type".into()), Val::Str(p.type_.as_str().into())),
                    (Val::Str("value".into()), from_json(v)),
                ])),
                None => Val::Null,
            })
            .collect();
        let mut env = vec![("properties".to_string(), Val::List(Rc::new(list)))];
        match eval(&self.expr, &mut env)? {
            Val::Bool(b) => Ok(b),
            other => Err(format!(
                "cel expression evalutated to {}, not bool",
                type_name(&other)
            )),
        }
    }
}

fn maybe_bool(e: &Expr) -> bool {
    match e {
        Expr::Lit(v) => matches!(v, Val::Bool(_)),
        Expr::List(_) | Expr::Map(_) => false,
        Expr::Binary(op, ..) => !matches!(op.as_str(), "+" | "-" | "*" | "/" | "%"),
        Expr::Logic(..) => true,
        Expr::Unary(c, _) => *c == '!',
        Expr::Cond(_, a, b) => maybe_bool(a) && maybe_bool(b),
        Expr::Macro(name, ..) => matches!(name.as_str(), "exists" | "all" | "exists_one"),
        Expr::Call(name, ..) => {
            !matches!(name.as_str(), "size" | "int" | "string" | "semver_compare")
        }
        _ => true,
    }
}

fn from_json(v: &Json) -> Val {
    match v {
        Json::Null => Val::Null,
        Json::Bool(b) => Val::Bool(*b),
        // Go's json decodes numbers into float64.
        Json::Number(n) => Val::Double(n.as_f64().unwrap_or(0.0)),
        Json::String(s) => Val::Str(s.as_str().into()),
        Json::Array(a) => Val::List(Rc::new(a.iter().map(from_json).collect())),
        Json::Object(m) => Val::Map(Rc::new(
            m.iter()
                .map(|(k, v)| (Val::Str(k.as_str().into()), from_json(v)))
                .collect(),
        )),
    }
}

fn type_name(v: &Val) -> &'static str {
    match v {
        Val::Null => "null_type",
        Val::Bool(_) => "bool",
        Val::Int(_) => "int",
        Val::Double(_) => "double",
        Val::Str(_) => "string",
        Val::List(_) => "list",
        Val::Map(_) => "map",
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Double(f64),
    Str(String),
    Ident(String),
    Op(&'static str),
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Int(i) => i.to_string(),
            Tok::Double(d) => d.to_string(),
            Tok::Str(s) => format!("{s:?}"),
            Tok::Ident(s) => s.clone(),
            Tok::Op(o) => format!("'{o}'"),
        }
    }
}

const OPS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "+", "-", "*", "/", "%", "?", ":", "(", ")",
    "[", "]", "{", "}", ",", ".",
];

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'e') {
                i += 1;
            }
            let t = &s[start..i];
            if t.contains(['.', 'e']) {
                out.push(Tok::Double(t.parse().map_err(|_| bad(t))?));
            } else {
                out.push(Tok::Int(t.parse().map_err(|_| bad(t))?));
            }
            if i < b.len() && (b[i] == b'u' || b[i] == b'U') {
                i += 1;
            }
        } else if c == b'"' || c == b'\'' {
            let mut v = String::new();
            i += 1;
            loop {
                let Some(&d) = b.get(i) else {
                    return Err("ERROR: <input>: Syntax error: unterminated string".into());
                };
                if d == c {
                    i += 1;
                    break;
                }
                if d == b'\\' {
                    let e = *b
                        .get(i + 1)
                        .ok_or("ERROR: <input>: Syntax error: bad escape")?;
                    v.push(match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'\\' => '\\',
                        b'"' => '"',
                        b'\'' => '\'',
                        _ => return Err("ERROR: <input>: Syntax error: unsupported escape".into()),
                    });
                    i += 2;
                } else {
                    let ch = s[i..].chars().next().unwrap_or('\u{fffd}');
                    v.push(ch);
                    i += ch.len_utf8();
                }
            }
            out.push(Tok::Str(v));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(s[start..i].to_string()));
        } else if let Some(op) = OPS.iter().find(|o| s[i..].starts_with(**o)) {
            out.push(Tok::Op(op));
            i += op.len();
        } else {
            return Err(format!(
                "ERROR: <input>: Syntax error: token recognition error at: '{}'",
                s[i..].chars().next().unwrap_or(' ')
            ));
        }
    }
    Ok(out)
}

fn bad(t: &str) -> String {
    format!("ERROR: <input>: Syntax error: bad number {t}")
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    depth: usize,
}

/// Nesting bound: a rule is at most 128 KiB, and each level of nesting costs stack.
const MAX_DEPTH: usize = 64;

impl Parser {
    fn peek_op(&self, op: &str) -> bool {
        matches!(self.toks.get(self.at), Some(Tok::Op(o)) if *o == op)
    }

    fn eat(&mut self, op: &str) -> bool {
        let yes = self.peek_op(op);
        if yes {
            self.at += 1;
        }
        yes
    }

    fn want(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!(
                "ERROR: <input>: Syntax error: expected '{op}', found {}",
                self.toks
                    .get(self.at)
                    .map_or("the end".to_string(), Tok::text)
            ))
        }
    }

    fn enter(&mut self) -> Result<(), String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("ERROR: <input>: expression nested too deeply".into());
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, String> {
        self.enter()?;
        let e = self.conditional();
        self.depth -= 1;
        e
    }

    fn conditional(&mut self) -> Result<Expr, String> {
        let c = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.want(":")?;
            let b = self.expr()?;
            return Ok(Expr::Cond(Box::new(c), Box::new(a), Box::new(b)));
        }
        Ok(c)
    }

    fn binary(&mut self, level: usize) -> Result<Expr, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["==", "!=", "<", "<=", ">", ">=", "in"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        let mut chain = 1;
        loop {
            let op = match self.toks.get(self.at) {
                Some(Tok::Op(o)) if LEVELS[level].contains(o) => o.to_string(),
                Some(Tok::Ident(i)) if i == "in" && LEVELS[level].contains(&"in") => "in".into(),
                _ => break,
            };
            self.at += 1;
            let right = self.binary(level + 1)?;
            left = match (op.as_str(), left) {
                ("||" | "&&", Expr::Logic(or, mut items)) => {
                    items.push(right);
                    Expr::Logic(or, items)
                }
                ("||" | "&&", l) => Expr::Logic(op == "||", vec![l, right]),
                (_, l) => {
                    chain += 1;
                    if chain > MAX_DEPTH {
                        return Err("ERROR: <input>: expression nested too deeply".into());
                    }
                    Expr::Binary(op, Box::new(l), Box::new(right))
                }
            };
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, String> {
        for op in ['!', '-'] {
            if self.eat(&op.to_string()) {
                self.enter()?;
                let e = self.unary();
                self.depth -= 1;
                return Ok(Expr::Unary(op, Box::new(e?)));
            }
        }
        self.member()
    }

    fn args(&mut self, close: &str) -> Result<Vec<Expr>, String> {
        let mut out = Vec::new();
        if self.eat(close) {
            return Ok(out);
        }
        loop {
            out.push(self.expr()?);
            if self.eat(close) {
                return Ok(out);
            }
            self.want(",")?;
        }
    }

    fn member(&mut self) -> Result<Expr, String> {
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                let Some(Tok::Ident(name)) = self.toks.get(self.at).cloned() else {
                    return Err("ERROR: <input>: Syntax error: expected a field name".into());
                };
                self.at += 1;
                if self.eat("(") {
                    let args = self.args(")")?;
                    e = self.method(e, name, args)?;
                } else {
                    e = Expr::Select(Box::new(e), name);
                }
            } else if self.eat("[") {
                let i = self.expr()?;
                self.want("]")?;
                e = Expr::Index(Box::new(e), Box::new(i));
            } else {
                return Ok(e);
            }
        }
    }

    fn method(&mut self, target: Expr, name: String, mut args: Vec<Expr>) -> Result<Expr, String> {
        match name.as_str() {
            "exists" | "all" | "exists_one" | "filter" | "map" => {
                let var = match args.first() {
                    Some(Expr::Ident(v)) => v.clone(),
                    _ => {
                        return Err(format!(
                            "ERROR: <input>: {name}: argument must be a simple name"
                        ));
                    }
                };
                let (body, extra) = match (name.as_str(), args.len()) {
                    (_, 2) => (args.remove(1), None),
                    ("map", 3) => {
                        let t = args.remove(2);
                        (t, Some(Box::new(args.remove(1))))
                    }
                    _ => return Err(format!("ERROR: <input>: {name}: wrong number of arguments")),
                };
                Ok(Expr::Macro(
                    name,
                    Box::new(target),
                    var,
                    Box::new(body),
                    extra,
                ))
            }
            "size" | "contains" | "startsWith" | "endsWith" => {
                Ok(Expr::Call(name, Some(Box::new(target)), args))
            }
            _ => Err(format!(
                "ERROR: <input>: undeclared reference to '{name}' (in container '')"
            )),
        }
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let Some(t) = self.toks.get(self.at).cloned() else {
            return Err("ERROR: <input>: Syntax error: unexpected end of input".into());
        };
        self.at += 1;
        Ok(match t {
            Tok::Int(i) => Expr::Lit(Val::Int(i)),
            Tok::Double(d) => Expr::Lit(Val::Double(d)),
            Tok::Str(s) => Expr::Lit(Val::Str(s.into())),
            Tok::Op("(") => {
                let e = self.expr()?;
                self.want(")")?;
                e
            }
            Tok::Op("[") => Expr::List(self.args("]")?),
            Tok::Op("{") => {
                let mut entries = Vec::new();
                if !self.eat("}") {
                    loop {
                        let k = self.expr()?;
                        self.want(":")?;
                        let v = self.expr()?;
                        entries.push((k, v));
                        if self.eat("}") {
                            break;
                        }
                        self.want(",")?;
                    }
                }
                Expr::Map(entries)
            }
            Tok::Ident(name) => match name.as_str() {
                "true" => Expr::Lit(Val::Bool(true)),
                "false" => Expr::Lit(Val::Bool(false)),
                "null" => Expr::Lit(Val::Null),
                _ if self.eat("(") => {
                    let mut args = self.args(")")?;
                    match name.as_str() {
                        "has" => match args.pop() {
                            Some(Expr::Select(t, f)) if args.is_empty() => Expr::Has(t, f),
                            _ => {
                                return Err(
                                    "ERROR: <input>: invalid argument to has() macro".into()
                                );
                            }
                        },
                        "size" | "int" | "string" | "semver_compare" => {
                            Expr::Call(name, None, args)
                        }
                        _ => {
                            return Err(format!(
                                "ERROR: <input>: undeclared reference to '{name}' (in container '')"
                            ));
                        }
                    }
                }
                _ => Expr::Ident(name),
            },
            other => {
                return Err(format!(
                    "ERROR: <input>: Syntax error: unexpected {}",
                    other.text()
                ));
            }
        })
    }
}

fn no_such(what: &str) -> String {
    format!("no such key: {what}")
}

fn eval(e: &Expr, env: &mut Vec<(String, Val)>) -> Res {
    match e {
        Expr::Lit(v) => Ok(v.clone()),
        Expr::Ident(n) => env
            .iter()
            .rev()
            .find(|(k, _)| k == n)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("no such attribute: {n}")),
        Expr::List(items) => Ok(Val::List(Rc::new(
            items
                .iter()
                .map(|i| eval(i, env))
                .collect::<Result<_, _>>()?,
        ))),
        Expr::Map(entries) => {
            let mut out = Vec::new();
            for (k, v) in entries {
                out.push((eval(k, env)?, eval(v, env)?));
            }
            Ok(Val::Map(Rc::new(out)))
        }
        Expr::Select(t, f) => match eval(t, env)? {
            Val::Map(m) => get(&m, &Val::Str(f.as_str().into())).ok_or_else(|| no_such(f)),
            other => Err(format!(
                "type '{}' does not support field selection",
                type_name(&other)
            )),
        },
        Expr::Has(t, f) => match eval(t, env)? {
            Val::Map(m) => Ok(Val::Bool(get(&m, &Val::Str(f.as_str().into())).is_some())),
            other => Err(format!(
                "invalid type for field selection: {}",
                type_name(&other)
            )),
        },
        Expr::Index(t, i) => {
            let (t, i) = (eval(t, env)?, eval(i, env)?);
            match (&t, &i) {
                (Val::List(l), _) => {
                    let n = index_of(&i)?;
                    usize::try_from(n)
                        .ok()
                        .and_then(|n| l.get(n).cloned())
                        .ok_or_else(|| {
                            format!("index '{n}' out of range in list size '{}'", l.len())
                        })
                }
                (Val::Map(m), _) => get(m, &i).ok_or_else(|| no_such(&show(&i))),
                _ => Err(format!(
                    "type '{}' does not support indexing",
                    type_name(&t)
                )),
            }
        }
        Expr::Unary('!', x) => match eval(x, env)? {
            Val::Bool(b) => Ok(Val::Bool(!b)),
            _ => Err("no such overload: !_".into()),
        },
        Expr::Unary(_, x) => match eval(x, env)? {
            Val::Int(i) => i
                .checked_neg()
                .map(Val::Int)
                .ok_or_else(|| "int overflow".into()),
            Val::Double(d) => Ok(Val::Double(-d)),
            _ => Err("no such overload: -_".into()),
        },
        Expr::Logic(want, items) => {
            // CEL's commutative `&&` / `||`: any operand deciding wins over errors.
            let mut first_err = None;
            for i in items {
                match eval(i, env) {
                    Ok(Val::Bool(b)) if b == *want => return Ok(Val::Bool(b)),
                    Ok(Val::Bool(_)) => {}
                    Ok(_) => {
                        first_err.get_or_insert_with(|| {
                            "no such overload: logical operator".to_string()
                        });
                    }
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
            match first_err {
                Some(e) => Err(e),
                None => Ok(Val::Bool(!want)),
            }
        }
        Expr::Binary(op, a, b) => {
            let (l, r) = (eval(a, env)?, eval(b, env)?);
            binary(op, &l, &r)
        }
        Expr::Cond(c, a, b) => match eval(c, env)? {
            Val::Bool(true) => eval(a, env),
            Val::Bool(false) => eval(b, env),
            _ => Err("no such overload: _?_:_".into()),
        },
        Expr::Call(name, target, args) => {
            let mut vals = Vec::new();
            if let Some(t) = target {
                vals.push(eval(t, env)?);
            }
            for a in args {
                vals.push(eval(a, env)?);
            }
            call(name, &vals)
        }
        Expr::Macro(name, target, var, body, extra) => {
            let Val::List(items) = eval(target, env)? else {
                return Err(format!("no such overload: {name}"));
            };
            let mut count = 0usize;
            let mut out = Vec::new();
            let mut err = None;
            for item in items.iter() {
                env.push((var.clone(), item.clone()));
                let r = match extra {
                    Some(filter) => eval(filter, env).and_then(|keep| match keep {
                        Val::Bool(true) => eval(body, env).map(Some),
                        Val::Bool(false) => Ok(None),
                        _ => Err("no such overload: map".into()),
                    }),
                    None => eval(body, env).map(Some),
                };
                env.pop();
                match (name.as_str(), r) {
                    ("map", Ok(v)) => out.extend(v),
                    ("filter", Ok(Some(Val::Bool(true)))) => out.push(item.clone()),
                    ("filter", Ok(Some(Val::Bool(false)))) => {}
                    ("exists", Ok(Some(Val::Bool(true)))) => return Ok(Val::Bool(true)),
                    ("all", Ok(Some(Val::Bool(false)))) => return Ok(Val::Bool(false)),
                    ("exists" | "all", Ok(Some(Val::Bool(_)))) => {}
                    ("exists_one", Ok(Some(Val::Bool(b)))) => count += usize::from(b),
                    (_, Err(e)) if name != "map" && name != "filter" => err = Some(e),
                    (_, Err(e)) => return Err(e),
                    _ => return Err(format!("no such overload: {name}")),
                }
            }
            match name.as_str() {
                "map" | "filter" => Ok(Val::List(Rc::new(out))),
                _ if err.is_some() => Err(err.unwrap_or_default()),
                "exists" => Ok(Val::Bool(false)),
                "all" => Ok(Val::Bool(true)),
                _ => Ok(Val::Bool(count == 1)),
            }
        }
    }
}

fn show(v: &Val) -> String {
    match v {
        Val::Str(s) => s.to_string(),
        Val::Int(i) => i.to_string(),
        Val::Double(d) => d.to_string(),
        Val::Bool(b) => b.to_string(),
        other => type_name(other).to_string(),
    }
}

fn index_of(v: &Val) -> Result<i64, String> {
    match v {
        Val::Int(i) => Ok(*i),
        Val::Double(d) if d.fract() == 0.0 => Ok(*d as i64),
        other => Err(format!(
            "unsupported index type '{}' in list",
            type_name(other)
        )),
    }
}

fn get(m: &[(Val, Val)], k: &Val) -> Option<Val> {
    m.iter().find(|(mk, _)| eq(mk, k)).map(|(_, v)| v.clone())
}

fn num(v: &Val) -> Option<f64> {
    match v {
        Val::Int(i) => Some(*i as f64),
        Val::Double(d) => Some(*d),
        _ => None,
    }
}

fn eq(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::List(x), Val::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(a, b)| eq(a, b))
        }
        (Val::Map(x), Val::Map(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| get(y, k).is_some_and(|w| eq(v, &w)))
        }
        _ => match (num(a), num(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        },
    }
}

fn binary(op: &str, l: &Val, r: &Val) -> Res {
    let overload = || format!("no such overload: {} {op} {}", type_name(l), type_name(r));
    match op {
        "==" => Ok(Val::Bool(eq(l, r))),
        "!=" => Ok(Val::Bool(!eq(l, r))),
        "in" => match r {
            Val::List(items) => Ok(Val::Bool(items.iter().any(|i| eq(i, l)))),
            Val::Map(m) => Ok(Val::Bool(get(m, l).is_some())),
            _ => Err(overload()),
        },
        "<" | "<=" | ">" | ">=" => {
            let ord = match (l, r) {
                (Val::Str(a), Val::Str(b)) => Some(a.cmp(b)),
                (Val::Bool(a), Val::Bool(b)) => Some(a.cmp(b)),
                (Val::Int(a), Val::Int(b)) => Some(a.cmp(b)),
                _ => match (num(l), num(r)) {
                    (Some(a), Some(b)) => a.partial_cmp(&b),
                    _ => None,
                },
            }
            .ok_or_else(overload)?;
            Ok(Val::Bool(match op {
                "<" => ord == Ordering::Less,
                "<=" => ord != Ordering::Greater,
                ">" => ord == Ordering::Greater,
                _ => ord != Ordering::Less,
            }))
        }
        _ => match (l, r) {
            (Val::Int(a), Val::Int(b)) => {
                let v = match op {
                    "+" => a.checked_add(*b),
                    "-" => a.checked_sub(*b),
                    "*" => a.checked_mul(*b),
                    "/" if *b == 0 => return Err("divide by zero".into()),
                    "/" => a.checked_div(*b),
                    "%" if *b == 0 => return Err("modulus by zero".into()),
                    _ => a.checked_rem(*b),
                };
                v.map(Val::Int).ok_or_else(|| "int overflow".into())
            }
            (Val::Double(a), Val::Double(b)) => Ok(Val::Double(match op {
                "+" => a + b,
                "-" => a - b,
                "*" => a * b,
                "/" => a / b,
                _ => return Err(overload()),
            })),
            (Val::Str(a), Val::Str(b)) if op == "+" => Ok(Val::Str(format!("{a}{b}").into())),
            (Val::List(a), Val::List(b)) if op == "+" => Ok(Val::List(Rc::new(
                a.iter().chain(b.iter()).cloned().collect(),
            ))),
            _ => Err(overload()),
        },
    }
}

/// Go's `fmt.Sprint` of a decoded value, as `semverCompare` formats its arguments.
fn sprint(v: &Val) -> String {
    match v {
        Val::Str(s) => s.to_string(),
        Val::Double(d) if d.fract() == 0.0 && d.abs() < 1e21 => format!("{d}"),
        other => show(other),
    }
}

fn call(name: &str, args: &[Val]) -> Res {
    match (name, args) {
        ("size", [Val::Str(s)]) => Ok(Val::Int(s.chars().count() as i64)),
        ("size", [Val::List(l)]) => Ok(Val::Int(l.len() as i64)),
        ("size", [Val::Map(m)]) => Ok(Val::Int(m.len() as i64)),
        ("contains", [Val::Str(s), Val::Str(t)]) => Ok(Val::Bool(s.contains(&**t))),
        ("startsWith", [Val::Str(s), Val::Str(t)]) => Ok(Val::Bool(s.starts_with(&**t))),
        ("endsWith", [Val::Str(s), Val::Str(t)]) => Ok(Val::Bool(s.ends_with(&**t))),
        ("int", [Val::Int(i)]) => Ok(Val::Int(*i)),
        ("int", [Val::Double(d)]) if d.is_finite() => Ok(Val::Int(d.trunc() as i64)),
        ("int", [Val::Str(s)]) => s
            .parse()
            .map(Val::Int)
            .map_err(|_| format!("cannot convert {s} to int")),
        ("string", [v]) => Ok(Val::Str(show(v).into())),
        ("semver_compare", [a, b]) => {
            let (sa, sb) = (sprint(a), sprint(b));
            let va = parse_tolerant(&sa)
                .ok_or_else(|| format!("unable to parse '{sa}' to semver format"))?;
            let vb = parse_tolerant(&sb)
                .ok_or_else(|| format!("unable to parse '{sb}' to semver format"))?;
            Ok(Val::Int(match va.cmp_precedence(&vb) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }))
        }
        _ => Err(format!("no such overload: {name}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rule: &str, props: &[(&str, &str)]) -> Result<bool, String> {
        let ps: Vec<Property> = props.iter().map(|(t, v)| Property::new(*t, *v)).collect();
        Program::compile(rule)?.evaluate(&ps)
    }

    const PKG: (&str, &str) = ("olm.package", r#"{"packageName":"etcd","version":"1.2.3"}"#);

    /// The rules of operator-framework/api `cel_test.go` and OLM's `resolver_test.go`.
    #[test]
    fn resolve_cel_rules_as_olm_evaluates_them() {
        let cases: &[(&str, Result<bool, String>)] = &[
            (
                r#"properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "1.0.0") >= 0)"#,
                Ok(true),
            ),
            (
                r#"properties.exists(p, p.type == "olm.package" && semver_compare(p.value.version, "2.0.0") >= 0)"#,
                Ok(false),
            ),
            (
                r#"properties.exists(p, p.type == "olm.package" && p.value.packageName == "etcd")"#,
                Ok(true),
            ),
            (r#"properties.all(p, p.type == "olm.package")"#, Ok(true)),
            (
                r#"properties.exists_one(p, has(p.value.version))"#,
                Ok(true),
            ),
            (
                r#"size(properties) == 1 && properties[0].value.version == "1.2.3""#,
                Ok(true),
            ),
            (
                r#"properties.map(p, p.type).exists(t, t.startsWith("olm."))"#,
                Ok(true),
            ),
            (
                r#"1 + 1"#,
                Err("cel expressions must have type Bool".into()),
            ),
            (
                r#"properties.foo(p, true)"#,
                Err("ERROR: <input>: undeclared reference to 'foo' (in container '')".into()),
            ),
            (r#"properties[0].value.missing == "x" || true"#, Ok(true)),
            (
                r#"properties[0].value.missing == "x""#,
                Err("no such key: missing".into()),
            ),
        ];
        for (rule, want) in cases {
            assert_eq!(&run(rule, &[PKG]), want, "{rule}");
        }
    }

    #[test]
    fn resolve_cel_semver_compare_is_tolerant() {
        assert_eq!(
            run(r#"semver_compare("v1.0", "1.0.0") == 0"#, &[]),
            Ok(true)
        );
        assert_eq!(
            run(r#"semver_compare("abc", "1.0.0") == 0"#, &[]),
            Err("unable to parse 'abc' to semver format".into())
        );
    }

    #[test]
    fn resolve_cel_deep_nesting_is_refused_not_a_crash() {
        let rule = format!("{}true{}", "(".repeat(5000), ")".repeat(5000));
        assert!(Program::compile(&rule).is_err());
        assert!(Program::compile(&format!("{}true", "!".repeat(60_000))).is_err());
        let long = vec!["true"; 20_000].join(" || ");
        assert_eq!(
            Program::compile(&long).and_then(|p| p.evaluate(&[])),
            Ok(true)
        );
    }
}
