//! Deletion and the controllers that finish it, run after every write until nothing changes
//! (the real ones run asynchronously; running them at once is one of their possible
//! schedules):
//!
//! - `DELETE` with finalizers sets `deletionTimestamp` and keeps the object; the propagation
//!   policy adds `orphan` or `foregroundDeletion` (`store.go :: Delete,
//!   deletionFinalizersForGarbageCollection`, R2.16, R2.18);
//! - the garbage collector deletes a dependent once none of its owners is live (missing, a
//!   different uid, or being deleted in the foreground), and patches dangling references away
//!   while an owner lives (`garbagecollector.go :: attemptToDeleteItem`, R2.19); it removes
//!   `foregroundDeletion` once no blocking dependent is left and `orphan` after removing the
//!   owner's references from the dependents (`processDeletingDependentsItem`,
//!   `orphanDependents`);
//! - the CRD finalizer: the first delete of a CRD adds `customresourcecleanup...`, then every
//!   custom resource is deleted, and the CRD goes once none is left (`crd_finalizer.go ::
//!   sync`, R2.20);
//! - the namespace controller deletes everything in a terminating namespace, then removes its
//!   `kubernetes` finalizer (`namespaced_resources_deleter.go :: Delete`).

use serde_json::{Value, json};

use super::store::{Key, State};

/// The CRD cleanup finalizer.
pub const CRD_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// `propagationPolicy` of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Dependents are deleted afterwards by the garbage collector.
    Background,
    /// The owner stays until its blocking dependents are gone.
    Foreground,
    /// Dependents lose their owner reference and stay.
    Orphan,
}

impl Propagation {
    /// From the query parameter (default Background, as for every resource here).
    pub fn parse(s: Option<&str>) -> Result<Propagation, String> {
        match s {
            None | Some("") | Some("Background") => Ok(Propagation::Background),
            Some("Foreground") => Ok(Propagation::Foreground),
            Some("Orphan") => Ok(Propagation::Orphan),
            Some(o) => Err(format!(
                "propagationPolicy: Unsupported value: \"{o}\": supported values: \"Foreground\", \"Background\", \"Orphan\""
            )),
        }
    }
}

/// What a delete did.
#[derive(Debug, Clone)]
pub enum Deleted {
    /// The object is gone (its last state).
    Gone(Value),
    /// It waits for finalizers (its state with `deletionTimestamp`).
    Terminating(Value),
}

fn finalizers(v: &Value) -> Vec<String> {
    v["metadata"]["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn set_finalizers(v: &mut Value, f: Vec<String>) {
    if f.is_empty() {
        if let Some(m) = v["metadata"].as_object_mut() {
            m.remove("finalizers");
        }
    } else {
        v["metadata"]["finalizers"] = json!(f);
    }
}

fn is_namespace(k: &Key) -> bool {
    k.group.is_empty() && k.plural == "namespaces"
}

fn is_crd(k: &Key) -> bool {
    k.group == "apiextensions.k8s.io" && k.plural == "customresourcedefinitions"
}

/// Deletes `key` as `DELETE` does (the object must exist).
pub fn delete(st: &mut State, key: &Key, propagation: Propagation, now: &str) -> Option<Deleted> {
    let old = st.objects.get(key)?.clone();
    if old["metadata"]["deletionTimestamp"].is_string() {
        return Some(Deleted::Terminating(old));
    }
    let mut obj = old.clone();
    let mut f = finalizers(&obj);
    let mut add = |name: &str| {
        if !f.iter().any(|x| x == name) {
            f.push(name.to_string());
        }
    };
    match propagation {
        Propagation::Orphan => add("orphan"),
        Propagation::Foreground => add("foregroundDeletion"),
        Propagation::Background => {}
    }
    if is_crd(key) {
        add(CRD_FINALIZER);
    }
    set_finalizers(&mut obj, f.clone());
    let ns_waits = is_namespace(key)
        && obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    if f.is_empty() && !ns_waits {
        let last = st.remove(key)?;
        settle(st, now);
        return Some(Deleted::Gone(last));
    }
    obj["metadata"]["deletionTimestamp"] = json!(now);
    obj["metadata"]["deletionGracePeriodSeconds"] = json!(0);
    if is_namespace(key) {
        obj["status"]["phase"] = json!("Terminating");
    }
    if is_crd(key) {
        set_condition(
            &mut obj,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            now,
        );
    }
    let v = st.update_with_deletion(key, obj);
    settle(st, now);
    Some(Deleted::Terminating(
        st.objects.get(key).cloned().unwrap_or(v),
    ))
}

fn set_condition(obj: &mut Value, ty: &str, status: &str, reason: &str, message: &str, now: &str) {
    let conds = obj["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut out: Vec<Value> = conds.into_iter().filter(|c| c["type"] != ty).collect();
    out.push(
        json!({"type": ty, "status": status, "reason": reason, "message": message,
                    "lastTransitionTime": now}),
    );
    obj["status"]["conditions"] = json!(out);
}

/// Runs the garbage collector, the CRD finalizer and the namespace controller until nothing
/// changes.
pub fn settle(st: &mut State, now: &str) {
    if !st.gc_dirty {
        return;
    }
    for _ in 0..1000 {
        if !step(st, now) {
            break;
        }
    }
    st.gc_dirty = false;
}

fn owner_key(st: &State, dependent: &Key, r: &Value) -> Option<Key> {
    let res = st.resource_of(r["apiVersion"].as_str()?, r["kind"].as_str()?)?;
    let ns = if res.namespaced {
        dependent.namespace.clone()
    } else {
        String::new()
    };
    Some(Key::new(&res.group, &res.plural, &ns, r["name"].as_str()?))
}

/// How an owner reference stands.
#[derive(PartialEq)]
enum Owner {
    Live,
    Dangling,
    WaitingForDependents,
}

fn owner_state(st: &State, dependent: &Key, r: &Value) -> Owner {
    let Some(k) = owner_key(st, dependent, r) else {
        // An owner kind the API does not serve cannot exist.
        return Owner::Dangling;
    };
    match st.objects.get(&k) {
        Some(o) if o["metadata"]["uid"] == r["uid"] => {
            let deleting = o["metadata"]["deletionTimestamp"].is_string();
            if deleting && finalizers(o).iter().any(|f| f == "foregroundDeletion") {
                Owner::WaitingForDependents
            } else {
                Owner::Live
            }
        }
        _ => Owner::Dangling,
    }
}

/// One pass; true when something changed.
fn step(st: &mut State, now: &str) -> bool {
    // Terminating namespaces.
    let namespaces: Vec<Key> = st
        .objects
        .iter()
        .filter(|(k, v)| is_namespace(k) && v["metadata"]["deletionTimestamp"].is_string())
        .map(|(k, _)| k.clone())
        .collect();
    for ns in namespaces {
        let inside: Vec<Key> = st
            .objects
            .keys()
            .filter(|k| k.namespace == ns.name && !k.namespace.is_empty())
            .cloned()
            .collect();
        let mut changed = false;
        for k in &inside {
            if !st.objects[k]["metadata"]["deletionTimestamp"].is_string() {
                delete_quiet(st, k, Propagation::Background, now);
                changed = true;
            }
        }
        if changed {
            return true;
        }
        if inside.is_empty() {
            let mut o = st.objects[&ns].clone();
            if o["spec"]["finalizers"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
            {
                o["spec"]["finalizers"] = json!([]);
                st.update(&ns, o, true);
                return true;
            }
        }
    }
    // Terminating CRDs.
    let crds: Vec<(Key, Value)> = st
        .objects
        .iter()
        .filter(|(k, v)| {
            is_crd(k)
                && v["metadata"]["deletionTimestamp"].is_string()
                && finalizers(v).iter().any(|f| f == CRD_FINALIZER)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, crd) in crds {
        let group = crd["spec"]["group"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let plural = crd["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let left: Vec<Key> = st
            .of(&group, &plural, None)
            .map(|(k, _)| k.clone())
            .collect();
        let mut changed = false;
        for c in &left {
            if !st.objects[c]["metadata"]["deletionTimestamp"].is_string() {
                delete_quiet(st, c, Propagation::Background, now);
                changed = true;
            }
        }
        if changed {
            return true;
        }
        if left.is_empty() {
            let mut o = crd.clone();
            let f: Vec<String> = finalizers(&o)
                .into_iter()
                .filter(|f| f != CRD_FINALIZER)
                .collect();
            set_finalizers(&mut o, f);
            set_condition(
                &mut o,
                "Terminating",
                "True",
                "InstanceDeletionCompleted",
                "removed all instances",
                now,
            );
            st.update(&k, o, true);
            st.refresh_resources();
            return true;
        } else {
            // Waiting on custom resources with finalizers.
            let mut o = crd.clone();
            let msg = format!(
                "CustomResource deletion is in progress: {} left",
                left.len()
            );
            let had = o["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["reason"] == "InstanceDeletionInProgress" && c["message"] == msg)
            });
            if !had {
                set_condition(
                    &mut o,
                    "Terminating",
                    "True",
                    "InstanceDeletionInProgress",
                    &msg,
                    now,
                );
                st.update(&k, o, true);
                return true;
            }
        }
    }
    // Owner references.
    let with_owners: Vec<(Key, Value)> = st
        .objects
        .iter()
        .filter(|(_, v)| {
            v["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|a| !a.is_empty())
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in with_owners {
        let refs = v["metadata"]["ownerReferences"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let states: Vec<Owner> = refs.iter().map(|r| owner_state(st, &k, r)).collect();
        let live = states.contains(&Owner::Live);
        if !live {
            if v["metadata"]["deletionTimestamp"].is_string() {
                continue;
            }
            let fg = states.contains(&Owner::WaitingForDependents);
            let p = if fg {
                Propagation::Foreground
            } else {
                Propagation::Background
            };
            delete_quiet(st, &k, p, now);
            return true;
        }
        if states.iter().any(|s| *s != Owner::Live) {
            let keep: Vec<Value> = refs
                .into_iter()
                .zip(&states)
                .filter(|(_, s)| **s == Owner::Live)
                .map(|(r, _)| r)
                .collect();
            let mut o = v.clone();
            o["metadata"]["ownerReferences"] = json!(keep);
            st.update(&k, o, true);
            return true;
        }
    }
    // Owners being deleted in the foreground, or orphaning.
    let deleting: Vec<(Key, Value)> = st
        .objects
        .iter()
        .filter(|(_, v)| {
            v["metadata"]["deletionTimestamp"].is_string()
                && finalizers(v)
                    .iter()
                    .any(|f| f == "foregroundDeletion" || f == "orphan")
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in deleting {
        let uid = v["metadata"]["uid"].clone();
        let dependents: Vec<(Key, Value)> = st
            .objects
            .iter()
            .filter(|(_, d)| {
                d["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|r| r["uid"] == uid))
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let f = finalizers(&v);
        if f.iter().any(|x| x == "orphan") {
            for (dk, d) in &dependents {
                let mut o = d.clone();
                let keep: Vec<Value> = o["metadata"]["ownerReferences"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|r| r["uid"] != uid)
                    .collect();
                o["metadata"]["ownerReferences"] = json!(keep);
                st.update(dk, o, true);
            }
            let mut o = v.clone();
            set_finalizers(&mut o, f.into_iter().filter(|x| x != "orphan").collect());
            st.update(&k, o, true);
            return true;
        }
        let blocking = dependents.iter().any(|(_, d)| {
            d["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|a| {
                    a.iter()
                        .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
                })
        });
        if !blocking {
            let mut o = v.clone();
            set_finalizers(
                &mut o,
                f.into_iter()
                    .filter(|x| x != "foregroundDeletion")
                    .collect(),
            );
            st.update(&k, o, true);
            return true;
        }
    }
    false
}

/// A delete from a controller (no settle: the caller's loop goes on).
fn delete_quiet(st: &mut State, key: &Key, propagation: Propagation, now: &str) {
    let Some(old) = st.objects.get(key).cloned() else {
        return;
    };
    let mut obj = old.clone();
    let mut f = finalizers(&obj);
    match propagation {
        Propagation::Foreground if !f.iter().any(|x| x == "foregroundDeletion") => {
            f.push("foregroundDeletion".into())
        }
        _ => {}
    }
    if is_crd(key) && !f.iter().any(|x| x == CRD_FINALIZER) {
        f.push(CRD_FINALIZER.into());
    }
    set_finalizers(&mut obj, f.clone());
    let ns_waits = is_namespace(key)
        && obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    if f.is_empty() && !ns_waits {
        st.remove(key);
        if is_crd(key) {
            st.refresh_resources();
        }
        return;
    }
    obj["metadata"]["deletionTimestamp"] = json!(now);
    st.update_with_deletion(key, obj);
}
