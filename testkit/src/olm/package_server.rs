//! OLM's package-server as a double: the aggregated API `packages.operators.coreos.com/v1`
//! (`PackageManifest`, namespaced, `get` and `list` only) that OLM serves from the
//! CatalogSources of the cluster, each read through its registry's gRPC API. Following OLM
//! `992bb097` (cluster.md):
//!
//! - which sources: `pkg/package-server/provider/registry.go :: RegistryProvider.
//!   syncCatalogSource`: a CatalogSource whose `status.registryService` is not set yet is
//!   skipped; one whose registry answers (here: one whose `spec.image` the double serves,
//!   [`PackageServer::serve`]) gives one PackageManifest per package;
//! - each manifest: `registry.go :: newPackageManifest` (channels sorted by name, each with
//!   its head's CSV as `currentCSV` and `currentCSVDesc`, the provider of the default
//!   channel's head, the labels `catalog`, `catalog-namespace`, `provider`, `provider-url`
//!   over the CatalogSource's, then the default head CSV's labels and
//!   `labels.go :: setDefaultOsArchLabels`), `refreshCache` (the entries of each channel, every
//!   bundle, newest version first) and `apis/operators/packagemanifest.go ::
//!   CreateCSVDescription`;
//! - reads: `registry.go :: RegistryProvider.List` (a namespace's manifests, then the global
//!   namespace's, each stamped with the namespace asked for; all of them for all namespaces)
//!   and `Get` (the first of that list with the name), `storage/reststorage.go ::
//!   PackageManifestStorage.List` (label selectors; `metadata.name` the only field selector)
//!   and `Get` (404 `NotFound`), both with the icons stripped.
//!
//! Not modelled: deprecations (`olm.deprecations`, deprecated bundles), the Table printer
//! (`storage/printer.go`: kubectl prints NAME and AGE), watches.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use super::OLM;
use super::catalog::{Bundle, Catalog};
use crate::api::ApiServer;
use crate::api::aggregated::{Aggregated, Request};
use crate::api::resources::Resource;
use crate::api::selectors::LabelSelector;
use crate::api::status::{self, ApiError};

/// The group.
pub const GROUP: &str = "packages.operators.coreos.com";

/// The package-server; registered on an API with [`PackageServer::install`].
pub struct PackageServer {
    global_namespace: String,
    catalogs: Mutex<Vec<(String, Catalog)>>,
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

impl PackageServer {
    /// A package-server for `api`, with `--global-namespace` (OLM's `olm`, OpenShift's
    /// `openshift-marketplace`).
    pub fn install(api: &ApiServer, global_namespace: &str) -> Arc<PackageServer> {
        let p = Arc::new(PackageServer {
            global_namespace: global_namespace.to_string(),
            catalogs: Mutex::new(Vec::new()),
        });
        api.aggregate(p.clone());
        p
    }

    /// CatalogSources with `spec.image == image` serve `catalog` (their registry answers).
    pub fn serve(&self, image: &str, catalog: Catalog) {
        self.catalogs
            .lock()
            .expect("catalogs")
            .push((image.to_string(), catalog));
    }

    fn catalog(&self, image: &str) -> Option<Catalog> {
        let c = self.catalogs.lock().expect("catalogs");
        c.iter().find(|(i, _)| i == image).map(|(_, c)| c.clone())
    }

    /// Every manifest of the cache, by (namespace, package, catalog).
    fn cache(&self, api: &ApiServer) -> Vec<Value> {
        let mut out = Vec::new();
        for cs in api.list(OLM, "catalogsources") {
            if cs
                .pointer("/status/registryService")
                .is_none_or(Value::is_null)
            {
                continue;
            }
            let Some(catalog) = self.catalog(s(&cs, "/spec/image")) else {
                continue;
            };
            for package in catalog.packages() {
                if let Some(m) = manifest(&cs, &catalog, &package) {
                    out.push(m);
                }
            }
        }
        out.sort_by(|a, b| {
            let k = |m: &Value| {
                (
                    s(m, "/metadata/namespace").to_string(),
                    s(m, "/metadata/name").to_string(),
                    s(m, "/status/catalogSource").to_string(),
                )
            };
            k(a).cmp(&k(b))
        });
        out
    }

    /// `RegistryProvider.List`.
    fn list(&self, api: &ApiServer, namespace: Option<&str>) -> Vec<Value> {
        let all = self.cache(api);
        let Some(ns) = namespace else { return all };
        let of = |n: &str| {
            all.iter()
                .filter(|m| s(m, "/metadata/namespace") == n)
                .cloned()
                .collect::<Vec<_>>()
        };
        let mut out = of(ns);
        if ns != self.global_namespace {
            out.extend(of(&self.global_namespace));
        }
        for m in &mut out {
            m["metadata"]["namespace"] = json!(ns);
        }
        out
    }
}

/// Icons are stripped from every answer (`PackageManifestStorage.List` and `Get`).
fn strip_icons(mut m: Value) -> Value {
    if let Some(chs) = m
        .pointer_mut("/status/channels")
        .and_then(Value::as_array_mut)
    {
        for ch in chs {
            if let Some(d) = ch["currentCSVDesc"].as_object_mut() {
                d.remove("icon");
            }
        }
    }
    m
}

impl Aggregated for PackageServer {
    fn resources(&self) -> Vec<Resource> {
        vec![Resource {
            group: GROUP.into(),
            versions: vec!["v1".into()],
            plural: "packagemanifests".into(),
            singular: "packagemanifest".into(),
            kind: "PackageManifest".into(),
            namespaced: true,
            short_names: Vec::new(),
            categories: Vec::new(),
            verbs: vec!["get", "list"],
            status: false,
            crd: None,
        }]
    }

    fn serve(&self, api: &ApiServer, req: &Request<'_>) -> Result<Value, ApiError> {
        if let Some(name) = req.name {
            return self
                .list(api, req.namespace)
                .into_iter()
                .find(|m| s(m, "/metadata/name") == name)
                .map(strip_icons)
                .ok_or_else(|| status::not_found(GROUP, "packagemanifests", name));
        }
        let labels = LabelSelector::parse(req.query.get("labelSelector").map_or("", |s| s))
            .map_err(|e| status::bad_request(format!("unable to parse requirement: {e}")))?;
        // `nameFor`: `metadata.name=X` only; any other field is an error of the storage.
        let mut name = None;
        let fields = req.query.get("fieldSelector").map_or("", |s| s.as_str());
        for term in fields.split(',').filter(|t| !t.is_empty()) {
            match term
                .split_once("==")
                .or_else(|| term.split_once('='))
                .filter(|(f, _)| *f == "metadata.name")
            {
                Some((_, v)) => name = Some(v.to_string()),
                None => {
                    let field = term.split(['=', '!']).next().unwrap_or(term);
                    return Err(status::internal(format!(
                        "field label not supported: {field}"
                    )));
                }
            }
        }
        let items: Vec<Value> = self
            .list(api, req.namespace)
            .into_iter()
            .filter(|m| labels.matches(&m["metadata"]["labels"]))
            .filter(|m| name.as_deref().is_none_or(|n| s(m, "/metadata/name") == n))
            .map(strip_icons)
            .collect();
        Ok(
            json!({"kind": "PackageManifestList", "apiVersion": format!("{GROUP}/v1"),
                  "metadata": {}, "items": items}),
        )
    }
}

/// `newPackageManifest` for one package of a CatalogSource's registry.
fn manifest(cs: &Value, catalog: &Catalog, package: &str) -> Option<Value> {
    let default = catalog.default_channel(package).unwrap_or_default();
    let mut labels: Map<String, Value> = cs["metadata"]["labels"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    labels.insert("catalog".into(), json!(s(cs, "/metadata/name")));
    labels.insert(
        "catalog-namespace".into(),
        json!(s(cs, "/metadata/namespace")),
    );
    let mut channels = Vec::new();
    let mut provider: Option<Value> = None;
    let mut default_csv: Option<Value> = None;
    let mut default_elided = false;
    for ch in catalog.channels(package) {
        // GetBundleForChannel: the channel's head.
        let Some(head) = catalog.head(package, &ch) else {
            default_elided |= ch == default;
            continue;
        };
        let csv = head.csv().clone();
        if default_csv.is_none() || ch == default {
            default_csv = Some(csv.clone());
        }
        let mut entries: Vec<Bundle> = catalog.channel(package, &ch);
        entries.sort_by(|a, b| b.version.cmp(&a.version));
        let entries: Vec<Value> = entries
            .iter()
            .map(|b| json!({"name": b.name, "version": b.version.to_string()}))
            .collect();
        channels.push(json!({"name": ch, "currentCSV": s(&csv, "/metadata/name"),
            "currentCSVDesc": description(&csv), "entries": entries}));
        if (!default.is_empty() && ch == default) || provider.is_none() {
            let p = json!({"name": s(&csv, "/spec/provider/name"), "url": s(&csv, "/spec/provider/url")});
            labels.insert("provider".into(), p["name"].clone());
            labels.insert("provider-url".into(), p["url"].clone());
            provider = Some(p);
        }
    }
    if channels.is_empty() {
        return None;
    }
    let default = if default_elided {
        channels[0]["name"].as_str().unwrap_or_default().to_string()
    } else {
        default
    };
    if let Some(l) = default_csv
        .as_ref()
        .and_then(|c| c["metadata"]["labels"].as_object())
    {
        for (k, v) in l {
            labels.insert(k.clone(), v.clone());
        }
    }
    for (prefix, label) in [
        ("operatorframework.io/os", "operatorframework.io/os.linux"),
        (
            "operatorframework.io/arch",
            "operatorframework.io/arch.amd64",
        ),
    ] {
        if !labels.keys().any(|k| k.starts_with(prefix)) {
            labels.insert(label.into(), json!("supported"));
        }
    }
    let mut provider = provider.unwrap_or_else(|| json!({}));
    if let Some(p) = provider.as_object_mut() {
        p.retain(|_, v| v.as_str().is_some_and(|s| !s.is_empty()));
    }
    Some(json!({
        "kind": "PackageManifest", "apiVersion": format!("{GROUP}/v1"),
        "metadata": {"name": package, "namespace": s(cs, "/metadata/namespace"),
            "labels": labels, "creationTimestamp": cs["metadata"]["creationTimestamp"]},
        "spec": {},
        "status": {
            "catalogSource": s(cs, "/metadata/name"),
            "catalogSourceDisplayName": s(cs, "/spec/displayName"),
            "catalogSourcePublisher": s(cs, "/spec/publisher"),
            "catalogSourceNamespace": s(cs, "/metadata/namespace"),
            "provider": provider,
            "packageName": package,
            "channels": channels,
            "defaultChannel": default,
        }
    }))
}

/// `CreateCSVDescription`, with the JSON field names and `omitempty`s of `CSVDescription`.
fn description(csv: &Value) -> Value {
    let spec = &csv["spec"];
    let mut d = Map::new();
    let mut put = |k: &str, v: Value| {
        let empty = match &v {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
            _ => false,
        };
        if !empty {
            d.insert(k.to_string(), v);
        }
    };
    put("displayName", spec["displayName"].clone());
    put("icon", spec["icon"].clone());
    put("provider", {
        let mut p = Map::new();
        for k in ["name", "url"] {
            if let Some(v) = spec["provider"][k].as_str().filter(|v| !v.is_empty()) {
                p.insert(k.into(), json!(v));
            }
        }
        Value::Object(p)
    });
    put("annotations", csv["metadata"]["annotations"].clone());
    put("keywords", spec["keywords"].clone());
    put("links", spec["links"].clone());
    put("maintainers", spec["maintainers"].clone());
    put("maturity", spec["maturity"].clone());
    put("description", spec["description"].clone());
    put("installModes", spec["installModes"].clone());
    put("nativeApis", spec["nativeAPIs"].clone());
    put("minKubeVersion", spec["minKubeVersion"].clone());
    put("relatedImages", json!(images(csv)));
    // `version` and the two API definition structs have no omitempty effect (structs).
    d.insert(
        "version".into(),
        json!(spec["version"].as_str().unwrap_or_default()),
    );
    let described = |list: &Value, keys: &[&str]| -> Value {
        let items: Vec<Value> = list
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| {
                let mut o = Map::new();
                for k in keys {
                    let v = x[*k].as_str().unwrap_or_default();
                    if !v.is_empty() || matches!(*k, "name" | "version" | "kind" | "group") {
                        o.insert(k.to_string(), json!(v));
                    }
                }
                Value::Object(o)
            })
            .collect();
        json!(items)
    };
    let mut defs = |key: &str, at: &str, keys: &[&str]| {
        let mut o = Map::new();
        for part in ["owned", "required"] {
            let items = described(&spec[at][part], keys);
            if items.as_array().is_some_and(|a| !a.is_empty()) {
                o.insert(part.into(), items);
            }
        }
        d.insert(key.into(), Value::Object(o));
    };
    defs(
        "customresourcedefinitions",
        "customresourcedefinitions",
        &["name", "version", "kind", "displayName", "description"],
    );
    defs(
        "apiservicedefinitions",
        "apiservicedefinitions",
        &[
            "name",
            "group",
            "version",
            "kind",
            "displayName",
            "description",
        ],
    );
    Value::Object(d)
}

/// `GetImages`: the deployments' container images and `spec.relatedImages` (a set in Go, in
/// map order; sorted here).
fn images(csv: &Value) -> Vec<String> {
    let mut set = std::collections::BTreeSet::new();
    let deployments = csv
        .pointer("/spec/install/spec/deployments")
        .and_then(Value::as_array);
    for d in deployments.into_iter().flatten() {
        let spec = &d["spec"]["template"]["spec"];
        for key in ["initContainers", "containers"] {
            for c in spec[key].as_array().into_iter().flatten() {
                if let Some(i) = c["image"].as_str().filter(|i| !i.is_empty()) {
                    set.insert(i.to_string());
                }
            }
        }
    }
    for r in csv["spec"]["relatedImages"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(i) = r["image"].as_str().filter(|i| !i.is_empty()) {
            set.insert(i.to_string());
        }
    }
    set.into_iter().collect()
}
