//! The few API calls install and uninstall make, on untyped objects (JSON), so that OLM's
//! resources need no generated types. Errors are one line: the object, then the API server's
//! reason and message.

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::api::{GroupVersionKind, PostParams};
use kube::{Client, Error};
use serde_json::Value;

/// A resource type: group, version, kind, plural, scope.
#[derive(Debug, Clone, Copy)]
pub struct Res {
    /// API group (`""` for core).
    pub group: &'static str,
    /// Version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Plural.
    pub plural: &'static str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
}

const OLM: &str = "operators.coreos.com";

/// Namespaces.
pub const NAMESPACE: Res = Res {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    namespaced: false,
};
/// CatalogSources.
pub const CATALOG_SOURCE: Res = Res {
    group: OLM,
    version: "v1alpha1",
    kind: "CatalogSource",
    plural: "catalogsources",
    namespaced: true,
};
/// OperatorGroups.
pub const OPERATOR_GROUP: Res = Res {
    group: OLM,
    version: "v1",
    kind: "OperatorGroup",
    plural: "operatorgroups",
    namespaced: true,
};
/// Subscriptions.
pub const SUBSCRIPTION: Res = Res {
    group: OLM,
    version: "v1alpha1",
    kind: "Subscription",
    plural: "subscriptions",
    namespaced: true,
};
/// InstallPlans.
pub const INSTALL_PLAN: Res = Res {
    group: OLM,
    version: "v1alpha1",
    kind: "InstallPlan",
    plural: "installplans",
    namespaced: true,
};
/// ClusterServiceVersions.
pub const CSV: Res = Res {
    group: OLM,
    version: "v1alpha1",
    kind: "ClusterServiceVersion",
    plural: "clusterserviceversions",
    namespaced: true,
};
/// CustomResourceDefinitions.
pub const CRD: Res = Res {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    namespaced: false,
};
/// olmctl-operator's UpgradePolicies.
pub const UPGRADE_POLICY: Res = Res {
    group: "olmctl.dev",
    version: "v1",
    kind: "UpgradePolicy",
    plural: "upgradepolicies",
    namespaced: true,
};

impl Res {
    /// The resource of a manifest `olmctl install` writes.
    pub fn of(obj: &Value) -> Option<Res> {
        let kind = obj["kind"].as_str()?;
        [
            NAMESPACE,
            CATALOG_SOURCE,
            OPERATOR_GROUP,
            SUBSCRIPTION,
            INSTALL_PLAN,
            CSV,
            CRD,
            UPGRADE_POLICY,
        ]
        .into_iter()
        .find(|r| r.kind == kind)
        .map(|mut r| {
            // The UpgradePolicy document may be the deprecated v1alpha1.
            if r.kind == UPGRADE_POLICY.kind && obj["apiVersion"] == "olmctl.dev/v1alpha1" {
                r.version = "v1alpha1";
            }
            r
        })
    }

    fn api(&self, client: &Client, ns: Option<&str>) -> Api<DynamicObject> {
        let ar = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(self.group, self.version, self.kind),
            self.plural,
        );
        match (self.namespaced, ns) {
            (true, Some(ns)) => Api::namespaced_with(client.clone(), ns, &ar),
            _ => Api::all_with(client.clone(), &ar),
        }
    }

    /// `Kind ns/name` or `Kind name`.
    pub fn describe(&self, ns: Option<&str>, name: &str) -> String {
        match ns.filter(|_| self.namespaced) {
            Some(ns) => format!("{} {ns}/{name}", self.kind),
            None => format!("{} {name}", self.kind),
        }
    }
}

/// The HTTP status of an API error.
pub fn code(e: &Error) -> Option<u16> {
    match e {
        Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// One line: `<what>: <reason>: <message>`.
pub fn describe(what: &str, e: &Error) -> String {
    match e {
        Error::Api(s)
            if s.code == 404 && s.message.contains("could not find the requested resource") =>
        {
            format!("{what}: the API server does not serve this resource (is its CRD installed?)")
        }
        Error::Api(s) => format!("{what}: {} ({}): {}", s.reason, s.code, s.message),
        e => {
            // The causes too: "client error (Connect)" alone does not say "connection refused".
            let mut m = e.to_string();
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                let c_text = c.to_string();
                if !m.contains(&c_text) {
                    m.push_str(": ");
                    m.push_str(&c_text);
                }
                cause = c.source();
            }
            format!("{what}: cannot reach the API server: {m}")
        }
    }
}

fn to_value(o: DynamicObject) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

/// GET; `None` on 404.
pub async fn get(
    client: &Client,
    r: Res,
    ns: Option<&str>,
    name: &str,
) -> Result<Option<Value>, String> {
    match r.api(client, ns).get(name).await {
        Ok(o) => Ok(Some(to_value(o))),
        Err(e) if code(&e) == Some(404) => Ok(None),
        Err(e) => Err(describe(&r.describe(ns, name), &e)),
    }
}

/// LIST in a namespace.
pub async fn list(client: &Client, r: Res, ns: Option<&str>) -> Result<Vec<Value>, String> {
    match r.api(client, ns).list(&ListParams::default()).await {
        Ok(l) => Ok(l.items.into_iter().map(to_value).collect()),
        Err(e) => Err(describe(&format!("listing {}", r.plural), &e)),
    }
}

/// What a create did.
#[derive(Debug, PartialEq, Eq)]
pub enum Created {
    /// Created.
    Created,
    /// It existed.
    Exists,
}

/// POST; an existing object is [`Created::Exists`].
pub async fn create(
    client: &Client,
    r: Res,
    ns: Option<&str>,
    obj: &Value,
) -> Result<Created, String> {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let what = r.describe(ns, name);
    let o: DynamicObject =
        serde_json::from_value(obj.clone()).map_err(|e| format!("{what}: {e}"))?;
    match r.api(client, ns).create(&PostParams::default(), &o).await {
        Ok(_) => Ok(Created::Created),
        Err(e) if code(&e) == Some(409) => Ok(Created::Exists),
        Err(e) => Err(describe(&what, &e)),
    }
}

/// A JSON merge patch; `Ok(None)` on a conflict (a stale resourceVersion precondition).
pub async fn merge(
    client: &Client,
    r: Res,
    ns: Option<&str>,
    name: &str,
    patch: &Value,
) -> Result<Option<Value>, String> {
    match r
        .api(client, ns)
        .patch(name, &PatchParams::default(), &Patch::Merge(patch))
        .await
    {
        Ok(o) => Ok(Some(to_value(o))),
        Err(e) if code(&e) == Some(409) => Ok(None),
        Err(e) => Err(describe(&r.describe(ns, name), &e)),
    }
}

/// The dynamic API of a resource given by group, version, kind and plural.
fn dynamic(
    client: &Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    ns: Option<&str>,
) -> Api<DynamicObject> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    match ns {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
        None => Api::all_with(client.clone(), &ar),
    }
}

/// Every object of a resource given by name (a CRD's custom resources), in all namespaces.
pub async fn list_all(
    client: &Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Result<Vec<Value>, String> {
    match dynamic(client, group, version, kind, plural, None)
        .list(&ListParams::default())
        .await
    {
        Ok(l) => Ok(l
            .items
            .into_iter()
            .map(|o| {
                let mut v = to_value(o);
                v["apiVersion"] = Value::String(if group.is_empty() {
                    version.to_string()
                } else {
                    format!("{group}/{version}")
                });
                v["kind"] = Value::String(kind.to_string());
                v
            })
            .collect()),
        Err(e) => Err(describe(&format!("listing {plural}.{group}"), &e)),
    }
}

/// GET of a resource given by name; `None` on 404.
pub async fn get_dynamic(
    client: &Client,
    (group, version, kind, plural): (&str, &str, &str, &str),
    ns: Option<&str>,
    name: &str,
) -> Result<Option<Value>, String> {
    match dynamic(client, group, version, kind, plural, ns)
        .get(name)
        .await
    {
        Ok(o) => Ok(Some(to_value(o))),
        Err(e) if code(&e) == Some(404) => Ok(None),
        Err(e) => Err(describe(&format!("{kind} {name}"), &e)),
    }
}

/// DELETE of a resource given by name; `false` when it was gone.
pub async fn delete_dynamic(
    client: &Client,
    (group, version, kind, plural): (&str, &str, &str, &str),
    ns: Option<&str>,
    name: &str,
) -> Result<bool, String> {
    match dynamic(client, group, version, kind, plural, ns)
        .delete(name, &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if code(&e) == Some(404) => Ok(false),
        Err(e) => Err(describe(&format!("{kind} {name}"), &e)),
    }
}

/// DELETE (foreground is left to the API server's default); `false` when it was gone.
pub async fn delete(client: &Client, r: Res, ns: Option<&str>, name: &str) -> Result<bool, String> {
    match r
        .api(client, ns)
        .delete(name, &DeleteParams::default())
        .await
    {
        Ok(_) => Ok(true),
        Err(e) if code(&e) == Some(404) => Ok(false),
        Err(e) => Err(describe(&r.describe(ns, name), &e)),
    }
}
