//! The few API calls install and uninstall make, on untyped objects (JSON), so that OLM's
//! resources need no generated types. Errors are one line: the object, then the API server's
//! reason and message.
//!
//! Every call has a deadline ([`Calls`]): the sooner of [`CALL_TIMEOUT`] from its start and
//! the end of the command's `--timeout`, so that an API server that accepts the connection
//! and never answers ends the command within `--timeout` with an error naming the server, the
//! step and the request.

use std::future::Future;
use std::time::Duration;

use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::api::{GroupVersionKind, PostParams};
use kube::{Client, Error};
use serde_json::Value;
use tokio::time::Instant;

/// The longest one API call may take, whatever is left of `--timeout`: kube-apiserver ends
/// every request that is not a watch at 60 s itself (its `--request-timeout`; a 504), so a
/// call still unanswered then will never be answered by a working server, and no call a
/// working server completes is cut short.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// Connecting to the API server, TCP and TLS (kube's and client-go's dial timeout).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A cluster: its client, and the URL of its API server (named in errors; no credentials).
#[derive(Clone)]
pub struct Cluster {
    /// The client.
    pub client: Client,
    /// The API server, as `https://host:port`.
    pub server: String,
}

/// The API calls of one command, each with its deadline: the sooner of [`CALL_TIMEOUT`] from
/// its start and the end of `--timeout` (counted from [`Calls::new`], without the time a
/// confirmation waits for its answer: [`Calls::extend`]).
pub struct Calls {
    client: Client,
    server: String,
    timeout: Duration,
    deadline: Instant,
}

impl Calls {
    /// The calls of a command that has `timeout` from now.
    pub fn new(cluster: &Cluster, timeout: Duration) -> Calls {
        Calls {
            client: cluster.client.clone(),
            server: cluster.server.clone(),
            timeout,
            deadline: Instant::now() + timeout,
        }
    }

    /// What is left of `--timeout`.
    pub fn remaining(&self) -> Duration {
        self.deadline.saturating_duration_since(Instant::now())
    }

    /// Whether `--timeout` has run out.
    pub fn expired(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// Moves the end of `--timeout` on by `d` (the time a person took to answer).
    pub fn extend(&mut self, d: Duration) {
        self.deadline += d;
    }

    /// Sleeps `d`, or until `--timeout` runs out; false when it has.
    pub async fn pause(&self, d: Duration) -> bool {
        tokio::time::sleep_until(self.deadline.min(Instant::now() + d)).await;
        !self.expired()
    }

    /// The error of a wait that `--timeout` ended, with the last failed read if any.
    pub fn timed_out(&self, waiting_for: &str, last: Option<&str>) -> String {
        let mut m = format!(
            "timed out after {:?} waiting for {waiting_for}",
            self.timeout
        );
        if let Some(e) = last {
            m.push_str("; the last read failed: ");
            m.push_str(e);
        }
        m
    }

    /// `f`, the call `method path` of `step`, within its deadline; `Err` when no answer came.
    async fn call<T>(
        &self,
        method: &str,
        path: &str,
        step: &str,
        f: impl Future<Output = Result<T, Error>>,
    ) -> Result<Result<T, Error>, String> {
        let cap = Instant::now() + CALL_TIMEOUT;
        let ends = self.deadline.min(cap);
        match tokio::time::timeout_at(ends, f).await {
            Ok(r) => Ok(r),
            Err(_) if ends == self.deadline => Err(format!(
                "no answer from the API server {} before --timeout ({:?}) ran out, while {step} ({method} {path}): check the server address and the network, or raise --timeout",
                self.server, self.timeout
            )),
            Err(_) => Err(format!(
                "no answer from the API server {} within {CALL_TIMEOUT:?}, while {step} ({method} {path}): check the server address and the network",
                self.server
            )),
        }
    }

    /// One line: `<what>: <reason>: <message>`.
    pub fn describe(&self, what: &str, e: &Error) -> String {
        match e {
            Error::Api(s)
                if s.code == 404 && s.message.contains("could not find the requested resource") =>
            {
                format!(
                    "{what}: the API server does not serve this resource (is its CRD installed?)"
                )
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
                if m.contains("(Connect)") && m.contains("deadline has elapsed") {
                    m.push_str(&format!(
                        " (no connection within {CONNECT_TIMEOUT:?}: check the server address and the network)"
                    ));
                }
                format!("{what}: cannot reach the API server {}: {m}", self.server)
            }
        }
    }
}

/// A name or namespace as a segment of a request's path, as client-go's `rest.Request.Name` and
/// `Namespace` take it: refused unless it is a valid path segment name (`invalid resource name
/// %q: ...`), then percent-escaped as `url.URL.EscapedPath` writes it ([`olmctl::names::
/// path_segment`]). kube puts a name into the URL as it is given, so a name read from a CSV
/// (`../../api/v1/...`, `a?b=c`) would otherwise leave its segment.
pub fn segment(what: &str, value: &str) -> Result<String, String> {
    olmctl::names::path_segment(what, value).map_err(|e| format!("invalid {e}"))
}

/// The path of a resource's collection, or of one object of it, every segment escaped.
fn path(
    group: &str,
    version: &str,
    plural: &str,
    ns: Option<&str>,
    name: Option<&str>,
) -> Result<String, String> {
    let mut p = if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!(
            "/apis/{}/{}",
            segment("group", group)?,
            segment("version", version)?
        )
    };
    if let Some(ns) = ns {
        p.push_str("/namespaces/");
        p.push_str(&segment("namespace", ns)?);
    }
    p.push('/');
    p.push_str(&segment("resource", plural)?);
    if let Some(name) = name {
        p.push('/');
        p.push_str(&segment("resource name", name)?);
    }
    Ok(p)
}

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

/// PackageManifests: OLM's package-server, an aggregated API (read-only).
pub const PACKAGE_MANIFEST: Res = Res {
    group: "packages.operators.coreos.com",
    version: "v1",
    kind: "PackageManifest",
    plural: "packagemanifests",
    namespaced: true,
};

/// OLM v1's ClusterCatalogs.
pub const CLUSTER_CATALOG: Res = Res {
    group: "olm.operatorframework.io",
    version: "v1",
    kind: "ClusterCatalog",
    plural: "clustercatalogs",
    namespaced: false,
};
/// OLM v1's ClusterExtensions.
pub const CLUSTER_EXTENSION: Res = Res {
    group: "olm.operatorframework.io",
    version: "v1",
    kind: "ClusterExtension",
    plural: "clusterextensions",
    namespaced: false,
};
/// ServiceAccounts.
pub const SERVICE_ACCOUNT: Res = Res {
    group: "",
    version: "v1",
    kind: "ServiceAccount",
    plural: "serviceaccounts",
    namespaced: true,
};

const RBAC: &str = "rbac.authorization.k8s.io";
/// ClusterRoles.
pub const CLUSTER_ROLE: Res = Res {
    group: RBAC,
    version: "v1",
    kind: "ClusterRole",
    plural: "clusterroles",
    namespaced: false,
};
/// ClusterRoleBindings.
pub const CLUSTER_ROLE_BINDING: Res = Res {
    group: RBAC,
    version: "v1",
    kind: "ClusterRoleBinding",
    plural: "clusterrolebindings",
    namespaced: false,
};
/// Roles.
pub const ROLE: Res = Res {
    group: RBAC,
    version: "v1",
    kind: "Role",
    plural: "roles",
    namespaced: true,
};
/// RoleBindings.
pub const ROLE_BINDING: Res = Res {
    group: RBAC,
    version: "v1",
    kind: "RoleBinding",
    plural: "rolebindings",
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
            CLUSTER_CATALOG,
            CLUSTER_EXTENSION,
            SERVICE_ACCOUNT,
            CLUSTER_ROLE,
            CLUSTER_ROLE_BINDING,
            ROLE,
            ROLE_BINDING,
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

    /// The namespace, for a namespaced resource.
    fn scope<'a>(&self, ns: Option<&'a str>) -> Option<&'a str> {
        ns.filter(|_| self.namespaced)
    }

    fn dynamic(&self) -> Dynamic<'static> {
        (self.group, self.version, self.kind, self.plural)
    }

    /// `Kind ns/name` or `Kind name`.
    pub fn describe(&self, ns: Option<&str>, name: &str) -> String {
        describe_object(self.kind, self.scope(ns), name)
    }
}

fn describe_object(kind: &str, ns: Option<&str>, name: &str) -> String {
    match ns {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The HTTP status of an API error.
pub fn code(e: &Error) -> Option<u16> {
    match e {
        Error::Api(s) => Some(s.code),
        _ => None,
    }
}

fn to_value(o: DynamicObject) -> Value {
    serde_json::to_value(o).unwrap_or(Value::Null)
}

/// A resource given by group, version, kind and plural.
pub type Dynamic<'a> = (&'a str, &'a str, &'a str, &'a str);

/// The dynamic API of a resource, in namespace `ns` (escaped: [`segment`]) or in all of them.
fn dynamic(
    client: &Client,
    (group, version, kind, plural): Dynamic,
    ns: Option<&str>,
) -> Result<Api<DynamicObject>, String> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Ok(match ns {
        Some(ns) => Api::namespaced_with(client.clone(), &segment("namespace", ns)?, &ar),
        None => Api::all_with(client.clone(), &ar),
    })
}

/// GET; `None` on 404.
pub async fn get(c: &Calls, r: Res, ns: Option<&str>, name: &str) -> Result<Option<Value>, String> {
    get_dynamic(c, r.dynamic(), r.scope(ns), name).await
}

/// LIST in a namespace (`None`: in all of them, for a namespaced resource).
pub async fn list(c: &Calls, r: Res, ns: Option<&str>) -> Result<Vec<Value>, String> {
    list_selected(c, r, ns, None).await
}

/// LIST in a namespace (`None`: in all of them) of the objects a label selector selects.
pub async fn list_selected(
    c: &Calls,
    r: Res,
    ns: Option<&str>,
    labels: Option<&str>,
) -> Result<Vec<Value>, String> {
    let ns = r.scope(ns);
    let what = match ns {
        Some(ns) => format!("listing {} in namespace {ns}", r.plural),
        None if r.namespaced => format!("listing {} in all namespaces", r.plural),
        None => format!("listing {}", r.plural),
    };
    let p = path(r.group, r.version, r.plural, ns, None).map_err(|e| format!("{what}: {e}"))?;
    let mut lp = ListParams::default();
    if let Some(l) = labels {
        lp = lp.labels(l);
    }
    let api = dynamic(&c.client, r.dynamic(), ns).map_err(|e| format!("{what}: {e}"))?;
    let items = pages(c, &p, &what, &api, lp).await?;
    Ok(items.into_iter().map(to_value).collect())
}

/// Objects a LIST asks for at once: kubectl's `--chunk-size` default (client-go's pager).
pub const PAGE: u32 = 500;

/// Every object of a LIST, [`PAGE`] at a time (`limit` and `continue`), as kubectl lists
/// (client-go `tools/pager :: ListPager.List`): each page is one call with its own deadline,
/// and a continue token the server no longer knows (410 `Expired`) gets one full list instead
/// (`FullListIfExpired`).
async fn pages(
    c: &Calls,
    p: &str,
    what: &str,
    api: &Api<DynamicObject>,
    lp: ListParams,
) -> Result<Vec<DynamicObject>, String> {
    let mut items = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut page = lp.clone().limit(PAGE);
        page.continue_token = token.clone();
        match c.call("GET", p, what, api.list(&page)).await? {
            Ok(l) => {
                items.extend(l.items);
                match l.metadata.continue_.filter(|t| !t.is_empty()) {
                    Some(t) => token = Some(t),
                    None => return Ok(items),
                }
            }
            Err(e) if token.is_some() && code(&e) == Some(410) => {
                return match c.call("GET", p, what, api.list(&lp)).await? {
                    Ok(l) => Ok(l.items),
                    Err(e) => Err(c.describe(what, &e)),
                };
            }
            Err(e) => return Err(c.describe(what, &e)),
        }
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
pub async fn create(c: &Calls, r: Res, ns: Option<&str>, obj: &Value) -> Result<Created, String> {
    post(c, r, ns, obj, false).await
}

/// A server-side dry run of [`create`] (`dryRun=All`): what the API server would refuse
/// (schema, CEL rules, admission), with nothing stored. An object that exists passes.
pub async fn create_dry_run(
    c: &Calls,
    r: Res,
    ns: Option<&str>,
    obj: &Value,
) -> Result<(), String> {
    post(c, r, ns, obj, true).await.map(|_| ())
}

async fn post(
    c: &Calls,
    r: Res,
    ns: Option<&str>,
    obj: &Value,
    dry_run: bool,
) -> Result<Created, String> {
    let name = obj["metadata"]["name"].as_str().unwrap_or_default();
    let ns = r.scope(ns);
    let what = r.describe(ns, name);
    let o: DynamicObject =
        serde_json::from_value(obj.clone()).map_err(|e| format!("{what}: {e}"))?;
    let p = path(r.group, r.version, r.plural, ns, None).map_err(|e| format!("{what}: {e}"))?;
    let pp = PostParams {
        dry_run,
        ..PostParams::default()
    };
    let api = dynamic(&c.client, r.dynamic(), ns).map_err(|e| format!("{what}: {e}"))?;
    let doing = if dry_run { "checking" } else { "creating" };
    match c
        .call("POST", &p, &format!("{doing} {what}"), api.create(&pp, &o))
        .await?
    {
        Ok(_) => Ok(Created::Created),
        Err(e) if code(&e) == Some(409) => Ok(Created::Exists),
        Err(e) => Err(c.describe(&what, &e)),
    }
}

/// A JSON merge patch; `Ok(None)` on a conflict (a stale resourceVersion precondition).
pub async fn merge(
    c: &Calls,
    r: Res,
    ns: Option<&str>,
    name: &str,
    patch: &Value,
) -> Result<Option<Value>, String> {
    let ns = r.scope(ns);
    let what = r.describe(ns, name);
    let p =
        path(r.group, r.version, r.plural, ns, Some(name)).map_err(|e| format!("{what}: {e}"))?;
    let name = &segment("resource name", name).map_err(|e| format!("{what}: {e}"))?;
    let (params, patch) = (PatchParams::default(), Patch::Merge(patch));
    let api = dynamic(&c.client, r.dynamic(), ns).map_err(|e| format!("{what}: {e}"))?;
    match c
        .call(
            "PATCH",
            &p,
            &format!("updating {what}"),
            api.patch(name, &params, &patch),
        )
        .await?
    {
        Ok(o) => Ok(Some(to_value(o))),
        Err(e) if code(&e) == Some(409) => Ok(None),
        Err(e) => Err(c.describe(&what, &e)),
    }
}

/// Every object of a resource given by name (a CRD's custom resources), in all namespaces.
pub async fn list_all(
    c: &Calls,
    (group, version, kind, plural): Dynamic<'_>,
) -> Result<Vec<Value>, String> {
    let what = format!("listing {plural}.{group}");
    let p = path(group, version, plural, None, None).map_err(|e| format!("{what}: {e}"))?;
    let api = dynamic(&c.client, (group, version, kind, plural), None)
        .map_err(|e| format!("{what}: {e}"))?;
    let items = pages(c, &p, &what, &api, ListParams::default()).await?;
    Ok(items
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
        .collect())
}

/// GET of a resource given by name; `None` on 404.
pub async fn get_dynamic(
    c: &Calls,
    res: Dynamic<'_>,
    ns: Option<&str>,
    name: &str,
) -> Result<Option<Value>, String> {
    let (group, version, kind, plural) = res;
    let what = describe_object(kind, ns, name);
    let p = path(group, version, plural, ns, Some(name)).map_err(|e| format!("{what}: {e}"))?;
    let name = &segment("resource name", name).map_err(|e| format!("{what}: {e}"))?;
    let api = dynamic(&c.client, res, ns).map_err(|e| format!("{what}: {e}"))?;
    match c
        .call("GET", &p, &format!("reading {what}"), api.get(name))
        .await?
    {
        Ok(o) => Ok(Some(to_value(o))),
        Err(e) if code(&e) == Some(404) => Ok(None),
        Err(e) => Err(c.describe(&what, &e)),
    }
}

/// DELETE of a resource given by name (foreground is left to the API server's default);
/// `false` when it was gone.
pub async fn delete_dynamic(
    c: &Calls,
    res: Dynamic<'_>,
    ns: Option<&str>,
    name: &str,
) -> Result<bool, String> {
    let (group, version, kind, plural) = res;
    let what = describe_object(kind, ns, name);
    let p = path(group, version, plural, ns, Some(name)).map_err(|e| format!("{what}: {e}"))?;
    let name = &segment("resource name", name).map_err(|e| format!("{what}: {e}"))?;
    let params = DeleteParams::default();
    let api = dynamic(&c.client, res, ns).map_err(|e| format!("{what}: {e}"))?;
    match c
        .call(
            "DELETE",
            &p,
            &format!("deleting {what}"),
            api.delete(name, &params),
        )
        .await?
    {
        Ok(_) => Ok(true),
        Err(e) if code(&e) == Some(404) => Ok(false),
        Err(e) => Err(c.describe(&what, &e)),
    }
}

/// DELETE; `false` when it was gone.
pub async fn delete(c: &Calls, r: Res, ns: Option<&str>, name: &str) -> Result<bool, String> {
    delete_dynamic(c, r.dynamic(), r.scope(ns), name).await
}
