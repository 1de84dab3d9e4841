//! The names operator-controller gives generated objects.
//!
//! - [`unique_name`] follows `render.go :: DefaultUniqueNameGenerator`: `base + "-" +
//!   DeepHashObject(obj)`, where `internal/shared/util/hash/hash.go :: DeepHashObject` is the
//!   base-36 text of the SHA-224 of Go's `json.Encoder` output for `obj` (with its trailing
//!   newline), and the base is cut as `rukpak/util/util.go :: ObjectNameForBaseAndSuffix` cuts it.
//! - [`permission_json`] is that encoder's output for an `operators/v1alpha1
//!   StrategyDeploymentPermissions` (`serviceAccountName`, `rules`; each rbac/v1 `PolicyRule` with
//!   `verbs`, then `apiGroups`, `resources`, `resourceNames`, `nonResourceURLs`, the last four
//!   `omitempty`), strings escaped as Go escapes them (`<`, `>`, `&`, U+2028 and U+2029 too).

use sha2::{Digest, Sha224};

/// Longest object name `ObjectNameForBaseAndSuffix` allows (`maxNameLength`).
const MAX_NAME_LENGTH: usize = 63;

/// `ObjectNameForBaseAndSuffix`: `base-suffix`, the base cut (by bytes, as Go slices a string) so
/// that the whole is at most 63 bytes.
pub fn name_for_base_and_suffix(base: &str, suffix: &str) -> String {
    let mut base = base;
    if base.len() + suffix.len() > MAX_NAME_LENGTH {
        let keep = MAX_NAME_LENGTH.saturating_sub(suffix.len() + 1);
        // Go cuts bytes; a name is ASCII when the CSV validates, and a cut inside a character
        // steps back to its start rather than produce invalid UTF-8.
        let mut at = keep.min(base.len());
        while !base.is_char_boundary(at) {
            at -= 1;
        }
        base = &base[..at];
    }
    format!("{base}-{suffix}")
}

/// `DeepHashObject` of an object whose Go JSON encoding is `json` (without the encoder's
/// trailing newline, which is added here).
pub fn deep_hash(json: &str) -> String {
    let mut h = Sha224::new();
    h.update(json.as_bytes());
    h.update(b"\n");
    base36(&h.finalize())
}

/// `DefaultUniqueNameGenerator(base, obj)` for an object whose Go JSON encoding is `json`.
pub fn unique_name(base: &str, json: &str) -> String {
    name_for_base_and_suffix(base, &deep_hash(json))
}

/// `big.Int.SetBytes(b).Text(36)`: the big-endian unsigned number in base 36, lowercase, no
/// leading zeros ("0" for zero).
pub fn base36(bytes: &[u8]) -> String {
    let mut n: Vec<u8> = bytes.iter().copied().skip_while(|b| *b == 0).collect();
    let mut digits = Vec::new();
    while !n.is_empty() {
        let mut rem: u32 = 0;
        let mut q = Vec::with_capacity(n.len());
        for b in &n {
            let cur = (rem << 8) | u32::from(*b);
            let d = cur / 36;
            rem = cur % 36;
            if !(q.is_empty() && d == 0) {
                q.push(d as u8);
            }
        }
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[rem as usize]);
        n = q;
    }
    if digits.is_empty() {
        digits.push(b'0');
    }
    digits.reverse();
    String::from_utf8(digits).unwrap_or_default()
}

/// A `[]string` as Go writes it: `null` for a nil list.
fn go_strings(items: Option<&[String]>, out: &mut String) {
    let v = items.map_or(serde_json::Value::Null, |i| serde_json::json!(i));
    crate::gojson::write(out, &v, 0);
}

/// One rbac/v1 `PolicyRule` as the CSV gives it; a field the CSV leaves out is `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    /// `verbs`.
    pub verbs: Option<Vec<String>>,
    /// `apiGroups`.
    pub api_groups: Option<Vec<String>>,
    /// `resources`.
    pub resources: Option<Vec<String>>,
    /// `resourceNames`.
    pub resource_names: Option<Vec<String>>,
    /// `nonResourceURLs`.
    pub non_resource_urls: Option<Vec<String>>,
}

/// Go's `json.Encoder` output (without the newline) for `StrategyDeploymentPermissions{
/// ServiceAccountName, Rules}`; `rules: None` is a nil list.
pub fn permission_json(service_account: &str, rules: Option<&[Rule]>) -> String {
    let mut out = String::from("{\"serviceAccountName\":");
    crate::gojson::write_string(&mut out, service_account);
    out.push_str(",\"rules\":");
    match rules {
        None => out.push_str("null"),
        Some(rules) => {
            out.push('[');
            for (i, r) in rules.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str("{\"verbs\":");
                go_strings(r.verbs.as_deref(), &mut out);
                for (key, v) in [
                    ("apiGroups", &r.api_groups),
                    ("resources", &r.resources),
                    ("resourceNames", &r.resource_names),
                    ("nonResourceURLs", &r.non_resource_urls),
                ] {
                    // omitempty: a nil or empty list is left out.
                    if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                        out.push_str(&format!(",\"{key}\":"));
                        go_strings(Some(v), &mut out);
                    }
                }
                out.push('}');
            }
            out.push(']');
        }
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base36_is_big_int_text() {
        assert_eq!(base36(&[]), "0");
        assert_eq!(base36(&[0, 0]), "0");
        assert_eq!(base36(&[35]), "z");
        assert_eq!(base36(&[36]), "10");
        assert_eq!(base36(&[1, 0]), "74");
        // 2^64 - 1 in base 36 (Go: new(big.Int).SetUint64(math.MaxUint64).Text(36)).
        assert_eq!(base36(&[0xff; 8]), "3w5e11264sgsf");
    }

    #[test]
    fn names_are_cut_to_63_bytes() {
        let suffix = "1dhiybrldl1gyksid1dk2dqjsc72psdybc7iyvse5gpx";
        assert_eq!(
            name_for_base_and_suffix(
                "argocd-operator.v0.6.0-argocd-operator-controller-manager",
                suffix
            ),
            format!("argocd-operator.v0-{suffix}")
        );
        assert_eq!(name_for_base_and_suffix("a", "b"), "a-b");
    }

    #[test]
    fn go_escapes_html_and_controls() {
        let mut s = String::new();
        crate::gojson::write_string(&mut s, "a<b>&\"\\\n\u{1}\u{2028}é");
        assert_eq!(s, "\"a\\u003cb\\u003e\\u0026\\\"\\\\\\n\\u0001\\u2028é\"");
    }

    #[test]
    fn permissions_encode_in_go_field_order() {
        let r = Rule {
            verbs: Some(vec!["get".into()]),
            api_groups: Some(vec![String::new()]),
            resources: Some(vec!["pods".into()]),
            resource_names: Some(vec![]),
            non_resource_urls: None,
        };
        assert_eq!(
            permission_json("sa", Some(&[r])),
            r#"{"serviceAccountName":"sa","rules":[{"verbs":["get"],"apiGroups":[""],"resources":["pods"]}]}"#
        );
        assert_eq!(
            permission_json("", None),
            r#"{"serviceAccountName":"","rules":null}"#
        );
    }
}
