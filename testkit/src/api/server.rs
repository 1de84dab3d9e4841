//! The API server: requests in, `Status` errors or objects out, as kube-apiserver answers them.
//! See the module documentation of [`super`] for what is modelled.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use http::{HeaderMap, Method, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::{Value, json};
use tokio::sync::{Notify, broadcast};

use super::aggregated::{self, Aggregated};
use super::convert::{self, Resolver};
use super::gc::{self, Deleted, Propagation};
use super::openapi;
use super::patch::{self, PatchType};
use super::protobuf;
use super::rbac::{self, Attributes, UserInfo};
use super::resources::{self, Resource};
use super::schema;
use super::selectors::{FieldSelector, LabelSelector};
use super::status::{self, ApiError, Cause};
use super::store::{Event, Key, State};

/// The response body type.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

fn full(v: impl Into<Bytes>) -> Body {
    Full::new(v.into()).boxed_unsync()
}

/// One request as the API saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    /// The method.
    pub method: Method,
    /// Path and query.
    pub uri: String,
    /// The body (JSON), if any.
    pub body: Value,
    /// Who sent it.
    pub user: String,
    /// The HTTP status answered (0 while the request is served, e.g. a hanging one).
    pub code: u16,
}

struct Injected {
    method: Method,
    path_contains: String,
    status: StatusCode,
    reason: String,
}

/// A function called with each request's method and path before it is served (a test double
/// of a controller can act there, in step with the client).
pub type Hook = Arc<dyn Fn(&Method, &str) + Send + Sync>;

/// The clock that stamps `creationTimestamp`, `deletionTimestamp` and conditions.
#[derive(Clone)]
enum Clock {
    Fixed(String),
    System,
}

struct Inner {
    state: Mutex<State>,
    owned: Mutex<HashMap<Key, patch::Owned>>,
    events: broadcast::Sender<Arc<Event>>,
    hook: Mutex<Option<Hook>>,
    clock: Mutex<Clock>,
    version: Mutex<Value>,
    resolver: Mutex<Option<Resolver>>,
    tokens: Mutex<HashMap<String, UserInfo>>,
    partitioned: Mutex<HashSet<String>>,
    healed: Notify,
    log: Mutex<Vec<Logged>>,
    injected: Mutex<Vec<Injected>>,
    bookmark_every: Mutex<Duration>,
    bookmarks: broadcast::Sender<()>,
    aggregated: Mutex<Vec<Arc<dyn Aggregated>>>,
}

/// The in-memory API server. Clones share the state.
#[derive(Clone)]
pub struct ApiServer {
    inner: Arc<Inner>,
}

impl Default for ApiServer {
    fn default() -> Self {
        Self::new()
    }
}

/// The admin token every `ApiServer` knows (group `system:masters`).
pub const ADMIN_TOKEN: &str = "testkit-admin-token";

/// How a request reached the API.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Transport {
    /// Through the tower service of an in-process `kube::Client`: no token means the admin.
    InProcess,
    /// Over HTTP: no token means `system:anonymous`.
    Http,
}

fn json_response(code: StatusCode, v: &Value, warnings: &[String]) -> Response<Body> {
    let mut b = Response::builder()
        .status(code)
        .header("content-type", "application/json");
    for w in warnings {
        b = b.header("warning", format!("299 - \"{}\"", w.replace('"', "\\\"")));
    }
    b.body(full(v.to_string().into_bytes())).expect("response")
}

fn error_response(e: ApiError) -> Response<Body> {
    json_response(e.code, &e.body, &[])
}

fn now_rfc3339() -> String {
    let t = jiff::Timestamp::now();
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The parsed request path.
#[derive(Debug, Clone)]
struct Target {
    group: String,
    version: String,
    namespace: Option<String>,
    plural: String,
    name: Option<String>,
    sub: Option<String>,
}

fn target(path: &str) -> Option<Target> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version, rest) = match parts.as_slice() {
        ["api", v, rest @ ..] if !rest.is_empty() => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] if !rest.is_empty() => (g.to_string(), v.to_string(), rest),
        _ => return None,
    };
    let (namespace, rest) = match rest {
        ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some(ns.to_string()), rest),
        r => (None, r),
    };
    let (plural, name, sub) = match rest {
        [p] => (p, None, None),
        [p, n] => (p, Some(n.to_string()), None),
        [p, n, s] => (p, Some(n.to_string()), Some(s.to_string())),
        _ => return None,
    };
    Some(Target {
        group,
        version,
        namespace,
        plural: plural.to_string(),
        name,
        sub,
    })
}

fn query(uri: &http::Uri) -> BTreeMap<String, String> {
    uri.query()
        .unwrap_or_default()
        .split('&')
        .filter(|s| !s.is_empty())
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            (k.to_string(), percent_decode(v))
        })
        .collect()
}

/// `%XX` and `+` decoding of a query value.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Some(x) = std::str::from_utf8(&b[i + 1..i + 3])
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(x);
            i += 3;
            continue;
        }
        out.push(if b[i] == b'+' { b' ' } else { b[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The fields a field selector may name on built-in kinds (each registry's
/// `GetAttrs`/`SelectableFields`), besides `metadata.name` and `metadata.namespace`.
fn field_value(plural: &str, obj: &Value, field: &str) -> Option<Option<String>> {
    let s = |p: &str| Some(obj.pointer(p).and_then(Value::as_str).map(str::to_string));
    match (plural, field) {
        (_, "metadata.name") => s("/metadata/name"),
        (_, "metadata.namespace") => s("/metadata/namespace"),
        ("events", f) if f.starts_with("involvedObject.") => s(&format!(
            "/involvedObject/{}",
            &f["involvedObject.".len()..]
        )),
        ("events", "reason") => s("/reason"),
        ("events", "type") => s("/type"),
        ("secrets", "type") => s("/type"),
        ("pods", "spec.nodeName") => s("/spec/nodeName"),
        ("pods", "status.phase") => s("/status/phase"),
        _ => None,
    }
}

/// An object's verdict against the request's selectors.
struct Selectors {
    label: LabelSelector,
    field: FieldSelector,
    plural: String,
}

impl Selectors {
    fn parse(q: &BTreeMap<String, String>, r: &Resource) -> Result<Selectors, ApiError> {
        let label = LabelSelector::parse(q.get("labelSelector").map_or("", |s| s.as_str()))
            .map_err(|e| status::bad_request(format!("unable to parse requirement: {e}")))?;
        let field = FieldSelector::parse(q.get("fieldSelector").map_or("", |s| s.as_str()))
            .map_err(status::bad_request)?;
        for (f, _, _) in field.requirements() {
            let ok = match f.as_str() {
                "metadata.name" => true,
                "metadata.namespace" => r.namespaced,
                other => r.crd.is_none() && field_value(&r.plural, &json!({}), other).is_some(),
            };
            if !ok {
                return Err(status::bad_request(format!(
                    "field label not supported: {f}"
                )));
            }
        }
        Ok(Selectors {
            label,
            field,
            plural: r.plural.clone(),
        })
    }

    fn matches(&self, obj: &Value) -> bool {
        self.label.matches(&obj["metadata"]["labels"])
            && self
                .field
                .matches(&|f| field_value(&self.plural, obj, f).flatten())
    }
}

impl ApiServer {
    /// An API with the default namespaces and the bootstrap RBAC policy, on a fixed clock
    /// (`2026-09-14T08:00:00Z`).
    pub fn new() -> Self {
        let (events, _) = broadcast::channel(65_536);
        let (bookmarks, _) = broadcast::channel(16);
        let api = ApiServer {
            inner: Arc::new(Inner {
                state: Mutex::new(State::default()),
                owned: Mutex::new(HashMap::new()),
                events,
                hook: Mutex::new(None),
                clock: Mutex::new(Clock::Fixed("2026-09-14T08:00:00Z".into())),
                version: Mutex::new(json!({
                    "major": "1", "minor": "30", "gitVersion": "v1.30.2",
                    "gitCommit": "39683505b630ff2121012f3c5b16215a1449d5ed", "gitTreeState": "clean",
                    "buildDate": "2024-06-11T20:21:00Z", "goVersion": "go1.22.4", "compiler": "gc",
                    "platform": "linux/amd64"})),
                resolver: Mutex::new(None),
                tokens: Mutex::new(HashMap::from([(
                    ADMIN_TOKEN.to_string(),
                    UserInfo::admin(),
                )])),
                partitioned: Mutex::new(HashSet::new()),
                healed: Notify::new(),
                log: Mutex::new(Vec::new()),
                injected: Mutex::new(Vec::new()),
                bookmark_every: Mutex::new(Duration::from_secs(5)),
                bookmarks,
                aggregated: Mutex::new(Vec::new()),
            }),
        };
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            api.insert(
                "namespaces",
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
            );
        }
        for o in rbac::bootstrap_policy() {
            let plural = match o["kind"].as_str() {
                Some("ClusterRole") => "clusterroles",
                _ => "clusterrolebindings",
            };
            api.insert(plural, o);
        }
        api
    }

    fn now(&self) -> String {
        match &*self.inner.clock.lock().expect("lock") {
            Clock::Fixed(t) => t.clone(),
            Clock::System => now_rfc3339(),
        }
    }

    /// Stamps objects with `t` from now on.
    pub fn set_now(&self, t: &str) {
        *self.inner.clock.lock().expect("lock") = Clock::Fixed(t.to_string());
    }

    /// Stamps objects with the wall clock from now on (for real processes that compare
    /// timestamps with their own clock).
    pub fn use_system_clock(&self) {
        *self.inner.clock.lock().expect("lock") = Clock::System;
    }

    /// The `/version` body (`version.Info`).
    pub fn set_version(&self, info: Value) {
        *self.inner.version.lock().expect("lock") = info;
    }

    /// Where conversion webhooks are reached ([`Resolver`]).
    pub fn set_resolver(&self, r: Resolver) {
        *self.inner.resolver.lock().expect("lock") = Some(r);
    }

    /// How often watches that asked for bookmarks get one.
    pub fn set_bookmark_interval(&self, every: Duration) {
        *self.inner.bookmark_every.lock().expect("lock") = every;
    }

    /// A new bearer token for `user`.
    pub fn token_for(&self, user: UserInfo) -> String {
        let mut t = self.inner.tokens.lock().expect("lock");
        let token = format!(
            "testkit-token-{:04}-{}",
            t.len(),
            user.name.replace(':', "-")
        );
        t.insert(token.clone(), user);
        token
    }

    /// Requests with `token` hang (no answer) until [`ApiServer::heal`]: a client cut off
    /// from the API server.
    pub fn partition(&self, token: &str) {
        self.inner
            .partitioned
            .lock()
            .expect("lock")
            .insert(token.to_string());
    }

    /// Ends a [`ApiServer::partition`].
    pub fn heal(&self, token: &str) {
        self.inner.partitioned.lock().expect("lock").remove(token);
        self.inner.healed.notify_waiters();
    }

    /// Forgets the watch history: watches from an older resourceVersion get `410 Expired`.
    pub fn compact(&self) {
        self.inner.state.lock().expect("lock").compact();
    }

    /// Sends every watch that asked for bookmarks a `BOOKMARK` now.
    pub fn bookmark(&self) {
        let _ = self.inner.bookmarks.send(());
    }

    fn commit(&self, st: &mut State) {
        for e in st.pending.drain(..) {
            let _ = self.inner.events.send(e);
        }
    }

    /// Stores `obj` (a full object with apiVersion, kind and metadata) as it is, status
    /// included, with no admission and no validation (what a test seeds, as if written to
    /// etcd): a missing namespace is created, and a CRD is established at once. `plural`
    /// names its resource. An object of that name is replaced.
    pub fn insert(&self, plural: &str, mut obj: Value) -> Value {
        let group = obj["apiVersion"]
            .as_str()
            .and_then(|a| a.rsplit_once('/'))
            .map_or("", |(g, _)| g)
            .to_string();
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let now = self.now();
        let mut st = self.inner.state.lock().expect("lock");
        if !ns.is_empty() {
            let k = Key::new("", "namespaces", "", &ns);
            if !st.objects.contains_key(&k) {
                let n = namespace_defaults(
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                );
                st.create(k, n, &now);
            }
        }
        if group.is_empty() && plural == "namespaces" {
            obj = namespace_defaults(obj);
        }
        let is_crd = group == "apiextensions.k8s.io" && plural == "customresourcedefinitions";
        if is_crd {
            crd_status(&mut obj, None, &now);
        }
        let key = Key::new(
            &group,
            plural,
            &ns,
            obj["metadata"]["name"].as_str().unwrap_or_default(),
        );
        let v = if st.objects.contains_key(&key) {
            let mut o = obj;
            o["metadata"]["resourceVersion"] =
                st.objects[&key]["metadata"]["resourceVersion"].clone();
            st.update(&key, o, false)
        } else {
            st.create(key, obj, &now)
        };
        if is_crd {
            st.refresh_resources();
        }
        gc::settle(&mut st, &now);
        self.commit(&mut st);
        v
    }

    /// The resource `apiVersion` and `kind` are served as (its plural, and whether it is
    /// namespaced), as discovery has it: the built-in kinds and the stored CRDs'.
    pub fn served(&self, api_version: &str, kind: &str) -> Option<(String, bool)> {
        let st = self.inner.state.lock().expect("lock");
        st.resource_of(api_version, kind)
            .map(|r| (r.plural.clone(), r.namespaced))
    }

    /// The object at a key, if any (storage version).
    pub fn get(&self, group: &str, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        let st = self.inner.state.lock().expect("lock");
        st.objects
            .get(&Key::new(group, plural, namespace, name))
            .cloned()
    }

    /// Every object of a resource, in key order (storage version).
    pub fn list(&self, group: &str, plural: &str) -> Vec<Value> {
        let st = self.inner.state.lock().expect("lock");
        st.of(group, plural, None).map(|(_, v)| v.clone()).collect()
    }

    /// Every object of a resource in namespace `ns`, in key order (storage version).
    pub fn list_in(&self, group: &str, plural: &str, ns: &str) -> Vec<Value> {
        let st = self.inner.state.lock().expect("lock");
        st.of(group, plural, Some(ns))
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Applies a merge patch with no admission (a controller double's write): to the main
    /// resource, or only to `status` when `status`. Returns false and writes nothing when the
    /// object is gone: a controller racing a delete gets 404 NotFound on its write, drops it
    /// and sees the delete event next (OLM's syncs and the kubelet's status manager both
    /// ignore NotFound on status writes), so a double must not fail there either.
    pub fn merge(
        &self,
        group: &str,
        plural: &str,
        ns: &str,
        name: &str,
        patch: &Value,
        status: bool,
    ) -> bool {
        let now = self.now();
        let mut st = self.inner.state.lock().expect("lock");
        let key = Key::new(group, plural, ns, name);
        let Some(old) = st.objects.get(&key).cloned() else {
            return false;
        };
        let mut new = old.clone();
        json_patch::merge(&mut new, patch);
        let has_status = st.resource(group, plural).is_some_and(|r| r.status);
        let new = split_status(&old, new, status, has_status);
        st.update(&key, new, has_status);
        if group == "apiextensions.k8s.io" && plural == "customresourcedefinitions" {
            st.refresh_resources();
        }
        gc::settle(&mut st, &now);
        self.commit(&mut st);
        true
    }

    /// Deletes an object as `DELETE` does (finalizers first, then the garbage collector).
    pub fn delete(&self, group: &str, plural: &str, ns: &str, name: &str) {
        let now = self.now();
        let mut st = self.inner.state.lock().expect("lock");
        let key = Key::new(group, plural, ns, name);
        gc::delete(&mut st, &key, Propagation::Background, &now);
        if group == "apiextensions.k8s.io" && plural == "customresourcedefinitions" {
            st.refresh_resources();
        }
        self.commit(&mut st);
    }

    /// A handle that wakes on every change of any object (tests wait on it instead of
    /// sleeping).
    pub fn changes(&self) -> Changes {
        Changes(self.inner.events.subscribe())
    }

    /// The requests so far.
    pub fn log(&self) -> Vec<Logged> {
        self.inner.log.lock().expect("lock").clone()
    }

    /// Answers the next request with `method` whose path contains `path_contains` with
    /// `status` (e.g. 409 Conflict) instead of serving it.
    pub fn fail_next(&self, method: Method, path_contains: &str, status: StatusCode, reason: &str) {
        self.inner.injected.lock().expect("lock").push(Injected {
            method,
            path_contains: path_contains.into(),
            status,
            reason: reason.into(),
        });
    }

    /// Calls `hook` before serving each request (replacing any earlier hook).
    pub fn set_hook(&self, hook: Hook) {
        *self.inner.hook.lock().expect("lock") = Some(hook);
    }

    /// A `kube::Client` of the cluster admin, in-process.
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.clone(), "default")
    }

    /// A `kube::Client` that authenticates with `token`, in-process.
    pub fn client_with_token(&self, token: &str) -> kube::Client {
        kube::Client::new(
            WithToken {
                api: self.clone(),
                token: token.to_string(),
            },
            "default",
        )
    }

    /// Serves over plain HTTP/1.1 on `listener` until the task is dropped.
    pub async fn serve_http(self, listener: tokio::net::TcpListener) {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            tokio::spawn(self.clone().serve_connection(stream));
        }
    }

    /// Serves over HTTPS/1.1 on `listener` until the task is dropped, with the fixture
    /// certificate of [`super::tls`].
    pub async fn serve_https(self, listener: tokio::net::TcpListener) {
        let acceptor = super::tls::acceptor();
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let me = self.clone();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                if let Ok(stream) = acceptor.accept(stream).await {
                    me.serve_connection(stream).await;
                }
            });
        }
    }

    /// Answers the HTTP/1.1 requests of one connection (plain or TLS).
    async fn serve_connection<IO>(self, io: IO)
    where
        IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
            let me = self.clone();
            async move { Ok::<_, Infallible>(me.respond_to(req, Transport::Http).await) }
        });
        let _ = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(io), svc)
            .await;
    }

    /// Serves over HTTP on a loopback port from a thread of its own (for processes whose
    /// client sends a bearer token over plain HTTP, as kube-rs does); returns
    /// `http://127.0.0.1:<port>`. kubectl sends no credentials to an `http://` server: use
    /// [`ApiServer::serve_tls_on_loopback`] for it.
    pub fn serve_on_loopback(&self) -> String {
        self.loopback(false)
    }

    /// Serves over HTTPS on a loopback port from a thread of its own; returns
    /// `https://127.0.0.1:<port>`, for which [`kubeconfig`] trusts the fixture CA. What
    /// kubectl needs: client-go's `clientcmd` reads a kubeconfig's token only for an
    /// `https://` server ([`super::tls`]).
    pub fn serve_tls_on_loopback(&self) -> String {
        self.loopback(true)
    }

    fn loopback(&self, tls: bool) -> String {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        l.set_nonblocking(true).expect("nonblocking");
        let me = self.clone();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let l = tokio::net::TcpListener::from_std(l).expect("listener");
                if tls {
                    me.serve_https(l).await;
                } else {
                    me.serve_http(l).await;
                }
            });
        });
        let scheme = if tls { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{port}")
    }

    async fn respond_to<B: http_body::Body<Data = Bytes>>(
        &self,
        req: Request<B>,
        transport: Transport,
    ) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let bytes = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        self.handle(parts.method, parts.uri, parts.headers, bytes, transport)
            .await
    }

    fn identify(
        &self,
        headers: &HeaderMap,
        transport: Transport,
    ) -> Result<(UserInfo, Option<String>), ApiError> {
        let token = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::to_string);
        let user = match &token {
            Some(t) => self
                .inner
                .tokens
                .lock()
                .expect("lock")
                .get(t)
                .cloned()
                .ok_or_else(status::unauthorized)?,
            None if transport == Transport::InProcess => UserInfo::admin(),
            None => UserInfo {
                name: "system:anonymous".into(),
                groups: vec!["system:unauthenticated".into()],
            },
        };
        // Impersonation (`filters/impersonation.go :: WithImpersonation`): only the admin
        // here may impersonate.
        if let Some(as_user) = headers
            .get("impersonate-user")
            .and_then(|v| v.to_str().ok())
        {
            if !user.groups.iter().any(|g| g == "system:masters") {
                return Err(status::forbidden(
                    "",
                    "users",
                    as_user,
                    &format!(
                        "User \"{}\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope",
                        user.name
                    ),
                ));
            }
            let mut groups: Vec<String> = headers
                .get_all("impersonate-group")
                .iter()
                .filter_map(|v| v.to_str().ok().map(str::to_string))
                .collect();
            if let Some(rest) = as_user.strip_prefix("system:serviceaccount:")
                && let Some((ns, _)) = rest.split_once(':')
            {
                groups.push("system:serviceaccounts".into());
                groups.push(format!("system:serviceaccounts:{ns}"));
            }
            if as_user != "system:anonymous" {
                groups.push("system:authenticated".into());
            }
            return Ok((
                UserInfo {
                    name: as_user.to_string(),
                    groups,
                },
                token,
            ));
        }
        Ok((user, token))
    }

    /// The cluster's roles and bindings, as the RBAC authorizer reads them.
    pub fn rbac(&self) -> Vec<Value> {
        Self::rbac_objects(&self.inner.state.lock().expect("lock"))
    }

    fn rbac_objects(st: &State) -> Vec<Value> {
        st.objects
            .iter()
            .filter(|(k, _)| k.group == "rbac.authorization.k8s.io")
            .map(|(_, v)| v.clone())
            .collect()
    }

    async fn handle(
        &self,
        method: Method,
        uri: http::Uri,
        headers: HeaderMap,
        body: Bytes,
        transport: Transport,
    ) -> Response<Body> {
        let path = uri.path().to_string();
        let (user, token) = match self.identify(&headers, transport) {
            Ok(u) => u,
            Err(e) => return error_response(e),
        };
        // A client cut off from the API: no answer until healed.
        if let Some(t) = &token {
            loop {
                let notified = self.inner.healed.notified();
                if !self.inner.partitioned.lock().expect("lock").contains(t) {
                    break;
                }
                notified.await;
            }
        }
        let hook = self.inner.hook.lock().expect("lock").clone();
        if let Some(h) = hook {
            h(&method, &path);
        }
        // Bodies are JSON, or protobuf from typed Go clients ([`protobuf`]).
        let ctype = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let (parsed, unreadable) = if body.is_empty() {
            (Value::Null, None)
        } else if protobuf::is_protobuf(ctype) {
            match protobuf::decode(&body) {
                Ok(v) => (v, None),
                Err(protobuf::Error::Malformed(m)) => (Value::Null, Some(status::bad_request(m))),
                Err(protobuf::Error::Unsupported(m)) => (
                    Value::Null,
                    Some(ApiError::new(
                        StatusCode::UNSUPPORTED_MEDIA_TYPE,
                        "UnsupportedMediaType",
                        format!(
                            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml ({m})"
                        ),
                        None,
                    )),
                ),
            }
        } else {
            (serde_json::from_slice(&body).unwrap_or(Value::Null), None)
        };
        let entry = {
            let mut log = self.inner.log.lock().expect("lock");
            log.push(Logged {
                method: method.clone(),
                uri: uri.to_string(),
                body: parsed.clone(),
                user: user.name.clone(),
                code: 0,
            });
            log.len() - 1
        };
        let resp = match unreadable {
            Some(e) => error_response(e),
            None => {
                self.handle_logged(method, uri, &path, parsed, &headers, body, &user)
                    .await
            }
        };
        if let Some(l) = self.inner.log.lock().expect("lock").get_mut(entry) {
            l.code = resp.status().as_u16();
        }
        resp
    }

    #[allow(clippy::too_many_arguments)]
    async fn handle_logged(
        &self,
        method: Method,
        uri: http::Uri,
        path: &str,
        parsed: Value,
        headers: &HeaderMap,
        body: Bytes,
        user: &UserInfo,
    ) -> Response<Body> {
        {
            let mut inj = self.inner.injected.lock().expect("lock");
            if let Some(i) = inj
                .iter()
                .position(|f| f.method == method && path.contains(&f.path_contains))
            {
                let f = inj.remove(i);
                return error_response(ApiError::new(
                    f.status,
                    &f.reason,
                    format!("injected {}", f.reason),
                    None,
                ));
            }
        }
        let q = query(&uri);
        let ctype = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/json")
            .to_string();
        match self
            .route(&method, path, &q, &ctype, &body, parsed, user)
            .await
        {
            Ok(r) => r,
            Err(e) => error_response(e),
        }
    }

    fn non_resource(
        &self,
        path: &str,
        q: &BTreeMap<String, String>,
        user: &UserInfo,
    ) -> Option<Result<Response<Body>, ApiError>> {
        let mut redirect = None;
        let body = match path {
            "/version" | "/version/" => self.inner.version.lock().expect("lock").clone(),
            "/healthz" | "/readyz" | "/livez" => {
                return Some(Ok(Response::builder()
                    .status(200)
                    .header("content-type", "text/plain; charset=utf-8")
                    .body(full("ok"))
                    .expect("response")));
            }
            "/api" | "/api/" => resources::api_versions(),
            "/apis" | "/apis/" => {
                let st = self.inner.state.lock().expect("lock");
                resources::api_groups(&self.discovery(&st))
            }
            // OpenAPI v3 (R8.4, [`openapi`]): the index, and a group-version's document; a
            // stale `hash` is answered with a 301 to the current URL (`handler3/handler.go ::
            // HandleGroupVersion`). v2 is not served.
            "/openapi/v3" | "/openapi/v3/" => {
                let version = self.server_version();
                let st = self.inner.state.lock().expect("lock");
                openapi::index(&st.resources, &version)
            }
            p if p.starts_with("/openapi/v3/") => {
                let version = self.server_version();
                let gv = &p["/openapi/v3/".len()..];
                let doc = {
                    let st = self.inner.state.lock().expect("lock");
                    openapi::group_version(&st.resources, gv, &version)
                }?;
                let etag = openapi::etag(&doc);
                if q.get("hash").is_some_and(|h| !h.is_empty() && *h != etag) {
                    redirect = Some(format!("/openapi/v3/{}?hash={etag}", gv.trim_matches('/')));
                }
                doc
            }
            p if p.starts_with("/openapi/") => return Some(Err(status::no_route())),
            p => {
                let parts: Vec<&str> = p.trim_matches('/').split('/').collect();
                let st = self.inner.state.lock().expect("lock");
                let discovered = self.discovery(&st);
                match parts.as_slice() {
                    ["api", v] => resources::resource_list(&discovered, "", v)?,
                    ["apis", g, v] => resources::resource_list(&discovered, g, v)?,
                    ["apis", g] => {
                        let all = resources::api_groups(&discovered);
                        let grp = all["groups"]
                            .as_array()?
                            .iter()
                            .find(|x| x["name"] == *g)?
                            .clone();
                        let mut grp = grp;
                        grp["kind"] = json!("APIGroup");
                        grp["apiVersion"] = json!("v1");
                        grp
                    }
                    _ => return None,
                }
            }
        };
        // Non-resource requests are authorized by path (`system:discovery` and friends).
        let attrs = Attributes {
            user: user.clone(),
            verb: "get".into(),
            namespace: String::new(),
            api_group: String::new(),
            resource: String::new(),
            subresource: String::new(),
            name: String::new(),
            resource_request: false,
            path: path.to_string(),
        };
        let objs = Self::rbac_objects(&self.inner.state.lock().expect("lock"));
        if let rbac::Decision::Deny(why) = rbac::authorize(&attrs, &objs) {
            return Some(Err(deny(&attrs, &why)));
        }
        if let Some(to) = redirect {
            return Some(Ok(Response::builder()
                .status(StatusCode::MOVED_PERMANENTLY)
                .header("location", to)
                .body(full(""))
                .expect("response")));
        }
        Some(Ok(json_response(StatusCode::OK, &body, &[])))
    }

    /// Serves `a`'s group behind the aggregator ([`aggregated`]).
    pub fn aggregate(&self, a: Arc<dyn Aggregated>) {
        self.inner.aggregated.lock().expect("lock").push(a);
    }

    /// The stored resources and those of the aggregated servers, for discovery.
    fn discovery(&self, st: &State) -> Vec<Resource> {
        let mut all = st.resources.clone();
        for a in self.inner.aggregated.lock().expect("lock").iter() {
            all.extend(a.resources());
        }
        all
    }

    /// The aggregated server of a request's resource, and the resource.
    fn aggregated_for(&self, t: &Target) -> Option<(Resource, Arc<dyn Aggregated>)> {
        let servers = self.inner.aggregated.lock().expect("lock");
        servers.iter().find_map(|a| {
            a.resources()
                .into_iter()
                .find(|r| {
                    r.group == t.group && r.plural == t.plural && r.versions.contains(&t.version)
                })
                .map(|r| (r, a.clone()))
        })
    }

    /// `gitVersion` of `/version`.
    fn server_version(&self) -> String {
        self.inner.version.lock().expect("lock")["gitVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    #[allow(clippy::too_many_arguments)]
    async fn route(
        &self,
        method: &Method,
        path: &str,
        q: &BTreeMap<String, String>,
        ctype: &str,
        raw: &Bytes,
        body: Value,
        user: &UserInfo,
    ) -> Result<Response<Body>, ApiError> {
        if method == Method::GET
            && let Some(r) = self.non_resource(path, q, user)
        {
            return r;
        }
        let t = target(path).ok_or_else(status::no_route)?;
        let proxied = self.aggregated_for(&t);
        let r = match &proxied {
            Some((r, _)) => Some(r.clone()),
            None => {
                let st = self.inner.state.lock().expect("lock");
                st.resource(&t.group, &t.plural).cloned()
            }
        }
        .filter(|r| r.versions.contains(&t.version))
        .ok_or_else(status::no_route)?;
        if t.namespace.is_some() && !r.namespaced {
            return Err(status::no_route());
        }
        let watching = q.get("watch").is_some_and(|w| w == "true" || w == "1");
        let verb = match (method.clone(), &t.name) {
            (Method::GET, None) if watching => "watch",
            (Method::GET, None) => "list",
            (Method::GET, Some(_)) => "get",
            (Method::POST, None) => "create",
            (Method::PUT, Some(_)) => "update",
            (Method::PATCH, Some(_)) => "patch",
            (Method::DELETE, Some(_)) => "delete",
            (Method::DELETE, None) => "deletecollection",
            (m, _) => return Err(status::method_not_allowed(m.as_str())),
        };
        if let Some(s) = &t.sub
            && !(s == "status" && r.status)
        {
            return Err(status::no_route());
        }
        let attrs = Attributes {
            user: user.clone(),
            verb: verb.into(),
            namespace: t.namespace.clone().unwrap_or_default(),
            api_group: r.group.clone(),
            resource: r.plural.clone(),
            subresource: t.sub.clone().unwrap_or_default(),
            name: t.name.clone().unwrap_or_default(),
            resource_request: true,
            path: path.to_string(),
        };
        {
            let st = self.inner.state.lock().expect("lock");
            if let rbac::Decision::Deny(why) = rbac::authorize(&attrs, &Self::rbac_objects(&st)) {
                return Err(deny(&attrs, &why));
            }
        }
        if r.namespaced && t.namespace.is_none() && !matches!(verb, "list" | "watch") {
            return Err(status::method_not_allowed(verb));
        }
        if let Some((_, server)) = proxied {
            if !matches!(verb, "get" | "list") || t.sub.is_some() {
                return Err(status::method_not_allowed(verb));
            }
            let req = aggregated::Request {
                verb,
                version: &t.version,
                plural: &t.plural,
                namespace: t.namespace.as_deref(),
                name: t.name.as_deref(),
                query: q,
            };
            return server
                .serve(self, &req)
                .map(|v| json_response(StatusCode::OK, &v, &[]));
        }
        // RBAC's escalation prevention on a create or update of a role or binding (cluster.md
        // R7.4; `rbac::escalation`). A patch is checked once the patched object is known.
        if r.group == "rbac.authorization.k8s.io" && matches!(verb, "create" | "update") {
            let mut obj = body.clone();
            if let Some(ns) = &t.namespace {
                obj["metadata"]["namespace"] = json!(ns);
            }
            let old = if verb == "update" {
                self.stored(&r, &t).ok()
            } else {
                None
            };
            self.check_escalation(&r, user, &obj, verb == "update", old.as_ref())?;
        }
        // Server-side dry run is modelled for creates only: any other write with `dryRun`
        // would be carried out, so it is refused rather than forgiven.
        if q.contains_key("dryRun") && !matches!(verb, "create" | "get" | "list" | "watch") {
            return Err(status::bad_request(format!(
                "dryRun on {verb} is not modelled by this test API server (only on create)"
            )));
        }
        let mut warnings = Vec::new();
        if let Some(crd) = &r.crd
            && let Some(v) = crd
                .versions
                .iter()
                .find(|v| v.name == t.version && v.deprecated)
        {
            warnings.push(
                v.warning.clone().unwrap_or_else(|| {
                    format!("{}/{} {} is deprecated", r.group, t.version, r.kind)
                }),
            );
        }
        if r.group == "authorization.k8s.io" {
            return self.review(&r, &body, user);
        }
        match verb {
            "get" => self.get_one(&r, &t, warnings).await,
            "list" => self.list_many(&r, &t, q, warnings).await,
            "watch" => self.watch(&r, &t, q).await,
            "create" => self.create(&r, &t, q, body, warnings).await,
            "update" => self.update(&r, &t, q, body, warnings).await,
            "patch" => {
                self.patch(&r, &t, q, ctype, raw, body, user, warnings)
                    .await
            }
            "delete" => self.delete_one(&r, &t, q, &body).await,
            _ => self.delete_collection(&r, &t, q).await,
        }
    }

    /// `SelfSubjectAccessReview` and `SelfSubjectRulesReview` (`kubectl auth can-i`, R8.6).
    fn review(
        &self,
        r: &Resource,
        body: &Value,
        user: &UserInfo,
    ) -> Result<Response<Body>, ApiError> {
        let st = self.inner.state.lock().expect("lock");
        let objs = Self::rbac_objects(&st);
        let mut out = body.clone();
        if r.plural == "selfsubjectrulesreviews" {
            let ns = body["spec"]["namespace"].as_str().unwrap_or_default();
            out["status"] = rbac::rules_review(user, ns, &objs)["status"].clone();
            return Ok(json_response(StatusCode::CREATED, &out, &[]));
        }
        let s = |p: &str| {
            body.pointer(p)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let attrs = if body["spec"]["nonResourceAttributes"].is_object() {
            Attributes {
                user: user.clone(),
                verb: s("/spec/nonResourceAttributes/verb"),
                namespace: String::new(),
                api_group: String::new(),
                resource: String::new(),
                subresource: String::new(),
                name: String::new(),
                resource_request: false,
                path: s("/spec/nonResourceAttributes/path"),
            }
        } else {
            Attributes {
                user: user.clone(),
                verb: s("/spec/resourceAttributes/verb"),
                namespace: s("/spec/resourceAttributes/namespace"),
                api_group: s("/spec/resourceAttributes/group"),
                resource: s("/spec/resourceAttributes/resource"),
                subresource: s("/spec/resourceAttributes/subresource"),
                name: s("/spec/resourceAttributes/name"),
                resource_request: true,
                path: String::new(),
            }
        };
        out["status"] = match rbac::authorize(&attrs, &objs) {
            rbac::Decision::Allow => json!({"allowed": true, "reason": "RBAC: allowed"}),
            rbac::Decision::Deny(why) => {
                let mut s = json!({"allowed": false});
                if !why.is_empty() {
                    s["reason"] = json!(why);
                }
                s
            }
        };
        Ok(json_response(StatusCode::CREATED, &out, &[]))
    }

    fn resolver(&self) -> Option<Resolver> {
        self.inner.resolver.lock().expect("lock").clone()
    }

    /// Stored objects to the request's version (CRs: conversion, then defaulting as the CR
    /// codec does for objects read from storage, R2.15).
    async fn to_version(
        &self,
        r: &Resource,
        version: &str,
        objs: Vec<Value>,
    ) -> Result<Vec<Value>, ApiError> {
        let Some(crd) = &r.crd else {
            return Ok(objs);
        };
        let desired = r.api_version(version);
        let mut out = convert::convert(crd, objs, &desired, self.resolver().as_ref())
            .await
            .map_err(status::internal)?;
        if let Some(v) = crd.versions.iter().find(|v| v.name == version)
            && !v.schema.is_null()
        {
            for o in &mut out {
                schema::default(&v.schema, o);
            }
        }
        Ok(out)
    }

    async fn get_one(
        &self,
        r: &Resource,
        t: &Target,
        warnings: Vec<String>,
    ) -> Result<Response<Body>, ApiError> {
        let name = t.name.clone().unwrap_or_default();
        let obj = {
            let st = self.inner.state.lock().expect("lock");
            st.objects
                .get(&Key::new(
                    &r.group,
                    &r.plural,
                    t.namespace.as_deref().unwrap_or(""),
                    &name,
                ))
                .cloned()
        }
        .ok_or_else(|| status::not_found(&r.group, &r.plural, &name))?;
        let mut v = self.to_version(r, &t.version, vec![obj]).await?;
        Ok(json_response(StatusCode::OK, &v.remove(0), &warnings))
    }

    async fn list_many(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
        warnings: Vec<String>,
    ) -> Result<Response<Body>, ApiError> {
        let sel = Selectors::parse(q, r)?;
        let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(0);
        let after = q.get("continue").cloned().unwrap_or_default();
        let (items, rv, next) = {
            let st = self.inner.state.lock().expect("lock");
            if let Some(want) = q.get("resourceVersion").and_then(|v| v.parse::<u64>().ok())
                && q.get("resourceVersionMatch").is_some_and(|m| m == "Exact")
                && want != 0
                && want <= st.compacted
            {
                return Err(status::expired(format!("too old resource version: {want}")));
            }
            let mut items = Vec::new();
            let mut next = None;
            for (k, v) in st.of(&r.group, &r.plural, t.namespace.as_deref()) {
                let key = format!("{}/{}", k.namespace, k.name);
                if !after.is_empty() && key <= after {
                    continue;
                }
                if !sel.matches(v) {
                    continue;
                }
                if limit > 0 && items.len() == limit {
                    next = Some(format!(
                        "{}/{}",
                        items_last_ns(&items),
                        items_last_name(&items)
                    ));
                    break;
                }
                items.push(v.clone());
            }
            (items, st.rv, next)
        };
        let items = self.to_version(r, &t.version, items).await?;
        let mut md = json!({"resourceVersion": rv.to_string()});
        if let Some(n) = next {
            md["continue"] = json!(n);
        }
        let list = json!({
            "apiVersion": r.api_version(&t.version),
            "kind": format!("{}List", r.kind),
            "metadata": md,
            "items": items,
        });
        Ok(json_response(StatusCode::OK, &list, &warnings))
    }

    async fn watch(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
    ) -> Result<Response<Body>, ApiError> {
        let sel = Selectors::parse(q, r)?;
        let bookmarks = q.get("allowWatchBookmarks").is_some_and(|b| b == "true");
        let timeout = q
            .get("timeoutSeconds")
            .and_then(|s| s.parse::<u64>().ok())
            .map(Duration::from_secs);
        let from = q.get("resourceVersion").cloned().unwrap_or_default();
        let rx = self.inner.events.subscribe();
        let mut bm = self.inner.bookmarks.subscribe();
        let every = *self.inner.bookmark_every.lock().expect("lock");
        let (backlog, start, expired): (Vec<(&'static str, Value)>, u64, Option<String>) = {
            let st = self.inner.state.lock().expect("lock");
            let in_scope = |k: &Key| {
                k.group == r.group
                    && k.plural == r.plural
                    && t.namespace.as_ref().is_none_or(|n| *n == k.namespace)
            };
            match from.parse::<u64>() {
                Ok(n) if n > 0 => {
                    if n < st.compacted {
                        (
                            Vec::new(),
                            st.rv,
                            Some(format!("too old resource version: {n} ({})", st.compacted)),
                        )
                    } else {
                        let back = st
                            .history
                            .iter()
                            .filter(|e| e.rv > n && in_scope(&e.key))
                            .filter_map(|e| transition(e, &sel))
                            .collect();
                        (back, st.rv, None)
                    }
                }
                // "" or "0": the current state as ADDED events, then changes.
                _ => (
                    st.objects
                        .iter()
                        .filter(|(k, v)| in_scope(k) && sel.matches(v))
                        .map(|(_, v)| ("ADDED", v.clone()))
                        .collect(),
                    st.rv,
                    None,
                ),
            }
        };
        let me = self.clone();
        let r2 = r.clone();
        let version = t.version.clone();
        let ns = t.namespace.clone();
        let kind_av = (r.kind.clone(), r.api_version(&t.version));
        let stream = async_stream(move |tx: tokio::sync::mpsc::Sender<Bytes>| async move {
            let send = |ty: &str, obj: Value| {
                let mut s = json!({"type": ty, "object": obj}).to_string();
                s.push('\n');
                Bytes::from(s)
            };
            if let Some(m) = expired {
                let e = status::expired(m);
                let _ = tx.send(send("ERROR", e.body)).await;
                return;
            }
            let deadline = timeout.map(|d| tokio::time::Instant::now() + d);
            let mut last = start;
            for (ty, obj) in backlog {
                let Ok(mut v) = me.to_version(&r2, &version, vec![obj]).await else {
                    return;
                };
                if tx.send(send(ty, v.remove(0))).await.is_err() {
                    return;
                }
            }
            let mut rx = rx;
            let mut tick = tokio::time::interval(every);
            tick.tick().await;
            loop {
                let ev = tokio::select! {
                    e = rx.recv() => e,
                    _ = tick.tick(), if bookmarks => {
                        let rv = me.inner.state.lock().expect("lock").rv;
                        let b = json!({"kind": kind_av.0, "apiVersion": kind_av.1,
                                       "metadata": {"resourceVersion": rv.to_string()}});
                        if tx.send(send("BOOKMARK", b)).await.is_err() { return; }
                        continue;
                    }
                    _ = bm.recv(), if bookmarks => {
                        let rv = me.inner.state.lock().expect("lock").rv;
                        let b = json!({"kind": kind_av.0, "apiVersion": kind_av.1,
                                       "metadata": {"resourceVersion": rv.to_string()}});
                        if tx.send(send("BOOKMARK", b)).await.is_err() { return; }
                        continue;
                    }
                    _ = sleep_until_opt(deadline) => return,
                };
                match ev {
                    Ok(e) => {
                        if e.rv <= last {
                            continue;
                        }
                        last = e.rv;
                        let k = &e.key;
                        if k.group != r2.group
                            || k.plural != r2.plural
                            || ns.as_ref().is_some_and(|n| *n != k.namespace)
                        {
                            continue;
                        }
                        let Some((ty, obj)) = transition(&e, &sel) else {
                            continue;
                        };
                        let obj = match me.to_version(&r2, &version, vec![obj]).await {
                            Ok(mut v) => v.remove(0),
                            Err(err) => {
                                let _ = tx.send(send("ERROR", err.body)).await;
                                return;
                            }
                        };
                        if tx.send(send(ty, obj)).await.is_err() {
                            return;
                        }
                    }
                    // The watcher fell behind the cache: the apiserver ends it with 410.
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let e = status::expired(format!("too old resource version: {last}"));
                        let _ = tx.send(send("ERROR", e.body)).await;
                        return;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Ok(Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .header("transfer-encoding", "chunked")
            .body(stream)
            .expect("response"))
    }

    /// Schema handling of a custom resource in the request version: pruning (with the
    /// `fieldValidation` directive, R2.13), defaulting and validation (422).
    fn admit_cr(
        &self,
        r: &Resource,
        version: &str,
        obj: &mut Value,
        old: Option<&Value>,
        q: &BTreeMap<String, String>,
        warnings: &mut Vec<String>,
    ) -> Result<(), ApiError> {
        let Some(crd) = &r.crd else {
            return Ok(());
        };
        let Some(v) = crd.versions.iter().find(|v| v.name == version) else {
            return Ok(());
        };
        if v.schema.is_null() {
            return Ok(());
        }
        let name = obj["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !crd.preserve_unknown_fields {
            let pruned = schema::prune(&v.schema, obj);
            let directive = q.get("fieldValidation").map_or("Warn", |s| s.as_str());
            if !pruned.is_empty() {
                match directive {
                    "Strict" => {
                        let fields: Vec<String> = pruned
                            .iter()
                            .map(|p| format!("unknown field \"{}\"", p.trim_start_matches('.')))
                            .collect();
                        return Err(status::bad_request(format!(
                            "{} in version \"{version}\" cannot be handled as a {}: strict decoding error: {}",
                            r.kind,
                            r.kind,
                            fields.join(", ")
                        )));
                    }
                    "Ignore" => {}
                    _ => warnings.extend(
                        pruned
                            .iter()
                            .map(|p| format!("unknown field \"{}\"", p.trim_start_matches('.'))),
                    ),
                }
            }
        }
        schema::default(&v.schema, obj);
        let mut errs = schema::validate(&v.schema, obj);
        // The CRD's CEL rules after the schema's (`customResourceStrategy.Validate`).
        errs.extend(super::cel::validate(&v.schema, obj, old));
        // Validation ratcheting (`CRDValidationRatcheting`, on by default since 1.30): an
        // update is not refused for values it leaves as they were.
        if let Some(old) = old {
            errs.retain(|e| {
                value_at(obj, &e.field) != value_at(old, &e.field)
                    || value_at(obj, &e.field).is_none()
            });
        }
        if !errs.is_empty() {
            let body = schema::invalid_status(&r.kind, &r.group, &name, &errs);
            return Err(ApiError {
                code: StatusCode::UNPROCESSABLE_ENTITY,
                body,
            });
        }
        Ok(())
    }

    /// The request-version object to the storage version.
    async fn to_storage(&self, r: &Resource, obj: Value) -> Result<Value, ApiError> {
        let Some(crd) = &r.crd else {
            return Ok(obj);
        };
        let Some(storage) = crd.storage() else {
            return Ok(obj);
        };
        let desired = r.api_version(&storage.name);
        let mut v = convert::convert(crd, vec![obj], &desired, self.resolver().as_ref())
            .await
            .map_err(status::internal)?;
        Ok(v.remove(0))
    }

    fn check_body(r: &Resource, t: &Target, body: &Value) -> Result<(), ApiError> {
        if !body.is_object() {
            return Err(status::bad_request(
                "the body of the request was not a JSON object".into(),
            ));
        }
        let want = r.api_version(&t.version);
        if body["apiVersion"] != want.as_str() || body["kind"] != r.kind.as_str() {
            return Err(status::bad_request(format!(
                "the API version in the data ({}) does not match the expected API version ({want})",
                body["apiVersion"].as_str().unwrap_or_default()
            )));
        }
        if let (Some(ns), Some(b)) = (&t.namespace, body["metadata"]["namespace"].as_str())
            && ns != b
        {
            return Err(status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
                    .into(),
            ));
        }
        Ok(())
    }

    async fn create(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
        body: Value,
        mut warnings: Vec<String>,
    ) -> Result<Response<Body>, ApiError> {
        Self::check_body(r, t, &body)?;
        // `dryRun=All` (`ValidateCreateOptions` → `ValidateDryRun`): everything but storing.
        let dry_run = match q.get("dryRun").map(String::as_str) {
            None => false,
            Some("All") => true,
            Some(other) => {
                return Err(status::invalid(
                    "CreateOptions.meta.k8s.io",
                    "meta.k8s.io",
                    "CreateOptions",
                    "",
                    &[Cause {
                        reason: "FieldValueNotSupported".into(),
                        message: format!(
                            "Unsupported value: []string{{{}}}: supported values: \"All\"",
                            schema::go_quote(other)
                        ),
                        field: "dryRun".into(),
                    }],
                ));
            }
        };
        let mut obj = body;
        let ns = t.namespace.clone().unwrap_or_default();
        if r.namespaced {
            obj["metadata"]["namespace"] = json!(ns);
        }
        // Server-set fields a client cannot choose.
        if let Some(m) = obj["metadata"].as_object_mut() {
            for f in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "deletionTimestamp",
                "generation",
            ] {
                m.remove(f);
            }
        }
        if r.status {
            // Create drops status (R2.4).
            if let Some(m) = obj.as_object_mut() {
                m.remove("status");
            }
        }
        let has_name = obj["metadata"]["name"]
            .as_str()
            .is_some_and(|n| !n.is_empty());
        let generate = obj["metadata"]["generateName"].as_str().map(str::to_string);
        if !has_name && generate.as_deref().is_none_or(str::is_empty) {
            return Err(invalid_meta(
                r,
                "",
                "metadata.name",
                "FieldValueRequired",
                "Required value: name or generateName is required",
            ));
        }
        let now = self.now();
        validate_owner_references(
            r,
            obj["metadata"]["name"].as_str().unwrap_or_default(),
            &obj,
        )?;
        rbac_subjects(
            r,
            obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            &mut obj,
        )?;
        self.admit_cr(r, &t.version, &mut obj, None, q, &mut warnings)?;
        let obj = self.to_storage(r, obj).await?;
        let mut obj = obj;
        let stored = {
            let mut st = self.inner.state.lock().expect("lock");
            if !has_name {
                let base = generate.unwrap_or_default();
                let taken = st_keys(&st, r, &ns);
                let name = st.generate_name(&base, |n| st_has(&taken, n));
                obj["metadata"]["name"] = json!(name);
            }
            let name = obj["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            check_name(r, &name)?;
            if r.namespaced {
                namespace_admission(&st, &ns, r, &name)?;
            }
            if let Some(crd) = &r.crd
                && crd.terminating
            {
                return Err(status::forbidden(
                    &r.group,
                    &r.plural,
                    &name,
                    "create not allowed while custom resource definition is terminating",
                ));
            }
            let key = Key::new(&r.group, &r.plural, &ns, &name);
            if st.objects.contains_key(&key) {
                return Err(status::already_exists(&r.group, &r.plural, &name));
            }
            match (r.group.as_str(), r.plural.as_str()) {
                ("", "namespaces") => obj = namespace_defaults(obj),
                ("apiextensions.k8s.io", "customresourcedefinitions") => {
                    validate_crd(&obj, None)?;
                    crd_status(&mut obj, None, &now);
                }
                _ => {}
            }
            if dry_run {
                // What would be stored, not stored: no resourceVersion.
                obj["metadata"]["creationTimestamp"] = json!(now);
                obj
            } else {
                let v = st.create(key, obj, &now);
                if r.group == "apiextensions.k8s.io" {
                    st.refresh_resources();
                }
                gc::settle(&mut st, &now);
                self.commit(&mut st);
                v
            }
        };
        let mut out = self.to_version(r, &t.version, vec![stored]).await?;
        Ok(json_response(
            StatusCode::CREATED,
            &out.remove(0),
            &warnings,
        ))
    }

    /// The common end of PUT and PATCH: `new` (request version) replaces the stored object.
    #[allow(clippy::too_many_arguments)]
    async fn replace(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
        old_stored: &Value,
        mut new: Value,
        precondition: Option<String>,
        mut warnings: Vec<String>,
    ) -> Result<Response<Body>, ApiError> {
        let name = t.name.clone().unwrap_or_default();
        let ns = t.namespace.clone().unwrap_or_default();
        let status_write = t.sub.as_deref() == Some("status");
        if new["metadata"]["name"].as_str().is_some_and(|n| n != name) {
            return Err(status::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                new["metadata"]["name"].as_str().unwrap_or_default()
            )));
        }
        new["metadata"]["name"] = json!(name);
        if r.namespaced {
            new["metadata"]["namespace"] = json!(ns);
        }
        // Status subresource (R2.4): main writes keep the status, /status writes keep the
        // rest. Done in the request version, before validation.
        let old_req = self
            .to_version(r, &t.version, vec![old_stored.clone()])
            .await?
            .remove(0);
        let mut new = split_status(&old_req, new, status_write, r.status);
        // No new finalizers once deleting (`ValidateNoNewFinalizers`, R2.16).
        if old_stored["metadata"]["deletionTimestamp"].is_string() {
            let before: HashSet<String> = string_list(&old_stored["metadata"]["finalizers"])
                .into_iter()
                .collect();
            let added: Vec<String> = string_list(&new["metadata"]["finalizers"])
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !added.is_empty() {
                let mut added = added;
                added.sort();
                return Err(invalid_meta(
                    r,
                    &name,
                    "metadata.finalizers",
                    "FieldValueForbidden",
                    &format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                        added
                            .iter()
                            .map(|f| format!("\"{f}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
        }
        validate_owner_references(r, &name, &new)?;
        rbac_subjects(r, name.clone(), &mut new)?;
        self.admit_cr(r, &t.version, &mut new, Some(&old_req), q, &mut warnings)?;
        let new = self.to_storage(r, new).await?;
        let now = self.now();
        let stored = {
            let mut st = self.inner.state.lock().expect("lock");
            let key = Key::new(&r.group, &r.plural, &ns, &name);
            let Some(cur) = st.objects.get(&key).cloned() else {
                return Err(status::not_found(&r.group, &r.plural, &name));
            };
            let cur_rv = cur["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default();
            let expected = precondition.clone().unwrap_or_else(|| {
                old_stored["metadata"]["resourceVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            });
            if expected != cur_rv {
                return Err(status::conflict(&r.group, &r.plural, &name));
            }
            let mut new = new;
            if r.group == "apiextensions.k8s.io" && r.plural == "customresourcedefinitions" {
                validate_crd(&new, Some(&cur))?;
                crd_status(&mut new, Some(&cur), &now);
            }
            let v = st.update(&key, new, r.status);
            if r.group == "apiextensions.k8s.io" {
                st.refresh_resources();
            }
            gc::settle(&mut st, &now);
            self.commit(&mut st);
            st.objects.get(&key).cloned().unwrap_or(v)
        };
        let mut out = self.to_version(r, &t.version, vec![stored]).await?;
        Ok(json_response(StatusCode::OK, &out.remove(0), &warnings))
    }

    fn stored(&self, r: &Resource, t: &Target) -> Result<Value, ApiError> {
        let name = t.name.clone().unwrap_or_default();
        let st = self.inner.state.lock().expect("lock");
        st.objects
            .get(&Key::new(
                &r.group,
                &r.plural,
                t.namespace.as_deref().unwrap_or(""),
                &name,
            ))
            .cloned()
            .ok_or_else(|| status::not_found(&r.group, &r.plural, &name))
    }

    /// RBAC's escalation check (`rbac::escalation`) of a write of `obj` to an RBAC resource by
    /// `user`: `named` when the request names the object (an update or patch), `old` the
    /// stored object it replaces. Refused with the RBAC storages' 403, or a 404 for a bound
    /// role that does not exist (`GetRoleReferenceRules`' NotFound).
    fn check_escalation(
        &self,
        r: &Resource,
        user: &UserInfo,
        obj: &Value,
        named: bool,
        old: Option<&Value>,
    ) -> Result<(), ApiError> {
        if r.group != "rbac.authorization.k8s.io" {
            return Ok(());
        }
        let objs = Self::rbac_objects(&self.inner.state.lock().expect("lock"));
        let checked = if named {
            rbac::escalation::check_update(user, obj, old, &objs)
        } else {
            rbac::escalation::check_write(user, obj, false, &objs)
        };
        let Err(e) = checked else {
            return Ok(());
        };
        let name = obj["metadata"]["name"].as_str().unwrap_or_default();
        Err(match e.split_once(" is forbidden: ") {
            Some((_, why)) => status::forbidden(&r.group, &r.plural, name, why),
            None => {
                let role = obj
                    .pointer("/roleRef/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let plural = if obj.pointer("/roleRef/kind") == Some(&json!("Role")) {
                    "roles"
                } else {
                    "clusterroles"
                };
                status::not_found(&r.group, plural, role)
            }
        })
    }

    async fn update(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
        body: Value,
        warnings: Vec<String>,
    ) -> Result<Response<Body>, ApiError> {
        Self::check_body(r, t, &body)?;
        let old = self.stored(r, t)?;
        let name = t.name.clone().unwrap_or_default();
        let rv = body["metadata"]["resourceVersion"]
            .as_str()
            .map(str::to_string);
        // Custom resources need a resourceVersion on update (`AllowUnconditionalUpdate` is
        // false for them, R2.1).
        if rv.as_deref().is_none_or(str::is_empty) && r.crd.is_some() {
            {
                return Err(invalid_meta(
                    r,
                    &name,
                    "metadata.resourceVersion",
                    "FieldValueInvalid",
                    "Invalid value: 0: must be specified for an update",
                ));
            }
        }
        let precondition = rv.filter(|v| !v.is_empty());
        self.replace(r, t, q, &old, body, precondition, warnings)
            .await
    }

    #[allow(clippy::too_many_arguments)]
    async fn patch(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
        ctype: &str,
        raw: &Bytes,
        body: Value,
        user: &UserInfo,
        warnings: Vec<String>,
    ) -> Result<Response<Body>, ApiError> {
        let accepted_cr = [
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/apply-patch+yaml",
        ];
        let ty = PatchType::parse(ctype);
        let ty = match ty {
            Some(PatchType::Strategic) if r.crd.is_some() => {
                return Err(status::unsupported_patch(&accepted_cr));
            }
            Some(t) => t,
            None => {
                let mut all = accepted_cr.to_vec();
                if r.crd.is_none() {
                    all.push("application/strategic-merge-patch+json");
                }
                return Err(status::unsupported_patch(&all));
            }
        };
        if q.contains_key("force") && ty != PatchType::Apply {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch".into(),
                Some(json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [
                    {"reason": "FieldValueForbidden", "message": "Forbidden: may not be specified for non-apply patch", "field": "force"}]})),
            ));
        }
        if body.is_null() && !raw.is_empty() {
            return Err(status::bad_request(format!(
                "the body of the request was not valid JSON{}",
                if ty == PatchType::Apply {
                    " (YAML apply bodies are not modelled here)"
                } else {
                    ""
                }
            )));
        }
        let name = t.name.clone().unwrap_or_default();
        let ns = t.namespace.clone().unwrap_or_default();
        if ty == PatchType::Apply {
            let manager = q.get("fieldManager").cloned().unwrap_or_default();
            if manager.is_empty() {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch".into(),
                    Some(json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [
                        {"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]})),
                ));
            }
            let force = q.get("force").is_some_and(|f| f == "true");
            Self::check_body(r, t, &body)?;
            typed_apply_patch(r, t, &body)?;
            let old = self.stored(r, t).ok();
            let key = Key::new(&r.group, &r.plural, &ns, &name);
            let live = match &old {
                Some(o) => Some(
                    self.to_version(r, &t.version, vec![o.clone()])
                        .await?
                        .remove(0),
                ),
                None => None,
            };
            let (mut applied, scratch) = {
                let owned = self.inner.owned.lock().expect("lock");
                let mut scratch = owned.get(&key).cloned().unwrap_or_default();
                let res = patch::apply(live.as_ref(), &body, &manager, force, &mut scratch);
                match res {
                    Ok(v) => (v, scratch),
                    Err(c) => {
                        return Err(ApiError::new(
                            StatusCode::CONFLICT,
                            "Conflict",
                            c.message(),
                            Some(
                                json!({"name": name, "group": r.group, "kind": r.plural, "causes": c.causes()}),
                            ),
                        ));
                    }
                }
            };
            if !ns.is_empty() {
                applied["metadata"]["namespace"] = json!(ns);
            }
            // The RBAC storages check the applied object (an apply goes through `Update`).
            self.check_escalation(r, user, &applied, true, live.as_ref())?;
            self.inner
                .owned
                .lock()
                .expect("lock")
                .insert(key.clone(), scratch);
            return match old {
                None => {
                    let mut collection = t.clone();
                    collection.name = None;
                    self.create(r, &collection, q, applied, warnings).await
                }
                Some(o) => self.replace(r, t, q, &o, applied, None, warnings).await,
            };
        }
        let old = self.stored(r, t)?;
        let mut doc = self
            .to_version(r, &t.version, vec![old.clone()])
            .await?
            .remove(0);
        let before = (r.group == "rbac.authorization.k8s.io").then(|| doc.clone());
        let mut precondition = None;
        match ty {
            PatchType::Json => {
                patch::json_patch(&mut doc, &body).map_err(|e| {
                    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", e, None)
                })?;
                precondition = doc["metadata"]["resourceVersion"]
                    .as_str()
                    .map(str::to_string);
            }
            _ => {
                if let Some(rv) = body["metadata"]["resourceVersion"].as_str() {
                    precondition = Some(rv.to_string());
                }
                json_patch::merge(&mut doc, &body);
            }
        }
        // The RBAC storages check the patched object (a patch goes through `Update`).
        self.check_escalation(r, user, &doc, true, before.as_ref())?;
        self.replace(r, t, q, &old, doc, precondition, warnings)
            .await
    }

    async fn delete_one(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
        body: &Value,
    ) -> Result<Response<Body>, ApiError> {
        let name = t.name.clone().unwrap_or_default();
        let policy = q
            .get("propagationPolicy")
            .map(String::as_str)
            .or_else(|| body["propagationPolicy"].as_str());
        let p = Propagation::parse(policy).map_err(status::bad_request)?;
        let now = self.now();
        let (result, uid) = {
            let mut st = self.inner.state.lock().expect("lock");
            let key = Key::new(
                &r.group,
                &r.plural,
                t.namespace.as_deref().unwrap_or(""),
                &name,
            );
            let Some(cur) = st.objects.get(&key).cloned() else {
                return Err(status::not_found(&r.group, &r.plural, &name));
            };
            if let Some(rv) = body["preconditions"]["resourceVersion"].as_str()
                && cur["metadata"]["resourceVersion"] != rv
            {
                return Err(status::conflict(&r.group, &r.plural, &name));
            }
            let res = gc::delete(&mut st, &key, p, &now);
            if r.group == "apiextensions.k8s.io" {
                st.refresh_resources();
            }
            self.commit(&mut st);
            (
                res,
                cur["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        };
        match result {
            Some(Deleted::Gone(v)) if r.crd.is_some() => {
                let _ = v;
                Ok(json_response(
                    StatusCode::OK,
                    &status::deleted(&r.group, &r.plural, &name, &uid),
                    &[],
                ))
            }
            Some(Deleted::Gone(v)) | Some(Deleted::Terminating(v)) => {
                let mut out = self.to_version(r, &t.version, vec![v]).await?;
                Ok(json_response(StatusCode::OK, &out.remove(0), &[]))
            }
            None => Err(status::not_found(&r.group, &r.plural, &name)),
        }
    }

    async fn delete_collection(
        &self,
        r: &Resource,
        t: &Target,
        q: &BTreeMap<String, String>,
    ) -> Result<Response<Body>, ApiError> {
        let sel = Selectors::parse(q, r)?;
        let now = self.now();
        let (items, rv) = {
            let mut st = self.inner.state.lock().expect("lock");
            let keys: Vec<Key> = st
                .of(&r.group, &r.plural, t.namespace.as_deref())
                .filter(|(_, v)| sel.matches(v))
                .map(|(k, _)| k.clone())
                .collect();
            let mut items = Vec::new();
            for k in keys {
                if let Some(Deleted::Gone(v) | Deleted::Terminating(v)) =
                    gc::delete(&mut st, &k, Propagation::Background, &now)
                {
                    items.push(v);
                }
            }
            if r.group == "apiextensions.k8s.io" {
                st.refresh_resources();
            }
            self.commit(&mut st);
            (items, st.rv)
        };
        let items = self.to_version(r, &t.version, items).await?;
        Ok(json_response(
            StatusCode::OK,
            &json!({"apiVersion": r.api_version(&t.version), "kind": format!("{}List", r.kind),
                    "metadata": {"resourceVersion": rv.to_string()}, "items": items}),
            &[],
        ))
    }
}

/// The value at a field path as validation errors name it (`spec.items[0].name`, `[key]`).
fn value_at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = v;
    let mut rest = path;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
            continue;
        }
        if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']')?;
            let key = &r[..end];
            cur = match key.parse::<usize>() {
                Ok(i) if cur.is_array() => cur.get(i)?,
                _ => cur.get(key)?,
            };
            rest = &r[end + 1..];
            continue;
        }
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        cur = cur.get(&rest[..end])?;
        rest = &rest[end..];
    }
    Some(cur)
}

fn items_last_ns(items: &[Value]) -> String {
    items
        .last()
        .and_then(|v| v["metadata"]["namespace"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn items_last_name(items: &[Value]) -> String {
    items
        .last()
        .and_then(|v| v["metadata"]["name"].as_str())
        .unwrap_or_default()
        .to_string()
}

fn st_keys(st: &State, r: &Resource, ns: &str) -> HashSet<String> {
    st.of(&r.group, &r.plural, Some(ns))
        .map(|(k, _)| k.name.clone())
        .collect()
}

fn st_has(names: &HashSet<String>, n: &str) -> bool {
    names.contains(n)
}

fn string_list(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn deny(attrs: &Attributes, why: &str) -> ApiError {
    let body = rbac::forbidden_status(attrs, why);
    ApiError {
        code: StatusCode::FORBIDDEN,
        body,
    }
}

fn invalid_meta(r: &Resource, name: &str, field: &str, reason: &str, message: &str) -> ApiError {
    let kind_group = if r.group.is_empty() {
        r.kind.clone()
    } else {
        format!("{}.{}", r.kind, r.group)
    };
    status::invalid(
        &kind_group,
        &r.group,
        &r.kind,
        name,
        &[Cause {
            reason: reason.into(),
            message: message.into(),
            field: field.into(),
        }],
    )
}

/// The typed conversion of an apply patch to a custom resource (apimachinery
/// `managedfields/internal/structuredmerge.go :: structuredMergeManager.Apply`,
/// `f.typeConverter.ObjectToTyped(patchObj)`): a field the version's structural schema does not
/// declare fails the apply before any pruning, whatever `fieldValidation` says, with a plain
/// error that `responsewriters.ErrorToAPIStatus` turns into a 500 without a reason
/// (kubernetes/kubernetes#122480): `failed to create typed patch object (<ns>/<name>;
/// <group>/<version>, Kind=<Kind>): .spec.foo: field not declared in schema` (several:
/// structured-merge-diff's `ValidationErrors.Error`, `errors:` and one indented line each).
/// Built-in kinds are not checked (the double has no schemas for them).
fn typed_apply_patch(r: &Resource, t: &Target, body: &Value) -> Result<(), ApiError> {
    let Some(crd) = &r.crd else {
        return Ok(());
    };
    let Some(v) = crd.versions.iter().find(|v| v.name == t.version) else {
        return Ok(());
    };
    if v.schema.is_null() || crd.preserve_unknown_fields {
        return Ok(());
    }
    let mut scratch = body.clone();
    let unknown: Vec<String> = schema::prune(&v.schema, &mut scratch)
        .iter()
        .map(|p| format!(".{p}: field not declared in schema"))
        .collect();
    if unknown.is_empty() {
        return Ok(());
    }
    let errs = match unknown.as_slice() {
        [one] => one.clone(),
        many => format!("errors:\n  {}", many.join("\n  ")),
    };
    let mut e = ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "",
        format!(
            "failed to create typed patch object ({}/{}; {}/{}, Kind={}): {errs}",
            body["metadata"]["namespace"].as_str().unwrap_or_default(),
            body["metadata"]["name"].as_str().unwrap_or_default(),
            r.group,
            t.version,
            r.kind
        ),
        None,
    );
    if let Some(m) = e.body.as_object_mut() {
        m.remove("reason");
    }
    Err(e)
}

/// `metadata.ownerReferences` as `ValidateObjectMeta` checks them (apimachinery
/// `api/validation/objectmeta.go :: validateOwnerReference`): each needs an apiVersion with a
/// version, a kind, a name and a uid; the field path has no index (`metadata.ownerReferences.uid`).
/// A manifest written for OLM (whose `uid: ""` OLM fills in, R7.3) is refused as it is.
fn validate_owner_references(r: &Resource, name: &str, obj: &Value) -> Result<(), ApiError> {
    let mut causes = Vec::new();
    for o in obj["metadata"]["ownerReferences"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let s = |k: &str| o[k].as_str().unwrap_or_default().to_string();
        let api_version = s("apiVersion");
        let version = api_version.rsplit('/').next().unwrap_or_default();
        for (field, value, bad, why) in [
            (
                "apiVersion",
                api_version.clone(),
                version.is_empty(),
                "version must not be empty",
            ),
            (
                "kind",
                s("kind"),
                s("kind").is_empty(),
                "kind must not be empty",
            ),
            (
                "name",
                s("name"),
                s("name").is_empty(),
                "name must not be empty",
            ),
            (
                "uid",
                s("uid"),
                s("uid").is_empty(),
                "uid must not be empty",
            ),
        ] {
            if bad {
                causes.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!("Invalid value: \"{value}\": {why}"),
                    field: format!("metadata.ownerReferences.{field}"),
                });
            }
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let kind_group = if r.group.is_empty() {
        r.kind.clone()
    } else {
        format!("{}.{}", r.kind, r.group)
    };
    Err(status::invalid(
        &kind_group,
        &r.group,
        &r.kind,
        name,
        &causes,
    ))
}

/// The subjects of a RoleBinding or ClusterRoleBinding, defaulted and validated as the
/// apiserver does: `rbac/v1/defaults.go :: SetDefaults_Subject` (a User or Group subject
/// without an apiGroup gets `rbac.authorization.k8s.io`), then `pkg/apis/rbac/validation ::
/// ValidateRoleBindingSubject` (a name; a ServiceAccount subject has no apiGroup and, in a
/// ClusterRoleBinding, a namespace, which a RoleBinding may leave out to mean its own; User and
/// Group in the RBAC group; no other kind). 422 with every cause, as the apiserver lists them.
fn rbac_subjects(r: &Resource, name: String, obj: &mut Value) -> Result<(), ApiError> {
    const RBAC: &str = "rbac.authorization.k8s.io";
    let namespaced = match (r.group.as_str(), r.plural.as_str()) {
        (RBAC, "rolebindings") => true,
        (RBAC, "clusterrolebindings") => false,
        _ => return Ok(()),
    };
    let mut causes = Vec::new();
    let subjects = obj.get_mut("subjects").and_then(Value::as_array_mut);
    for (i, subject) in subjects.into_iter().flatten().enumerate() {
        let path = format!("subjects[{i}]");
        let get = |s: &Value, k: &str| s[k].as_str().unwrap_or_default().to_string();
        let kind = get(subject, "kind");
        if matches!(kind.as_str(), "User" | "Group") && get(subject, "apiGroup").is_empty() {
            subject["apiGroup"] = json!(RBAC);
        }
        let required = |field: &str| Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: format!("{path}.{field}"),
        };
        let not_supported = |field: &str, value: &str, supported: &[&str]| Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: \"{value}\": supported values: {}",
                supported
                    .iter()
                    .map(|v| format!("\"{v}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            field: format!("{path}.{field}"),
        };
        if get(subject, "name").is_empty() {
            causes.push(required("name"));
        }
        let group = get(subject, "apiGroup");
        match kind.as_str() {
            "ServiceAccount" => {
                if !group.is_empty() {
                    causes.push(not_supported("apiGroup", &group, &[""]));
                }
                if !namespaced && get(subject, "namespace").is_empty() {
                    causes.push(required("namespace"));
                }
            }
            "User" | "Group" => {
                if group != RBAC {
                    causes.push(not_supported("apiGroup", &group, &[RBAC]));
                }
            }
            other => causes.push(not_supported(
                "kind",
                other,
                &["ServiceAccount", "User", "Group"],
            )),
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    Err(status::invalid(
        &format!("{}.{}", r.kind, r.group),
        &r.group,
        &r.kind,
        &name,
        &causes,
    ))
}

/// A DNS-1123 subdomain (most kinds' names, `ValidateObjectMeta` with `NameIsDNSSubdomain`).
fn check_name(r: &Resource, name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !p.starts_with('-')
                && !p.ends_with('-')
        });
    // RBAC and a few others allow any path segment name; the kinds here that do are RBAC.
    let path_segment = r.group == "rbac.authorization.k8s.io";
    if ok
        || (path_segment
            && !name.contains('/')
            && !name.contains('%')
            && name != "."
            && name != "..")
    {
        return Ok(());
    }
    Err(invalid_meta(
        r,
        name,
        "metadata.name",
        "FieldValueInvalid",
        &format!(
            "Invalid value: \"{name}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    ))
}

/// `NamespaceLifecycle` admission: the namespace must exist and not be terminating.
fn namespace_admission(st: &State, ns: &str, r: &Resource, name: &str) -> Result<(), ApiError> {
    match st.objects.get(&Key::new("", "namespaces", "", ns)) {
        None => Err(status::not_found("", "namespaces", ns)),
        Some(n) if n["metadata"]["deletionTimestamp"].is_string() => Err(status::forbidden(
            &r.group,
            &r.plural,
            name,
            &format!(
                "unable to create new content in namespace {ns} because it is being terminated"
            ),
        )),
        Some(_) => Ok(()),
    }
}

/// A Namespace as its strategy creates it: the `kubernetes` finalizer, phase Active.
fn namespace_defaults(mut n: Value) -> Value {
    if n["spec"]["finalizers"].is_null() {
        n["spec"]["finalizers"] = json!(["kubernetes"]);
    }
    if n["status"]["phase"].is_null() {
        n["status"]["phase"] = json!("Active");
    }
    if n["metadata"]["labels"]["kubernetes.io/metadata.name"].is_null() {
        let name = n["metadata"]["name"].clone();
        n["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
    }
    n
}

/// The checks of a CRD's versions the tests rely on (`validation.go ::
/// ValidateCustomResourceDefinition`, a subset): exactly one storage version, and every
/// stored version still listed.
fn validate_crd(crd: &Value, old: Option<&Value>) -> Result<(), ApiError> {
    let name = crd["metadata"]["name"].as_str().unwrap_or_default();
    let r = Resource {
        group: "apiextensions.k8s.io".into(),
        versions: vec!["v1".into()],
        plural: "customresourcedefinitions".into(),
        singular: "customresourcedefinition".into(),
        kind: "CustomResourceDefinition".into(),
        namespaced: false,
        short_names: Vec::new(),
        categories: Vec::new(),
        verbs: Vec::new(),
        status: true,
        crd: None,
    };
    let versions = crd["spec"]["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let storage = versions.iter().filter(|v| v["storage"] == true).count();
    if storage != 1 {
        return Err(invalid_meta(
            &r,
            name,
            "spec.versions",
            "FieldValueInvalid",
            "Invalid value: []apiextensions.CustomResourceDefinitionVersion{...}: must have exactly one version marked as storage version",
        ));
    }
    if let Some(old) = old {
        for (i, sv) in string_list(&old["status"]["storedVersions"])
            .iter()
            .enumerate()
        {
            if !versions.iter().any(|v| v["name"] == sv.as_str()) {
                return Err(invalid_meta(
                    &r,
                    name,
                    &format!("status.storedVersions[{i}]"),
                    "FieldValueInvalid",
                    &format!("Invalid value: \"{sv}\": must appear in spec.versions"),
                ));
            }
        }
    }
    Ok(())
}

/// A CRD's status as the apiextensions controllers write it: names accepted, established,
/// and `storedVersions` gaining the storage version (`strategy.go :: PrepareForUpdate`).
fn crd_status(crd: &mut Value, old: Option<&Value>, now: &str) {
    let mut stored = old
        .map(|o| string_list(&o["status"]["storedVersions"]))
        .unwrap_or_else(|| string_list(&crd["status"]["storedVersions"]));
    if let Some(s) = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str())
        && !stored.iter().any(|x| x == s)
    {
        stored.push(s.to_string());
    }
    let names = crd["spec"]["names"].clone();
    let conds = old
        .and_then(|o| o["status"]["conditions"].as_array().cloned())
        .unwrap_or_else(|| {
            vec![
                json!({"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                       "message": "no conflicts found", "lastTransitionTime": now}),
                json!({"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                       "message": "the initial names have been accepted", "lastTransitionTime": now}),
            ]
        });
    crd["status"] = json!({"acceptedNames": names, "conditions": conds, "storedVersions": stored});
}

/// Main-resource writes keep the status of resources with a status subresource; `/status`
/// writes change only the status (R2.4).
fn split_status(old: &Value, mut new: Value, status_write: bool, has_status: bool) -> Value {
    if status_write {
        let mut out = old.clone();
        out["status"] = new.get("status").cloned().unwrap_or(Value::Null);
        if let Some(rv) = new["metadata"].get("resourceVersion") {
            out["metadata"]["resourceVersion"] = rv.clone();
        }
        return out;
    }
    if has_status {
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.remove("status");
                }
            }
        }
    }
    new
}

/// What a watcher with `sel` sees of a change: objects that start or stop matching are
/// `ADDED` or `DELETED` (the cacher's `cacheWatcher.convertToWatchEvent`).
fn transition(e: &Event, sel: &Selectors) -> Option<(&'static str, Value)> {
    let now = sel.matches(&e.object);
    match e.kind {
        "MODIFIED" => {
            let before = e.old.as_ref().is_some_and(|o| sel.matches(o));
            match (before, now) {
                (true, true) => Some(("MODIFIED", e.object.clone())),
                (false, true) => Some(("ADDED", e.object.clone())),
                (true, false) => Some(("DELETED", e.object.clone())),
                (false, false) => None,
            }
        }
        k => now.then(|| (k, e.object.clone())),
    }
}

async fn sleep_until_opt(t: Option<tokio::time::Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => futures::future::pending().await,
    }
}

/// A body fed by a task through a channel.
fn async_stream<F, Fut>(f: F) -> Body
where
    F: FnOnce(tokio::sync::mpsc::Sender<Bytes>) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel::<Bytes>(64);
    tokio::spawn(f(tx));
    let s = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|b| (Ok::<_, Infallible>(http_body::Frame::data(b)), rx))
    });
    StreamBody::new(s.boxed()).boxed_unsync()
}

/// Wakes on changes ([`ApiServer::changes`]).
pub struct Changes(broadcast::Receiver<Arc<Event>>);

impl Changes {
    /// Waits for the next change; `false` when the API is gone.
    pub async fn next(&mut self) -> bool {
        !matches!(
            self.0.recv().await,
            Err(broadcast::error::RecvError::Closed)
        )
    }
}

impl tower::Service<Request<kube::client::Body>> for ApiServer {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let me = self.clone();
        Box::pin(async move { Ok(me.respond_to(req, Transport::InProcess).await) })
    }
}

/// The API as a client with a bearer token sees it (in-process).
#[derive(Clone)]
pub struct WithToken {
    api: ApiServer,
    token: String,
}

impl tower::Service<Request<kube::client::Body>> for WithToken {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<kube::client::Body>) -> Self::Future {
        let me = self.api.clone();
        if let Ok(v) = http::HeaderValue::from_str(&format!("Bearer {}", self.token)) {
            req.headers_mut().insert("authorization", v);
        }
        Box::pin(async move { Ok(me.respond_to(req, Transport::Http).await) })
    }
}

/// A kubeconfig for `server` with `token` (for processes and kubectl). An `https://` server
/// ([`ApiServer::serve_tls_on_loopback`]) is trusted through `certificate-authority-data`
/// (the fixture CA of [`super::tls`]).
pub fn kubeconfig(server: &str, token: &str, namespace: &str) -> String {
    use base64::Engine as _;
    let ca = if server.starts_with("https://") {
        format!(
            "\n    certificate-authority-data: {}",
            base64::engine::general_purpose::STANDARD.encode(super::tls::CA_CERT)
        )
    } else {
        String::new()
    };
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: testkit\n  cluster:\n    server: {server}{ca}\nusers:\n- name: user\n  user:\n    token: {token}\ncontexts:\n- name: testkit\n  context:\n    cluster: testkit\n    user: user\n    namespace: {namespace}\ncurrent-context: testkit\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse() {
        let t = target("/apis/operators.coreos.com/v1alpha1/namespaces/ns/installplans/p/status")
            .expect("t");
        assert_eq!(
            (
                t.group.as_str(),
                t.namespace.as_deref(),
                t.plural.as_str(),
                t.name.as_deref(),
                t.sub.as_deref()
            ),
            (
                "operators.coreos.com",
                Some("ns"),
                "installplans",
                Some("p"),
                Some("status")
            )
        );
        let t = target("/api/v1/configmaps").expect("t");
        assert_eq!(
            (t.group.as_str(), t.namespace, t.plural.as_str()),
            ("", None, "configmaps")
        );
        assert!(target("/apis/g/v1").is_none());
        assert_eq!(percent_decode("a%3Db%2Cc"), "a=b,c");
    }

    async fn get(api: &ApiServer, uri: &str) -> Response<Body> {
        let req = Request::get(uri)
            .header("authorization", format!("Bearer {ADMIN_TOKEN}"))
            .body(Full::new(Bytes::new()))
            .expect("request");
        api.respond_to(req, Transport::Http).await
    }

    async fn json_of(r: Response<Body>) -> Value {
        let b = r.into_body().collect().await.expect("body").to_bytes();
        serde_json::from_slice(&b).expect("JSON")
    }

    /// The OpenAPI v3 index points at each document by its hash; a stale hash is redirected
    /// (`handler3.go :: HandleGroupVersion`); a new CRD's group-version appears.
    #[tokio::test]
    async fn openapi_v3_is_served_by_hash() {
        let api = ApiServer::new();
        let index = json_of(get(&api, "/openapi/v3").await).await;
        let url = index["paths"]["api/v1"]["serverRelativeURL"]
            .as_str()
            .expect("api/v1")
            .to_string();
        let doc = get(&api, &url).await;
        assert_eq!(doc.status(), StatusCode::OK);
        let doc = json_of(doc).await;
        assert_eq!(doc["openapi"], "3.0.0");
        assert!(doc["paths"]["/api/v1/namespaces/{name}"]["patch"].is_object());
        let stale = get(&api, "/openapi/v3/api/v1?hash=0123").await;
        assert_eq!(stale.status(), StatusCode::MOVED_PERMANENTLY);
        assert_eq!(stale.headers()["location"], url.as_str());
        assert_eq!(
            get(&api, "/openapi/v3/apis/olmctl.dev/v1").await.status(),
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            get(&api, "/openapi/v2").await.status(),
            StatusCode::NOT_FOUND
        );
        api.insert("customresourcedefinitions", crate::fixtures::operator_crd());
        let index = json_of(get(&api, "/openapi/v3").await).await;
        let url = index["paths"]["apis/olmctl.dev/v1"]["serverRelativeURL"]
            .as_str()
            .expect("the CRD's group-version");
        let doc = json_of(get(&api, url).await).await;
        let patch = &doc["paths"]["/apis/olmctl.dev/v1/namespaces/{namespace}/upgradepolicies/{name}"]
            ["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({"group": "olmctl.dev", "version": "v1", "kind": "UpgradePolicy"})
        );
    }

    /// A protobuf body of a kind the double does not decode is refused with 415.
    #[tokio::test]
    async fn protobuf_bodies_of_other_kinds_are_refused() {
        let api = ApiServer::new();
        let mut body = b"k8s\x00".to_vec();
        body.extend_from_slice(&[
            0x0a, 0x09, 0x0a, 0x02, b'v', b'1', 0x12, 0x03, b'P', b'o', b'd',
        ]);
        let req = Request::post("/api/v1/namespaces/default/pods")
            .header("authorization", format!("Bearer {ADMIN_TOKEN}"))
            .header("content-type", "application/vnd.kubernetes.protobuf")
            .body(Full::new(Bytes::from(body)))
            .expect("request");
        let r = api.respond_to(req, Transport::Http).await;
        assert_eq!(r.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let v = json_of(r).await;
        assert_eq!(v["reason"], "UnsupportedMediaType");
    }
}
