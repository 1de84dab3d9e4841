//! The ClusterExtension's `deploymentConfig` (operator-controller's Alpha `DeploymentConfig`
//! gate): OLM v0's SubscriptionConfig overrides applied to each Deployment the renderer makes,
//! as `rukpak/render/registryv1/generators/generators.go :: applyCustomConfigToDeployment`
//! applies them, in its order:
//!
//! - `env`: each variable replaces the container's variable of that name, or is appended
//!   (`applyEnvironmentConfig`);
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
//! Env and mounts apply to `containers` only, not `initContainers`, as upstream.

use serde_json::{Map, Value, json};

fn list(v: &Value) -> Vec<Value> {
    v.as_array().cloned().unwrap_or_default()
}

/// Each item of `config` replaces the item of `target` with the same `name`, or is appended.
fn merge_by_name(target: &mut Value, config: &[Value]) {
    let mut items = list(target);
    for c in config {
        match items.iter_mut().find(|i| i["name"] == c["name"]) {
            Some(i) => *i = c.clone(),
            None => items.push(c.clone()),
        }
    }
    *target = Value::Array(items);
}

/// Each item of `config` is appended to `target` unless an equal one is there.
fn append_unique(target: &mut Value, config: &[Value]) {
    let mut items = list(target);
    for c in config {
        if !items.contains(c) {
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
}
