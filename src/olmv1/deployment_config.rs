//! The ClusterExtension's `deploymentConfig` (operator-controller's Alpha `DeploymentConfig`
//! gate): OLM v0's SubscriptionConfig overrides applied to each Deployment the renderer makes,
//! as `rukpak/render/registryv1/generators/generators.go :: applyCustomConfigToDeployment`
//! applies them, in its order:
//!
//! - `env`: each variable replaces the container's variable of that name (its last one), or is
//!   appended (`applyEnvironmentConfig`);
//! - `envFrom`: appended unless an equal source is there (`applyEnvironmentFromConfig`);
//! - `volumes`, `volumeMounts`: replace those of the same name, else appended (unlike OLM v0,
//!   which appends) (`applyVolumeConfig`, `applyVolumeMountConfig`);
//! - `tolerations`: appended unless equal (`applyTolerationsConfig`);
//! - `resources`, `nodeSelector`: replace (`applyResourcesConfig`, `applyNodeSelectorConfig`);
//! - `affinity`: `{}` erases the pod's affinity; each given sub-affinity replaces the pod's, an
//!   empty one erases it; an affinity left empty is removed (`applyAffinityConfig`,
//!   `isAffinityEmpty`);
//! - `annotations`: added to the Deployment and its pod template where the key is not there
//!   (`applyAnnotationsConfig`).
//!
//! Env and mounts apply to `containers` only, not `initContainers`, as upstream. Each merge is
//! linear in the lists' lengths: names are indexed in a map as upstream indexes them, equal
//! items are found by hash where upstream searches the list.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};

use serde_json::{Map, Value, json};

fn list(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// An item's `name` as the Go struct holds it (`EnvVar.Name`, `Volume.Name`,
/// `VolumeMount.Name`: a string, `""` when absent).
fn name_of(v: &Value) -> &str {
    v["name"].as_str().unwrap_or_default()
}

/// `applyEnvironmentConfig`, `applyVolumeConfig`, `applyVolumeMountConfig`: the names of
/// `target`'s items are indexed first (a name given twice: its last index); each item of
/// `config` replaces the item at its name's index, or is appended. Appended items are not
/// indexed: a name new to `target` that `config` gives twice is appended twice, as upstream.
fn merge_by_name(target: &mut Value, config: &[Value]) {
    let mut items = list(target);
    let index: HashMap<String, usize> = items
        .iter()
        .enumerate()
        .map(|(i, v)| (name_of(v).to_string(), i))
        .collect();
    for c in config {
        match index.get(name_of(c)) {
            Some(&i) => items[i] = c.clone(),
            None => items.push(c.clone()),
        }
    }
    *target = Value::Array(items);
}

/// A hash of `v` consistent with `Value`'s equality (`-0.0` hashes as `0.0`, which it equals).
fn hash_value(v: &Value, h: &mut impl Hasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => {
            2u8.hash(h);
            match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => (0u8, u).hash(h),
                (None, Some(i), _) => (1u8, i).hash(h),
                (None, None, f) => (2u8, (f.unwrap_or_default() + 0.0).to_bits()).hash(h),
            }
        }
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(a) => {
            (4u8, a.len()).hash(h);
            for x in a {
                hash_value(x, h);
            }
        }
        Value::Object(m) => {
            (5u8, m.len()).hash(h);
            for (k, x) in m {
                k.hash(h);
                hash_value(x, h);
            }
        }
    }
}

fn hashed(state: &RandomState, v: &Value) -> u64 {
    let mut h = state.build_hasher();
    hash_value(v, &mut h);
    h.finish()
}

/// `applyEnvironmentFromConfig`, `applyTolerationsConfig`: each item of `config` is appended to
/// `target` unless an equal one is there (one of `target`'s or one appended before it). Items are
/// found by hash (randomly keyed, so no input can be made to collide), then compared.
fn append_unique(target: &mut Value, config: &[Value]) {
    let mut items = list(target);
    let state = RandomState::new();
    let mut seen: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, v) in items.iter().enumerate() {
        seen.entry(hashed(&state, v)).or_default().push(i);
    }
    for c in config {
        let bucket = seen.entry(hashed(&state, c)).or_default();
        if !bucket.iter().any(|&i| items[i] == *c) {
            bucket.push(items.len());
            items.push(c.clone());
        }
    }
    *target = Value::Array(items);
}

fn empty_list(v: &Value, key: &str) -> bool {
    v.get(key)
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

/// `isNodeAffinityEmpty`.
fn node_affinity_empty(na: &Value) -> bool {
    if na.is_null() {
        return true;
    }
    let required_empty = na
        .get("requiredDuringSchedulingIgnoredDuringExecution")
        .is_none_or(|r| r.is_null() || empty_list(r, "nodeSelectorTerms"));
    required_empty && empty_list(na, "preferredDuringSchedulingIgnoredDuringExecution")
}

/// `isPodAffinityEmpty`, `isPodAntiAffinityEmpty`.
fn pod_affinity_empty(pa: &Value) -> bool {
    pa.is_null()
        || (empty_list(pa, "requiredDuringSchedulingIgnoredDuringExecution")
            && empty_list(pa, "preferredDuringSchedulingIgnoredDuringExecution"))
}

fn affinity_empty(a: &Value) -> bool {
    a.is_null()
        || (node_affinity_empty(a.get("nodeAffinity").unwrap_or(&Value::Null))
            && pod_affinity_empty(a.get("podAffinity").unwrap_or(&Value::Null))
            && pod_affinity_empty(a.get("podAntiAffinity").unwrap_or(&Value::Null)))
}

/// `applyAffinityConfig`.
fn apply_affinity(pod: &mut Map<String, Value>, config: &Value) {
    let given = |k: &str| config.get(k).filter(|v| !v.is_null());
    if ["nodeAffinity", "podAffinity", "podAntiAffinity"]
        .iter()
        .all(|k| given(k).is_none())
    {
        pod.remove("affinity");
        return;
    }
    let mut affinity = pod
        .get("affinity")
        .filter(|a| a.is_object())
        .cloned()
        .unwrap_or_else(|| json!({}));
    for (key, empty) in [
        ("nodeAffinity", node_affinity_empty as fn(&Value) -> bool),
        ("podAffinity", pod_affinity_empty),
        ("podAntiAffinity", pod_affinity_empty),
    ] {
        if let Some(v) = given(key) {
            if empty(v) {
                affinity.as_object_mut().map(|m| m.remove(key));
            } else {
                affinity[key] = v.clone();
            }
        }
    }
    if affinity_empty(&affinity) {
        pod.remove("affinity");
    } else {
        pod.insert("affinity".into(), affinity);
    }
}

/// Adds `annotations` to `meta.annotations` where the key is not there.
fn add_annotations(meta: &mut Value, annotations: &Map<String, Value>) {
    if !meta.is_object() {
        *meta = json!({});
    }
    if !meta["annotations"].is_object() {
        meta["annotations"] = json!({});
    }
    if let Some(a) = meta["annotations"].as_object_mut() {
        for (k, v) in annotations {
            a.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

/// Applies `config` (a `deploymentConfig` object) to the Deployment `dep`.
pub fn apply(dep: &mut Value, config: &Value) {
    let get = |k: &str| config.get(k).filter(|v| !v.is_null());
    let pod = &mut dep["spec"]["template"]["spec"];
    if !pod.is_object() {
        *pod = json!({});
    }
    let containers = |pod: &mut Value, f: &dyn Fn(&mut Value)| {
        if let Some(cs) = pod.get_mut("containers").and_then(Value::as_array_mut) {
            for c in cs {
                f(c);
            }
        }
    };
    if let Some(env) = get("env").map(list).filter(|l| !l.is_empty()) {
        containers(pod, &|c| merge_by_name(&mut c["env"], &env));
    }
    if let Some(from) = get("envFrom").map(list).filter(|l| !l.is_empty()) {
        containers(pod, &|c| append_unique(&mut c["envFrom"], &from));
    }
    if let Some(vols) = get("volumes").map(list).filter(|l| !l.is_empty()) {
        merge_by_name(&mut pod["volumes"], &vols);
    }
    if let Some(mounts) = get("volumeMounts").map(list).filter(|l| !l.is_empty()) {
        containers(pod, &|c| merge_by_name(&mut c["volumeMounts"], &mounts));
    }
    if let Some(tols) = get("tolerations").map(list).filter(|l| !l.is_empty()) {
        append_unique(&mut pod["tolerations"], &tols);
    }
    if let Some(res) = get("resources") {
        let res = res.clone();
        containers(pod, &|c| c["resources"] = res.clone());
    }
    if let Some(sel) = get("nodeSelector") {
        pod["nodeSelector"] = sel.clone();
    }
    if let (Some(a), Some(p)) = (get("affinity"), pod.as_object_mut()) {
        apply_affinity(p, a);
    }
    if let Some(ann) = get("annotations")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    {
        add_annotations(&mut dep["metadata"], ann);
        add_annotations(&mut dep["spec"]["template"]["metadata"], ann);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dep() -> Value {
        json!({"metadata": {"name": "d", "annotations": {"keep": "mine"}},
               "spec": {"template": {"metadata": {}, "spec": {
                   "containers": [{"name": "c", "env": [{"name": "A", "value": "1"}],
                                   "volumeMounts": [{"name": "v", "mountPath": "/old"}]}],
                   "volumes": [{"name": "v", "emptyDir": {}}],
                   "affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}]},
                                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k"}]}}}}}})
    }

    #[test]
    fn overrides_follow_the_generators() {
        let mut d = dep();
        apply(
            &mut d,
            &json!({"env": [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}],
                    "volumeMounts": [{"name": "v", "mountPath": "/new"}],
                    "tolerations": [{"key": "t"}, {"key": "t"}],
                    "annotations": {"keep": "theirs", "new": "x"},
                    "affinity": {"nodeAffinity": {}}}),
        );
        let c = &d["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(
            c["env"],
            json!([{"name": "A", "value": "2"}, {"name": "B", "value": "3"}])
        );
        assert_eq!(
            c["volumeMounts"],
            json!([{"name": "v", "mountPath": "/new"}])
        );
        assert_eq!(
            d["spec"]["template"]["spec"]["tolerations"],
            json!([{"key": "t"}])
        );
        assert_eq!(
            d["metadata"]["annotations"],
            json!({"keep": "mine", "new": "x"})
        );
        assert_eq!(
            d["spec"]["template"]["metadata"]["annotations"],
            json!({"keep": "theirs", "new": "x"})
        );
        // An empty nodeAffinity erases it; the pod affinity stays.
        assert_eq!(
            d["spec"]["template"]["spec"]["affinity"],
            json!({"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "k"}]}})
        );
        // `affinity: {}` erases all of it.
        let mut d = dep();
        apply(&mut d, &json!({"affinity": {}}));
        assert!(d["spec"]["template"]["spec"].get("affinity").is_none());
    }

    /// upstream's loops in `generators.go`, transliterated over JSON values: the reference the
    /// indexed merges are compared with (`applyEnvironmentConfig` and the volume functions index
    /// the existing names in a map first; `applyEnvironmentFromConfig` and
    /// `applyTolerationsConfig` search the list, appended items included).
    mod upstream {
        use serde_json::Value;
        use std::collections::HashMap;

        pub fn by_name(target: &mut Vec<Value>, config: &[Value]) {
            let name = |v: &Value| v["name"].as_str().unwrap_or_default().to_string();
            let mut existing: HashMap<String, usize> = HashMap::new();
            for (idx, v) in target.iter().enumerate() {
                existing.insert(name(v), idx);
            }
            for c in config {
                if let Some(&idx) = existing.get(&name(c)) {
                    target[idx] = c.clone();
                } else {
                    target.push(c.clone());
                }
            }
        }

        pub fn unless_equal(target: &mut Vec<Value>, config: &[Value]) {
            for c in config {
                let mut duplicate = false;
                for e in target.iter() {
                    if e == c {
                        duplicate = true;
                        break;
                    }
                }
                if !duplicate {
                    target.push(c.clone());
                }
            }
        }
    }

    /// A name given twice, in the container and in the config: the container's last one is
    /// replaced, and a new name given twice is appended twice (upstream's map holds the
    /// container's names only).
    #[test]
    fn duplicate_names_merge_as_upstream() {
        let mut d = json!({"spec": {"template": {"spec": {
            "containers": [{"name": "c", "env": [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}]}],
            "volumes": [{"name": "v", "emptyDir": {}}, {"name": "v", "secret": {}}]}}}});
        apply(
            &mut d,
            &json!({"env": [{"name": "A", "value": "3"}, {"name": "B", "value": "1"},
                            {"name": "B", "value": "2"}],
                    "volumes": [{"name": "v", "configMap": {}}, {"name": "w"}, {"name": "w"}]}),
        );
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(
            pod["containers"][0]["env"],
            json!([{"name": "A", "value": "1"}, {"name": "A", "value": "3"},
                   {"name": "B", "value": "1"}, {"name": "B", "value": "2"}])
        );
        assert_eq!(
            pod["volumes"],
            json!([{"name": "v", "emptyDir": {}}, {"name": "v", "configMap": {}},
                   {"name": "w"}, {"name": "w"}])
        );
    }

    /// Items from a few names and values, so that names and whole items repeat; `-0.0` and
    /// `0.0` (equal values) among them.
    fn items() -> impl proptest::strategy::Strategy<Value = Vec<Value>> {
        use proptest::prelude::*;
        let value = prop_oneof![
            Just(json!("x")),
            Just(json!(1)),
            Just(json!(1.0)),
            Just(json!(0.0)),
            Just(json!(-0.0)),
            Just(Value::Null),
            Just(json!({"k": "v"})),
        ];
        let name = prop_oneof![
            Just(json!("a")),
            Just(json!("b")),
            Just(json!("")),
            Just(Value::Null)
        ];
        let item = (name, proptest::option::of(value)).prop_map(|(n, v)| {
            let mut m = Map::new();
            if !n.is_null() {
                m.insert("name".into(), n);
            }
            if let Some(v) = v {
                m.insert("value".into(), v);
            }
            Value::Object(m)
        });
        proptest::collection::vec(item, 0..8)
    }

    proptest::proptest! {
        /// The indexed merges give what upstream's loops give, on any lists.
        #[test]
        fn merges_equal_upstreams_loops(existing in items(), config in items()) {
            let mut want = existing.clone();
            upstream::by_name(&mut want, &config);
            let mut got = Value::Array(existing.clone());
            merge_by_name(&mut got, &config);
            proptest::prop_assert_eq!(got, Value::Array(want));
            let mut want = existing.clone();
            upstream::unless_equal(&mut want, &config);
            let mut got = Value::Array(existing);
            append_unique(&mut got, &config);
            proptest::prop_assert_eq!(got, Value::Array(want));
        }
    }
}
