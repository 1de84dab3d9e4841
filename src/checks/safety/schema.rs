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
//!   higher served version (crdify compares it with an empty schema), a change inside an
//!   `additionalProperties` schema (crdify's unhandled diff sees it on the parent too), and
//!   `x-kubernetes-list-type` going between absent and `atomic` (its default).
//! - Whatever else differs is one SCH012 per property, as crdify's "unhandled changes found", but
//!   spelled as a key-by-key diff of the JSON values rather than a dump of the Go struct.
//!
//! A property missing from the new schema is SCH001 (crdify's existing-field-removal check), at the
//! topmost removed path only. A `null` keyword counts as absent, as Go decodes it. Input of the
//! wrong shape never panics: a keyword whose value has an unexpected type is left to the SCH012
//! diff, and flattening stops [`MAX_SCHEMA_DEPTH`] levels deep, where a difference below is SCH013. Values (defaults, enum values, oneOf branches) are
//! compared structurally, numbers as f64, where crdify compares the raw JSON text.

use std::collections::BTreeMap;

pub use super::schema_change::{
    CEL, CODES, Change, DEFAULT, ENUM, FIELD_REMOVED, MAXIMUM, MINIMUM, NULLABLE, ONE_OF, Options,
    PATTERN, PREFLIGHT_ONLY, REQUIRED, TOO_DEEP, TYPE, UNHANDLED,
};
use super::schema_diff::{compare_property, get, same};
use crate::fbc::node::{Node, Value};

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
mod tests {
    use super::*;
    use crate::checks::safety::schema_diff::SHOWN_CHARS;
    use crate::fbc::node::Pos;
    use crate::fbc::yaml::parse_documents;

    fn schema(text: &str) -> Node {
        let mut doc = None;
        parse_documents(text, |n| doc = Some(n)).expect("yaml");
        doc.expect("one document")
    }

    /// `(path, code, message)` of every change between two YAML schemas.
    fn diff_with(old: &str, new: &str, opts: &Options) -> Vec<(String, &'static str, String)> {
        let changes = compare(&schema(old), &schema(new), opts);
        changes
            .into_iter()
            .map(|c| (c.path, c.code.code, c.message))
            .collect()
    }

    fn diff(old: &str, new: &str) -> Vec<(String, &'static str, String)> {
        diff_with(old, new, &Options::default())
    }

    /// The single change between two schemas, as `path code message`.
    fn one(old: &str, new: &str) -> String {
        let d = diff(old, new);
        assert_eq!(d.len(), 1, "{d:#?}");
        format!("{} {} {}", d[0].0, d[0].1, d[0].2)
    }

    /// A `spec.x` property with the given keywords (flow style).
    fn x(keywords: &str) -> String {
        format!(
            "type: object\nproperties:\n  spec:\n    type: object\n    properties:\n      x: {{{keywords}}}\n"
        )
    }

    const CRD: &str = r#"
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

    // The keyword checks of one property (`schema_diff`).

    #[test]
    fn default_added_changed_removed() {
        assert_eq!(
            one(&x("type: string"), &x("type: string, default: a")),
            "^.spec.x SCH002 default added when there was none previously"
        );
        assert_eq!(
            one(&x("default: a"), &x("default: b")),
            r#"^.spec.x SCH002 default value changed: "a" -> "b""#
        );
        assert_eq!(
            one(&x("default: {a: 1}"), &x("")),
            "^.spec.x SCH002 default value removed"
        );
        // Structural equality: key order and number spelling do not matter.
        assert_eq!(
            diff(
                &x("default: {a: 1, b: [x]}"),
                &x("default: {b: [x], a: 1.0}")
            ),
            vec![]
        );
    }

    #[test]
    fn enum_additions_allowed_removals_flagged() {
        let more = CRD.replace("[fast, slow]", "[fast, slow, medium]");
        assert_eq!(diff(CRD, &more), vec![]);
        let strict = Options {
            enum_additions_allowed: false,
            ..Options::default()
        };
        let d = diff_with(CRD, &more, &strict);
        assert_eq!(d[0].2, r#"allowed enum values added: ["medium"]"#);
        let fewer = CRD.replace("[fast, slow]", "[slow]");
        assert_eq!(
            one(CRD, &fewer),
            r#"^.spec.mode SCH003 allowed enum values removed: ["fast"]"#
        );
        assert_eq!(
            one(&x("enum: [1, 2, c]"), &x("enum: [3]")),
            r#"^.spec.x SCH003 allowed enum values removed: ["c" 1 2]"#
        );
        assert_eq!(
            one(&x("type: string"), &x("type: string, enum: [a]")),
            "^.spec.x SCH003 enum constraint added when there was none previously"
        );
        // Reordering is no change; dropping the constraint counts as removing its values, as
        // crdify reports it.
        assert_eq!(diff(&x("enum: [a, b]"), &x("enum: [b, a]")), vec![]);
        assert_eq!(
            one(&x("enum: [a]"), &x("")),
            r#"^.spec.x SCH003 allowed enum values removed: ["a"]"#
        );
    }

    #[test]
    fn maximum_raised_or_removed_allowed_lowered_or_added_flagged() {
        let raised = CRD.replace("maximum: 10", "maximum: 20");
        assert_eq!(diff(CRD, &raised), vec![]);
        assert_eq!(diff(CRD, &CRD.replace("maxItems: 8", "")), vec![]);
        assert_eq!(
            one(CRD, &CRD.replace("maximum: 10", "maximum: 9.5")),
            "^.spec.size SCH004 maximum decreased: 10 -> 9.5"
        );
        assert_eq!(
            one(CRD, &CRD.replace("maxItems: 8", "maxItems: 2")),
            "^.spec.ports SCH004 maxItems decreased: 8 -> 2"
        );
        assert_eq!(
            one(&x(""), &x("maxProperties: 3")),
            "^.spec.x SCH004 maxProperties constraint added when there was none previously: 3"
        );
        assert_eq!(
            one(&x("maximum: 3"), &x("maximum: 3, exclusiveMaximum: true")),
            "^.spec.x SCH004 exclusiveMaximum added"
        );
        // Turning it off loosens the bound; crdify has no check for it (unhandled): SCH014.
        assert_eq!(
            one(&x("maximum: 3, exclusiveMaximum: true"), &x("maximum: 3")),
            "^.spec.x SCH014 exclusiveMaximum removed"
        );
        assert_eq!(
            one(&x("minimum: 3, exclusiveMinimum: true"), &x("minimum: 3")),
            "^.spec.x SCH014 exclusiveMinimum removed"
        );
    }

    #[test]
    fn minimum_lowered_allowed_raised_or_added_flagged() {
        assert_eq!(diff(CRD, &CRD.replace("minimum: 1", "minimum: 0")), vec![]);
        assert_eq!(diff(CRD, &CRD.replace("minimum: 1,", "")), vec![]);
        assert_eq!(
            one(CRD, &CRD.replace("minimum: 1", "minimum: 2")),
            "^.spec.size SCH005 minimum increased: 1 -> 2"
        );
        assert_eq!(
            one(&x("type: string"), &x("type: string, minLength: 1")),
            "^.spec.x SCH005 minLength constraint added when there was none previously: 1"
        );
        assert_eq!(
            one(&x("minItems: 1"), &x("minItems: 3")),
            "^.spec.x SCH005 minItems increased: 1 -> 3"
        );
        assert_eq!(
            one(&x(""), &x("exclusiveMinimum: true")),
            "^.spec.x SCH005 exclusiveMinimum added"
        );
        assert_eq!(diff(&x("minProperties: 2"), &x("minProperties: 1")), vec![]);
    }

    #[test]
    fn new_required_fields_flagged_optional_allowed() {
        let new = CRD
            .replace("required: [size]", "required: [size, name, mode]")
            .replace(
                "      labels:\n",
                "      extra: {type: string}\n      labels:\n",
            );
        assert_eq!(
            one(CRD, &new),
            "^.spec SCH006 new required fields: [mode name]"
        );
        assert_eq!(
            diff(CRD, &CRD.replace("required: [size]", "required: []")),
            vec![]
        );
        assert_eq!(diff(CRD, &CRD.replace("required: [size]", "")), vec![]);
    }

    #[test]
    fn type_changes() {
        assert_eq!(
            one(&x("type: string"), &x("type: integer")),
            r#"^.spec.x SCH007 type changed : "string" -> "integer""#
        );
        assert_eq!(
            one(&x(""), &x("type: object")),
            r#"^.spec.x SCH007 type changed : "" -> "object""#
        );
        assert_eq!(
            one(
                CRD,
                &CRD.replace("{x-kubernetes-int-or-string: true}", "{type: string}")
            ),
            r#"^.spec.value SCH007 type changed : "int-or-string" -> "string""#
        );
        // Widening to int-or-string accepts every old value, but crdify sees a type change.
        assert_eq!(
            one(&x("type: string"), &x("x-kubernetes-int-or-string: true")),
            r#"^.spec.x SCH014 type changed : "string" -> "int-or-string""#
        );
    }

    #[test]
    fn description_changes_are_allowed() {
        let new = CRD.replace("A widget.", "A better widget.");
        assert_eq!(diff(CRD, &new), vec![]);
        assert_eq!(diff(&x("description: a"), &x("")), vec![]);
    }

    #[test]
    fn pattern_added_changed_removed() {
        assert_eq!(
            one(&x(""), &x("pattern: '^a'")),
            r#"^.spec.x SCH008 pattern added: "^a""#
        );
        assert_eq!(
            one(CRD, &CRD.replace("'^[a-z]+$'", "'^[a-z0-9]+$'")),
            r#"^.spec.name SCH008 pattern changed: "^[a-z]+$" -> "^[a-z0-9]+$""#
        );
        assert_eq!(
            one(&x("pattern: a"), &x("")),
            "^.spec.x SCH008 pattern removed"
        );
        assert_eq!(diff(&x("pattern: a"), &x("pattern: a")), vec![]);
    }

    #[test]
    fn nullable_either_way() {
        assert_eq!(
            one(&x(""), &x("nullable: true")),
            "^.spec.x SCH009 nullable added"
        );
        assert_eq!(
            one(&x("nullable: true"), &x("nullable: false")),
            "^.spec.x SCH009 nullable removed"
        );
        assert_eq!(diff(&x("nullable: false"), &x("")), vec![]);
    }

    #[test]
    fn one_of_added_or_branch_removed() {
        let a = "{required: [a]}";
        let b = "{required: [b]}";
        assert_eq!(
            one(&x(""), &x(&format!("oneOf: [{a}]"))),
            "^.spec.x SCH010 oneOf constraint added when there was none previously"
        );
        assert_eq!(
            diff(
                &x(&format!("oneOf: [{a}]")),
                &x(&format!("oneOf: [{b}, {a}]"))
            ),
            vec![(
                "^.spec.x".to_string(),
                "SCH010",
                "allowed oneOf schemas added".to_string()
            )]
        );
        // Reordering branches is no change.
        assert_eq!(
            diff(
                &x(&format!("oneOf: [{a}, {b}]")),
                &x(&format!("oneOf: [{b}, {a}]"))
            ),
            vec![]
        );
        assert_eq!(
            one(
                &x(&format!("oneOf: [{a}, {b}]")),
                &x(&format!("oneOf: [{b}]"))
            ),
            "^.spec.x SCH010 allowed oneOf schemas removed"
        );
    }

    #[test]
    fn additional_properties_changes_reach_the_parent() {
        let old = x("type: object, additionalProperties: {type: string, maxLength: 10}");
        let new = x("type: object, additionalProperties: {type: string, maxLength: 5}");
        assert_eq!(
            diff(&old, &new),
            vec![
                (
                    "^.spec.x".to_string(),
                    "SCH014",
                    "unhandled changes found: additionalProperties (crdify reports a change inside an additionalProperties schema on its parent too)".to_string()
                ),
                (
                    "^.spec.x[*]".to_string(),
                    "SCH004",
                    "maxLength decreased: 10 -> 5".to_string(),
                )
            ]
        );
        // Unchanged: nothing on the parent either.
        assert_eq!(diff(&old, &old), vec![]);
    }

    #[test]
    fn cel_rules_added_changed_removed() {
        let added = CRD.replace(
            "        message: too big\n",
            "        message: too big\n      - rule: has(self.name)\n",
        );
        assert_eq!(
            one(CRD, &added),
            r#"^.spec SCH011 CEL rule added: "has(self.name)""#
        );
        // Removing a rule loosens validation, but crdify calls it unhandled: SCH014.
        assert_eq!(
            one(&added, CRD),
            r#"^.spec SCH014 CEL rule removed: "has(self.name)""#
        );
        let changed = CRD.replace(
            "message: too big",
            "message: too large\n        reason: FieldValueInvalid",
        );
        assert_eq!(
            one(CRD, &changed),
            r#"^.spec SCH011 CEL rule changed: "self.size <= 10" (message, reason)"#
        );
        // A reworded rule is a new rule and a removed one.
        let reworded = CRD.replace("self.size <= 10", "self.size < 11");
        assert_eq!(
            diff(CRD, &reworded),
            vec![
                (
                    "^.spec".to_string(),
                    "SCH011",
                    r#"CEL rule added: "self.size < 11""#.to_string()
                ),
                (
                    "^.spec".to_string(),
                    "SCH014",
                    r#"CEL rule removed: "self.size <= 10""#.to_string()
                ),
            ]
        );
    }

    /// Issue 40: 795 SCH012 errors on the certified index for `x-kubernetes-list-type: <none> ->
    /// "atomic"`, the default: a SCH014 (OLM v1's preflight only), either way.
    #[test]
    fn atomic_list_type_against_none_is_preflight_only() {
        for (o, n) in [
            ("", "x-kubernetes-list-type: atomic"),
            ("x-kubernetes-list-type: atomic", ""),
        ] {
            let kw = |k: &str| {
                if k.is_empty() {
                    "type: array".to_string()
                } else {
                    format!("type: array, {k}")
                }
            };
            let d = one(&x(&kw(o)), &x(&kw(n)));
            assert!(
                d.starts_with("^.spec.x SCH014 unhandled changes found: x-kubernetes-list-type: "),
                "{d}"
            );
            assert!(d.contains("atomic is the default"), "{d}");
        }
        let d = one(
            &x("type: array, x-kubernetes-list-type: atomic"),
            &x("type: array, x-kubernetes-list-type: set"),
        );
        assert!(d.starts_with("^.spec.x SCH012"), "{d}");
    }

    #[test]
    fn unhandled_changes_are_a_field_level_diff() {
        assert_eq!(
            one(
                &x("type: string, format: date, x-kubernetes-list-type: set"),
                &x("type: string, format: date-time, x-kubernetes-preserve-unknown-fields: true")
            ),
            "^.spec.x SCH012 unhandled changes found: format: \"date\" -> \"date-time\"; \
             x-kubernetes-list-type: \"set\" -> <none>; \
             x-kubernetes-preserve-unknown-fields: <none> -> true"
        );
        // Long values are cut.
        let long = "a".repeat(300);
        let d = one(&x(""), &x(&format!("title: {long}")));
        let shown = d.split("-> ").nth(1).expect("new value");
        assert_eq!(shown.chars().count(), SHOWN_CHARS);
        assert!(shown.ends_with("aa…"));
        // A handled keyword with a value of the wrong type falls to the diff too.
        assert_eq!(
            one(&x("maximum: 5"), &x("maximum: '5'")),
            r#"^.spec.x SCH012 unhandled changes found: maximum: 5 -> "5""#
        );
        // null is the same as absent.
        assert_eq!(diff(&x("format: null, maximum: null"), &x("")), vec![]);
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
