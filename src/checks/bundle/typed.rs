//! The CSV as operator-framework/api sees it after decoding into its Go types. The decoder
//! (sigs.k8s.io/yaml, which converts YAML to JSON knowing the target type) reads a YAML number
//! or boolean written where the Go field is a string as that scalar's text: `minKubeVersion:
//! 1.21` is the string "1.21", `capabilities: 5` is "5", `1.20` is "1.2" (Go formats the float
//! with `strconv.FormatFloat(v, 'g', -1, 32)`), `true` is "true". The validators then judge the
//! text. Fields Go types as numbers or booleans, and typed Kubernetes subtrees, keep theirs.

use crate::fbc::node::{Node, Value};

/// Paths whose scalars Go does not read as strings: `*` is one list item or map key, `**` the
/// whole subtree.
const TYPED: &[&str] = &[
    "metadata.**",
    "spec.version.**",
    "spec.installModes.*.supported",
    "spec.install.spec.deployments.*.spec.**",
    "spec.webhookdefinitions.*.containerPort",
    "spec.webhookdefinitions.*.timeoutSeconds",
    "spec.apiservicedefinitions.owned.*.containerPort",
    "spec.customresourcedefinitions.*.*.specDescriptors.*.value.**",
    "spec.customresourcedefinitions.*.*.statusDescriptors.*.value.**",
    "spec.apiservicedefinitions.*.*.specDescriptors.*.value.**",
    "spec.apiservicedefinitions.*.*.statusDescriptors.*.value.**",
    "spec.cleanup.enabled",
    "status.**",
];

/// String-typed maps and fields under `metadata` (the rest of it is typed).
const METADATA_STRINGS: &[&str] = &[
    "metadata.annotations.*",
    "metadata.labels.*",
    "metadata.name",
    "metadata.namespace",
    "metadata.generateName",
];

fn matches(pattern: &str, path: &[&str]) -> bool {
    let mut p = pattern.split('.');
    let mut i = 0;
    loop {
        match p.next() {
            Some("**") => return true,
            None => return i == path.len(),
            Some(seg) => {
                let Some(actual) = path.get(i) else {
                    return false;
                };
                if seg != "*" && seg != *actual {
                    return false;
                }
                i += 1;
            }
        }
    }
}

fn is_string_field(path: &[&str]) -> bool {
    METADATA_STRINGS.iter().any(|p| matches(p, path)) || !TYPED.iter().any(|p| matches(p, path))
}

/// Go's `strconv.FormatFloat(v, 'g', -1, 32)`, and `FormatInt` for integral values (what
/// the YAML decoder reads as an int).
pub fn go_text(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
        return format!("{}", v as i64);
    }
    if v.is_nan() {
        return ".nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    let f = v as f32;
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e6).contains(&a) {
        // Go: mantissa, 'e', sign, at least two exponent digits.
        let e = format!("{f:e}");
        let (m, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        return format!("{m}e{sign}{digits:0>2}");
    }
    format!("{f}")
}

/// A `map[string]string` block (metadata/annotations.yaml's `annotations`) with every number or
/// boolean value replaced by Go's text of it; `None` when there is none.
pub fn map_of_strings(block: &Node) -> Option<Node> {
    let Value::Map(entries) = &block.value else {
        return None;
    };
    if !entries
        .iter()
        .any(|e| matches!(e.value.value, Value::Number(_) | Value::Bool(_)))
    {
        return None;
    }
    let mut copy = block.clone();
    if let Value::Map(entries) = &mut copy.value {
        for e in entries {
            match e.value.value {
                Value::Number(v) => e.value.value = Value::Str(go_text(v)),
                Value::Bool(b) => e.value.value = Value::Str(b.to_string()),
                _ => {}
            }
        }
    }
    Some(copy)
}

/// The CSV with every non-string scalar in a string-typed field replaced by Go's text of it;
/// `None` when there is none (the common case: no copy is made).
pub fn as_go_reads(csv: &Node) -> Option<Node> {
    if !needs_rewrite(csv, &mut Vec::new()) {
        return None;
    }
    let mut copy = csv.clone();
    rewrite(&mut copy, &mut Vec::new());
    Some(copy)
}

fn needs_rewrite<'a>(n: &'a Node, path: &mut Vec<&'a str>) -> bool {
    match &n.value {
        Value::Number(_) | Value::Bool(_) => is_string_field(path),
        Value::Seq(items) => items.iter().any(|it| {
            path.push("*");
            let r = needs_rewrite(it, path);
            path.pop();
            r
        }),
        Value::Map(entries) => entries.iter().any(|e| {
            path.push(&e.key);
            let r = needs_rewrite(&e.value, path);
            path.pop();
            r
        }),
        _ => false,
    }
}

fn rewrite(n: &mut Node, path: &mut Vec<String>) {
    let string_field = {
        let refs: Vec<&str> = path.iter().map(String::as_str).collect();
        is_string_field(&refs)
    };
    match &mut n.value {
        Value::Number(v) if string_field => n.value = Value::Str(go_text(*v)),
        Value::Bool(b) if string_field => n.value = Value::Str(b.to_string()),
        Value::Seq(items) => {
            for it in items {
                path.push("*".into());
                rewrite(it, path);
                path.pop();
            }
        }
        Value::Map(entries) => {
            for e in entries {
                path.push(e.key.clone());
                rewrite(&mut e.value, path);
                path.pop();
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_formats_floats_as_float32_shortest_and_ints_plainly() {
        assert_eq!(go_text(1.21), "1.21");
        assert_eq!(go_text(1.2), "1.2");
        assert_eq!(go_text(1.0), "1");
        assert_eq!(go_text(25.0), "25");
        assert_eq!(go_text(0.1), "0.1");
        assert_eq!(go_text(1.5e7), "15000000");
        assert_eq!(go_text(1.25e7 + 0.5), "1.25e+07");
        assert_eq!(go_text(0.00001), "1e-05");
        assert_eq!(go_text(f64::INFINITY), ".inf");
    }

    #[test]
    fn which_fields_are_strings() {
        assert!(is_string_field(&["spec", "minKubeVersion"]));
        assert!(is_string_field(&[
            "metadata",
            "annotations",
            "capabilities"
        ]));
        assert!(is_string_field(&["spec", "keywords", "*"]));
        assert!(!is_string_field(&["metadata", "generation"]));
        assert!(!is_string_field(&[
            "spec",
            "installModes",
            "*",
            "supported"
        ]));
        assert!(!is_string_field(&[
            "spec",
            "install",
            "spec",
            "deployments",
            "*",
            "spec",
            "replicas"
        ]));
        assert!(!is_string_field(&["spec", "version"]));
    }

    #[test]
    fn a_clean_csv_is_not_copied() {
        let doc = crate::fbc::yaml::first_document("spec: {minKubeVersion: '1.25.0', installModes: [{type: OwnNamespace, supported: true}]}\n")
            .expect("parses").expect("a document");
        assert!(as_go_reads(&doc).is_none());
        let doc = crate::fbc::yaml::first_document("spec: {minKubeVersion: 1.21}\n")
            .expect("parses")
            .expect("a document");
        let n = as_go_reads(&doc).expect("rewritten");
        assert_eq!(
            crate::bundle::load::str_at(&n, &["spec", "minKubeVersion"]),
            Some("1.21")
        );
    }
}
