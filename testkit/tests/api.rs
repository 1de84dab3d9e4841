//! The API double against the rules of cluster.md §2, over raw HTTP (what a client sees:
//! status codes, `Status` bodies, watch framing) and through a `kube::Client`.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use olmctl_testkit::api::rbac::UserInfo;
use olmctl_testkit::api::{ADMIN_TOKEN, ApiServer};
use serde_json::{Value, json};

/// One request over HTTP/1.1; returns (status, body text). A watch is read for `read`.
async fn raw(
    url: &str,
    method: &str,
    path: &str,
    token: &str,
    body: Option<(&str, Value)>,
    read: Duration,
) -> (u16, String) {
    let addr = url.trim_start_matches("http://").to_string();
    let tcp = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let (mut tx, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .expect("handshake");
    tokio::spawn(conn);
    let mut b = http::Request::builder()
        .method(method)
        .uri(path)
        .header("host", addr)
        .header("authorization", format!("Bearer {token}"));
    let payload = match body {
        Some((ctype, v)) => {
            b = b.header("content-type", ctype);
            v.to_string()
        }
        None => String::new(),
    };
    let resp = tx
        .send_request(b.body(Full::new(Bytes::from(payload))).expect("req"))
        .await
        .expect("response");
    let code = resp.status().as_u16();
    let mut body = resp.into_body();
    let mut out = Vec::new();
    let end = tokio::time::Instant::now() + read;
    while let Ok(Some(Ok(f))) = tokio::time::timeout_at(end, body.frame()).await {
        if let Some(d) = f.data_ref() {
            out.extend_from_slice(d);
        }
    }
    (code, String::from_utf8_lossy(&out).into_owned())
}

/// `GET` of the Lease `l` in `ns` as the holder of `token`: (status code, body).
async fn lease_get(url: &str, token: &str, ns: &str) -> (u16, String) {
    let path = format!("/apis/coordination.k8s.io/v1/namespaces/{ns}/leases/l");
    raw(url, "GET", &path, token, None, Duration::from_secs(2)).await
}

fn widget_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["size"], "properties": {
                        "size": {"type": "integer", "maximum": 9},
                        "mode": {"type": "string", "enum": ["a", "b"], "default": "a"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})
}

fn widget(name: &str, size: i64) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
           "metadata": {"name": name, "namespace": "default"}, "spec": {"size": size}})
}

const WIDGETS: &str = "/apis/example.com/v1/namespaces/default/widgets";

fn ready() -> (ApiServer, String) {
    let api = ApiServer::new();
    api.insert("customresourcedefinitions", widget_crd());
    let url = api.serve_on_loopback();
    (api, url)
}

#[tokio::test]
async fn custom_resources_are_defaulted_validated_and_versioned_as_the_apiserver_does() {
    let (api, url) = ready();
    let t = ADMIN_TOKEN;
    let no = Duration::from_secs(2);
    // Create: defaulted, status dropped, generation 1.
    let mut w = widget("a", 3);
    w["status"] = json!({"x": 1});
    let (code, body) = raw(&url, "POST", WIDGETS, t, Some(("application/json", w)), no).await;
    assert_eq!(code, 201, "{body}");
    let v: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(v["spec"]["mode"], "a", "defaulted");
    assert!(v["status"].is_null(), "create drops status");
    assert_eq!(v["metadata"]["generation"], 1);
    // A schema violation: 422 with the apiserver's message and causes.
    let (code, body) = raw(
        &url,
        "POST",
        WIDGETS,
        t,
        Some(("application/json", widget("b", 10))),
        no,
    )
    .await;
    assert_eq!(code, 422, "{body}");
    let s: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        s["message"],
        "Widget.example.com \"b\" is invalid: spec.size: Invalid value: 10: spec.size in body should be less than or equal to 9"
    );
    assert_eq!(s["details"]["causes"][0]["field"], "spec.size");
    // The same name again: 409 AlreadyExists.
    let (code, body) = raw(
        &url,
        "POST",
        WIDGETS,
        t,
        Some(("application/json", widget("a", 3))),
        no,
    )
    .await;
    assert_eq!(code, 409);
    assert!(
        body.contains("widgets.example.com \\\"a\\\" already exists"),
        "{body}"
    );
    // PUT without resourceVersion: 422; with a stale one: 409 Conflict.
    let (code, body) = raw(
        &url,
        "PUT",
        &format!("{WIDGETS}/a"),
        t,
        Some(("application/json", widget("a", 4))),
        no,
    )
    .await;
    assert_eq!(code, 422);
    assert!(
        body.contains(
            "metadata.resourceVersion: Invalid value: 0: must be specified for an update"
        ),
        "{body}"
    );
    let mut stale = widget("a", 4);
    stale["metadata"]["resourceVersion"] = json!("1");
    let (code, body) = raw(
        &url,
        "PUT",
        &format!("{WIDGETS}/a"),
        t,
        Some(("application/json", stale)),
        no,
    )
    .await;
    assert_eq!(code, 409);
    assert!(body.contains("Operation cannot be fulfilled on widgets.example.com \\\"a\\\": the object has been modified"), "{body}");
    // A strategic merge patch on a custom resource: 415.
    let (code, body) = raw(
        &url,
        "PATCH",
        &format!("{WIDGETS}/a"),
        t,
        Some((
            "application/strategic-merge-patch+json",
            json!({"spec": {"size": 5}}),
        )),
        no,
    )
    .await;
    assert_eq!(code, 415, "{body}");
    // A merge patch of spec bumps generation; of status (subresource) does not.
    let (code, _) = raw(
        &url,
        "PATCH",
        &format!("{WIDGETS}/a"),
        t,
        Some(("application/merge-patch+json", json!({"spec": {"size": 5}}))),
        no,
    )
    .await;
    assert_eq!(code, 200);
    let (code, _) = raw(
        &url,
        "PATCH",
        &format!("{WIDGETS}/a/status"),
        t,
        Some((
            "application/merge-patch+json",
            json!({"status": {"ok": true}}),
        )),
        no,
    )
    .await;
    assert_eq!(code, 200);
    let a = api
        .get("example.com", "widgets", "default", "a")
        .expect("a");
    assert_eq!(
        (
            a["metadata"]["generation"].clone(),
            a["status"]["ok"].clone()
        ),
        (json!(2), json!(true))
    );
    // A status write through the main resource is ignored.
    let (_, body) = raw(
        &url,
        "PATCH",
        &format!("{WIDGETS}/a"),
        t,
        Some((
            "application/merge-patch+json",
            json!({"status": {"ok": false}}),
        )),
        no,
    )
    .await;
    let v: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(v["status"]["ok"], true);
}

#[tokio::test]
async fn authentication_rbac_and_their_status_bodies() {
    let (api, url) = ready();
    let no = Duration::from_secs(2);
    let (code, _) = raw(&url, "GET", WIDGETS, "nobody-knows-this", None, no).await;
    assert_eq!(code, 401);
    let sa = api.token_for(UserInfo::service_account("ns", "sa"));
    let (code, body) = lease_get(&url, &sa, "ns").await;
    assert_eq!(code, 403);
    let s: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(
        s["message"],
        "leases.coordination.k8s.io \"l\" is forbidden: User \"system:serviceaccount:ns:sa\" cannot get resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"ns\""
    );
    assert_eq!(s["details"]["kind"], "leases");
    // A Role and RoleBinding grant it; another namespace stays refused.
    api.insert("roles", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "r", "namespace": "ns"},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}]}));
    api.insert(
        "rolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "r", "namespace": "ns"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ns"}]}),
    );
    let (code, _) = lease_get(&url, &sa, "ns").await;
    assert_eq!(code, 404, "allowed now, and not there");
    let (code, _) = lease_get(&url, &sa, "other").await;
    assert_eq!(code, 403);
    // Discovery is open to every authenticated user; unknown paths are 404.
    let (code, body) = raw(&url, "GET", "/apis/example.com/v1", &sa, None, no).await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = raw(
        &url,
        "GET",
        "/apis/nothing.example.com/v1/things",
        ADMIN_TOKEN,
        None,
        no,
    )
    .await;
    assert_eq!(code, 404);
    assert!(
        body.contains("the server could not find the requested resource"),
        "{body}"
    );
}

/// Binding subjects as `ValidateRoleBindingSubject` checks them after `SetDefaults_Subject`: a
/// RoleBinding's ServiceAccount subject may leave out its namespace (it is the binding's own,
/// `appliesToUser`), a ClusterRoleBinding's may not; User and Group get the RBAC group.
#[tokio::test]
async fn binding_subjects_are_defaulted_and_validated() {
    let (api, url) = ready();
    let no = Duration::from_secs(2);
    let json = "application/json";
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    api.insert("roles", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "r", "namespace": "ns"},
        "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get"]}]}));
    let binding = |kind: &str, subjects: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
               "metadata": {"name": "r"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": if kind == "RoleBinding" { "Role" } else { "ClusterRole" }, "name": "r"},
               "subjects": subjects})
    };
    let (code, body) = raw(
        &url,
        "POST",
        &format!("{rbac}/namespaces/ns/rolebindings"),
        ADMIN_TOKEN,
        Some((json, binding("RoleBinding", json!([{"kind": "ServiceAccount", "name": "sa"}, {"kind": "User", "name": "alice"}])))),
        no,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let stored: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(stored["subjects"][0].get("namespace"), None);
    assert_eq!(
        stored["subjects"][1]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    // The subject is the binding's namespace's ServiceAccount.
    let sa = api.token_for(UserInfo::service_account("ns", "sa"));
    let (code, _) = lease_get(&url, &sa, "ns").await;
    assert_eq!(code, 404, "allowed, and not there");
    let other = api.token_for(UserInfo::service_account("other", "sa"));
    let (code, _) = lease_get(&url, &other, "ns").await;
    assert_eq!(
        code, 403,
        "a ServiceAccount of the same name elsewhere is not the subject"
    );
    // A ClusterRoleBinding needs the namespace; bad kinds and groups are named.
    let (code, body) = raw(
        &url,
        "POST",
        &format!("{rbac}/clusterrolebindings"),
        ADMIN_TOKEN,
        Some((
            json,
            binding(
                "ClusterRoleBinding",
                json!([
            {"kind": "ServiceAccount", "name": "sa"},
            {"kind": "ServiceAccount", "name": "sa", "namespace": "ns", "apiGroup": "v1"},
            {"kind": "Robot", "name": "r2"}]),
            ),
        )),
        no,
    )
    .await;
    assert_eq!(code, 422, "{body}");
    let s: Value = serde_json::from_str(&body).expect("json");
    let causes: Vec<(String, String)> = s["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| {
            (
                c["field"].as_str().unwrap_or_default().to_string(),
                c["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        causes,
        [
            ("subjects[0].namespace".to_string(), "Required value".to_string()),
            ("subjects[1].apiGroup".to_string(), "Unsupported value: \"v1\": supported values: \"\"".to_string()),
            ("subjects[2].kind".to_string(), "Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"".to_string()),
        ]
    );
    assert!(
        s["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("ClusterRoleBinding.rbac.authorization.k8s.io \"r\" is invalid: ["),
        "{}",
        s["message"]
    );
}

#[tokio::test]
async fn watches_replay_expire_with_410_and_get_bookmarks() {
    let (api, url) = ready();
    api.set_bookmark_interval(Duration::from_millis(200));
    let t = ADMIN_TOKEN;
    let a = api.insert("widgets", widget("a", 1));
    let rv: u64 = a["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .parse()
        .expect("n");
    api.insert("widgets", widget("b", 2));
    // From a resourceVersion in the window: the later change, then bookmarks.
    let (code, body) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?watch=true&resourceVersion={rv}&allowWatchBookmarks=true"),
        t,
        None,
        Duration::from_millis(700),
    )
    .await;
    assert_eq!(code, 200);
    let events: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "b");
    assert!(
        events[1..].iter().all(|e| e["type"] == "BOOKMARK"),
        "{events:#?}"
    );
    assert!(events.len() >= 2, "a bookmark within 700 ms: {events:#?}");
    assert_eq!(events[1]["object"]["kind"], "Widget");
    // After compaction: 200, then one ERROR event with a 410 Expired Status, then the end.
    api.compact();
    let (code, body) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?watch=true&resourceVersion={rv}"),
        t,
        None,
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(code, 200);
    let events: Vec<Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["type"], "ERROR");
    assert_eq!(events[0]["object"]["code"], 410);
    assert_eq!(events[0]["object"]["reason"], "Expired");
    // A list at an exact, expired resourceVersion: 410.
    let (code, _) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?resourceVersion={rv}&resourceVersionMatch=Exact"),
        t,
        None,
        Duration::from_secs(2),
    )
    .await;
    assert_eq!(code, 410);
}

#[tokio::test]
async fn selectors_filter_lists_and_watches_and_unknown_fields_are_refused() {
    let (api, url) = ready();
    let t = ADMIN_TOKEN;
    let no = Duration::from_secs(2);
    let mut a = widget("a", 1);
    a["metadata"]["labels"] = json!({"tier": "gold"});
    api.insert("widgets", a);
    api.insert("widgets", widget("b", 2));
    let names = |body: &str| -> Vec<String> {
        let v: Value = serde_json::from_str(body).expect("json");
        v["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let (_, body) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?labelSelector=tier%3Dgold"),
        t,
        None,
        no,
    )
    .await;
    assert_eq!(names(&body), ["a"]);
    let (_, body) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?labelSelector=!tier"),
        t,
        None,
        no,
    )
    .await;
    assert_eq!(names(&body), ["b"]);
    let (_, body) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?fieldSelector=metadata.name%3Db"),
        t,
        None,
        no,
    )
    .await;
    assert_eq!(names(&body), ["b"]);
    let (code, body) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?fieldSelector=spec.size%3D1"),
        t,
        None,
        no,
    )
    .await;
    assert_eq!(code, 400);
    assert!(
        body.contains("field label not supported: spec.size"),
        "{body}"
    );
    // A watch with a selector sees an object that stops matching as DELETED.
    let api2 = api.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        api2.merge(
            "example.com",
            "widgets",
            "default",
            "a",
            &json!({"metadata": {"labels": {"tier": "silver"}}}),
            false,
        );
    });
    let (_, body) = raw(
        &url,
        "GET",
        &format!("{WIDGETS}?watch=true&labelSelector=tier%3Dgold"),
        t,
        None,
        Duration::from_millis(800),
    )
    .await;
    let types: Vec<String> = body
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("json")["type"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(types, ["ADDED", "DELETED"]);
}

#[tokio::test]
async fn deletion_finalizers_garbage_collection_and_crd_cleanup() {
    let (api, url) = ready();
    let t = ADMIN_TOKEN;
    let no = Duration::from_secs(2);
    // An owner and two dependents: one owned by it alone, one with a second, live owner.
    let owner = api.insert("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": "default"}}));
    let other = api.insert("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "other", "namespace": "default"}}));
    let oref = |o: &Value| json!({"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"], "uid": o["metadata"]["uid"]});
    api.insert("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "only", "namespace": "default", "ownerReferences": [oref(&owner)]}}));
    api.insert("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "both", "namespace": "default", "ownerReferences": [oref(&owner), oref(&other)]}}));
    let (code, _) = raw(
        &url,
        "DELETE",
        "/api/v1/namespaces/default/configmaps/owner",
        t,
        None,
        no,
    )
    .await;
    assert_eq!(code, 200);
    assert!(
        api.get("", "configmaps", "default", "only").is_none(),
        "collected"
    );
    let both = api
        .get("", "configmaps", "default", "both")
        .expect("kept: another owner lives");
    assert_eq!(
        both["metadata"]["ownerReferences"].as_array().map(Vec::len),
        Some(1)
    );
    // A custom resource with a finalizer: DELETE keeps it with a deletionTimestamp; the
    // CRD's deletion waits for it; creating more is refused; removing the finalizer ends both.
    let mut w = widget("f", 1);
    w["metadata"]["finalizers"] = json!(["example.com/hold"]);
    api.insert("widgets", w);
    let (code, body) = raw(&url, "DELETE", &format!("{WIDGETS}/f"), t, None, no).await;
    assert_eq!(code, 200);
    assert!(
        serde_json::from_str::<Value>(&body).expect("json")["metadata"]["deletionTimestamp"]
            .is_string()
    );
    let (code, body) = raw(
        &url,
        "PATCH",
        &format!("{WIDGETS}/f"),
        t,
        Some((
            "application/merge-patch+json",
            json!({"metadata": {"finalizers": ["example.com/hold", "example.com/new"]}}),
        )),
        no,
    )
    .await;
    assert_eq!(code, 422);
    assert!(
        body.contains("no new finalizers can be added if the object is being deleted"),
        "{body}"
    );
    let (code, _) = raw(
        &url,
        "DELETE",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
        t,
        None,
        no,
    )
    .await;
    assert_eq!(code, 200);
    let crd = api
        .get(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "widgets.example.com",
        )
        .expect("terminating");
    assert_eq!(
        crd["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    let (code, body) = raw(
        &url,
        "POST",
        WIDGETS,
        t,
        Some(("application/json", widget("new", 1))),
        no,
    )
    .await;
    assert_eq!(code, 403);
    assert!(
        body.contains("create not allowed while custom resource definition is terminating"),
        "{body}"
    );
    api.merge(
        "example.com",
        "widgets",
        "default",
        "f",
        &json!({"metadata": {"finalizers": null}}),
        false,
    );
    assert!(api.get("example.com", "widgets", "default", "f").is_none());
    assert!(
        api.get(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            "widgets.example.com"
        )
        .is_none()
    );
    let (code, _) = raw(&url, "GET", WIDGETS, t, None, no).await;
    assert_eq!(code, 404, "no longer served");
    // A namespace being deleted deletes what it holds, then goes; nothing new gets in.
    api.insert(
        "namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gone"}}),
    );
    api.insert("configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "gone", "finalizers": ["x/y"]}}));
    api.delete("", "namespaces", "", "gone");
    assert_eq!(
        api.get("", "namespaces", "", "gone").expect("terminating")["status"]["phase"],
        "Terminating"
    );
    let (code, body) = raw(
        &url,
        "POST",
        "/api/v1/namespaces/gone/configmaps",
        t,
        Some((
            "application/json",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}),
        )),
        no,
    )
    .await;
    assert_eq!(code, 403);
    assert!(body.contains("because it is being terminated"), "{body}");
    assert!(api.merge(
        "",
        "configmaps",
        "gone",
        "c",
        &json!({"metadata": {"finalizers": null}}),
        false,
    ));
    assert!(api.get("", "namespaces", "", "gone").is_none());
    // A controller double writing to what is gone writes nothing (a 404 it ignores) and
    // does not bring the object back.
    assert!(!api.merge(
        "",
        "configmaps",
        "gone",
        "c",
        &json!({"status": {"x": 1}}),
        true,
    ));
    assert!(api.get("", "configmaps", "gone", "c").is_none());
}

/// RBAC's escalation prevention (cluster.md R7.4) on the write path: a user allowed to create
/// roles may create only roles whose rules it holds, and bind only roles whose rules it holds
/// or may `bind`; system:masters may do anything.
#[tokio::test]
async fn writing_rbac_is_checked_for_escalation() {
    let (api, url) = ready();
    let no = Duration::from_secs(2);
    let json = "application/json";
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    // The writer may create roles and bindings in ns and read configmaps there, nothing more.
    api.insert("roles", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "writer", "namespace": "ns"},
        "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": ["create"]},
                  {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}));
    api.insert(
        "rolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "writer", "namespace": "ns"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "w", "namespace": "ns"}]}),
    );
    let w = api.token_for(UserInfo::service_account("ns", "w"));
    let role = |name: &str, resource: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": name},
               "rules": [{"apiGroups": [""], "resources": [resource], "verbs": ["get"]}]})
    };
    let post = |path: String, token: String, body: Value| {
        let url = url.clone();
        async move { raw(&url, "POST", &path, &token, Some((json, body)), no).await }
    };
    let (code, body) = post(
        format!("{rbac}/namespaces/ns/roles"),
        w.clone(),
        role("held", "configmaps"),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = post(
        format!("{rbac}/namespaces/ns/roles"),
        w.clone(),
        role("more", "secrets"),
    )
    .await;
    assert_eq!(code, 403, "{body}");
    let status: Value = serde_json::from_str(&body).expect("status");
    assert_eq!(
        status["message"],
        "roles.rbac.authorization.k8s.io \"more\" is forbidden: user \"system:serviceaccount:ns:w\" (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:ns\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}"
    );
    assert_eq!(status["reason"], "Forbidden");
    let (code, _) = post(
        format!("{rbac}/namespaces/ns/roles"),
        ADMIN_TOKEN.to_string(),
        role("more", "secrets"),
    )
    .await;
    assert_eq!(code, 201, "system:masters may");
    let binding = |name: &str, role: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": name},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
               "subjects": [{"kind": "ServiceAccount", "name": "x", "namespace": "ns"}]})
    };
    let (code, body) = post(
        format!("{rbac}/namespaces/ns/rolebindings"),
        w.clone(),
        binding("b1", "held"),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = post(
        format!("{rbac}/namespaces/ns/rolebindings"),
        w.clone(),
        binding("b2", "more"),
    )
    .await;
    assert_eq!(code, 403, "{body}");
    let (code, body) = post(
        format!("{rbac}/namespaces/ns/rolebindings"),
        w.clone(),
        binding("b3", "missing"),
    )
    .await;
    assert_eq!(code, 404, "{body}");
    assert!(
        body.contains("roles.rbac.authorization.k8s.io \\\"missing\\\" not found"),
        "{body}"
    );
}

/// The escalation check runs on what an update or patch would store (cluster.md R7.4; the RBAC
/// storages' `Update` wraps the updated object): a merge patch, a JSON patch, a server-side
/// apply and a PUT that add a rule the writer does not hold are refused; a change of only the
/// garbage collector's fields (`IsOnlyMutatingGCFields`) is not checked; and removing a
/// ClusterRole's aggregation rule needs full authority, as setting one does.
#[tokio::test]
async fn patches_and_updates_of_rbac_are_checked_for_escalation() {
    let (api, url) = ready();
    let no = Duration::from_secs(2);
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    // The writer may read, update and patch roles and cluster roles, and read configmaps.
    api.insert("clusterroles", json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "writer"},
        "rules": [{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "clusterroles"],
                   "verbs": ["get", "update", "patch"]},
                  {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}));
    api.insert(
        "clusterrolebindings",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "writer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "w", "namespace": "ns"}]}),
    );
    let w = api.token_for(UserInfo::service_account("ns", "w"));
    // A role granting what the writer holds, and one granting secrets (written by an admin).
    for (name, resource) in [("held", "configmaps"), ("more", "secrets")] {
        api.insert(
            "roles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": "ns"},
            "rules": [{"apiGroups": [""], "resources": [resource], "verbs": ["get"]}]}),
        );
    }
    let send = |method: &'static str, path: String, ctype: &'static str, body: Value| {
        let (url, w) = (url.clone(), w.clone());
        async move { raw(&url, method, &path, &w, Some((ctype, body)), no).await }
    };
    let held = format!("{rbac}/namespaces/ns/roles/held");
    let secrets_rule = json!({"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]});
    let refused = "roles.rbac.authorization.k8s.io \"held\" is forbidden: user \"system:serviceaccount:ns:w\" (groups=[\"system:serviceaccounts\" \"system:serviceaccounts:ns\" \"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\"]}";
    let message = |body: &str| -> Value {
        serde_json::from_str::<Value>(body).expect("status")["message"].clone()
    };

    // Merge patch.
    let (code, body) = send(
        "PATCH",
        held.clone(),
        "application/merge-patch+json",
        json!({"rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}, secrets_rule]}),
    )
    .await;
    assert_eq!((code, message(&body)), (403, json!(refused)), "{body}");
    // JSON patch.
    let (code, body) = send(
        "PATCH",
        held.clone(),
        "application/json-patch+json",
        json!([{"op": "add", "path": "/rules/-", "value": secrets_rule}]),
    )
    .await;
    assert_eq!((code, message(&body)), (403, json!(refused)), "{body}");
    // Server-side apply, and the same apply to a new role.
    let applied = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "held", "namespace": "ns"}, "rules": [secrets_rule]});
    let (code, body) = send(
        "PATCH",
        format!("{held}?fieldManager=w"),
        "application/apply-patch+yaml",
        applied.clone(),
    )
    .await;
    assert_eq!((code, message(&body)), (403, json!(refused)), "{body}");
    let mut new = applied.clone();
    new["metadata"]["name"] = json!("new");
    let (code, body) = send(
        "PATCH",
        format!("{rbac}/namespaces/ns/roles/new?fieldManager=w"),
        "application/apply-patch+yaml",
        new,
    )
    .await;
    assert_eq!(code, 403, "{body}");
    assert!(
        api.get("rbac.authorization.k8s.io", "roles", "ns", "new")
            .is_none()
    );
    // Nothing was stored by the refused writes, and an apply the writer may make still works:
    // the refused apply left no field ownership behind.
    let stored = api
        .get("rbac.authorization.k8s.io", "roles", "ns", "held")
        .expect("held");
    assert_eq!(stored["rules"].as_array().map(Vec::len), Some(1));
    // PUT of the stored role with the rule added.
    let mut put = stored.clone();
    put["rules"]
        .as_array_mut()
        .expect("rules")
        .push(secrets_rule.clone());
    let (code, body) = send("PUT", held.clone(), "application/json", put).await;
    assert_eq!((code, message(&body)), (403, json!(refused)), "{body}");

    // Only the garbage collector's fields: not checked, though the writer does not hold the
    // role's rules.
    let more = format!("{rbac}/namespaces/ns/roles/more");
    // (An owner that exists: the garbage collector deletes objects whose owners are gone.)
    api.insert(
        "configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "o", "namespace": "ns"}}),
    );
    let uid = api.get("", "configmaps", "ns", "o").expect("configmap")["metadata"]["uid"].clone();
    let owner = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": uid}]);
    let (code, body) = send(
        "PATCH",
        more.clone(),
        "application/merge-patch+json",
        json!({"metadata": {"ownerReferences": owner, "finalizers": ["example.com/f"]}}),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let mut put = api
        .get("rbac.authorization.k8s.io", "roles", "ns", "more")
        .expect("more");
    assert_eq!(put["metadata"]["ownerReferences"], owner);
    put["metadata"]["finalizers"] = json!([]);
    let (code, body) = send("PUT", more.clone(), "application/json", put).await;
    assert_eq!(code, 200, "{body}");
    // Any other change of that role is checked.
    let (code, body) = send(
        "PATCH",
        more,
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(code, 403, "{body}");

    // An aggregated ClusterRole with no rules: dropping its aggregation rule grants nothing
    // new, yet needs full authority.
    api.insert(
        "clusterroles",
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "aggregated"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}),
    );
    let (code, body) = send(
        "PATCH",
        format!("{rbac}/clusterroles/aggregated"),
        "application/merge-patch+json",
        json!({"aggregationRule": null}),
    )
    .await;
    assert_eq!(
        (code, message(&body)),
        (
            403,
            json!(
                "clusterroles.rbac.authorization.k8s.io \"aggregated\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
            )
        ),
        "{body}"
    );
    // An aggregation rule without selectors is none (`hasAggregationRule`).
    let (code, body) = send(
        "PATCH",
        format!("{rbac}/clusterroles/writer"),
        "application/merge-patch+json",
        json!({"aggregationRule": {"clusterRoleSelectors": []}}),
    )
    .await;
    assert_eq!(code, 200, "{body}");
}

/// Server-side dry run on create (`dryRun=All`): admitted and validated as a create (a 422 for
/// what validation refuses, a 409 for what exists), answered with the object, not stored; any
/// other value is refused as `ValidateDryRun` refuses it; other writes with `dryRun` are
/// refused (not modelled) rather than carried out.
#[tokio::test]
async fn dry_run_creates_validate_without_storing() {
    let (api, url) = ready();
    let no = Duration::from_secs(2);
    let json = "application/json";
    let (code, body) = raw(
        &url,
        "POST",
        &format!("{WIDGETS}?dryRun=All"),
        ADMIN_TOKEN,
        Some((json, widget("w", 3))),
        no,
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let answered: Value = serde_json::from_str(&body).expect("object");
    assert_eq!(answered["spec"]["mode"], "a", "defaulted");
    assert!(answered["metadata"].get("resourceVersion").is_none());
    assert!(api.get("example.com", "widgets", "default", "w").is_none());
    let (code, body) = raw(
        &url,
        "POST",
        &format!("{WIDGETS}?dryRun=All"),
        ADMIN_TOKEN,
        Some((json, widget("w", 10))),
        no,
    )
    .await;
    assert_eq!(code, 422, "{body}");
    let (code, body) = raw(
        &url,
        "POST",
        &format!("{WIDGETS}?dryRun=Some"),
        ADMIN_TOKEN,
        Some((json, widget("w", 3))),
        no,
    )
    .await;
    assert_eq!(code, 422, "{body}");
    let status: Value = serde_json::from_str(&body).expect("status");
    assert_eq!(
        status["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: []string{\"Some\"}: supported values: \"All\""
    );
    api.insert("widgets", widget("w", 3));
    let (code, body) = raw(
        &url,
        "PUT",
        &format!("{WIDGETS}/w?dryRun=All"),
        ADMIN_TOKEN,
        Some((json, widget("w", 4))),
        no,
    )
    .await;
    assert_eq!(code, 400, "{body}");
    assert_eq!(
        api.get("example.com", "widgets", "default", "w")
            .expect("w")["spec"]["size"],
        3
    );
}
