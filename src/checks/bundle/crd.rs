//! CustomResourceDefinition rules (CRD codes): what the Kubernetes API server rejects when OLM
//! creates a bundle's CRDs, found before install.
//!
//! The rules follow k8s.io/apiextensions-apiserver (`pkg/apis/apiextensions/validation` and the
//! structural-schema rules of `pkg/apiserver/schema`) as they apply on create. Unlike
//! operator-framework/api, which drops every error under `openAPIV3Schema`, schemas are checked
//! too. Both `apiextensions.k8s.io/v1` and `v1beta1` CRDs are read; a v1beta1 CRD is read with
//! the v1beta1 defaults (scope `Namespaced`, `preserveUnknownFields: true`, the top-level
//! `spec.version`, `spec.validation` and `spec.additionalPrinterColumns`). A v1beta1 API server
//! requires structural schemas only when pruning is on (`preserveUnknownFields: false`) or the
//! schema uses defaults or `x-kubernetes-*` extensions; otherwise it accepts a non-structural
//! schema (with a `NonStructuralSchema` condition), so such findings are warnings there.

use std::collections::BTreeSet;

use super::Ctx;
use crate::bundle::load::{field, kind_of, list_at, pos_at, str_at};
use crate::diag::Code;
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::{Entry, Node, Pos, Value};

codes! {
    NAME = "CRD001", Error, "metadata.name is not <spec.names.plural>.<spec.group>, or not a DNS-1123 subdomain.";
    GROUP = "CRD002", Error, "spec.group is missing, not a DNS-1123 subdomain, or has no dot.";
    SCOPE = "CRD003", Error, "spec.scope is missing or neither Namespaced nor Cluster.";
    NAMES = "CRD004", Error, "spec.names: plural or kind is missing, a name, short name or category is not a DNS-1035 label, or kind equals listKind.";
    VERSIONS = "CRD005", Error, "spec.versions is empty, repeats a name, or has a name that is not a DNS-1035 label (v1beta1: spec.version is not the first version).";
    STORAGE_VERSION = "CRD006", Error, "Not exactly one version is marked storage: true.";
    NOT_SERVED = "CRD007", Warning, "No version is served: the API the CRD defines cannot be used.";
    SCHEMA_MISSING = "CRD008", Error, "A version has no schema.openAPIV3Schema (required in apiextensions.k8s.io/v1, and with pruning on in v1beta1).";
    ROOT_SCHEMA = "CRD009", Error, "The top-level schema is not type: object, is nullable, sets additionalProperties, or (with the status subresource) uses fields not allowed at the root.";
    TYPE_MISSING = "CRD010", Error, "A schema node has no type; structural schemas need one unless x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields is true.";
    ARRAY_ITEMS = "CRD011", Error, "A type: array schema has no items, or items is a list of schemas.";
    PROPERTIES_AND_ADDITIONAL = "CRD012", Error, "A schema node sets both properties and additionalProperties (they are mutually exclusive).";
    METADATA_SCHEMA = "CRD013", Error, "The schema of metadata restricts more than name and generateName, or metadata, apiVersion or kind has the wrong type.";
    UNSUPPORTED_KEYWORD = "CRD014", Error, "A schema node is not an object or uses a keyword or type the API server rejects (uniqueItems: true, $ref, $schema, id, additionalItems, definitions, patternProperties, dependencies, type null or unknown).";
    VALUE_VALIDATION = "CRD015", Error, "allOf, anyOf, oneOf or not is not structural: it sets type, description, default, nullable, additionalProperties or x-kubernetes-* extensions, or names fields the schema does not define.";
    EXTENSION = "CRD016", Error, "An x-kubernetes-* schema extension is misused (preserve-unknown-fields false, embedded-resource without type object, list-type/map-type/list-map-keys rules, conflicting int-or-string).";
    INT_OR_STRING_TYPE = "CRD017", Warning, "x-kubernetes-int-or-string is combined with a type, so one of the two kinds of value is rejected.";
    PRINTER_COLUMN = "CRD018", Error, "An additionalPrinterColumns entry lacks name, type or jsonPath, or has an unsupported type, format or path.";
    CONVERSION = "CRD019", Error, "spec.conversion is invalid: unknown strategy, Webhook without a client config or conversionReviewVersions, or webhook settings with strategy None.";
    PRESERVE_UNKNOWN_FIELDS = "CRD020", Error, "spec.preserveUnknownFields is true where the API server forbids it (v1; v1beta1 with Webhook conversion or schema defaults).";
    SCALE_SUBRESOURCE = "CRD021", Error, "The scale subresource lacks specReplicasPath or statusReplicasPath, or a path is not a JSON path under .spec or .status.";
    PER_VERSION_CONFLICT = "CRD022", Error, "v1beta1: a top-level and a per-version schema, subresources or additionalPrinterColumns are both set, or every version sets identical ones.";
    API_APPROVAL = "CRD023", Error, "A CRD in a *.k8s.io or *.kubernetes.io group lacks a valid api-approved.kubernetes.io annotation.";
}

/// The OpenAPI types a CRD schema may use.
const TYPES: [&str; 6] = ["string", "number", "integer", "boolean", "array", "object"];
/// Printer column types and formats.
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];
const COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];
/// Root schema fields allowed when the status subresource is enabled (JSON names).
const ROOT_WITH_STATUS: [&str; 22] = [
    "description",
    "type",
    "format",
    "title",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];
/// Every field of JSONSchemaProps (other keys are dropped when the API server decodes).
const SCHEMA_FIELDS: [&str; 44] = [
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "nullable",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

pub(super) fn check(cx: &mut Ctx<'_>) {
    let b = cx.bundle;
    for m in &b.manifests {
        let Some(doc) = m.docs.first() else { continue };
        if kind_of(doc) != Some("CustomResourceDefinition") {
            continue;
        }
        let v1 = match str_at(doc, &["apiVersion"]) {
            Some("apiextensions.k8s.io/v1") => true,
            Some("apiextensions.k8s.io/v1beta1") => false,
            _ => continue,
        };
        let mut c = Crd::new(doc, v1);
        c.run();
        let name = str_at(doc, &["metadata", "name"]).unwrap_or("");
        let label = if name.is_empty() {
            "CustomResourceDefinition".to_string()
        } else {
            format!("CRD {name}")
        };
        for h in c.hits {
            let lenient = if h.structural && !c.structural_required {
                Some(
                    "a v1beta1 API server accepts this non-structural schema (the CRD gets a NonStructuralSchema condition); apiextensions.k8s.io/v1 rejects it",
                )
            } else if h.v1_only && !c.v1 {
                Some(
                    "a v1beta1 API server (Kubernetes 1.21 and older) does not check this; apiextensions.k8s.io/v1 rejects it",
                )
            } else {
                None
            };
            let f = cx.push(
                h.code,
                format!("{label}: {}", h.msg),
                &m.path,
                h.pos,
                Some(&h.path),
            );
            let mut help = h.help;
            if let Some(why) = lenient {
                f.severity = Warning;
                help = Some(match help {
                    Some(h) => format!("{h}; {why}"),
                    None => why.to_string(),
                });
            }
            f.help = help;
        }
    }
}

/// One finding before it is pushed.
struct Hit {
    code: &'static Code,
    msg: String,
    pos: Pos,
    path: String,
    help: Option<String>,
    /// Only rejected when the schema must be structural.
    structural: bool,
    /// Only rejected by the v1 API (a warning for a v1beta1 CRD).
    v1_only: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// One CRD being checked.
struct Crd<'a> {
    doc: &'a Node,
    v1: bool,
    hits: Vec<Hit>,
    /// Whether the API server requires structural schemas (always in v1).
    structural_required: bool,
}

/// A version of the CRD (v1beta1's lone `spec.version` becomes one).
struct Version<'a> {
    node: Option<&'a Node>,
    name: &'a str,
    pos: Pos,
    path: String,
    served: bool,
    storage: bool,
}

impl<'a> Crd<'a> {
    fn new(doc: &'a Node, v1: bool) -> Self {
        Crd {
            doc,
            v1,
            hits: Vec::new(),
            structural_required: true,
        }
    }

    fn hit(
        &mut self,
        code: &'static Code,
        pos: Pos,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) -> &mut Hit {
        self.hits.push(Hit {
            code,
            msg: msg.into(),
            pos,
            path: path.into(),
            help: None,
            structural: false,
            v1_only: false,
        });
        let n = self.hits.len();
        &mut self.hits[n - 1]
    }

    /// A finding only rejected when the schema must be structural.
    fn shit(
        &mut self,
        code: &'static Code,
        pos: Pos,
        path: impl Into<String>,
        msg: impl Into<String>,
    ) -> &mut Hit {
        let h = self.hit(code, pos, path, msg);
        h.structural = true;
        h
    }

    fn run(&mut self) {
        let doc = self.doc;
        let spec = field(doc, &["spec"]);
        let spec_pos = if spec.is_some() {
            key_pos(doc, "spec")
        } else {
            doc.pos
        };
        let group = str_at(doc, &["spec", "group"]).unwrap_or("");
        let plural = str_at(doc, &["spec", "names", "plural"]).unwrap_or("");
        self.check_name(group, plural);
        self.check_group(group, spec_pos);
        self.check_approval(group);
        self.check_scope(spec_pos);
        self.check_names(spec_pos);
        let versions = self.versions();
        self.check_versions(&versions, spec_pos);
        let puf = field(doc, &["spec", "preserveUnknownFields"]).map(|n| &n.value);
        let puf_true = match puf {
            Some(Value::Bool(b)) => *b,
            // v1beta1 defaults it to true, v1 to false.
            _ => !self.v1,
        };
        let schemas = self.schemas(&versions);
        if !self.v1 {
            self.structural_required = !puf_true
                || schemas
                    .iter()
                    .any(|(s, _, _, _)| schema_has(s, &|n| has_key(n, "default")))
                || schemas
                    .iter()
                    .any(|(s, _, _, _)| schema_has(s, &has_kubernetes_extension));
        }
        self.check_schema_presence(&versions, puf_true);
        for (s, pos, path, status) in &schemas {
            self.check_root(s, path, *status);
            self.walk(s, *pos, path, Level::Root);
        }
        self.check_columns(&versions);
        self.check_scale(&versions);
        self.check_per_version(&versions);
        self.check_preserve_unknown(puf_true, &schemas);
        self.check_conversion();
    }

    fn check_name(&mut self, group: &str, plural: &str) {
        let Some(n) = field(self.doc, &["metadata", "name"]) else {
            return;
        };
        let Some(name) = n.as_str().filter(|s| !s.is_empty()) else {
            return;
        };
        for p in super::subdomain_problems(name) {
            self.hit(
                &NAME,
                n.pos,
                "metadata.name",
                format!("metadata.name {name:?} is invalid: {p}"),
            );
        }
        let want = format!("{plural}.{group}");
        if name != want {
            self.hit(
                &NAME,
                n.pos,
                "metadata.name",
                format!("metadata.name must be spec.names.plural+\".\"+spec.group ({want:?})"),
            )
            .help = Some(format!("name the CRD {want}"));
        }
    }

    fn check_group(&mut self, group: &str, spec_pos: Pos) {
        let pos = field(self.doc, &["spec", "group"]).map_or(spec_pos, |n| n.pos);
        if group.is_empty() {
            self.hit(&GROUP, pos, "spec.group", "spec.group is required");
            return;
        }
        let problems = super::subdomain_problems(group);
        if !problems.is_empty() {
            self.hit(
                &GROUP,
                pos,
                "spec.group",
                format!("spec.group {group:?} is invalid: {}", problems.join(", ")),
            );
        } else if !group.contains('.') {
            self.hit(
                &GROUP,
                pos,
                "spec.group",
                format!("spec.group {group:?} should be a domain with at least one dot"),
            )
            .help = Some("use a domain you own, e.g. example.com".into());
        }
    }

    /// Groups of the Kubernetes community need an approved API (KEP 1111).
    fn check_approval(&mut self, group: &str) {
        let protected = ["k8s.io", "kubernetes.io"]
            .iter()
            .any(|d| group == *d || group.ends_with(&format!(".{d}")));
        if !protected {
            return;
        }
        const KEY: &str = "api-approved.kubernetes.io";
        let path = format!("metadata.annotations[\"{KEY}\"]");
        let node = field(self.doc, &["metadata", "annotations", KEY]);
        let value = node.and_then(Node::as_str).unwrap_or("");
        let pos = node.map_or_else(|| key_pos(self.doc, "metadata"), |n| n.pos);
        let url_ok = ["https://", "http://"]
            .iter()
            .any(|p| value.strip_prefix(p).is_some_and(|h| !h.is_empty()));
        let msg = if node.is_none() {
            format!(
                "group {group:?} is protected: CRDs in *.k8s.io and *.kubernetes.io groups must have the approval annotation {KEY:?}"
            )
        } else if value.starts_with("unapproved") || url_ok {
            return;
        } else {
            format!(
                "annotation {KEY} {value:?} must be the URL of the API review approving the group, or start with \"unapproved\""
            )
        };
        let h = self.hit(&API_APPROVAL, pos, path, msg);
        h.v1_only = true;
        h.help = Some(format!(
            "use a group in a domain you own, or set {KEY} to the approving pull request URL (see https://github.com/kubernetes/enhancements/pull/1111)"
        ));
    }

    fn check_scope(&mut self, spec_pos: Pos) {
        let node = field(self.doc, &["spec", "scope"]);
        let scope = node.and_then(Node::as_str).unwrap_or("");
        if scope.is_empty() {
            if self.v1 {
                self.hit(&SCOPE, spec_pos, "spec.scope", "spec.scope is required")
                    .help = Some("set scope: Namespaced or scope: Cluster".into());
            }
            return;
        }
        if scope != "Namespaced" && scope != "Cluster" {
            self.hit(
                &SCOPE,
                node.map_or(spec_pos, |n| n.pos),
                "spec.scope",
                format!(
                    "spec.scope {scope:?} is not supported: expected \"Cluster\" or \"Namespaced\""
                ),
            );
        }
    }

    fn check_names(&mut self, spec_pos: Pos) {
        let doc = self.doc;
        let names_pos = field(doc, &["spec", "names"]).map_or(spec_pos, |n| n.pos);
        let at = |k: &str| field(doc, &["spec", "names", k]);
        let s = |k: &str| at(k).and_then(Node::as_str).unwrap_or("");
        let pos = |k: &str| at(k).map_or(names_pos, |n| n.pos);
        let (plural, singular, kind, list_kind) =
            (s("plural"), s("singular"), s("kind"), s("listKind"));
        for (k, v) in [("plural", plural), ("kind", kind)] {
            if v.is_empty() {
                self.hit(
                    &NAMES,
                    names_pos,
                    format!("spec.names.{k}"),
                    format!("spec.names.{k} is required"),
                );
            }
        }
        for (k, v, lower) in [
            ("plural", plural, false),
            ("singular", singular, false),
            ("kind", kind, true),
            ("listKind", list_kind, true),
        ] {
            if v.is_empty() {
                continue;
            }
            let checked = if lower {
                v.to_ascii_lowercase()
            } else {
                v.to_string()
            };
            let p = dns1035_label(&checked);
            if !p.is_empty() {
                let mixed = if lower {
                    "may have mixed case, but should otherwise match: "
                } else {
                    ""
                };
                self.hit(
                    &NAMES,
                    pos(k),
                    format!("spec.names.{k}"),
                    format!("spec.names.{k} {v:?} is invalid: {mixed}{}", p.join(", ")),
                );
            }
        }
        if !kind.is_empty() && kind == list_kind {
            self.hit(
                &NAMES,
                pos("listKind"),
                "spec.names.listKind",
                format!("spec.names.listKind {list_kind:?}: kind and listKind may not be the same"),
            )
            .help = Some(format!(
                "use {kind}List, or leave listKind out (it defaults to {kind}List)"
            ));
        }
        for list in ["shortNames", "categories"] {
            for (i, n) in list_at(doc, &["spec", "names", list]).iter().enumerate() {
                let v = n.as_str().unwrap_or("");
                let p = dns1035_label(v);
                if !p.is_empty() {
                    self.hit(
                        &NAMES,
                        n.pos,
                        format!("spec.names.{list}[{i}]"),
                        format!("spec.names.{list}[{i}] {v:?} is invalid: {}", p.join(", ")),
                    );
                }
            }
        }
    }

    fn versions(&self) -> Vec<Version<'a>> {
        let doc = self.doc;
        let mut out: Vec<Version<'a>> = list_at(doc, &["spec", "versions"])
            .iter()
            .enumerate()
            .map(|(i, v)| Version {
                node: Some(v),
                name: str_at(v, &["name"]).unwrap_or(""),
                pos: pos_at(v, &["name"]),
                path: format!("spec.versions[{i}]"),
                served: is_true(v, "served"),
                storage: is_true(v, "storage"),
            })
            .collect();
        if !self.v1
            && out.is_empty()
            && let Some(n) = field(doc, &["spec", "version"])
            && let Some(name) = n.as_str().filter(|s| !s.is_empty())
        {
            out.push(Version {
                node: None,
                name,
                pos: n.pos,
                path: "spec.version".into(),
                served: true,
                storage: true,
            });
        }
        out
    }

    fn check_versions(&mut self, versions: &[Version<'a>], spec_pos: Pos) {
        let list_pos = field(self.doc, &["spec", "versions"]).map_or(spec_pos, |n| n.pos);
        if versions.is_empty() {
            let msg = if self.v1 {
                "spec.versions is empty: a CRD needs at least one version"
            } else {
                "neither spec.versions nor spec.version is set: a CRD needs at least one version"
            };
            self.hit(&VERSIONS, list_pos, "spec.versions", msg);
            return;
        }
        let mut seen = BTreeSet::new();
        for v in versions {
            let p = dns1035_label(v.name);
            let path = if v.node.is_some() {
                format!("{}.name", v.path)
            } else {
                v.path.clone()
            };
            if !p.is_empty() {
                self.hit(
                    &VERSIONS,
                    v.pos,
                    path.clone(),
                    format!("version name {:?} is invalid: {}", v.name, p.join(", ")),
                )
                .help = Some("use Kubernetes version names such as v1, v1alpha1, v2beta3".into());
            }
            if !seen.insert(v.name) {
                self.hit(
                    &VERSIONS,
                    v.pos,
                    path,
                    format!(
                        "spec.versions must contain unique version names: {:?} repeats",
                        v.name
                    ),
                );
            }
        }
        if !self.v1
            && let Some(n) = field(self.doc, &["spec", "version"])
            && let Some(name) = n.as_str().filter(|s| !s.is_empty())
        {
            if let Some(first) = versions
                .first()
                .filter(|f| f.node.is_some() && f.name != name)
            {
                self.hit(
                    &VERSIONS,
                    n.pos,
                    "spec.version",
                    format!(
                        "spec.version {name:?} must match the first version in spec.versions ({:?})",
                        first.name
                    ),
                );
            }
            for p in dns1035_label(name) {
                if versions.first().is_some_and(|f| f.node.is_some()) {
                    self.hit(
                        &VERSIONS,
                        n.pos,
                        "spec.version",
                        format!("spec.version {name:?} is invalid: {p}"),
                    );
                }
            }
        }
        let storage = versions.iter().filter(|v| v.storage).count();
        if storage != 1 {
            let h = self.hit(
                &STORAGE_VERSION,
                list_pos,
                "spec.versions",
                format!("spec.versions must have exactly one version marked as storage version, not {storage}"),
            );
            h.help = Some("set storage: true on exactly one version (the one objects are stored in), storage: false on the others".into());
        }
        if !versions.iter().any(|v| v.served) {
            self.hit(
                &NOT_SERVED,
                list_pos,
                "spec.versions",
                "no version is served: the API server installs the CRD, but its resources cannot be read or written",
            )
            .help = Some("set served: true on the versions clients use".into());
        }
    }

    /// Every schema with its position, path and whether the status subresource applies.
    fn schemas(&self, versions: &[Version<'a>]) -> Vec<(&'a Node, Pos, String, bool)> {
        let doc = self.doc;
        let mut out = Vec::new();
        let top_status = field(doc, &["spec", "subresources", "status"]).is_some_and(present);
        if !self.v1
            && let Some(e) = entry_at(doc, &["spec", "validation"], "openAPIV3Schema")
            && present(&e.value)
        {
            let any_status = top_status
                || versions
                    .iter()
                    .filter_map(|v| v.node)
                    .any(|v| field(v, &["subresources", "status"]).is_some_and(present));
            out.push((
                &e.value,
                e.key_pos,
                "spec.validation.openAPIV3Schema".to_string(),
                any_status,
            ));
        }
        for v in versions {
            let Some(vn) = v.node else { continue };
            if let Some(e) = entry_at(vn, &["schema"], "openAPIV3Schema")
                && present(&e.value)
            {
                let status = match field(vn, &["subresources"]) {
                    Some(s) if present(s) => field(s, &["status"]).is_some_and(present),
                    _ => top_status,
                };
                out.push((
                    &e.value,
                    e.key_pos,
                    format!("{}.schema.openAPIV3Schema", v.path),
                    status,
                ));
            }
        }
        out
    }

    fn check_schema_presence(&mut self, versions: &[Version<'a>], puf_true: bool) {
        let doc = self.doc;
        let top = field(doc, &["spec", "validation", "openAPIV3Schema"]).is_some_and(present);
        if top && !self.v1 {
            return;
        }
        for v in versions {
            let Some(vn) = v.node else { continue };
            if field(vn, &["schema", "openAPIV3Schema"]).is_some_and(present) {
                continue;
            }
            if self.v1 {
                self.hit(
                    &SCHEMA_MISSING,
                    vn.pos,
                    format!("{}.schema.openAPIV3Schema", v.path),
                    format!("version {:?} has no schema.openAPIV3Schema: schemas are required", v.name),
                )
                .help = Some("add a schema; to accept any content use {type: object, x-kubernetes-preserve-unknown-fields: true}".into());
            } else if !puf_true && v.served {
                self.hit(
                    &SCHEMA_MISSING,
                    vn.pos,
                    format!("{}.schema.openAPIV3Schema", v.path),
                    format!(
                        "served version {:?} has no schema while spec.preserveUnknownFields is false: a schema is required because otherwise all fields are pruned",
                        v.name
                    ),
                );
            }
        }
    }

    fn check_root(&mut self, s: &Node, path: &str, status: bool) {
        if !matches!(s.value, Value::Map(_)) {
            return;
        }
        if status {
            for e in entries(s) {
                if !SCHEMA_FIELDS.contains(&e.key.as_str()) || !non_zero(&e.value) {
                    continue;
                }
                if e.key == "type" {
                    if e.value.as_str() != Some("object") {
                        self.hit(
                            &ROOT_SCHEMA,
                            e.key_pos,
                            format!("{path}.type"),
                            "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
                        );
                    }
                    continue;
                }
                if !ROOT_WITH_STATUS.contains(&e.key.as_str()) {
                    self.hit(
                        &ROOT_SCHEMA,
                        e.key_pos,
                        format!("{path}{}", seg(&e.key)),
                        format!(
                            "{:?} is not allowed at the root of the schema if the status subresource is enabled (only {})",
                            e.key,
                            ROOT_WITH_STATUS.join(", ")
                        ),
                    )
                    .help = Some("move the constraint into properties (e.g. properties.spec)".into());
                    break;
                }
            }
        }
        if let Some(e) = entry(s, "nullable")
            && matches!(e.value.value, Value::Bool(true))
        {
            self.hit(
                &ROOT_SCHEMA,
                e.key_pos,
                format!("{path}.nullable"),
                "nullable cannot be true at the root",
            );
        }
    }

    /// Checks one schema node and everything below it.
    fn walk(&mut self, s: &Node, pos: Pos, path: &str, lvl: Level) {
        let Value::Map(_) = &s.value else {
            if !matches!(s.value, Value::Null) {
                self.hit(
                    &UNSUPPORTED_KEYWORD,
                    s.pos,
                    path,
                    format!("a schema must be an object, not {}", s.kind()),
                );
            }
            return;
        };
        self.keywords(s, path);
        let ty = field(s, &["type"]).and_then(Node::as_str).unwrap_or("");
        let int_or_string = is_true(s, "x-kubernetes-int-or-string");
        let preserve = is_true(s, "x-kubernetes-preserve-unknown-fields");
        let embedded = is_true(s, "x-kubernetes-embedded-resource");
        let props = entry(s, "properties").filter(|e| matches!(e.value.value, Value::Map(_)));
        let has_props = props.is_some_and(|e| !entries(&e.value).is_empty());

        // items
        match entry(s, "items") {
            Some(e) if matches!(e.value.value, Value::Seq(_)) => {
                self.hit(
                    &ARRAY_ITEMS,
                    e.key_pos,
                    format!("{path}.items"),
                    "items must be a schema object and not an array",
                )
                .help = Some("give one schema for every item".into());
            }
            Some(e) if matches!(e.value.value, Value::Map(_)) => {
                self.walk(&e.value, e.key_pos, &format!("{path}.items"), Level::Item);
            }
            _ => {
                if ty == "array" {
                    self.shit(
                        &ARRAY_ITEMS,
                        pos,
                        format!("{path}.items"),
                        "items must be specified for type: array",
                    )
                    .help = Some(
                        "add items with the schema of the elements (e.g. items: {type: string})"
                            .into(),
                    );
                }
            }
        }

        // properties
        if let Some(pe) = props {
            let check_meta = lvl == Level::Root || embedded;
            for e in entries(&pe.value) {
                let p = format!("{path}.properties{}", seg(&e.key));
                if check_meta && (e.key == "kind" || e.key == "apiVersion") {
                    let t = field(&e.value, &["type"])
                        .and_then(Node::as_str)
                        .unwrap_or("");
                    if t != "string" {
                        self.shit(
                            &METADATA_SCHEMA,
                            e.key_pos,
                            format!("{p}.type"),
                            format!("{} must have type: string, not {t:?}", e.key),
                        );
                    }
                }
                if e.key == "metadata" {
                    self.metadata(&e.value, e.key_pos, &p, check_meta, lvl == Level::Root);
                }
                self.walk(&e.value, e.key_pos, &p, Level::Field);
            }
        }

        // additionalProperties
        if let Some(e) = entry(s, "additionalProperties") {
            let schema = matches!(e.value.value, Value::Map(_));
            let restricts = schema || matches!(e.value.value, Value::Bool(false));
            let ap = format!("{path}.additionalProperties");
            if restricts && has_props {
                self.hit(
                    &PROPERTIES_AND_ADDITIONAL,
                    e.key_pos,
                    ap.clone(),
                    "additionalProperties and properties are mutual exclusive",
                )
                .help = Some("properties describe a struct, additionalProperties a map: keep one (unknown fields are pruned anyway)".into());
            }
            if present(&e.value) && lvl == Level::Root {
                self.shit(
                    &ROOT_SCHEMA,
                    e.key_pos,
                    ap.clone(),
                    "additionalProperties must not be used at the root",
                );
            } else if present(&e.value) && embedded {
                self.shit(
                    &EXTENSION,
                    e.key_pos,
                    ap.clone(),
                    "additionalProperties must not be used if x-kubernetes-embedded-resource is set",
                );
            }
            if schema {
                self.walk(&e.value, e.key_pos, &ap, Level::Field);
            }
        }

        // type
        if embedded && ty != "object" {
            self.shit(
                &EXTENSION,
                pos,
                format!("{path}.type"),
                "type must be object if x-kubernetes-embedded-resource is true",
            );
        } else if ty.is_empty() && !int_or_string && !preserve && field(s, &["$ref"]).is_none() {
            let msg = match lvl {
                Level::Root => "type must not be empty at the root",
                Level::Item => "type must not be empty for specified array items",
                Level::Field => "type must not be empty for specified object fields",
            };
            let code = if lvl == Level::Root {
                &ROOT_SCHEMA
            } else {
                &TYPE_MISSING
            };
            self.shit(code, pos, format!("{path}.type"), msg).help = Some(
                "set a type (object, array, string, integer, number, boolean), or x-kubernetes-preserve-unknown-fields: true for arbitrary content, or x-kubernetes-int-or-string: true".into(),
            );
        }
        if lvl == Level::Root && !ty.is_empty() && ty != "object" {
            self.shit(
                &ROOT_SCHEMA,
                pos,
                format!("{path}.type"),
                format!("type must be object at the root, not {ty:?}"),
            );
        }
        if int_or_string && !ty.is_empty() {
            self.hit(
                &INT_OR_STRING_TYPE,
                pos,
                format!("{path}.type"),
                format!("x-kubernetes-int-or-string is true but type is {ty:?}: values of the other kind are rejected"),
            )
            .help = Some("remove type (x-kubernetes-int-or-string allows an empty type)".into());
        }

        self.extensions(
            s,
            pos,
            path,
            ty,
            preserve,
            embedded,
            int_or_string,
            has_props,
        );
        self.value_validation(s, path, lvl);
    }

    /// Keywords the API server rejects wherever they appear (also inside allOf, anyOf, ...).
    fn keywords(&mut self, s: &Node, path: &str) {
        for e in entries(s) {
            let p = format!("{path}{}", seg(&e.key));
            let v = &e.value;
            let why: Option<(&str, bool)> = match e.key.as_str() {
                "uniqueItems" if matches!(v.value, Value::Bool(true)) => Some((
                    "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
                    false,
                )),
                "id" if v.as_str().is_some_and(|s| !s.is_empty()) => {
                    Some(("id is not supported", false))
                }
                "additionalItems" if present(v) => {
                    Some(("additionalItems is not supported", false))
                }
                "patternProperties" if non_zero(v) => {
                    Some(("patternProperties is not supported", false))
                }
                "definitions" if non_zero(v) => Some(("definitions is not supported", false)),
                "dependencies" if present(v) => Some(("dependencies is not supported", false)),
                "$ref" if v.as_str().is_some_and(|s| !s.is_empty()) => {
                    Some(("$ref is not supported", true))
                }
                "$schema" if v.as_str().is_some_and(|s| !s.is_empty()) => {
                    Some(("$schema is not supported", true))
                }
                "type" => match &v.value {
                    Value::Str(t) if t == "null" => Some((
                        "type cannot be set to null, use nullable as an alternative",
                        false,
                    )),
                    Value::Str(t) if !t.is_empty() && !TYPES.contains(&t.as_str()) => {
                        let h = self.shit(
                            &UNSUPPORTED_KEYWORD,
                            e.key_pos,
                            p.clone(),
                            format!(
                                "type {t:?} is not supported: expected one of {}",
                                TYPES.join(", ")
                            ),
                        );
                        h.help = Some("use one of the OpenAPI v3 types; formats (int32, date-time, ...) go in format".into());
                        None
                    }
                    Value::Str(_) | Value::Null => None,
                    _ => Some((
                        "type must be a string (one type per schema; use nullable: true for null)",
                        false,
                    )),
                },
                _ => None,
            };
            if let Some((msg, structural)) = why {
                let h = self.hit(&UNSUPPORTED_KEYWORD, e.key_pos, p, msg);
                h.structural = structural;
            }
        }
    }

    /// `metadata` under the root or an embedded resource.
    fn metadata(&mut self, m: &Node, pos: Pos, path: &str, check_meta: bool, root: bool) {
        if !matches!(m.value, Value::Map(_)) {
            return;
        }
        let ty = field(m, &["type"]).and_then(Node::as_str).unwrap_or("");
        if check_meta && ty != "object" {
            self.shit(
                &METADATA_SCHEMA,
                pos,
                format!("{path}.type"),
                format!("metadata must have type: object, not {ty:?}"),
            );
        }
        if !root {
            return;
        }
        let mut extra = Vec::new();
        for e in entries(m) {
            if !SCHEMA_FIELDS.contains(&e.key.as_str()) || !non_zero(&e.value) {
                continue;
            }
            match e.key.as_str() {
                "type" | "default" => {}
                "properties" => {
                    let keys: Vec<&str> =
                        entries(&e.value).iter().map(|p| p.key.as_str()).collect();
                    let only_names = keys.iter().all(|k| *k == "name" || *k == "generateName");
                    if !only_names {
                        extra.extend(
                            keys.into_iter()
                                .filter(|k| *k != "name" && *k != "generateName"),
                        );
                    }
                }
                k => extra.push(k),
            }
        }
        if !extra.is_empty() {
            self.shit(
                &METADATA_SCHEMA,
                pos,
                path,
                format!(
                    "metadata must not specify anything other than name and generateName, but metadata is implicitly specified (found {})",
                    extra.join(", ")
                ),
            )
            .help = Some("reduce the metadata schema to {type: object}, optionally with properties name and generateName".into());
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn extensions(
        &mut self,
        s: &Node,
        pos: Pos,
        path: &str,
        ty: &str,
        preserve: bool,
        embedded: bool,
        int_or_string: bool,
        has_props: bool,
    ) {
        if let Some(e) = entry(s, "x-kubernetes-preserve-unknown-fields")
            && matches!(e.value.value, Value::Bool(false))
        {
            self.hit(
                &EXTENSION,
                e.key_pos,
                format!("{path}.x-kubernetes-preserve-unknown-fields"),
                "x-kubernetes-preserve-unknown-fields must be true or undefined",
            )
            .help = Some("remove it: fields are pruned unless it is true".into());
        }
        if int_or_string && preserve {
            self.shit(
                &EXTENSION,
                pos,
                format!("{path}.x-kubernetes-preserve-unknown-fields"),
                "x-kubernetes-preserve-unknown-fields must be false if x-kubernetes-int-or-string is true",
            );
        }
        if int_or_string && embedded {
            self.shit(
                &EXTENSION,
                pos,
                format!("{path}.x-kubernetes-embedded-resource"),
                "x-kubernetes-embedded-resource must be false if x-kubernetes-int-or-string is true",
            );
        }
        if embedded && !preserve && !has_props {
            self.shit(
                &EXTENSION,
                pos,
                format!("{path}.properties"),
                "properties must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            );
        }
        if let Some(e) = entry(s, "x-kubernetes-map-type") {
            let v = e.value.as_str().unwrap_or("");
            if ty != "object" {
                self.hit(
                    &EXTENSION,
                    e.key_pos,
                    format!("{path}.type"),
                    "type must be object if x-kubernetes-map-type is specified",
                );
            }
            if v != "atomic" && v != "granular" {
                self.hit(
                    &EXTENSION,
                    e.key_pos,
                    format!("{path}.x-kubernetes-map-type"),
                    format!("x-kubernetes-map-type {v:?} is not supported: expected \"atomic\" or \"granular\""),
                );
            }
        }
        let list_type = entry(s, "x-kubernetes-list-type");
        let lt = list_type.map(|e| e.value.as_str().unwrap_or(""));
        let items = field(s, &["items"]).filter(|i| matches!(i.value, Value::Map(_)));
        if let Some(e) = list_type {
            let v = lt.unwrap_or("");
            if ty != "array" {
                self.hit(
                    &EXTENSION,
                    e.key_pos,
                    format!("{path}.type"),
                    "type must be array if x-kubernetes-list-type is specified",
                );
            } else if v == "set"
                && let Some(it) = items
            {
                let it_ty = str_at(it, &["type"]).unwrap_or("");
                let bad = match it_ty {
                    "array" => {
                        str_at(it, &["x-kubernetes-list-type"]).is_some_and(|t| t != "atomic")
                    }
                    "object" => str_at(it, &["x-kubernetes-map-type"]) != Some("atomic"),
                    _ => false,
                };
                if bad {
                    let k = if it_ty == "array" {
                        "x-kubernetes-list-type"
                    } else {
                        "x-kubernetes-map-type"
                    };
                    self.hit(
                        &EXTENSION,
                        it.pos,
                        format!("{path}.items.{k}"),
                        format!("{k} of the items must be atomic as item of a list with x-kubernetes-list-type=set"),
                    );
                }
            }
            if !["atomic", "set", "map"].contains(&v) {
                self.hit(
                    &EXTENSION,
                    e.key_pos,
                    format!("{path}.x-kubernetes-list-type"),
                    format!("x-kubernetes-list-type {v:?} is not supported: expected \"atomic\", \"set\" or \"map\""),
                );
            }
        }
        let keys: Vec<&str> = list_at(s, &["x-kubernetes-list-map-keys"])
            .iter()
            .filter_map(Node::as_str)
            .collect();
        if !keys.is_empty() && lt != Some("map") {
            self.hit(
                &EXTENSION,
                key_pos(s, "x-kubernetes-list-map-keys"),
                format!("{path}.x-kubernetes-list-type"),
                "x-kubernetes-list-type must be map if x-kubernetes-list-map-keys is non-empty",
            );
        }
        if lt == Some("map") {
            let lpos = key_pos(s, "x-kubernetes-list-type");
            if keys.is_empty() {
                self.hit(
                    &EXTENSION,
                    lpos,
                    format!("{path}.x-kubernetes-list-map-keys"),
                    "x-kubernetes-list-map-keys must not be empty if x-kubernetes-list-type is map",
                );
            }
            match items {
                None => {
                    self.hit(
                        &EXTENSION,
                        lpos,
                        format!("{path}.items"),
                        "items must have a schema if x-kubernetes-list-type is map",
                    );
                }
                Some(it) if str_at(it, &["type"]) != Some("object") => {
                    self.hit(
                        &EXTENSION,
                        it.pos,
                        format!("{path}.items.type"),
                        "items must be type: object if the array's x-kubernetes-list-type is map",
                    );
                }
                Some(it) => {
                    let required: Vec<&str> = list_at(it, &["required"])
                        .iter()
                        .filter_map(Node::as_str)
                        .collect();
                    let mut seen = BTreeSet::new();
                    for k in &keys {
                        if !seen.insert(*k) {
                            self.hit(
                                &EXTENSION,
                                lpos,
                                format!("{path}.x-kubernetes-list-map-keys"),
                                format!("x-kubernetes-list-map-keys must not contain duplicate entries ({k:?})"),
                            );
                        }
                        let Some(kp) = field(it, &["properties", k]) else {
                            self.hit(
                                &EXTENSION,
                                lpos,
                                format!("{path}.x-kubernetes-list-map-keys"),
                                format!("x-kubernetes-list-map-keys entries must all be names of item properties; {k:?} is not"),
                            );
                            continue;
                        };
                        let kpath = format!("{path}.items.properties{}", seg(k));
                        if matches!(str_at(kp, &["type"]), Some("array" | "object")) {
                            self.hit(
                                &EXTENSION,
                                kp.pos,
                                format!("{kpath}.type"),
                                "a list map key must be a scalar type if the parent array's x-kubernetes-list-type is map",
                            );
                        }
                        if !required.contains(k) && !has_key(kp, "default") {
                            self.hit(
                                &EXTENSION,
                                kp.pos,
                                format!("{kpath}.default"),
                                format!("property {k:?} is in x-kubernetes-list-map-keys, so it must have a default or be a required property"),
                            );
                        }
                        if is_true(kp, "nullable") {
                            self.hit(
                                &EXTENSION,
                                kp.pos,
                                format!("{kpath}.nullable"),
                                format!("property {k:?} is in x-kubernetes-list-map-keys, so it cannot be nullable"),
                            );
                        }
                    }
                }
            }
        }
        if matches!(lt, Some("map" | "set"))
            && let Some(it) = items
            && is_true(it, "nullable")
        {
            self.hit(
                &EXTENSION,
                key_pos(it, "nullable"),
                format!("{path}.items.nullable"),
                format!(
                    "items cannot be nullable when x-kubernetes-list-type is {}",
                    lt.unwrap_or("")
                ),
            );
        }
    }

    /// allOf / anyOf / oneOf / not of a structural node.
    fn value_validation(&mut self, s: &Node, path: &str, lvl: Level) {
        let skip_any_of = is_int_or_string_any_of(s);
        let skip_first_all_of = list_at(s, &["allOf"])
            .first()
            .is_some_and(is_int_or_string_any_of);
        self.junctors(s, path, skip_any_of, skip_first_all_of, lvl);
        // Completeness: what value validations name must exist in the structural schema.
        for (k, i, c) in clauses(s) {
            let vpath = match i {
                Some(i) => format!("{path}.{k}[{i}]"),
                None => format!("{path}.{k}"),
            };
            self.complete(c, s, path, &vpath);
        }
    }

    fn junctors(
        &mut self,
        s: &Node,
        path: &str,
        skip_any_of: bool,
        skip_first_all_of: bool,
        lvl: Level,
    ) {
        for (k, i, c) in clauses(s) {
            if k == "anyOf" && skip_any_of {
                continue;
            }
            let p = match i {
                Some(i) => format!("{path}.{k}[{i}]"),
                None => format!("{path}.{k}"),
            };
            let skip = k == "allOf" && i == Some(0) && skip_first_all_of;
            self.nested(c, &p, skip, lvl);
        }
    }

    /// A schema inside a value validation: only value constraints are allowed.
    fn nested(&mut self, v: &Node, path: &str, skip_any_of: bool, lvl: Level) {
        if !matches!(v.value, Value::Map(_)) {
            if present(v) {
                self.hit(
                    &UNSUPPORTED_KEYWORD,
                    v.pos,
                    path,
                    format!("a schema must be an object, not {}", v.kind()),
                );
            }
            return;
        }
        self.keywords(v, path);
        let skip_first = list_at(v, &["allOf"])
            .first()
            .is_some_and(is_int_or_string_any_of);
        self.junctors(v, path, skip_any_of, skip_first, lvl);
        if let Some(it) = field(v, &["items"]).filter(|i| matches!(i.value, Value::Map(_))) {
            self.nested(it, &format!("{path}.items"), false, lvl);
        }
        if let Some(props) = field(v, &["properties"]) {
            for e in entries(props) {
                self.nested(
                    &e.value,
                    &format!("{path}.properties{}", seg(&e.key)),
                    false,
                    Level::Field,
                );
            }
        }
        for e in entries(v) {
            let bad = match e.key.as_str() {
                "type"
                | "title"
                | "description"
                | "x-kubernetes-list-type"
                | "x-kubernetes-map-type" => e.value.as_str().is_some_and(|s| !s.is_empty()),
                "default" | "additionalProperties" => present(&e.value),
                "nullable"
                | "x-kubernetes-preserve-unknown-fields"
                | "x-kubernetes-embedded-resource"
                | "x-kubernetes-int-or-string" => matches!(e.value.value, Value::Bool(true)),
                "x-kubernetes-list-map-keys" | "x-kubernetes-validations" => non_zero(&e.value),
                _ => false,
            };
            if bad {
                self.shit(
                    &VALUE_VALIDATION,
                    e.key_pos,
                    format!("{path}{}", seg(&e.key)),
                    format!(
                        "{} must not be set inside allOf, anyOf, oneOf or not to be structural",
                        e.key
                    ),
                )
                .help = Some(format!(
                    "state {} in the schema itself; value validations may only add constraints",
                    e.key
                ));
            }
        }
        if let Some(e) = field(v, &["properties"]).and_then(|p| entry(p, "metadata")) {
            self.shit(
                &VALUE_VALIDATION,
                e.key_pos,
                format!("{path}.properties.metadata"),
                "properties.metadata must not be specified in a nested context",
            );
        }
    }

    /// Every property and items named in value validation `v` must be in structural node `s`.
    fn complete(&mut self, v: &Node, s: &Node, spath: &str, vpath: &str) {
        if !matches!(v.value, Value::Map(_)) || !matches!(s.value, Value::Map(_)) {
            return;
        }
        for (k, i, c) in clauses(v) {
            let p = match i {
                Some(i) => format!("{vpath}.{k}[{i}]"),
                None => format!("{vpath}.{k}"),
            };
            self.complete(c, s, spath, &p);
        }
        if let Some(vi) = field(v, &["items"]).filter(|i| matches!(i.value, Value::Map(_))) {
            match field(s, &["items"]).filter(|i| matches!(i.value, Value::Map(_))) {
                Some(si) => {
                    self.complete(vi, si, &format!("{spath}.items"), &format!("{vpath}.items"))
                }
                None => {
                    self.shit(
                        &VALUE_VALIDATION,
                        vi.pos,
                        format!("{spath}.items"),
                        format!("{spath}.items is required because it is defined in {vpath}.items"),
                    );
                }
            }
        }
        if let Some(vp) = field(v, &["properties"]) {
            for e in entries(vp) {
                let sp = format!("{spath}.properties{}", seg(&e.key));
                let vp = format!("{vpath}.properties{}", seg(&e.key));
                match field(s, &["properties", &e.key]) {
                    Some(sf) => self.complete(&e.value, sf, &sp, &vp),
                    None => {
                        self.shit(
                            &VALUE_VALIDATION,
                            e.key_pos,
                            sp.clone(),
                            format!("{sp} is required because it is defined in {vp}"),
                        )
                        .help = Some(
                            "declare the field (with its type) in the schema's properties as well"
                                .into(),
                        );
                    }
                }
            }
        }
    }

    fn check_columns(&mut self, versions: &[Version<'a>]) {
        let key = if self.v1 { "jsonPath" } else { "JSONPath" };
        let mut lists: Vec<(&'a [Node], String)> = Vec::new();
        if !self.v1 {
            lists.push((
                list_at(self.doc, &["spec", "additionalPrinterColumns"]),
                "spec.additionalPrinterColumns".into(),
            ));
        }
        for v in versions {
            if let Some(vn) = v.node {
                lists.push((
                    list_at(vn, &["additionalPrinterColumns"]),
                    format!("{}.additionalPrinterColumns", v.path),
                ));
            }
        }
        for (cols, base) in lists {
            for (i, c) in cols.iter().enumerate() {
                let p = format!("{base}[{i}]");
                let s = |k: &str| str_at(c, &[k]).unwrap_or("");
                let pos = |k: &str| pos_at(c, &[k]);
                let name = s("name");
                let label = if name.is_empty() {
                    format!("column {i}")
                } else {
                    format!("column {name:?}")
                };
                if name.is_empty() {
                    self.hit(
                        &PRINTER_COLUMN,
                        c.pos,
                        format!("{p}.name"),
                        format!("{label}: name is required"),
                    );
                }
                let t = s("type");
                if !COLUMN_TYPES.contains(&t) {
                    let what = if t.is_empty() {
                        "type is required".to_string()
                    } else {
                        format!("type {t:?} is not supported")
                    };
                    self.hit(
                        &PRINTER_COLUMN,
                        pos("type"),
                        format!("{p}.type"),
                        format!("{label}: {what}: must be one of {}", COLUMN_TYPES.join(",")),
                    );
                }
                let f = s("format");
                if !f.is_empty() && !COLUMN_FORMATS.contains(&f) {
                    self.hit(
                        &PRINTER_COLUMN,
                        pos("format"),
                        format!("{p}.format"),
                        format!(
                            "{label}: format {f:?} is not supported: must be one of {}",
                            COLUMN_FORMATS.join(",")
                        ),
                    );
                }
                let jp = s(key);
                if jp.is_empty() {
                    let mut msg = format!("{label}: {key} is required");
                    let other = if self.v1 { "JSONPath" } else { "jsonPath" };
                    if !s(other).is_empty() {
                        msg.push_str(&format!(
                            " ({other} is the spelling of the other API version)"
                        ));
                    }
                    self.hit(&PRINTER_COLUMN, c.pos, format!("{p}.{key}"), msg);
                } else if !jp.starts_with('.') {
                    self.hit(
                        &PRINTER_COLUMN,
                        pos(key),
                        format!("{p}.{key}"),
                        format!("{label}: {key} {jp:?} must be a simple json path starting with ."),
                    )
                    .help = Some("write it like .spec.replicas or .status.conditions[?(@.type==\"Ready\")].status".into());
                }
            }
        }
    }

    fn check_scale(&mut self, versions: &[Version<'a>]) {
        let mut subs: Vec<(&'a Node, String)> = Vec::new();
        if let Some(s) = field(self.doc, &["spec", "subresources", "scale"]).filter(|s| present(s))
        {
            subs.push((s, "spec.subresources.scale".into()));
        }
        for v in versions {
            if let Some(s) = v
                .node
                .and_then(|n| field(n, &["subresources", "scale"]))
                .filter(|s| present(s))
            {
                subs.push((s, format!("{}.subresources.scale", v.path)));
            }
        }
        for (s, base) in subs {
            for (k, prefixes, required) in [
                ("specReplicasPath", &[".spec."][..], true),
                ("statusReplicasPath", &[".status."][..], true),
                ("labelSelectorPath", &[".spec.", ".status."][..], false),
            ] {
                let v = str_at(s, &[k]).unwrap_or("");
                let pos = pos_at(s, &[k]);
                let p = format!("{base}.{k}");
                if v.is_empty() {
                    if required {
                        self.hit(
                            &SCALE_SUBRESOURCE,
                            pos,
                            p,
                            format!("scale subresource: {k} is required"),
                        );
                    }
                } else if !v.starts_with('.') {
                    self.hit(&SCALE_SUBRESOURCE, pos, p, format!("scale subresource: {k} {v:?} must be a simple json path starting with ."));
                } else if !prefixes.iter().any(|pre| v.starts_with(pre)) {
                    self.hit(
                        &SCALE_SUBRESOURCE,
                        pos,
                        p,
                        format!(
                            "scale subresource: {k} {v:?} should be a json path under {}",
                            prefixes.join(" or ").trim_end_matches('.')
                        ),
                    );
                }
            }
        }
    }

    fn check_per_version(&mut self, versions: &[Version<'a>]) {
        if self.v1 {
            return;
        }
        let nodes: Vec<(&'a Node, &str)> = versions
            .iter()
            .filter_map(|v| v.node.map(|n| (n, v.path.as_str())))
            .collect();
        let doc = self.doc;
        for (top, per, what) in [
            ("validation", "schema", "schemas"),
            ("subresources", "subresources", "subresources"),
            (
                "additionalPrinterColumns",
                "additionalPrinterColumns",
                "additionalPrinterColumns",
            ),
        ] {
            let set = |n: &Node, k: &str| field(n, &[k]).is_some_and(non_zero);
            let top_node = field(doc, &["spec", top]).filter(|n| present(n));
            let top_set = if top == "additionalPrinterColumns" {
                top_node.is_some_and(non_zero)
            } else {
                top_node.is_some()
            };
            let any_per = nodes.iter().any(|(n, _)| {
                if per == "additionalPrinterColumns" {
                    set(n, per)
                } else {
                    field(n, &[per]).is_some_and(present)
                }
            });
            if top_set && any_per {
                self.hit(
                    &PER_VERSION_CONFLICT,
                    top_node.map_or(doc.pos, |n| n.pos),
                    format!("spec.{top}"),
                    format!("top-level and per-version {what} are mutually exclusive"),
                )
                .help = Some(format!("keep either spec.{top} or spec.versions[*].{per}"));
            }
            let jsons: Vec<Option<String>> = nodes
                .iter()
                .map(|(n, _)| field(n, &[per]).filter(|x| non_zero(x)).map(Node::to_json))
                .collect();
            if let Some(Some(first)) = jsons.first()
                && jsons.iter().all(|j| j.as_ref() == Some(first))
            {
                let (n0, p0) = nodes[0];
                self.hit(
                    &PER_VERSION_CONFLICT,
                    pos_at(n0, &[per]),
                    format!("{p0}.{per}"),
                    format!("per-version {what} may not all be set to identical values (top-level {top} should be used instead)"),
                )
                .help = Some(format!("move it to spec.{top}"));
            }
        }
    }

    fn check_preserve_unknown(
        &mut self,
        puf_true: bool,
        schemas: &[(&'a Node, Pos, String, bool)],
    ) {
        let doc = self.doc;
        let node = field(doc, &["spec", "preserveUnknownFields"]);
        let pos = node.map_or(doc.pos, |n| n.pos);
        if self.v1 {
            if puf_true {
                self.hit(
                    &PRESERVE_UNKNOWN_FIELDS,
                    pos,
                    "spec.preserveUnknownFields",
                    "spec.preserveUnknownFields cannot be set to true in apiextensions.k8s.io/v1",
                )
                .help = Some("remove it and set x-kubernetes-preserve-unknown-fields: true in spec.versions[*].schema where unknown fields must be kept".into());
            }
            return;
        }
        if !puf_true {
            return;
        }
        if schemas
            .iter()
            .any(|(s, _, _, _)| schema_has(s, &|n| has_key(n, "default")))
        {
            self.hit(
                &PRESERVE_UNKNOWN_FIELDS,
                pos,
                "spec.preserveUnknownFields",
                "spec.preserveUnknownFields must be false in order to use defaults in the schema (it defaults to true in v1beta1)",
            )
            .help = Some("set spec.preserveUnknownFields: false".into());
        }
        let strategy = str_at(doc, &["spec", "conversion", "strategy"]).unwrap_or("None");
        if strategy != "None" && !strategy.is_empty() {
            let spos = field(doc, &["spec", "conversion", "strategy"]).map_or(pos, |n| n.pos);
            self.hit(
                &PRESERVE_UNKNOWN_FIELDS,
                spos,
                "spec.conversion.strategy",
                format!("spec.conversion.strategy must be None if spec.preserveUnknownFields is true (it defaults to true in v1beta1), not {strategy:?}"),
            )
            .help = Some("set spec.preserveUnknownFields: false".into());
        }
    }

    fn check_conversion(&mut self) {
        let doc = self.doc;
        let Some(conv) = field(doc, &["spec", "conversion"]).filter(|c| present(c)) else {
            return;
        };
        let base = "spec.conversion";
        let strategy = str_at(conv, &["strategy"]).unwrap_or("");
        let spos = pos_at(conv, &["strategy"]);
        if strategy.is_empty() {
            self.hit(
                &CONVERSION,
                conv.pos,
                format!("{base}.strategy"),
                "spec.conversion.strategy is required",
            )
            .help = Some("set strategy: None, or Webhook with a webhook configuration".into());
            return;
        }
        if strategy != "None" && strategy != "Webhook" {
            self.hit(
                &CONVERSION,
                spos,
                format!("{base}.strategy"),
                format!("spec.conversion.strategy {strategy:?} is not supported: expected \"None\" or \"Webhook\""),
            );
            return;
        }
        let (cc, cc_path, crv, crv_path) = if self.v1 {
            (
                field(conv, &["webhook", "clientConfig"]),
                format!("{base}.webhook.clientConfig"),
                field(conv, &["webhook", "conversionReviewVersions"]),
                format!("{base}.webhook.conversionReviewVersions"),
            )
        } else {
            (
                field(conv, &["webhookClientConfig"]),
                format!("{base}.webhookClientConfig"),
                field(conv, &["conversionReviewVersions"]),
                format!("{base}.conversionReviewVersions"),
            )
        };
        let cc = cc.filter(|c| present(c));
        let crv = crv.filter(|c| present(c));
        if strategy == "None" {
            if let Some(c) = cc {
                self.hit(
                    &CONVERSION,
                    c.pos,
                    cc_path,
                    "webhook client config should not be set when strategy is not set to Webhook",
                );
            }
            if let Some(c) = crv.filter(|c| non_zero(c)) {
                self.hit(&CONVERSION, c.pos, crv_path, "conversionReviewVersions should not be set when strategy is not set to Webhook");
            }
            return;
        }
        match cc {
            None => {
                self.hit(
                    &CONVERSION,
                    spos,
                    cc_path,
                    "a webhook client config is required when strategy is set to Webhook",
                )
                .help = Some(if self.v1 {
                    "set spec.conversion.webhook.clientConfig.service (OLM points it at the operator's conversion webhook)".into()
                } else {
                    "set spec.conversion.webhookClientConfig.service".into()
                });
            }
            Some(c) => {
                let url = field(c, &["url"]).filter(|u| present(u));
                let svc = field(c, &["service"]).filter(|s| present(s));
                match (url, svc) {
                    (Some(_), Some(_)) | (None, None) => {
                        self.hit(&CONVERSION, c.pos, cc_path, "exactly one of url or service is required in the webhook client config");
                    }
                    (Some(u), None) => {
                        let s = u.as_str().unwrap_or("");
                        let problem = if !s.starts_with("https://") {
                            Some("'https' is the only allowed URL scheme")
                        } else if s.contains('#') {
                            Some("fragments are not permitted in the URL")
                        } else if s.contains('?') {
                            Some("query parameters are not permitted in the URL")
                        } else if s["https://".len()..]
                            .split('/')
                            .next()
                            .is_some_and(|h| h.contains('@'))
                        {
                            Some("user information is not permitted in the URL")
                        } else if s["https://".len()..]
                            .split('/')
                            .next()
                            .is_none_or(str::is_empty)
                        {
                            Some("host must be specified")
                        } else {
                            None
                        };
                        if let Some(p) = problem {
                            self.hit(
                                &CONVERSION,
                                u.pos,
                                format!("{cc_path}.url"),
                                format!("webhook url {s:?}: {p}"),
                            );
                        }
                    }
                    (None, Some(sv)) => {
                        for k in ["name", "namespace"] {
                            if str_at(sv, &[k]).is_none_or(str::is_empty) {
                                self.hit(
                                    &CONVERSION,
                                    sv.pos,
                                    format!("{cc_path}.service.{k}"),
                                    format!("webhook service {k} is required"),
                                );
                            }
                        }
                        if let Some(p) = field(sv, &["path"]).and_then(Node::as_str)
                            && !p.is_empty()
                            && !p.starts_with('/')
                        {
                            self.hit(
                                &CONVERSION,
                                key_pos(sv, "path"),
                                format!("{cc_path}.service.path"),
                                format!("webhook service path {p:?} must start with a '/'"),
                            );
                        }
                        if let Some(Value::Number(n)) = field(sv, &["port"]).map(|p| &p.value)
                            && !(1.0..=65535.0).contains(n)
                        {
                            self.hit(
                                &CONVERSION,
                                key_pos(sv, "port"),
                                format!("{cc_path}.service.port"),
                                format!("webhook service port {n} must be between 1 and 65535, inclusive"),
                            );
                        }
                    }
                }
            }
        }
        // v1beta1 defaults conversionReviewVersions to [v1beta1].
        if crv.is_none() && !self.v1 {
            return;
        }
        let list = crv.map_or(&[][..], |c| match &c.value {
            Value::Seq(v) => v.as_slice(),
            _ => &[],
        });
        let cpos = crv.map_or(spos, |c| c.pos);
        if list.is_empty() {
            self.hit(
                &CONVERSION,
                cpos,
                crv_path,
                "conversionReviewVersions is required when strategy is set to Webhook",
            )
            .help = Some(
                "list the ConversionReview versions the webhook understands, e.g. [v1]".into(),
            );
            return;
        }
        let mut seen = BTreeSet::new();
        let mut accepted = false;
        for (i, n) in list.iter().enumerate() {
            let v = n.as_str().unwrap_or("");
            if !seen.insert(v) {
                self.hit(
                    &CONVERSION,
                    n.pos,
                    format!("{crv_path}[{i}]"),
                    format!("conversionReviewVersions: duplicate version {v:?}"),
                );
                continue;
            }
            for p in dns1035_label(v) {
                self.hit(
                    &CONVERSION,
                    n.pos,
                    format!("{crv_path}[{i}]"),
                    format!("conversionReviewVersions: {v:?} is invalid: {p}"),
                );
            }
            accepted |= v == "v1" || v == "v1beta1";
        }
        if !accepted {
            self.hit(
                &CONVERSION,
                cpos,
                crv_path,
                "conversionReviewVersions must include at least one of v1, v1beta1",
            );
        }
    }
}

/// The value-validation clauses of a schema: `allOf[i]`, `anyOf[i]`, `oneOf[i]`, `not`.
fn clauses(s: &Node) -> Vec<(&'static str, Option<usize>, &Node)> {
    let mut out = Vec::new();
    for k in ["allOf", "anyOf", "oneOf"] {
        for (i, c) in list_at(s, &[k]).iter().enumerate() {
            out.push((k, Some(i), c));
        }
    }
    if let Some(n) = field(s, &["not"]).filter(|n| present(n)) {
        out.push(("not", None, n));
    }
    out
}

/// `anyOf: [{type: integer}, {type: string}]` and nothing else in the clauses (the int-or-string
/// pattern the structural rules allow).
fn is_int_or_string_any_of(s: &Node) -> bool {
    let any = list_at(s, &["anyOf"]);
    let only_type = |n: &Node, t: &str| {
        let es = entries(n);
        es.len() == 1 && es[0].key == "type" && es[0].value.as_str() == Some(t)
    };
    any.len() == 2 && only_type(&any[0], "integer") && only_type(&any[1], "string")
}

/// Whether `s` or any schema below it satisfies `pred`.
fn schema_has(s: &Node, pred: &dyn Fn(&Node) -> bool) -> bool {
    if !matches!(s.value, Value::Map(_)) {
        return false;
    }
    if pred(s) {
        return true;
    }
    for e in entries(s) {
        let hit = match e.key.as_str() {
            "items" => match &e.value.value {
                Value::Seq(v) => v.iter().any(|x| schema_has(x, pred)),
                _ => schema_has(&e.value, pred),
            },
            "allOf" | "anyOf" | "oneOf" => match &e.value.value {
                Value::Seq(v) => v.iter().any(|x| schema_has(x, pred)),
                _ => false,
            },
            "not" | "additionalProperties" | "additionalItems" => schema_has(&e.value, pred),
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                entries(&e.value).iter().any(|x| schema_has(&x.value, pred))
            }
            _ => false,
        };
        if hit {
            return true;
        }
    }
    false
}

fn has_kubernetes_extension(s: &Node) -> bool {
    is_true(s, "x-kubernetes-embedded-resource")
        || field(s, &["x-kubernetes-preserve-unknown-fields"]).is_some_and(present)
        || is_true(s, "x-kubernetes-int-or-string")
        || field(s, &["x-kubernetes-list-map-keys"]).is_some_and(non_zero)
        || field(s, &["x-kubernetes-list-type"]).is_some_and(present)
        || field(s, &["x-kubernetes-validations"]).is_some_and(non_zero)
}

/// Object entries in source order, the last of repeated keys only.
fn entries(n: &Node) -> Vec<&Entry> {
    match &n.value {
        Value::Map(es) => es
            .iter()
            .enumerate()
            .filter(|(i, e)| !es.iter().skip(i + 1).any(|l| l.key == e.key))
            .map(|(_, e)| e)
            .collect(),
        _ => Vec::new(),
    }
}

fn entry<'n>(n: &'n Node, key: &str) -> Option<&'n Entry> {
    match &n.value {
        Value::Map(es) => es.iter().rev().find(|e| e.key == key),
        _ => None,
    }
}

/// The entry `key` of the object at `path`.
fn entry_at<'n>(n: &'n Node, path: &[&str], key: &str) -> Option<&'n Entry> {
    entry(field(n, path)?, key)
}

fn key_pos(n: &Node, key: &str) -> Pos {
    entry(n, key).map_or(n.pos, |e| e.key_pos)
}

fn has_key(n: &Node, key: &str) -> bool {
    entry(n, key).is_some_and(|e| present(&e.value))
}

fn is_true(n: &Node, key: &str) -> bool {
    matches!(field(n, &[key]).map(|v| &v.value), Some(Value::Bool(true)))
}

/// Not null.
fn present(n: &Node) -> bool {
    !matches!(n.value, Value::Null)
}

/// Not Go's zero value (null, false, 0, "", empty list or object).
fn non_zero(n: &Node) -> bool {
    match &n.value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(x) => *x != 0.0,
        Value::Str(s) => !s.is_empty(),
        Value::Seq(v) => !v.is_empty(),
        Value::Map(m) => !m.is_empty(),
    }
}

/// A JSON path step for object key `k`.
fn seg(k: &str) -> String {
    let plain = k
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '$');
    if plain {
        format!(".{k}")
    } else {
        let mut s = String::from("[");
        crate::fbc::node::write_json_string(&mut s, k);
        s.push(']');
        s
    }
}

fn label_ok(l: &str, first_alpha: bool) -> bool {
    let b = l.as_bytes();
    let (Some(f), Some(z)) = (b.first(), b.last()) else {
        return false;
    };
    let first_ok = if first_alpha {
        f.is_ascii_lowercase()
    } else {
        f.is_ascii_lowercase() || f.is_ascii_digit()
    };
    first_ok
        && (z.is_ascii_lowercase() || z.is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

/// The Kubernetes messages for a DNS-1035 label.
fn dns1035_label(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    if s.len() > 63 {
        out.push("must be no more than 63 characters".to_string());
    }
    if !label_ok(s, true) {
        out.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123')".to_string());
    }
    out
}
