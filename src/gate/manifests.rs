//! The objects an InstallPlan is about to apply: `status.plan[].resource.manifest` holds either
//! the object itself (compact JSON) or a reference to the unpacked-bundle ConfigMap, which the
//! gate follows as OLM does (operator.md §3.5):
//!
//! - a reference is JSON with `kind: ConfigMap` and non-empty `name`, `namespace`,
//!   `catalogSourceName` and `catalogSourceNamespace`; anything else is the object;
//! - the ConfigMap's files are in `binaryData` as base64(base64(gzip(file))) when annotated
//!   `olm.contentEncoding: gzip+base64`, else plain in `data`; each file is decoded as a YAML or
//!   JSON object (files that are not objects are skipped), keys in sorted order;
//! - the step's object is the bundle object with the step's kind and name; the CSV gets OLM's
//!   rewrites: `metadata.namespace` (the plan's), `spec.replaces` and the
//!   `operatorframework.io/properties` annotation from the reference.
//!
//! Missing content is an error (the gate holds the plan), never a guess.
//!
//! Decoding is bounded, since a ConfigMap of 1 MiB can inflate to gigabytes and the operator
//! must not be OOM-killed in a loop by one bundle of a catalog: each file may inflate to
//! [`MAX_FILE_INFLATED`], a ConfigMap's files together to [`MAX_CONFIGMAP_INFLATED`] and hold
//! [`MAX_CONFIGMAP_NODES`] parsed nodes, and all ConfigMaps of one evaluation together to
//! [`MAX_SNAPSHOT_INFLATED`] ([`InflateBudget`]). Of the 304 fixture bundles the largest
//! (observability-operator 0.0.28) has 2.67 MB of manifests, the largest file is 597 KB and
//! the most nodes are 58,104: the ConfigMap budget is 6.3x that bundle, the file budget 14x
//! that file, the node budget 17x (a test measures them again). A bundle over a budget is refused with a reason naming the ConfigMap, the
//! key and the budget, which the gate turns into a hold (GATE004), never a crash.

use std::io::Read;
use std::sync::{Arc, OnceLock};

pub use super::budget::{
    InflateBudget, MAX_CONFIGMAP_INFLATED, MAX_CONFIGMAP_NODES, MAX_FILE_INFLATED,
    MAX_SNAPSHOT_INFLATED,
};
use super::objects::{Object, Objects};
use crate::bundle::load::str_at;
use crate::fbc::node::{Node, Value};

/// Step kinds OLM synthesizes from the CSV's install strategy (not files of the bundle).
pub const RBAC: [&str; 5] = [
    "ServiceAccount",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
];

/// The reference fields of a manifest, when it is one.
struct Reference {
    name: String,
    namespace: String,
    replaces: String,
    properties: String,
}

fn reference(m: &Node) -> Option<Reference> {
    let s = |k: &str| str_at(m, &[k]).unwrap_or_default().to_string();
    if str_at(m, &["kind"]) != Some("ConfigMap") {
        return None;
    }
    let r = Reference {
        name: s("name"),
        namespace: s("namespace"),
        replaces: s("replaces"),
        properties: s("properties"),
    };
    let complete = !r.name.is_empty()
        && !r.namespace.is_empty()
        && !s("catalogSourceName").is_empty()
        && !s("catalogSourceNamespace").is_empty();
    complete.then_some(r)
}

/// The unpacked-bundle ConfigMap (namespace, name) that a step's manifest text references, when
/// it is a reference (the operator fetches those ConfigMaps before it decides).
pub fn referenced_config_map(manifest: &str) -> Option<(String, String)> {
    let mut first = None;
    crate::fbc::json::parse_stream(manifest, |d| {
        if first.is_none() {
            first = Some(d);
        }
    })
    .ok()?;
    let r = reference(&first?)?;
    Some((r.namespace, r.name))
}

/// The string entries of `section` (`binaryData` or `data`) of a ConfigMap, sorted by key.
fn files<'a>(cm: &'a Object, section: &str) -> Vec<(&'a str, &'a str)> {
    let mut files: Vec<(&str, &str)> =
        match crate::bundle::load::field(&cm.node, &[section]).map(|n| &n.value) {
            Some(Value::Map(entries)) => entries
                .iter()
                .filter_map(|e| match &e.value.value {
                    Value::Str(v) => Some((e.key.as_str(), v.as_str())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        };
    files.sort();
    files
}

fn nodes(n: &Node) -> u64 {
    1 + match &n.value {
        Value::Map(entries) => entries.iter().map(|e| 1 + nodes(&e.value)).sum(),
        Value::Seq(items) => items.iter().map(nodes).sum(),
        _ => 0,
    }
}

/// Inflates one gzip file within `limit` bytes; `Err` names what was exceeded.
fn inflate(gz: &[u8], limit: u64, what: &dyn Fn() -> String) -> Result<String, String> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .take(limit + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("{}: {e}", what()))?;
    if out.len() as u64 > limit {
        return Err(format!(
            "{}: inflates to more than {}; the bundle is refused (real bundles need a few MB)",
            what(),
            crate::input::human_size(limit)
        ));
    }
    String::from_utf8(out).map_err(|_| format!("{}: not UTF-8 text", what()))
}

fn decode_file(
    cm: &Object,
    key: &str,
    raw: &str,
    gzip: bool,
    limit: u64,
) -> Result<String, String> {
    let what = || format!("ConfigMap {}/{} key {key}", cm.namespace(), cm.name());
    if !gzip {
        return Ok(raw.to_string());
    }
    let b64 = crate::encoding::decode_forgiving(raw.trim())
        .map_err(|_| format!("{}: not base64", what()))?;
    let b64 = String::from_utf8(b64)
        .map_err(|_| format!("{}: inner content is not base64 text", what()))?;
    let gz = crate::encoding::decode_forgiving(b64.trim())
        .map_err(|_| format!("{}: inner content is not base64", what()))?;
    inflate(&gz, limit, &what)
}

/// The bundle objects of an unpacked-bundle ConfigMap, in key order, within the budgets of
/// the module documentation (`snapshot`: what is left of the evaluation's).
pub fn bundle_objects(cm: &Object, snapshot: &InflateBudget) -> Result<Vec<Node>, String> {
    let gzip = str_at(
        &cm.node,
        &["metadata", "annotations", "olm.contentEncoding"],
    ) == Some("gzip+base64");
    let section = if gzip { "binaryData" } else { "data" };
    let files = files(cm, section);
    let what = || format!("ConfigMap {}/{}", cm.namespace(), cm.name());
    let mut out = Vec::new();
    let (mut inflated, mut parsed) = (0u64, 0u64);
    for (key, raw) in files {
        let limit = MAX_FILE_INFLATED.min(MAX_CONFIGMAP_INFLATED - inflated);
        let text = decode_file(cm, key, raw, gzip, limit).map_err(|e| {
            if limit < MAX_FILE_INFLATED {
                format!(
                    "{e} (the files of {} may inflate to {} together)",
                    what(),
                    crate::input::human_size(MAX_CONFIGMAP_INFLATED)
                )
            } else {
                e
            }
        })?;
        inflated += text.len() as u64;
        if !snapshot.take(text.len() as u64) {
            return Err(format!(
                "{}: {SNAPSHOT_REFUSAL} inflate to more than {} together; the bundle is refused",
                what(),
                crate::input::human_size(MAX_SNAPSHOT_INFLATED)
            ));
        }
        if let Ok(Some(n)) = crate::fbc::yaml::first_document(&text)
            && str_at(&n, &["kind"]).is_some()
        {
            parsed += nodes(&n);
            if parsed > MAX_CONFIGMAP_NODES {
                return Err(format!(
                    "{} key {key}: the files parse to more than {MAX_CONFIGMAP_NODES} nodes; the bundle is refused",
                    what()
                ));
            }
            out.push(n);
        }
    }
    Ok(out)
}

impl Object {
    /// The bundle objects of this unpacked-bundle ConfigMap, decoded on first use within
    /// `budget` (the evaluation's, [`Objects::inflate`]).
    pub fn bundle_objects(&self, budget: &InflateBudget) -> Result<&[Node], String> {
        self.bundle
            .get_or_init(|| bundle_objects(self, budget))
            .as_deref()
            .map_err(Clone::clone)
    }

    /// Shares `decoded` as this ConfigMap's decoded bundle (a cache of decodings by content,
    /// [`content_key`]): the first user decodes, every later one reads.
    pub fn share_bundle(&mut self, decoded: Arc<OnceLock<Result<Vec<Node>, String>>>) {
        self.bundle = decoded;
    }
}

/// The marker of the one refusal that depends on the other ConfigMaps of an evaluation (not
/// cached by [`DecodeCache`]).
const SNAPSHOT_REFUSAL: &str = "the unpacked bundles of this evaluation";

/// A ConfigMap's decoded bundle, shared by every [`Object`] of the same content.
pub type Decoded = Arc<OnceLock<Result<Vec<Node>, String>>>;

/// The identity of an unpacked-bundle ConfigMap's content: SHA-256 over its encoding
/// annotation and its files (key and value, in key order). ConfigMaps with the same key decode
/// to the same objects.
pub fn content_key(cm: &Object) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    let enc = str_at(
        &cm.node,
        &["metadata", "annotations", "olm.contentEncoding"],
    )
    .unwrap_or("");
    h.update((enc.len() as u64).to_le_bytes());
    h.update(enc.as_bytes());
    for section in ["binaryData", "data"] {
        h.update((section.len() as u64).to_le_bytes());
        h.update(section.as_bytes());
        for (k, v) in files(cm, section) {
            for part in [k, v] {
                h.update((part.len() as u64).to_le_bytes());
                h.update(part.as_bytes());
            }
        }
    }
    h.finalize().into()
}

/// Decoded unpacked bundles by [`content_key`], kept across evaluations (the operator's), so
/// that a ConfigMap is decoded once per content however often its plans are judged: a bundle
/// refused for its size is not inflated again on every reconcile. Bounded: entries not used
/// by the latest [`DecodeCache::share`] are evicted, least recently used first, beyond
/// [`DecodeCache::CAPACITY`] entries or [`DecodeCache::MAX_NODES`] parsed nodes in all.
#[derive(Debug, Default)]
pub struct DecodeCache {
    entries: std::collections::BTreeMap<[u8; 32], CacheEntry>,
    tick: u64,
    /// Decodings started by [`DecodeCache::share`] (entries created).
    pub created: u64,
}

#[derive(Debug)]
struct CacheEntry {
    last: u64,
    decoded: Decoded,
    weight: Option<u64>,
}

impl DecodeCache {
    /// Entries kept at most.
    pub const CAPACITY: usize = 16;
    /// Parsed nodes kept in all (twice what one ConfigMap may hold).
    pub const MAX_NODES: u64 = 2 * MAX_CONFIGMAP_NODES;

    /// Makes every ConfigMap of `objects` share the decoding of its content (new contents get
    /// an empty cell that the first use fills), then evicts what is over the bounds.
    pub fn share(&mut self, objects: &mut Objects) {
        self.tick += 1;
        let tick = self.tick;
        for cm in &mut objects.config_maps {
            let key = content_key(cm);
            let stale = self.entries.get(&key).is_some_and(
                |e| matches!(e.decoded.get(), Some(Err(m)) if m.contains(SNAPSHOT_REFUSAL)),
            );
            if stale {
                self.entries.remove(&key);
            }
            let created = &mut self.created;
            let e = self.entries.entry(key).or_insert_with(|| {
                *created += 1;
                CacheEntry {
                    last: tick,
                    decoded: Decoded::default(),
                    weight: None,
                }
            });
            e.last = tick;
            cm.share_bundle(e.decoded.clone());
        }
        self.evict();
    }

    fn evict(&mut self) {
        for e in self.entries.values_mut() {
            if e.weight.is_none() {
                e.weight = e.decoded.get().map(|r| match r {
                    Ok(objs) => objs.iter().map(nodes).sum::<u64>().max(1),
                    Err(_) => 1,
                });
            }
        }
        loop {
            let total: u64 = self.entries.values().map(|e| e.weight.unwrap_or(0)).sum();
            if self.entries.len() <= Self::CAPACITY && total <= Self::MAX_NODES {
                return;
            }
            let oldest = self
                .entries
                .iter()
                .filter(|(_, e)| e.last < self.tick)
                .min_by_key(|(_, e)| e.last)
                .map(|(k, _)| *k);
            match oldest {
                Some(k) => {
                    self.entries.remove(&k);
                }
                None => return,
            }
        }
    }

    /// Entries kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Sets the string at `path` (objects created where missing).
fn set(n: &mut Node, path: &[&str], value: &str) {
    if let Some((last, parents)) = path.split_last() {
        crate::bundle::tree::set(
            crate::bundle::tree::ensure_obj(n, parents),
            last,
            crate::bundle::tree::s(value),
        );
    }
}

/// The object step `step` of `plan` applies, from its inline manifest or the unpacked bundle.
pub fn step_object(plan: &Object, step: &Node, objects: &Objects) -> Result<Node, String> {
    let kind = str_at(step, &["resource", "kind"]).unwrap_or_default();
    let name = str_at(step, &["resource", "name"]).unwrap_or_default();
    let manifest = str_at(step, &["resource", "manifest"])
        .filter(|m| !m.trim().is_empty())
        .ok_or_else(|| format!("step {kind} {name} has no manifest yet"))?;
    let mut parsed = None;
    crate::fbc::json::parse_object_stream(manifest, |n| {
        if parsed.is_none() {
            parsed = Some(n);
        }
    })
    .map_err(|e| format!("step {kind} {name}: manifest is not JSON: {}", e.message))?;
    let m = parsed.ok_or_else(|| format!("step {kind} {name}: empty manifest"))?;
    let Some(r) = reference(&m) else {
        return Ok(m);
    };
    let cm = objects
        .config_maps
        .iter()
        .find(|c| c.name() == r.name && c.namespace() == r.namespace)
        .ok_or_else(|| {
            format!(
                "error finding unpacked bundle configmap {}/{} for step {kind} {name}",
                r.namespace, r.name
            )
        })?;
    let mut obj = cm
        .bundle_objects(&objects.inflate)?
        .iter()
        .find(|o| {
            str_at(o, &["kind"]) == Some(kind) && str_at(o, &["metadata", "name"]) == Some(name)
        })
        .cloned()
        .ok_or_else(|| {
            if RBAC.contains(&kind) {
                format!("step {kind} {name} is synthesized by OLM from the CSV's install strategy; it is not a bundle file")
            } else {
                format!(
                    "couldn't find unpacked step for {kind} {name} in ConfigMap {}/{}",
                    r.namespace, r.name
                )
            }
        })?;
    if kind == "ClusterServiceVersion" {
        set(&mut obj, &["metadata", "namespace"], plan.namespace());
        set(&mut obj, &["spec", "replaces"], &r.replaces);
        set(
            &mut obj,
            &["metadata", "annotations", "operatorframework.io/properties"],
            &r.properties,
        );
    }
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every step of the example plan resolves; the CSV from the ConfigMap carries OLM's
    /// rewrites and equals the new CSV on the cluster where both set the same fields.
    #[test]
    fn the_example_plan_resolves() {
        let o = super::super::objects::example_objects();
        let plan = &o.install_plans[0];
        let steps = crate::bundle::load::list_at(&plan.node, &["status", "plan"]);
        assert!(!steps.is_empty());
        let mut kinds = Vec::new();
        let mut csv_checked = 0;
        for s in steps {
            let kind = str_at(s, &["resource", "kind"]).unwrap_or_default();
            let by_ref = str_at(s, &["resource", "manifest"])
                .is_some_and(|m| m.contains("\"kind\":\"ConfigMap\""));
            if RBAC.contains(&kind) && by_ref {
                let e = step_object(plan, s, &o).expect_err("RBAC is synthesized");
                assert!(e.contains("synthesized by OLM"), "{e}");
                continue;
            }
            let obj = step_object(plan, s, &o).unwrap_or_else(|e| panic!("{e}"));
            kinds.push(kind.to_string());
            if str_at(s, &["resource", "kind"]) == Some("ClusterServiceVersion")
                && str_at(s, &["resource", "name"]) == Some("acme-db-operator.v1.5.0")
            {
                assert_eq!(
                    str_at(&obj, &["metadata", "namespace"]),
                    Some(plan.namespace())
                );
                assert_eq!(
                    str_at(&obj, &["spec", "replaces"]),
                    Some("acme-db-operator.v1.4.2")
                );
                csv_checked += 1;
                assert!(
                    str_at(
                        &obj,
                        &["metadata", "annotations", "operatorframework.io/properties"]
                    )
                    .is_some_and(|p| p.contains("olm.package"))
                );
                assert_eq!(str_at(&obj, &["spec", "version"]), Some("1.5.0"));
            }
        }
        assert_eq!(
            csv_checked, 1,
            "the new CSV's step was resolved and checked"
        );
        assert!(
            kinds.iter().any(|k| k == "CustomResourceDefinition"),
            "{kinds:?}"
        );
    }

    #[test]
    fn missing_content_is_an_error() {
        let o = super::super::objects::example_objects();
        let plan = &o.install_plans[0];
        let step_of = |m: &str| -> Node {
            let text =
                format!("resource: {{kind: ClusterServiceVersion, name: x, manifest: {m:?}}}\n");
            let mut n = None;
            crate::fbc::yaml::parse_documents(&text, |d| n = Some(d)).expect("yaml");
            n.expect("doc")
        };
        let e = step_object(plan, &step_of(""), &o).expect_err("no manifest");
        assert!(e.contains("no manifest yet"), "{e}");
        let r = r#"{"kind":"ConfigMap","name":"nope","namespace":"olm","catalogSourceName":"c","catalogSourceNamespace":"olm","replaces":"","properties":""}"#;
        let e = step_object(plan, &step_of(r), &o).expect_err("no configmap");
        assert!(
            e.contains("error finding unpacked bundle configmap olm/nope"),
            "{e}"
        );
        // Inline: the object itself.
        let inline =
            step_object(plan, &step_of(r#"{"metadata":{"name":"x"}}"#), &o).expect("inline");
        assert_eq!(str_at(&inline, &["metadata", "name"]), Some("x"));
        let e = step_object(plan, &step_of("{not json"), &o).expect_err("broken");
        assert!(e.contains("not JSON"), "{e}");
    }

    /// The budgets against the fixtures' bundles: every one decodes within them, with room.
    #[test]
    fn the_budgets_hold_every_fixture_bundle_with_room() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/operators");
        let (mut most_bytes, mut largest_file, mut most_nodes) = (0u64, 0u64, 0u64);
        let mut bundles = 0;
        for pkg in std::fs::read_dir(&root).expect("fixtures") {
            for ver in std::fs::read_dir(pkg.expect("pkg").path()).expect("versions") {
                let dir = ver.expect("ver").path().join("manifests");
                let Ok(files) = std::fs::read_dir(&dir) else {
                    continue;
                };
                bundles += 1;
                let (mut bytes, mut n) = (0u64, 0u64);
                for f in files {
                    let text = std::fs::read_to_string(f.expect("file").path()).expect("text");
                    bytes += text.len() as u64;
                    largest_file = largest_file.max(text.len() as u64);
                    if let Ok(Some(doc)) = crate::fbc::yaml::first_document(&text) {
                        n += nodes(&doc);
                    }
                }
                most_bytes = most_bytes.max(bytes);
                most_nodes = most_nodes.max(n);
            }
        }
        eprintln!(
            "{bundles} bundles: at most {most_bytes} bytes, {largest_file} in one file, {most_nodes} nodes"
        );
        assert!(bundles > 20, "{bundles}");
        assert!(MAX_CONFIGMAP_INFLATED >= 5 * most_bytes, "{most_bytes}");
        assert!(MAX_FILE_INFLATED >= 5 * largest_file, "{largest_file}");
        assert!(MAX_CONFIGMAP_NODES >= 5 * most_nodes, "{most_nodes}");
    }

    fn gz_b64(text: &[u8]) -> String {
        use std::io::Write;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(text).expect("gzip");
        let b = crate::encoding::base64;
        b(b(&e.finish().expect("gzip")).as_bytes())
    }

    fn config_map(files: &[(&str, String)]) -> Object {
        let data: serde_json::Map<String, serde_json::Value> = files
            .iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone())))
            .collect();
        let cm = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "bomb", "namespace": "olm",
                "annotations": {"olm.contentEncoding": "gzip+base64"}},
            "binaryData": data});
        let mut o = Objects::default();
        o.add_text(
            std::path::Path::new("cluster/ConfigMap/olm/bomb"),
            &cm.to_string(),
        )
        .expect("object");
        o.config_maps.remove(0)
    }

    /// A key that inflates beyond its budget, keys beyond the ConfigMap's together, files
    /// that parse to too many nodes, and ConfigMaps beyond the evaluation's budget are each
    /// refused with a reason that names the ConfigMap and the budget.
    #[test]
    fn bombs_are_refused_with_their_budget_named() {
        let budget = InflateBudget::default;
        let zeros = |n: usize| gz_b64(&vec![b' '; n]);
        let one = config_map(&[("a", zeros(64 << 20))]);
        let e = bundle_objects(&one, &budget()).expect_err("one key too big");
        assert!(
            e.starts_with("ConfigMap olm/bomb key a: inflates to more than 8 MiB"),
            "{e}"
        );
        let keys: Vec<(String, String)> =
            (0..3).map(|i| (format!("k{i}"), zeros(7 << 20))).collect();
        let keys: Vec<(&str, String)> = keys.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        let e = bundle_objects(&config_map(&keys), &budget()).expect_err("together too big");
        assert!(e.contains("key k2: inflates to more than"), "{e}");
        assert!(e.contains("may inflate to 16 MiB together"), "{e}");
        let wide = format!("kind: X\nitems: [{}]\n", "1,".repeat(1_100_000));
        let e = bundle_objects(&config_map(&[("w", gz_b64(wide.as_bytes()))]), &budget())
            .expect_err("too many nodes");
        assert!(e.contains("more than 1000000 nodes"), "{e}");
        // Two ConfigMaps of 5 MiB each under a snapshot budget of 8 MiB.
        let small = InflateBudget::new(8 << 20);
        let doc = |n: usize| format!("kind: X\nv: {}\n", "a".repeat(n));
        let first = config_map(&[("a", gz_b64(doc(5 << 20).as_bytes()))]);
        assert_eq!(bundle_objects(&first, &small).expect("fits").len(), 1);
        let e = bundle_objects(&first, &small).expect_err("snapshot budget");
        assert!(
            e.contains("the unpacked bundles of this evaluation inflate to more than 48 MiB"),
            "{e}"
        );
    }

    /// One decoding per content across evaluations; a refusal for the evaluation's budget is
    /// decided again next time; the cache stays within its bounds.
    #[test]
    fn a_content_is_decoded_once_across_evaluations() {
        let bomb = gz_b64(&vec![b' '; 9 << 20]);
        let mut cache = DecodeCache::default();
        let evaluation = |cache: &mut DecodeCache| {
            let mut o = Objects::default();
            o.config_maps.push(config_map(&[("a", bomb.clone())]));
            cache.share(&mut o);
            let first = o.config_maps[0].bundle_objects(&o.inflate).map(|v| v.len());
            (first, o)
        };
        let (r1, o1) = evaluation(&mut cache);
        assert!(
            r1.expect_err("refused")
                .contains("inflates to more than 8 MiB")
        );
        let (r2, o2) = evaluation(&mut cache);
        assert!(r2.is_err());
        assert_eq!(cache.created, 1, "decoded once");
        assert_eq!(
            o1.inflate.left(),
            MAX_SNAPSHOT_INFLATED,
            "nothing taken from either budget"
        );
        assert_eq!(o2.inflate.left(), MAX_SNAPSHOT_INFLATED);
        // A refusal for the evaluation's budget is not kept.
        let doc = gz_b64(b"kind: X\nv: 1\n");
        let mut o = Objects {
            inflate: Arc::new(InflateBudget::new(4)),
            ..Objects::default()
        };
        o.config_maps.push(config_map(&[("a", doc.clone())]));
        cache.share(&mut o);
        assert!(o.config_maps[0].bundle_objects(&o.inflate).is_err());
        let mut o = Objects::default();
        o.config_maps.push(config_map(&[("a", doc)]));
        cache.share(&mut o);
        assert_eq!(
            o.config_maps[0]
                .bundle_objects(&o.inflate)
                .expect("decoded")
                .len(),
            1
        );
        assert_eq!(cache.created, 3);
        // Bounded: the entries of earlier evaluations go beyond the capacity.
        for i in 0..40 {
            let mut o = Objects::default();
            o.config_maps.push(config_map(&[(
                "a",
                gz_b64(format!("kind: X\nv: {i}\n").as_bytes()),
            )]));
            cache.share(&mut o);
            let _ = o.config_maps[0].bundle_objects(&o.inflate);
        }
        assert_eq!(cache.len(), DecodeCache::CAPACITY);
    }
}
