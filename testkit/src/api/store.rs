//! The object store: objects by group, resource, namespace and name, one resourceVersion
//! counter for everything (etcd's revision), and a bounded history of changes that watches
//! replay from (the watch cache; a watch from before its window gets `410 Expired`, R2.7).
//!
//! What the registry strategies do on every write is here too: `uid`, `creationTimestamp`,
//! `generation` (1 on create, +1 when anything but `metadata` and, with a status subresource,
//! `status` changes: `customresource/strategy.go :: PrepareForUpdate`, R2.4), `generateName`
//! (`names.SimpleNameGenerator`, R2.5), and the end of a deletion once the last finalizer is
//! gone (`store.go :: ShouldDeleteDuringUpdate`, R2.16).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::{Value, json};

use super::resources::{self, Resource};

/// Where an object lives.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// API group ("" for core).
    pub group: String,
    /// Resource plural.
    pub plural: String,
    /// Namespace ("" for cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl Key {
    /// A key.
    pub fn new(group: &str, plural: &str, namespace: &str, name: &str) -> Key {
        Key {
            group: group.into(),
            plural: plural.into(),
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

/// One change, as the watch cache keeps it.
#[derive(Debug, Clone)]
pub struct Event {
    /// The resourceVersion of the change.
    pub rv: u64,
    /// The object's key.
    pub key: Key,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'static str,
    /// The object after the change (before it, for `DELETED`), in its storage version.
    pub object: Value,
    /// The object before the change (`MODIFIED` only).
    pub old: Option<Value>,
}

/// The characters of generated names (apimachinery `util/rand` `alphanums`).
const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// The store.
pub struct State {
    /// The last resourceVersion handed out.
    pub rv: u64,
    /// Every object, in its storage version.
    pub objects: BTreeMap<Key, Value>,
    /// Recent changes, oldest first.
    pub history: VecDeque<Arc<Event>>,
    /// How many changes the history keeps.
    pub history_limit: usize,
    /// Changes up to this resourceVersion are no longer in the history.
    pub compacted: u64,
    uid: u64,
    names: u64,
    /// Built-in resources and those of established CRDs.
    pub resources: Vec<Resource>,
    /// What the last commit broadcast (drained by the server after each request).
    pub pending: Vec<Arc<Event>>,
    /// Something the garbage collector and the finalizers react to happened (a deletion,
    /// an owner reference written): [`super::gc::settle`] has work.
    pub gc_dirty: bool,
}

impl Default for State {
    fn default() -> Self {
        State {
            rv: 0,
            objects: BTreeMap::new(),
            history: VecDeque::new(),
            history_limit: 20_000,
            compacted: 0,
            uid: 0,
            names: 0,
            resources: resources::builtins(),
            pending: Vec::new(),
            gc_dirty: false,
        }
    }
}

/// `metadata` as the apiserver writes it back: Go's `ObjectMeta` has `omitempty` on every
/// field, so empty lists and maps and nulls are not kept (`schemaobjectmeta.Coerce` does the
/// same round trip for custom resources).
pub fn normalize_meta(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.retain(|_, v| match v {
            Value::Null => false,
            Value::Array(a) => !a.is_empty(),
            Value::Object(o) => !o.is_empty(),
            Value::String(s) => !s.is_empty(),
            _ => true,
        });
    }
}

/// The parts of an object that do not count for `metadata.generation`.
fn generation_view(obj: &Value, status_subresource: bool) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        m.remove("metadata");
        if status_subresource {
            m.remove("status");
        }
    }
    v
}

impl State {
    /// The resource served at `group`/`plural`.
    pub fn resource(&self, group: &str, plural: &str) -> Option<&Resource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.plural == plural)
    }

    /// The resource of `apiVersion` and `kind` (for owner references and stored objects).
    pub fn resource_of(&self, api_version: &str, kind: &str) -> Option<&Resource> {
        let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
        self.resources
            .iter()
            .find(|r| r.group == group && r.kind == kind)
    }

    /// Rebuilds the CRD-defined resources from the stored CRDs (after a CRD changed).
    pub fn refresh_resources(&mut self) {
        let mut rs = resources::builtins();
        for (k, v) in &self.objects {
            if k.group == "apiextensions.k8s.io"
                && k.plural == "customresourcedefinitions"
                && let Some(r) = resources::from_crd(v)
                && !rs
                    .iter()
                    .any(|b| b.group == r.group && b.plural == r.plural)
            {
                rs.push(r);
            }
        }
        self.resources = rs;
    }

    /// A name for `generateName` (`base[:58]` + 5 characters of `alphanums`). The sequence
    /// is a fixed function of a counter, so runs are reproducible; a name in use is skipped,
    /// as the apiserver's retry would find a free one.
    pub fn generate_name(&mut self, base: &str, taken: impl Fn(&str) -> bool) -> String {
        let base: String = base.chars().take(58).collect();
        loop {
            self.names += 1;
            // A 64-bit mix (splitmix64) of the counter picks the characters.
            let mut x = self.names.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            x ^= x >> 31;
            let suffix: String = (0..5)
                .map(|i| ALPHANUMS[((x >> (i * 8)) % ALPHANUMS.len() as u64) as usize] as char)
                .collect();
            let name = format!("{base}{suffix}");
            if !taken(&name) {
                return name;
            }
        }
    }

    /// Whether the registry strategy of `key`'s resource keeps `metadata.generation`: custom
    /// resources and CRDs (`customresource/strategy.go`, `customresourcedefinition/
    /// strategy.go`), Deployments and ReplicaSets (`apps` strategies); not ConfigMaps,
    /// Leases, RBAC, Events and the other kinds here.
    fn tracks_generation(&self, key: &Key) -> bool {
        self.resource(&key.group, &key.plural)
            .is_some_and(|r| r.crd.is_some())
            || matches!(
                (key.group.as_str(), key.plural.as_str()),
                ("apps", "deployments" | "replicasets")
                    | ("apiextensions.k8s.io", "customresourcedefinitions")
            )
    }

    /// Stores a new object (`ADDED`): resourceVersion, uid, creationTimestamp, generation.
    pub fn create(&mut self, key: Key, mut obj: Value, now: &str) -> Value {
        normalize_meta(&mut obj);
        let generation = self.tracks_generation(&key);
        self.rv += 1;
        let md = &mut obj["metadata"];
        md["resourceVersion"] = json!(self.rv.to_string());
        if !md["uid"].is_string() {
            self.uid += 1;
            md["uid"] = json!(format!("00000000-0000-4000-8000-{:012}", self.uid));
        }
        if !md["creationTimestamp"].is_string() {
            md["creationTimestamp"] = json!(now);
        }
        if generation {
            md["generation"] = json!(1);
        } else if let Some(m) = md.as_object_mut() {
            m.remove("generation");
        }
        if let Some(m) = md.as_object_mut() {
            m.remove("deletionTimestamp");
        }
        if obj["metadata"]["ownerReferences"].is_array() {
            self.gc_dirty = true;
        }
        self.objects.insert(key.clone(), obj.clone());
        self.record(key, "ADDED", obj.clone(), None);
        obj
    }

    /// Stores a changed object (`MODIFIED`), unless nothing changed (then the old object is
    /// returned and no event is sent, as the apiserver skips no-op updates). The identity
    /// fields stay the server's; `generation` follows the rule above. An object being deleted
    /// whose last finalizer goes is removed (`DELETED`).
    pub fn update(&mut self, key: &Key, obj: Value, status_subresource: bool) -> Value {
        self.update_inner(key, obj, status_subresource, false)
    }

    /// An update by the server itself that sets `deletionTimestamp` (a delete that waits for
    /// finalizers).
    pub fn update_with_deletion(&mut self, key: &Key, obj: Value) -> Value {
        self.update_inner(key, obj, false, true)
    }

    fn update_inner(
        &mut self,
        key: &Key,
        mut obj: Value,
        status_subresource: bool,
        deleting: bool,
    ) -> Value {
        let Some(old) = self.objects.get(key).cloned() else {
            return obj;
        };
        normalize_meta(&mut obj);
        let kept: &[&str] = if deleting {
            &["uid", "creationTimestamp", "generation", "resourceVersion"]
        } else {
            &[
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "generation",
                "resourceVersion",
            ]
        };
        for f in kept.iter().copied() {
            match old["metadata"].get(f) {
                Some(v) => obj["metadata"][f] = v.clone(),
                None => {
                    if let Some(m) = obj["metadata"].as_object_mut() {
                        m.remove(f);
                    }
                }
            }
        }
        if obj == old {
            return old;
        }
        if self.tracks_generation(key)
            && generation_view(&obj, status_subresource)
                != generation_view(&old, status_subresource)
        {
            let g = old["metadata"]["generation"].as_i64().unwrap_or(1);
            obj["metadata"]["generation"] = json!(g + 1);
        }
        self.rv += 1;
        obj["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        let finished = obj["metadata"]["deletionTimestamp"].is_string()
            && obj["metadata"]["finalizers"]
                .as_array()
                .is_none_or(|f| f.is_empty())
            // A Namespace also waits for its `spec.finalizers` (the namespace controller's
            // `kubernetes` finalizer, namespace `strategy.go`).
            && (!key.group.is_empty() || key.plural != "namespaces"
                || obj["spec"]["finalizers"].as_array().is_none_or(|f| f.is_empty()));
        if deleting
            || finished
            || obj["metadata"]["ownerReferences"] != old["metadata"]["ownerReferences"]
            || obj["metadata"]["finalizers"] != old["metadata"]["finalizers"]
        {
            self.gc_dirty = true;
        }
        if finished {
            self.objects.remove(key);
            self.record(key.clone(), "DELETED", obj.clone(), None);
            return obj;
        }
        self.objects.insert(key.clone(), obj.clone());
        self.record(key.clone(), "MODIFIED", obj.clone(), Some(old));
        obj
    }

    /// Removes an object at once (`DELETED` carries its last state).
    pub fn remove(&mut self, key: &Key) -> Option<Value> {
        let obj = self.objects.remove(key)?;
        self.gc_dirty = true;
        self.rv += 1;
        let mut last = obj.clone();
        last["metadata"]["resourceVersion"] = json!(self.rv.to_string());
        self.record(key.clone(), "DELETED", last.clone(), None);
        Some(last)
    }

    fn record(&mut self, key: Key, kind: &'static str, object: Value, old: Option<Value>) {
        let ev = Arc::new(Event {
            rv: self.rv,
            key,
            kind,
            object,
            old,
        });
        self.history.push_back(ev.clone());
        while self.history.len() > self.history_limit {
            if let Some(e) = self.history.pop_front() {
                self.compacted = e.rv;
            }
        }
        self.pending.push(ev);
    }

    /// Forgets the history up to now: every watch from an earlier resourceVersion gets
    /// `410 Expired` (what etcd compaction does to the watch cache).
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }

    /// Objects of a resource (optionally in one namespace), in key order.
    pub fn of<'a>(
        &'a self,
        group: &'a str,
        plural: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a Key, &'a Value)> + 'a {
        self.objects.iter().filter(move |(k, _)| {
            k.group == group && k.plural == plural && namespace.is_none_or(|n| k.namespace == n)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generation_counts_spec_not_metadata_or_status() {
        let mut st = State::default();
        let k = Key::new("apps", "deployments", "ns", "a");
        st.create(
            k.clone(),
            json!({"metadata": {"name": "a"}, "spec": {"x": 1}}),
            "t",
        );
        let v = st.update(
            &k,
            json!({"metadata": {"name": "a", "labels": {"l": "1"}}, "spec": {"x": 1}}),
            true,
        );
        assert_eq!(v["metadata"]["generation"], 1);
        let v = st.update(
            &k,
            json!({"metadata": {"name": "a"}, "spec": {"x": 1}, "status": {"s": 1}}),
            true,
        );
        assert_eq!(v["metadata"]["generation"], 1);
        let v = st.update(
            &k,
            json!({"metadata": {"name": "a"}, "spec": {"x": 2}, "status": {"s": 1}}),
            true,
        );
        assert_eq!(v["metadata"]["generation"], 2);
        // Without a status subresource, status is part of the object.
        let v = st.update(
            &k,
            json!({"metadata": {"name": "a"}, "spec": {"x": 2}, "status": {"s": 2}}),
            false,
        );
        assert_eq!(v["metadata"]["generation"], 3);
        assert_eq!(v["metadata"]["resourceVersion"], "5");
    }

    #[test]
    fn generated_names_use_the_apiserver_alphabet() {
        let mut st = State::default();
        let n = st.generate_name("install-", |_| false);
        assert!(n.starts_with("install-") && n.len() == 13, "{n}");
        assert!(n[8..].bytes().all(|b| ALPHANUMS.contains(&b)), "{n}");
        let long = "x".repeat(70);
        assert_eq!(st.generate_name(&long, |_| false).len(), 63);
        assert_ne!(
            st.generate_name("a-", |_| false),
            st.generate_name("a-", |_| false)
        );
    }

    #[test]
    fn the_history_window_is_bounded() {
        let mut st = State {
            history_limit: 2,
            ..State::default()
        };
        for i in 0..4 {
            st.create(
                Key::new("", "configmaps", "ns", &i.to_string()),
                json!({"metadata": {}}),
                "t",
            );
        }
        assert_eq!((st.history.len(), st.compacted), (2, 2));
    }
}
