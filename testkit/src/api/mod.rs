//! A small in-memory Kubernetes API for the operator's tests and benchmark: a `tower` service
//! that a real `kube::Client` talks to (`kube::Client::new(fake.clone(), "default")`), so the
//! controller runs its real code paths (lists, watches, merge and JSON patches with
//! resourceVersion preconditions, the status subresource, finalizers, Events, Leases).
//!
//! What it models, and nothing more: objects keyed by group, plural, namespace and name; a
//! global resourceVersion; watches (history replayed from the requested resourceVersion, then
//! live); `metadata.generation` bumped on spec changes; the status subresource (main-resource
//! writes keep the status, `/status` writes change only it); deletion with finalizers; label
//! selectors of the form `k=v` and `k`; 404/409 answers as `Status` objects. Tests can inject a
//! failure for the next matching request and read the request log.


use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use serde_json::{Value, json};
use tokio::sync::broadcast;

/// Resources with a status subresource.
const WITH_STATUS: [&str; 5] = [
    "upgradepolicies",
    "installplans",
    "subscriptions",
    "clusterserviceversions",
    "customresourcedefinitions",
];

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

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Logged {
    /// The method.
    pub method: Method,
    /// Path and query.
    pub uri: String,
    /// The body (JSON), if any.
    pub body: Value,
}

#[derive(Debug, Clone)]
struct WatchEvent {
    rv: u64,
    group: String,
    plural: String,
    namespace: String,
    kind: &'static str,
    object: Value,
}

struct Injected {
    method: Method,
    path_contains: String,
    status: StatusCode,
    reason: String,
}

#[derive(Default)]
struct State {
    rv: u64,
    objects: BTreeMap<Key, Value>,
    history: Vec<WatchEvent>,
    log: Vec<Logged>,
    injected: Vec<Injected>,
    uid: u64,
}

/// A function called with each request's method and path before it is served (a test double
/// of a controller can act there, in step with the client).
pub type Hook = Arc<dyn Fn(&Method, &str) + Send + Sync>;

/// The in-memory API server. Clones share the state.
#[derive(Clone)]
pub struct FakeApi {
    state: Arc<Mutex<State>>,
    events: broadcast::Sender<WatchEvent>,
    now: Arc<Mutex<String>>,
    hook: Arc<Mutex<Option<Hook>>>,
}

impl Default for FakeApi {
    fn default() -> Self {
        Self::new()
    }
}

/// The response body type.
pub type Body = UnsyncBoxBody<Bytes, Infallible>;

fn full(v: Vec<u8>) -> Body {
    Full::new(Bytes::from(v)).boxed_unsync()
}

fn status(code: StatusCode, reason: &str, message: String) -> Response<Body> {
    let body = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code.as_u16(),
    });
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(full(body.to_string().into_bytes()))
        .expect("response")
}

fn ok(v: &Value) -> Response<Body> {
    ok_code(StatusCode::OK, v)
}

fn ok_code(code: StatusCode, v: &Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(full(v.to_string().into_bytes()))
        .expect("response")
}

/// The parsed request path.
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
        ["api", v, rest @ ..] => (String::new(), v.to_string(), rest),
        ["apis", g, v, rest @ ..] => (g.to_string(), v.to_string(), rest),
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

fn percent_decode(s: &str) -> String {
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

fn selected(obj: &Value, selector: Option<&String>) -> bool {
    let Some(sel) = selector.filter(|s| !s.is_empty()) else {
        return true;
    };
    let labels = &obj["metadata"]["labels"];
    sel.split(',').all(|req| match req.split_once('=') {
        Some((k, v)) => labels[k.trim_end_matches('=')].as_str() == Some(v),
        None => match req.strip_prefix('!') {
            Some(k) => labels.get(k).is_none(),
            None => labels.get(req).is_some(),
        },
    })
}

impl FakeApi {
    /// An empty API.
    pub fn new() -> Self {
        let (events, _) = broadcast::channel(4096);
        FakeApi {
            state: Arc::new(Mutex::new(State::default())),
            events,
            now: Arc::new(Mutex::new("2026-09-14T08:00:00Z".into())),
            hook: Arc::new(Mutex::new(None)),
        }
    }

    /// Sets the clock the fake stamps `creationTimestamp` with.
    pub fn set_now(&self, t: &str) {
        *self.now.lock().expect("lock") = t.to_string();
    }

    /// Stores `obj` (a full object with apiVersion, kind and metadata) as a create would,
    /// keeping its status; `plural` names its resource.
    pub fn insert(&self, plural: &str, obj: Value) -> Value {
        let group = obj["apiVersion"]
            .as_str()
            .and_then(|a| a.rsplit_once('/'))
            .map_or("", |(g, _)| g)
            .to_string();
        let ns = obj["metadata"]["namespace"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let mut st = self.state.lock().expect("lock");
        let key = Key {
            group,
            plural: plural.into(),
            namespace: ns,
            name: obj["metadata"]["name"].as_str().unwrap_or_default().into(),
        };
        let now = self.now.lock().expect("lock").clone();
        self.store(&mut st, key, obj, "ADDED", &now)
    }

    /// The object at `key`, if any.
    pub fn get(&self, group: &str, plural: &str, namespace: &str, name: &str) -> Option<Value> {
        let st = self.state.lock().expect("lock");
        st.objects
            .get(&Key {
                group: group.into(),
                plural: plural.into(),
                namespace: namespace.into(),
                name: name.into(),
            })
            .cloned()
    }

    /// Every object of a resource, in key order.
    pub fn list(&self, group: &str, plural: &str) -> Vec<Value> {
        let st = self.state.lock().expect("lock");
        st.objects
            .iter()
            .filter(|(k, _)| k.group == group && k.plural == plural)
            .map(|(_, v)| v.clone())
            .collect()
    }

    /// Applies a merge patch as a client would (main resource, or `status` when `status`).
    pub fn merge(
        &self,
        group: &str,
        plural: &str,
        ns: &str,
        name: &str,
        patch: &Value,
        status: bool,
    ) {
        let mut st = self.state.lock().expect("lock");
        let key = Key {
            group: group.into(),
            plural: plural.into(),
            namespace: ns.into(),
            name: name.into(),
        };
        let Some(old) = st.objects.get(&key).cloned() else {
            panic!("no object {key:?}");
        };
        let mut new = old.clone();
        json_patch::merge(&mut new, patch);
        let new = keep_status(&key.plural, &old, new, status);
        let now = self.now.lock().expect("lock").clone();
        self.store(&mut st, key, new, "MODIFIED", &now);
    }

    /// Deletes an object (as `DELETE` does: finalizers first).
    pub fn delete(&self, group: &str, plural: &str, ns: &str, name: &str) {
        let key = Key {
            group: group.into(),
            plural: plural.into(),
            namespace: ns.into(),
            name: name.into(),
        };
        let mut st = self.state.lock().expect("lock");
        let now = self.now.lock().expect("lock").clone();
        self.remove(&mut st, key, &now);
    }

    /// A handle that wakes on every change of any object (tests wait on it instead of
    /// sleeping).
    pub fn changes(&self) -> Changes {
        Changes(self.events.subscribe())
    }

    /// The requests so far.
    pub fn log(&self) -> Vec<Logged> {
        self.state.lock().expect("lock").log.clone()
    }

    /// Answers the next request with `method` whose path contains `path_contains` with
    /// `status` (e.g. 409 Conflict) instead of serving it.
    pub fn fail_next(&self, method: Method, path_contains: &str, status: StatusCode, reason: &str) {
        self.state.lock().expect("lock").injected.push(Injected {
            method,
            path_contains: path_contains.into(),
            status,
            reason: reason.into(),
        });
    }

    fn store(
        &self,
        st: &mut State,
        key: Key,
        mut obj: Value,
        kind: &'static str,
        now: &str,
    ) -> Value {
        st.rv += 1;
        let rv = st.rv;
        let md = &mut obj["metadata"];
        md["resourceVersion"] = json!(rv.to_string());
        if md.get("uid").is_none() {
            st.uid += 1;
            md["uid"] = json!(format!("00000000-0000-4000-8000-{:012}", st.uid));
        }
        if md.get("creationTimestamp").is_none_or(Value::is_null) {
            md["creationTimestamp"] = json!(now);
        }
        if md.get("generation").is_none() {
            md["generation"] = json!(1);
        }
        st.objects.insert(key.clone(), obj.clone());
        let ev = WatchEvent {
            rv,
            group: key.group,
            plural: key.plural,
            namespace: key.namespace,
            kind,
            object: obj.clone(),
        };
        st.history.push(ev.clone());
        let _ = self.events.send(ev);
        obj
    }

    fn remove(&self, st: &mut State, key: Key, now: &str) -> Option<Value> {
        let obj = st.objects.get(&key).cloned()?;
        let finalizers = obj["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if finalizers {
            if obj["metadata"].get("deletionTimestamp").is_none() {
                let mut o = obj.clone();
                o["metadata"]["deletionTimestamp"] = json!(now);
                return Some(self.store(st, key, o, "MODIFIED", now));
            }
            return Some(obj);
        }
        st.objects.remove(&key);
        st.rv += 1;
        let ev = WatchEvent {
            rv: st.rv,
            group: key.group,
            plural: key.plural,
            namespace: key.namespace,
            kind: "DELETED",
            object: obj.clone(),
        };
        st.history.push(ev.clone());
        let _ = self.events.send(ev);
        Some(obj)
    }

    /// Serves one request whose body is `body` (for serving the fake over real HTTP).
    pub fn respond(&self, method: Method, uri: http::Uri, body: &[u8]) -> Response<Body> {
        let v = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body).unwrap_or(Value::Null)
        };
        self.handle(method, uri, v)
    }

    /// Calls `hook` before serving each request (replacing any earlier hook).
    pub fn set_hook(&self, hook: Hook) {
        *self.hook.lock().expect("lock") = Some(hook);
    }

    fn handle(&self, method: Method, uri: http::Uri, body: Value) -> Response<Body> {
        let path = uri.path().to_string();
        let hook = self.hook.lock().expect("lock").clone();
        if let Some(h) = hook {
            h(&method, &path);
        }
        let q = query(&uri);
        let mut st = self.state.lock().expect("lock");
        st.log.push(Logged {
            method: method.clone(),
            uri: uri.to_string(),
            body: body.clone(),
        });
        if let Some(i) = st
            .injected
            .iter()
            .position(|f| f.method == method && path.contains(&f.path_contains))
        {
            let f = st.injected.remove(i);
            return status(f.status, &f.reason, format!("injected {}", f.reason));
        }
        if path == "/version" {
            return ok(&json!({"major": "1", "minor": "30", "gitVersion": "v1.30.2"}));
        }
        let Some(t) = target(&path) else {
            return status(
                StatusCode::NOT_FOUND,
                "NotFound",
                format!("no route {path}"),
            );
        };
        let now = self.now.lock().expect("lock").clone();
        let key = |name: &str| Key {
            group: t.group.clone(),
            plural: t.plural.clone(),
            namespace: t.namespace.clone().unwrap_or_default(),
            name: name.into(),
        };
        let not_found = |name: &str| {
            status(
                StatusCode::NOT_FOUND,
                "NotFound",
                format!("{}.{} \"{name}\" not found", t.plural, t.group),
            )
        };
        match (method, &t.name) {
            (Method::GET, None) if q.get("watch").is_some_and(|w| w == "true" || w == "1") => {
                let since: u64 = q
                    .get("resourceVersion")
                    .and_then(|r| r.parse().ok())
                    .unwrap_or(0);
                let rx = self.events.subscribe();
                let (g, p, ns) = (t.group.clone(), t.plural.clone(), t.namespace.clone());
                let sel = q.get("labelSelector").cloned();
                let fits = move |e: &WatchEvent| {
                    e.group == g
                        && e.plural == p
                        && ns.as_ref().is_none_or(|n| *n == e.namespace)
                        && e.rv > since
                        && selected(&e.object, sel.as_ref())
                };
                let backlog: Vec<WatchEvent> =
                    st.history.iter().filter(|e| fits(e)).cloned().collect();
                let last = backlog.last().map_or(since, |e| e.rv);
                drop(st);
                let line = |e: &WatchEvent| {
                    let mut s = json!({"type": e.kind, "object": e.object}).to_string();
                    s.push('\n');
                    Ok::<_, Infallible>(http_body::Frame::data(Bytes::from(s)))
                };
                let live = futures::stream::unfold(
                    (rx, fits, last),
                    move |(mut rx, fits, last)| async move {
                        loop {
                            match rx.recv().await {
                                Ok(e) if e.rv > last && fits(&e) => {
                                    let next = e.rv;
                                    return Some((e, (rx, fits, next)));
                                }
                                Ok(_) => continue,
                                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                                Err(broadcast::error::RecvError::Closed) => return None,
                            }
                        }
                    },
                );
                use futures::StreamExt;
                let stream = futures::stream::iter(backlog)
                    .chain(live)
                    .map(move |e| line(&e));
                Response::builder()
                    .status(StatusCode::OK)
                    .header("content-type", "application/json")
                    .body(StreamBody::new(stream).boxed_unsync())
                    .expect("response")
            }
            (Method::GET, None) => {
                let items: Vec<Value> = st
                    .objects
                    .iter()
                    .filter(|(k, _)| k.group == t.group && k.plural == t.plural)
                    .filter(|(k, _)| t.namespace.as_ref().is_none_or(|n| *n == k.namespace))
                    .filter(|(_, v)| selected(v, q.get("labelSelector")))
                    .filter(|(k, _)| match q.get("fieldSelector") {
                        Some(f) => f.strip_prefix("metadata.name=").is_none_or(|n| n == k.name),
                        None => true,
                    })
                    .map(|(_, v)| v.clone())
                    .collect();
                ok(&json!({
                    "apiVersion": if t.group.is_empty() { t.version.clone() } else { format!("{}/{}", t.group, t.version) },
                    "kind": "List",
                    "metadata": {"resourceVersion": st.rv.to_string()},
                    "items": items,
                }))
            }
            (Method::GET, Some(name)) => match st.objects.get(&key(name)) {
                Some(v) => ok(v),
                None => not_found(name),
            },
            (Method::POST, None) => {
                let mut obj = body;
                let name = match obj["metadata"]["name"].as_str() {
                    Some(n) => n.to_string(),
                    None => {
                        st.uid += 1;
                        let prefix = obj["metadata"]["generateName"].as_str().unwrap_or("obj-");
                        let n = format!("{prefix}{:05}", st.uid);
                        obj["metadata"]["name"] = json!(n);
                        n
                    }
                };
                if let Some(ns) = &t.namespace {
                    obj["metadata"]["namespace"] = json!(ns);
                }
                if st.objects.contains_key(&key(&name)) {
                    return status(
                        StatusCode::CONFLICT,
                        "AlreadyExists",
                        format!("{}.{} \"{name}\" already exists", t.plural, t.group),
                    );
                }
                let v = self.store(&mut st, key(&name), obj, "ADDED", &now);
                ok_code(StatusCode::CREATED, &v)
            }
            (Method::PUT, Some(name)) => {
                let Some(old) = st.objects.get(&key(name)).cloned() else {
                    return not_found(name);
                };
                if let Some(rv) = body["metadata"]["resourceVersion"].as_str()
                    && Some(rv) != old["metadata"]["resourceVersion"].as_str()
                {
                    return conflict(&t.plural, name);
                }
                let new = keep_status(&t.plural, &old, body, t.sub.as_deref() == Some("status"));
                self.finish_update(&mut st, key(name), &old, new, &now)
            }
            (Method::PATCH, Some(name)) => {
                let Some(old) = st.objects.get(&key(name)).cloned() else {
                    return not_found(name);
                };
                let mut new = old.clone();
                if body.is_array() {
                    let ops: json_patch::Patch = match serde_json::from_value(body) {
                        Ok(p) => p,
                        Err(e) => {
                            return status(StatusCode::BAD_REQUEST, "BadRequest", e.to_string());
                        }
                    };
                    // As the API server's json-patch: `test` of a missing path against null
                    // passes (kube's finalizer helper relies on it).
                    let ops: Vec<json_patch::PatchOperation> = ops
                        .0
                        .into_iter()
                        .filter(|op| match op {
                            json_patch::PatchOperation::Test(t) => {
                                !(t.value.is_null() && new.pointer(t.path.as_str()).is_none())
                            }
                            _ => true,
                        })
                        .collect();
                    if let Err(e) = json_patch::patch(&mut new, &ops) {
                        // A failed `test` operation is a conflict for the client.
                        return status(StatusCode::UNPROCESSABLE_ENTITY, "Invalid", e.to_string());
                    }
                } else {
                    if let Some(rv) = body["metadata"]["resourceVersion"].as_str()
                        && Some(rv) != old["metadata"]["resourceVersion"].as_str()
                    {
                        return conflict(&t.plural, name);
                    }
                    json_patch::merge(&mut new, &body);
                }
                let new = keep_status(&t.plural, &old, new, t.sub.as_deref() == Some("status"));
                self.finish_update(&mut st, key(name), &old, new, &now)
            }
            (Method::DELETE, Some(name)) => match self.remove(&mut st, key(name), &now) {
                Some(v) => ok(&v),
                None => not_found(name),
            },
            (m, _) => status(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                format!("{m} {path}"),
            ),
        }
    }

    fn finish_update(
        &self,
        st: &mut State,
        key: Key,
        old: &Value,
        mut new: Value,
        now: &str,
    ) -> Response<Body> {
        // Identity fields stay the server's.
        for f in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "generation",
        ] {
            match old["metadata"].get(f) {
                Some(v) => new["metadata"][f] = v.clone(),
                None => {
                    if let Some(m) = new["metadata"].as_object_mut() {
                        m.remove(f);
                    }
                }
            }
        }
        if old.get("spec") != new.get("spec") {
            let g = old["metadata"]["generation"].as_i64().unwrap_or(1);
            new["metadata"]["generation"] = json!(g + 1);
        }
        if new == *old {
            return ok(old);
        }
        let v = self.store(st, key.clone(), new, "MODIFIED", now);
        let gone = v["metadata"].get("deletionTimestamp").is_some()
            && v["metadata"]["finalizers"]
                .as_array()
                .is_none_or(|f| f.is_empty());
        if gone {
            self.remove(st, key, now);
        }
        ok(&v)
    }
}

fn conflict(plural: &str, name: &str) -> Response<Body> {
    status(
        StatusCode::CONFLICT,
        "Conflict",
        format!(
            "Operation cannot be fulfilled on {plural} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
        ),
    )
}

/// Main-resource writes keep the status of resources with a status subresource; `/status`
/// writes change only the status.
fn keep_status(plural: &str, old: &Value, mut new: Value, status_write: bool) -> Value {
    if status_write {
        let mut out = old.clone();
        out["status"] = new.get("status").cloned().unwrap_or(Value::Null);
        if let Some(rv) = new["metadata"].get("resourceVersion") {
            out["metadata"]["resourceVersion"] = rv.clone();
        }
        return out;
    }
    if WITH_STATUS.contains(&plural) {
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

impl FakeApi {
    /// Serves one request, whatever its body type (an unreadable body is an empty one).
    async fn respond_to<B: http_body::Body<Data = Bytes>>(
        &self,
        req: Request<B>,
    ) -> Response<Body> {
        let (parts, body) = req.into_parts();
        let bytes = body
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        self.respond(parts.method, parts.uri, &bytes)
    }

    /// Serves the fake over plain HTTP/1.1 on `listener` (for a real operator process through a
    /// kubeconfig), until the task is dropped.
    pub async fn serve_http(self, listener: tokio::net::TcpListener) {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let me = self.clone();
            tokio::spawn(async move {
                let svc = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                    let me = me.clone();
                    async move { Ok::<_, Infallible>(me.respond_to(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                    .await;
            });
        }
    }
}

/// Wakes on changes ([`FakeApi::changes`]).
pub struct Changes(broadcast::Receiver<WatchEvent>);

impl Changes {
    /// Waits for the next change; `false` when the API is gone.
    pub async fn next(&mut self) -> bool {
        !matches!(
            self.0.recv().await,
            Err(broadcast::error::RecvError::Closed)
        )
    }
}

impl tower::Service<Request<kube::client::Body>> for FakeApi {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let me = self.clone();
        Box::pin(async move { Ok(me.respond_to(req).await) })
    }
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
        assert_eq!(percent_decode("a%3Db%2Cc"), "a=b,c");
    }
}
