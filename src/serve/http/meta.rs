//! The keys catalogd indexes a blob by, found as operator-registry finds them when it decodes a
//! blob into a `declcfg.Meta` (`alpha/declcfg/declcfg.go :: Meta.UnmarshalJSON,
//! extractUniqueMetaKeys`): `schema`, `package` and `name` matched case-insensitively (Unicode
//! case folding), two keys that fold alike refused, the values required to be strings.

use std::collections::{BTreeMap, BTreeSet};

use crate::fbc::node::{Node, Value, sorted_unique};

/// A blob's `schema`, `package` and `name` (empty when absent).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetaKeys {
    /// The `schema` value.
    pub schema: String,
    /// The `package` value.
    pub package: String,
    /// The `name` value.
    pub name: String,
}

/// `cases.Fold()` of golang.org/x/text for the keys of a blob: Unicode lower case, plus the full
/// foldings lower case misses that matter for keys (`ß`/`ẞ` → `ss`, `ſ` → `s`, the Kelvin sign
/// → `k`, final `ς` → `σ`). Every key that folds to `schema`, `package` or `name` is found as
/// x/text finds it (only `ſ` and the Kelvin sign fold to ASCII letters).
pub fn fold(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            'ß' | 'ẞ' => out.push_str("ss"),
            'ſ' => out.push('s'),
            '\u{212a}' => out.push('k'),
            'ς' => out.push('σ'),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// The keys of `blob` as `Meta.UnmarshalJSON` finds them, or its error: `duplicate keys for key
/// %q: %v` (several, in folded-key order, as `utilerrors.NewAggregate` joins them) or `expected
/// value for key %q to be a string, got %t: %v`.
pub fn meta_keys(blob: &Node) -> Result<MetaKeys, String> {
    let Value::Map(entries) = &blob.value else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            go_json_kind(blob)
        ));
    };
    // Go decodes into a map: a repeated key keeps its last value.
    let entries = sorted_unique(entries);
    let mut folded: BTreeMap<String, BTreeSet<&str>> = BTreeMap::new();
    for e in &entries {
        folded.entry(fold(&e.key)).or_default().insert(&e.key);
    }
    let dups: Vec<String> = folded
        .iter()
        .filter(|(_, keys)| keys.len() != 1)
        .map(|(f, keys)| {
            let list: Vec<&str> = keys.iter().copied().collect();
            format!(
                "duplicate keys for key {}: [{}]",
                go_quote(f),
                list.join(" ")
            )
        })
        .collect();
    match dups.len() {
        0 => {}
        1 => return Err(dups.into_iter().next().unwrap_or_default()),
        _ => return Err(format!("[{}]", dups.join(", "))),
    }
    let mut keys = MetaKeys::default();
    for (want, slot) in [
        ("schema", &mut keys.schema),
        ("package", &mut keys.package),
        ("name", &mut keys.name),
    ] {
        let Some(key) = folded.get(want).and_then(|k| k.iter().next()) else {
            continue;
        };
        let Some(entry) = entries.iter().find(|e| e.key == *key) else {
            continue;
        };
        match &entry.value.value {
            Value::Str(s) => *slot = s.clone(),
            _ => {
                return Err(format!(
                    "expected value for key {} to be a string, got {}: {}",
                    go_quote(key),
                    go_fmt(&entry.value, 't'),
                    go_fmt(&entry.value, 'v')
                ));
            }
        }
    }
    Ok(keys)
}

/// The JSON kind Go's decoder names in its type error.
fn go_json_kind(n: &Node) -> &'static str {
    match n.value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::Str(_) => "string",
        Value::Seq(_) => "array",
        Value::Map(_) => "object",
    }
}

/// Go's `%q` of a string (printable characters kept, the rest escaped).
fn go_quote(s: &str) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `fmt` of a decoded JSON value (`interface{}`: float64, string, bool, nil,
/// `[]interface{}`, `map[string]interface{}`) with the verb `t` or `v`: `%t` prints booleans and
/// writes `%!t(type=value)` for the other kinds; maps print their keys sorted.
fn go_fmt(n: &Node, verb: char) -> String {
    let bad = |ty: &str, v: String| {
        if verb == 't' {
            format!("%!t({ty}={v})")
        } else {
            v
        }
    };
    match &n.value {
        Value::Null => {
            if verb == 't' {
                "%!t(<nil>)".to_string()
            } else {
                "<nil>".to_string()
            }
        }
        Value::Bool(b) => b.to_string(),
        Value::Number(f) => bad("float64", crate::gojson::go_float_g(*f)),
        Value::Str(s) => bad("string", s.clone()),
        Value::Seq(items) => {
            let parts: Vec<String> = items.iter().map(|i| go_fmt(i, verb)).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Map(entries) => {
            let parts: Vec<String> = sorted_unique(entries)
                .into_iter()
                .map(|e| {
                    format!(
                        "{}:{}",
                        bad("string", e.key.clone()),
                        go_fmt(&e.value, verb)
                    )
                })
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: &str) -> Node {
        let mut out = Vec::new();
        crate::fbc::json::parse_stream(json, |n| out.push(n)).expect("json");
        out.remove(0)
    }

    #[test]
    fn keys_are_found_case_insensitively() {
        let k = meta_keys(&node(r#"{"Schema":"olm.bundle","PACKAGE":"p","nAmE":"b"}"#)).unwrap();
        assert_eq!(
            k,
            MetaKeys {
                schema: "olm.bundle".into(),
                package: "p".into(),
                name: "b".into()
            }
        );
        // The long s folds to s, as x/text's case folding has it.
        let k = meta_keys(&node(r#"{"ſchema":"x"}"#)).unwrap();
        assert_eq!(k.schema, "x");
        // Absent keys stay empty; other keys are not looked at.
        let k = meta_keys(&node(r#"{"schema":"olm.package","defaultChannel":1}"#)).unwrap();
        assert_eq!((k.package.as_str(), k.name.as_str()), ("", ""));
    }

    #[test]
    fn keys_that_fold_alike_are_refused() {
        let e = meta_keys(&node(r#"{"schema":"a","Schema":"b"}"#)).unwrap_err();
        assert_eq!(e, r#"duplicate keys for key "schema": [Schema schema]"#);
        // Any key, not only the three; several are listed in folded order.
        let e = meta_keys(&node(r#"{"Xy":1,"xY":2,"b":1,"B":2}"#)).unwrap_err();
        assert_eq!(
            e,
            r#"[duplicate keys for key "b": [B b], duplicate keys for key "xy": [Xy xY]]"#
        );
        // The same key twice is one map key (the last value wins), not a duplicate.
        let k = meta_keys(&node(r#"{"name":"a","name":"b"}"#)).unwrap();
        assert_eq!(k.name, "b");
        assert!(meta_keys(&node(r#"{"straße":1,"STRASSE":2}"#)).is_err());
    }

    #[test]
    fn values_must_be_strings() {
        let e = meta_keys(&node(r#"{"schema":"s","package":1.5}"#)).unwrap_err();
        assert_eq!(
            e,
            r#"expected value for key "package" to be a string, got %!t(float64=1.5): 1.5"#
        );
        let e = meta_keys(&node(r#"{"Name":true}"#)).unwrap_err();
        assert_eq!(
            e,
            r#"expected value for key "Name" to be a string, got true: true"#
        );
        let e = meta_keys(&node(r#"{"name":null}"#)).unwrap_err();
        assert_eq!(
            e,
            r#"expected value for key "name" to be a string, got %!t(<nil>): <nil>"#
        );
        let e = meta_keys(&node(r#"{"name":{"b":[1,"x"],"a":1e21}}"#)).unwrap_err();
        assert_eq!(
            e,
            "expected value for key \"name\" to be a string, got \
             map[%!t(string=a):%!t(float64=1e+21) %!t(string=b):[%!t(float64=1) %!t(string=x)]]: \
             map[a:1e+21 b:[1 x]]"
        );
        let e = meta_keys(&node("[1]")).unwrap_err();
        assert!(e.contains("cannot unmarshal array"), "{e}");
    }
}
