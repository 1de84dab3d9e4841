//! Reading what the gate decides on from the API server: the namespace's Subscriptions,
//! InstallPlans and CSVs, the CRDs its plans touch (by name: those the plans apply and those
//! the installed CSVs own) and the unpacked-bundle ConfigMaps the plans reference. Everything
//! is read into `olmctl::gate::objects::Objects`, the reader `olmctl gate evaluate` uses.

use std::collections::BTreeSet;
use std::path::Path;

use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams};
use kube::{Client, ResourceExt};
use olmctl::bundle::load::{list_at, str_at};
use olmctl::gate::objects::Objects;
use olmctl::names::Rule;

/// The OLM (v0 and v1) resources the gate reads.
pub fn resource(kind: &str) -> ApiResource {
    let (group, version, plural) = match kind {
        "Subscription" => ("operators.coreos.com", "v1alpha1", "subscriptions"),
        "InstallPlan" => ("operators.coreos.com", "v1alpha1", "installplans"),
        "ClusterServiceVersion" => ("operators.coreos.com", "v1alpha1", "clusterserviceversions"),
        "CustomResourceDefinition" => ("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        "ConfigMap" => ("", "v1", "configmaps"),
        "ClusterExtension" => ("olm.operatorframework.io", "v1", "clusterextensions"),
        "ClusterCatalog" => ("olm.operatorframework.io", "v1", "clustercatalogs"),
        other => panic!("not a kind the gate reads: {other}"),
    };
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

/// A namespaced dynamic API of `kind`.
pub fn api(client: &Client, ns: &str, kind: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &resource(kind))
}

/// Adds `o`, a `kind` as the API serves it, to `objects`.
pub fn add(objects: &mut Objects, kind: &str, o: &DynamicObject) -> Result<(), kube::Error> {
    // Lists leave apiVersion and kind out of their items: put them back.
    let mut v = serde_json::to_value(o).map_err(kube::Error::SerdeError)?;
    let ar = resource(kind);
    v["apiVersion"] = serde_json::Value::String(ar.api_version.clone());
    v["kind"] = serde_json::Value::String(kind.into());
    let name = format!(
        "cluster/{kind}/{}/{}",
        o.namespace().unwrap_or_default(),
        o.name_any()
    );
    objects
        .add_text(Path::new(&name), &v.to_string())
        .map_err(|e| kube::Error::Service(e.to_string().into()))
}

/// One plan as the API has it now, with its namespace's Subscriptions and CSVs (the
/// approval's re-check reads these, not the caches).
pub async fn snapshot_plan(client: &Client, ns: &str, plan: &str) -> Result<Objects, kube::Error> {
    let mut objects = Objects::default();
    if let Some(p) = api(client, ns, "InstallPlan").get_opt(plan).await? {
        add(&mut objects, "InstallPlan", &p)?;
    }
    for kind in ["Subscription", "ClusterServiceVersion"] {
        for o in api(client, ns, kind).list(&ListParams::default()).await? {
            add(&mut objects, kind, &o)?;
        }
    }
    Ok(objects)
}

/// Adds what the plans in `objects` need to be judged: the CRDs they apply and those the
/// installed CSVs they upgrade own (the live ones, by name), and the unpacked-bundle
/// ConfigMaps their steps reference.
pub async fn add_content(client: &Client, objects: &mut Objects) -> Result<(), kube::Error> {
    let mut crds = BTreeSet::new();
    let mut maps = BTreeSet::new();
    let mut targets = BTreeSet::new();
    for p in &objects.install_plans {
        for n in list_at(&p.node, &["spec", "clusterServiceVersionNames"]) {
            if let Some(n) = n.as_str() {
                targets.insert(n.to_string());
            }
        }
        for s in list_at(&p.node, &["status", "plan"]) {
            let kind = str_at(s, &["resource", "kind"]).unwrap_or_default();
            if kind == "CustomResourceDefinition"
                && let Some(n) = str_at(s, &["resource", "name"])
            {
                crds.insert(n.to_string());
            }
            let manifest = str_at(s, &["resource", "manifest"]).unwrap_or_default();
            if let Some(m) = olmctl::gate::manifests::referenced_config_map(manifest) {
                maps.insert(m);
            }
        }
    }
    let installed: BTreeSet<String> = objects
        .subscriptions
        .iter()
        .filter(|s| {
            s.str(&["status", "currentCSV"])
                .is_some_and(|c| targets.contains(c))
        })
        .filter_map(|s| s.str(&["status", "installedCSV"]).map(str::to_string))
        .collect();
    for c in objects.csvs.iter().filter(|c| installed.contains(c.name())) {
        for o in list_at(&c.node, &["spec", "customresourcedefinitions", "owned"]) {
            if let Some(n) = str_at(o, &["name"]) {
                crds.insert(n.to_string());
            }
        }
    }
    let crd_api: Api<DynamicObject> =
        Api::all_with(client.clone(), &resource("CustomResourceDefinition"));
    // The names come from a CSV and a plan's steps (bundle text the API server never checked),
    // and kube puts a name into the path as it is: one that is not a valid name of its kind
    // (`a?watch=1`, `../..`) is not asked for, and the gate finds the object missing.
    for name in crds.iter().filter(|n| valid(Rule::Subdomain, n)) {
        if let Some(o) = crd_api.get_opt(name).await? {
            add(objects, "CustomResourceDefinition", &o)?;
        }
    }
    for (map_ns, name) in maps
        .iter()
        .filter(|(ns, n)| valid(Rule::Label, ns) && valid(Rule::Subdomain, n))
    {
        if let Some(o) = api(client, map_ns, "ConfigMap").get_opt(name).await? {
            add(objects, "ConfigMap", &o)?;
        }
    }
    Ok(())
}

/// Whether `name` is a valid name under `rule` ([`olmctl::names`]), so that it can be put in a
/// request's path as it is.
pub fn valid(rule: Rule, name: &str) -> bool {
    !name.is_empty() && olmctl::names::problems(rule, name).is_empty()
}

/// Everything the gate reads for namespace `ns` (what `olmctl gate evaluate` would be given).
pub async fn snapshot(client: &Client, ns: &str) -> Result<Objects, kube::Error> {
    let mut objects = Objects::default();
    for kind in ["Subscription", "InstallPlan", "ClusterServiceVersion"] {
        for o in api(client, ns, kind).list(&ListParams::default()).await? {
            add(&mut objects, kind, &o)?;
        }
    }
    add_content(client, &mut objects).await?;
    Ok(objects)
}
