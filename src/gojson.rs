//! Go's `encoding/json` output, byte for byte: strings with HTML escaping, map keys sorted,
//! floats as `floatEncoder` writes them, and `strconv.FormatFloat(f, 'g', -1, 64)`. Used where a
//! Go program hashes or compares JSON (operator-controller's generated names, the API double's
//! messages and keys).

use std::fmt::Write as _;

use serde_json::Value;

/// Deepest nesting written; deeper values are written as `null` (inputs are bounded before).
pub const MAX_DEPTH: usize = 256;

/// The shortest decimal digits of a finite non-zero `f`: (digits, decimal point position),
/// value = 0.d1d2… × 10^dp.
fn shortest_digits(f: f64) -> (String, i32) {
    let e = format!("{:e}", f.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    (digits, exp + 1)
}

fn push_exp_form(out: &mut String, digits: &str, dp: i32) {
    let mut chars = digits.chars();
    if let Some(first) = chars.next() {
        out.push(first);
    }
    let rest: String = chars.collect();
    if !rest.is_empty() {
        out.push('.');
        out.push_str(&rest);
    }
    let exp = dp - 1;
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`).
pub fn go_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, dp) = shortest_digits(f);
    let mut out = String::new();
    if f < 0.0 {
        out.push('-');
    }
    let exp = dp - 1;
    if !(-4..6).contains(&exp) {
        push_exp_form(&mut out, &digits, dp);
        return out;
    }
    let nd = digits.len() as i32;
    if dp <= 0 {
        out.push_str("0.");
        for _ in 0..-dp {
            out.push('0');
        }
        out.push_str(&digits);
    } else if dp >= nd {
        out.push_str(&digits);
        for _ in 0..dp - nd {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..dp as usize]);
        out.push('.');
        out.push_str(&digits[dp as usize..]);
    }
    out
}

/// How `encoding/json` writes a float64 (`floatEncoder.encode`).
pub fn json_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let (digits, dp) = shortest_digits(f);
        let mut out = String::new();
        if f < 0.0 {
            out.push('-');
        }
        push_exp_form(&mut out, &digits, dp);
        // clean up e-09 to e-9
        if let Some(pos) = out.find("e-0") {
            out.remove(pos + 2);
        }
        return out;
    }
    // Rust's Display is the shortest round-trip decimal without exponent, like Go's 'f', -1.
    format!("{}", f)
}

/// Appends `s` as Go's `encoding/json` writes a string (HTML escaping on, as `json.Marshal` and
/// `json.Encoder` have it).
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `v` as Go's `json.Marshal` writes a decoded value; nesting deeper than
/// [`MAX_DEPTH`] is written as `null`.
pub fn write(out: &mut String, v: &Value, depth: usize) {
    if depth > MAX_DEPTH {
        out.push_str("null");
        return;
    }
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => {
                let _ = write!(out, "{}", i);
            }
            None => out.push_str(&json_float(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => write_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(out, x, depth + 1);
            }
            out.push(']');
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                if let Some(x) = m.get(k) {
                    write(out, x, depth + 1);
                }
            }
            out.push('}');
        }
    }
}

/// `json.Marshal` of an unstructured value as Go writes it: map keys sorted, `<`, `>`, `&`,
/// U+2028 and U+2029 escaped, Go's float format.
pub fn to_string(v: &Value) -> String {
    let mut out = String::new();
    write(&mut out, v, 0);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_go_marshals_them() {
        let v = serde_json::json!({"b": [1, 2.5, null, 1e21, true], "a": "<&>\u{2028}"});
        assert_eq!(
            to_string(&v),
            r#"{"a":"\u003c\u0026\u003e\u2028","b":[1,2.5,null,1e+21,true]}"#
        );
    }
}
