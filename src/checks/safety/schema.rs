//! CRD schema compatibility between two versions' `openAPIV3Schema` (the crdify set, SCH codes).
//!
//! A static re-implementation of the property validations of kubernetes-sigs/crdify, as OLM v1
//! (operator-controller) runs them in its CRD upgrade-safety preflight. Both schemas are flattened
//! into properties keyed by crdify's paths (`^` for the root, `.name` for each entry of
//! `properties`, `[*]` for `items` and for an `additionalProperties` schema); every property
//! present in both versions is then compared keyword by keyword, with crdify's wording:
//!
//! - `default`: any addition, change or removal; `enum`: a new constraint or removed values
//!   (additions are allowed, as OLM configures; dropping the whole constraint counts as removing
//!   its values, as crdify counts it); `max*`/`min*`: a new or tightened bound, including
//!   `exclusiveMaximum`/`exclusiveMinimum` turning on; `required`: newly required names; `type`:
//!   any change, including leaving `x-kubernetes-int-or-string`; `pattern`: added, changed or
//!   removed (crdify's default removal policy); `nullable`: either way; `oneOf`: a new constraint,
//!   a removed branch or an added one (an object may then match two branches; branches compare
//!   as a set, so reordering is no change).
//! - `description` changes are allowed (OLM runs crdify's description check without enforcement).
//! - `x-kubernetes-validations` rules added or changed are SCH011 (crdify calls them unhandled).
//! - What only loosens validation but OLM v1's preflight refuses is SCH014, a warning the policy
//!   (`--preflight olmv1`) turns into an error: a CEL rule removed, `exclusiveMaximum` or
//!   `exclusiveMinimum` removed, `type: string` becoming int-or-string, a field missing from a
//!   higher served version (crdify compares it with an empty schema), and a change inside an
//!   `additionalProperties` schema (crdify's unhandled diff sees it on the parent too).
//! - Whatever else differs is one SCH012 per property, as crdify's "unhandled changes found", but
//!   spelled as a key-by-key diff of the JSON values rather than a dump of the Go struct.
//!
//! A property missing from the new schema is SCH001 (crdify's existing-field-removal check), at the
//! topmost removed path only. A `null` keyword counts as absent, as Go decodes it. Input of the
//! wrong shape never panics: a keyword whose value has an unexpected type is left to the SCH012
//! diff, and flattening stops [`MAX_SCHEMA_DEPTH`] levels deep, where a difference below is SCH013. Values (defaults, enum values, oneOf branches) are
//! compared structurally, numbers as f64, where crdify compares the raw JSON text.

use std::collections::BTreeMap;

use super::schema_diff::{compare_property, get, same};
use crate::diag::Code;
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::{Node, Pos, Value};
codes! {
    FIELD_REMOVED = "SCH001", Error, "A field of an existing CRD version was removed (crdify existingFieldRemoval): stored objects lose it, clients writing it are rejected or pruned.";
    DEFAULT = "SCH002", Error, "A default was added, changed or removed (crdify default): existing objects change meaning on the next write.";
    ENUM = "SCH003", Error, "An enum constraint was added to a field that had none, or allowed enum values were removed (crdify enum; adding values is allowed).";
    MAXIMUM = "SCH004", Error, "A maximum, maxItems, maxLength or maxProperties was added or lowered (crdify max*): existing values may no longer validate.";
    MINIMUM = "SCH005", Error, "A minimum, minItems, minLength or minProperties was added or raised (crdify min*): existing values may no longer validate.";
    REQUIRED = "SCH006", Error, "A field became required (crdify required): existing objects without it no longer validate.";
    TYPE = "SCH007", Error, "A field's type changed (crdify type).";
    PATTERN = "SCH008", Error, "A pattern was added, changed or removed (crdify pattern).";
    NULLABLE = "SCH009", Error, "nullable was added or removed (crdify nullable).";
    ONE_OF = "SCH010", Error, "A oneOf constraint was added or oneOf schemas were removed (crdify oneOf).";
    CEL = "SCH011", Error, "x-kubernetes-validations (CEL) rules were added or changed: existing objects may fail the new rules (crdify reports these as unhandled).";
    UNHANDLED = "SCH012", Error, "Any other schema change (crdify unhandled), shown as a field-level diff.";
    TOO_DEEP = "SCH013", Error, "A schema nests deeper than the comparison limit and differs below it: the change is not compared, so it is reported rather than passed.";
    PREFLIGHT_ONLY = "SCH014", Warning, "A change OLM v1's CRD preflight (crdify) refuses although it only loosens validation (a CEL rule or exclusiveMaximum/exclusiveMinimum removed, string to int-or-string, a field missing from a higher served version, a change inside additionalProperties reported on its parent): an error with --preflight olmv1.";
}

/// Knobs of the comparison (OLM v1's preflight settings are the defaults).
#[derive(Debug, Clone)]
pub struct Options {
    /// Adding enum values is allowed (OLM v1: `additionPolicy: Allow`).
    pub enum_additions_allowed: bool,
    /// Report removed fields (true for same-version comparisons; crdify's served-version
    /// validator does not run field removal between different versions, and compares a field
    /// missing from the higher version with an empty schema: SCH014).
    pub field_removal: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            enum_additions_allowed: true,
            field_removal: true,
        }
    }
}

/// One incompatible difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The SCH code.
    pub code: &'static Code,
    /// The property path in crdify's form: `^` for the root, `^.spec.replicas`,
    /// `^.spec.containers[*].name` for array items, `^.spec.labels[*]` for
    /// additionalProperties values.
    pub path: String,
    /// What changed, worded like crdify (`default value changed: "a" -> "b"`,
    /// `allowed enum values removed: [x]`, `type changed : "string" -> "integer"`, ...).
    pub message: String,
    /// Where the change is in the new schema (the node of the property), or in the old one when
    /// the property is gone.
    pub pos: Pos,
}

/// Compares the `openAPIV3Schema` nodes of two versions.
pub fn compare(old: &Node, new: &Node, opts: &Options) -> Vec<Change> {
    let (old_props, new_props) = (flatten(old), flatten(new));
    let mut out = Vec::new();
    for (path, o) in &old_props {
        match new_props.get(path) {
            Some(n) if (o.cut || n.cut) && !same(o.node, n.node) => {
                compare_property(path, o.node, n.node, opts, &mut out);
                out.push(Change {
                    code: &TOO_DEEP,
                    path: path.clone(),
                    message: format!(
                        "schema nests deeper than {MAX_SCHEMA_DEPTH} levels and differs below \
                         {path}: not compared there"
                    ),
                    pos: n.node.pos,
                });
            }
            Some(n) => compare_property(path, o.node, n.node, opts, &mut out),
            // Only the topmost removed property: its parent is still there.
            None if o.parent.as_ref().is_none_or(|p| new_props.contains_key(p)) => {
                if opts.field_removal {
                    out.push(Change {
                        code: &FIELD_REMOVED,
                        path: path.clone(),
                        message: format!("removed field : {path}"),
                        pos: o.node.pos,
                    });
                } else {
                    // Between served versions crdify compares the field with an empty schema:
                    // a type change (and whatever else it set), refused by OLM v1.
                    let ty = get(o.node, "type")
                        .and_then(Node::as_str)
                        .unwrap_or_default();
                    out.push(Change {
                        code: &PREFLIGHT_ONLY,
                        path: path.clone(),
                        message: format!(
                            "type changed : {:?} -> \"\" (the field is missing from the higher version; crdify compares it with an empty schema)",
                            ty
                        ),
                        pos: o.node.pos,
                    });
                }
            }
            None => {}
        }
    }
    out.sort_by(|a, b| (&a.path, a.code.code, &a.message).cmp(&(&b.path, b.code.code, &b.message)));
    out
}

/// How many property levels below the root are compared: real CRDs nest a few dozen levels,
/// and paths cost memory quadratic in depth (1,024 levels of long names stay a few MiB).
/// Below it, a difference is SCH013 rather than a silent pass.
pub const MAX_SCHEMA_DEPTH: usize = 1024;

struct Flat<'a> {
    node: &'a Node,
    parent: Option<String>,
    /// At the depth limit with nested schemas that were not flattened.
    cut: bool,
}

/// Every property of a schema by path, with its parent's path.
fn flatten(root: &Node) -> BTreeMap<String, Flat<'_>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(String::from("^"), root, None, 0usize)];
    while let Some((path, node, parent, depth)) = stack.pop() {
        if out.contains_key(&path) {
            continue; // `a.b` as one property name and as two levels: the first one seen wins.
        }
        let props = get(node, "properties").map(Node::sorted_entries);
        let schema = |key| get(node, key).filter(|n| matches!(n.value, Value::Map(_)));
        let items = schema("items").or_else(|| schema("additionalProperties"));
        let nested = props.as_ref().is_some_and(|p| !p.is_empty()) || items.is_some();
        let cut = nested && depth >= MAX_SCHEMA_DEPTH;
        if !cut {
            for e in props.unwrap_or_default() {
                let child = format!("{path}.{}", e.key);
                stack.push((child, &e.value, Some(path.clone()), depth + 1));
            }
            if let Some(child) = items {
                stack.push((format!("{path}[*]"), child, Some(path.clone()), depth + 1));
            }
        }
        out.insert(path, Flat { node, parent, cut });
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::fbc::yaml::parse_documents;

    pub(in crate::checks::safety) fn schema(text: &str) -> Node {
        let mut doc = None;
        parse_documents(text, |n| doc = Some(n)).expect("yaml");
        doc.expect("one document")
    }

    /// `(path, code, message)` of every change between two YAML schemas.
    pub(in crate::checks::safety) fn diff_with(
        old: &str,
        new: &str,
        opts: &Options,
    ) -> Vec<(String, &'static str, String)> {
        let changes = compare(&schema(old), &schema(new), opts);
        changes
            .into_iter()
            .map(|c| (c.path, c.code.code, c.message))
            .collect()
    }

    pub(in crate::checks::safety) fn diff(
        old: &str,
        new: &str,
    ) -> Vec<(String, &'static str, String)> {
        diff_with(old, new, &Options::default())
    }

    /// The single change between two schemas, as `path code message`.
    pub(in crate::checks::safety) fn one(old: &str, new: &str) -> String {
        let d = diff(old, new);
        assert_eq!(d.len(), 1, "{d:#?}");
        format!("{} {} {}", d[0].0, d[0].1, d[0].2)
    }

    /// A `spec.x` property with the given keywords (flow style).
    pub(in crate::checks::safety) fn x(keywords: &str) -> String {
        format!(
            "type: object\nproperties:\n  spec:\n    type: object\n    properties:\n      x: {{{keywords}}}\n"
        )
    }

    pub(in crate::checks::safety) const CRD: &str = r#"
type: object
description: A widget.
required: [spec]
properties:
  spec:
    type: object
    required: [size]
    properties:
      size: {type: integer, minimum: 1, maximum: 10, default: 3}
      mode: {type: string, enum: [fast, slow]}
      name: {type: string, pattern: '^[a-z]+$', maxLength: 63}
      ports:
        type: array
        maxItems: 8
        items:
          type: object
          properties:
            port: {type: integer}
            protocol: {type: string, default: TCP}
      labels:
        type: object
        additionalProperties: {type: string}
      value: {x-kubernetes-int-or-string: true}
    x-kubernetes-validations:
      - rule: self.size <= 10
        message: too big
"#;

    #[test]
    fn identical_schemas_have_no_changes() {
        assert_eq!(diff(CRD, CRD), vec![]);
        assert_eq!(diff("{}", "{}"), vec![]);
    }

    #[test]
    fn removed_field_is_reported_once_at_the_topmost_path() {
        let new = CRD.replace("      ports:\n", "      gone:\n");
        let d = diff(CRD, &new);
        assert_eq!(
            d,
            vec![(
                "^.spec.ports".to_string(),
                "SCH001",
                "removed field : ^.spec.ports".to_string()
            )]
        );
        // Between served versions crdify compares the missing field with an empty schema: a
        // type change OLM v1 refuses (SCH014), at the topmost missing path.
        let off = Options {
            field_removal: false,
            ..Options::default()
        };
        assert_eq!(
            diff_with(CRD, &new, &off),
            vec![(
                "^.spec.ports".to_string(),
                "SCH014",
                "type changed : \"array\" -> \"\" (the field is missing from the higher version; crdify compares it with an empty schema)".to_string()
            )]
        );
        // Adding optional fields is fine.
        assert_eq!(diff(&new.replace("gone", "ports"), &new), d);
        assert_eq!(diff(&x("type: string"), &x("type: string")), vec![]);
    }

    #[test]
    fn items_and_additional_properties_paths() {
        let new = CRD.replace("port: {type: integer}", "port: {type: string}");
        assert_eq!(
            one(CRD, &new),
            r#"^.spec.ports[*].port SCH007 type changed : "integer" -> "string""#
        );
        let new = CRD.replace(
            "additionalProperties: {type: string}",
            "additionalProperties: {type: string, maxLength: 5}",
        );
        // crdify also reports it on the parent (its unhandled diff sees additionalProperties).
        assert_eq!(
            diff(CRD, &new),
            vec![
                (
                    "^.spec.labels".to_string(),
                    "SCH014",
                    "unhandled changes found: additionalProperties (crdify reports a change inside an additionalProperties schema on its parent too)".to_string()
                ),
                (
                    "^.spec.labels[*]".to_string(),
                    "SCH004",
                    "maxLength constraint added when there was none previously: 5".to_string()
                ),
            ]
        );
        // additionalProperties turning from a schema into a boolean is an unhandled change.
        let new = CRD.replace(
            "additionalProperties: {type: string}",
            "additionalProperties: true",
        );
        let d = diff(CRD, &new);
        assert_eq!(d[0].0, "^.spec.labels");
        assert_eq!(
            d[0].2,
            r#"unhandled changes found: additionalProperties: {"type":"string"} -> true"#
        );
        assert_eq!(d[1].2, "removed field : ^.spec.labels[*]");
    }

    #[test]
    fn sorted_with_positions() {
        let new = CRD
            .replace("maximum: 10", "maximum: 5")
            .replace("{type: integer, min", "{type: string, min")
            .replace("      ports:\n", "      gone:\n");
        let changes = compare(&schema(CRD), &schema(&new), &Options::default());
        let got: Vec<(&str, &str, u32)> = changes
            .iter()
            .map(|c| (c.path.as_str(), c.code.code, c.pos.line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("^.spec.ports", "SCH001", 14),
                ("^.spec.size", "SCH004", 10),
                ("^.spec.size", "SCH007", 10),
            ]
        );
    }

    #[test]
    fn garbage_input_does_not_panic() {
        let odd = [
            "[1, 2]",
            "just text",
            "{properties: [a, b]}",
            "{properties: {a: 5, b: [x], c: null}, items: 3, required: nope}",
            "{properties: {a: {type: 5, enum: x, oneOf: {}, x-kubernetes-validations: [1, {rule: 2}]}}}",
            "{properties: {a: {required: [1, {}], minimum: {}, nullable: yes please}}}",
            "{properties: {a: {x-kubernetes-validations: [{rule: r}, {rule: r, message: m}]}}}",
            "{additionalProperties: {type: string}, items: {type: integer}}",
            "{properties: {a.b: {type: string}, a: {properties: {b: {type: integer}}}}}",
        ];
        for old in odd {
            for new in odd {
                let _ = diff(old, new);
            }
            assert_eq!(diff(old, old), vec![], "{old}");
        }
        assert_eq!(
            one("{properties: {a: 5}}", "{properties: {a: 6}}"),
            "^.a SCH012 unhandled changes found: schema: 5 -> 6"
        );
    }

    /// Deep schemas are compared to [`MAX_SCHEMA_DEPTH`] levels; a difference below the limit is
    /// SCH013 at the cut-off, never a silent pass, and equal deep schemas report nothing.
    #[test]
    fn deep_nesting_is_compared_or_reported_at_the_limit() {
        let nest = |leaf: &str, depth: usize| {
            let mut n = schema(leaf);
            for _ in 0..depth {
                let wrap = schema("{type: object, properties: {a: 0}}");
                let Value::Map(mut entries) = wrap.value else {
                    unreachable!()
                };
                let Value::Map(props) = &mut entries[1].value.value else {
                    unreachable!()
                };
                props[0].value = n;
                n = Node::new(Pos::default(), Value::Map(entries));
            }
            n
        };
        let codes = |old: &Node, new: &Node| -> Vec<(usize, &'static str)> {
            compare(old, new, &Options::default())
                .iter()
                .map(|c| (c.path.matches(".a").count(), c.code.code))
                .collect()
        };
        let (old, new) = (nest("{type: string}", 200), nest("{type: integer}", 200));
        assert_eq!(codes(&old, &new), vec![(200, "SCH007")]);
        let deep = MAX_SCHEMA_DEPTH + 10;
        let (old, new) = (nest("{type: string}", deep), nest("{type: integer}", deep));
        assert_eq!(codes(&old, &new), vec![(MAX_SCHEMA_DEPTH, "SCH013")]);
        assert!(codes(&old, &nest("{type: string}", deep)).is_empty());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn key() -> impl Strategy<Value = String> {
            prop_oneof![
                Just("type"),
                Just("properties"),
                Just("items"),
                Just("additionalProperties"),
                Just("required"),
                Just("enum"),
                Just("default"),
                Just("maximum"),
                Just("minLength"),
                Just("exclusiveMaximum"),
                Just("pattern"),
                Just("nullable"),
                Just("oneOf"),
                Just("x-kubernetes-validations"),
                Just("x-kubernetes-int-or-string"),
                Just("rule"),
                Just("message"),
                Just("a"),
                Just("b"),
            ]
            .prop_map(str::to_string)
        }

        fn tree() -> impl Strategy<Value = Node> {
            let leaf = prop_oneof![
                Just(Value::Null),
                any::<bool>().prop_map(Value::Bool),
                (-3i32..3).prop_map(|n| Value::Number(f64::from(n) / 2.0)),
                "[a-c^]{0,2}".prop_map(Value::Str),
            ]
            .prop_map(|v| Node::new(Pos::default(), v));
            leaf.prop_recursive(5, 48, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4)
                        .prop_map(|v| Node::new(Pos::default(), Value::Seq(v))),
                    prop::collection::vec((key(), inner), 0..5).prop_map(|kv| {
                        let entries = kv
                            .into_iter()
                            .map(|(key, value)| crate::fbc::node::Entry {
                                key,
                                key_pos: Pos::default(),
                                value,
                            })
                            .collect();
                        Node::new(Pos::default(), Value::Map(entries))
                    }),
                ]
            })
        }

        proptest! {
            #[test]
            fn a_schema_is_compatible_with_itself(s in tree()) {
                let opts = Options { enum_additions_allowed: false, field_removal: true };
                prop_assert_eq!(compare(&s, &s, &opts), vec![]);
            }

            #[test]
            fn any_pair_compares_sorted_and_deterministic(a in tree(), b in tree()) {
                let opts = Options::default();
                let first = compare(&a, &b, &opts);
                prop_assert_eq!(&first, &compare(&a, &b, &opts));
                for w in first.windows(2) {
                    let (p, q) = (&w[0], &w[1]);
                    prop_assert!((&p.path, p.code.code, &p.message) <= (&q.path, q.code.code, &q.message));
                }
            }
        }
    }
}
