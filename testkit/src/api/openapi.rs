//! OpenAPI v3 documents: the `/openapi/v3` index and one document per group-version, with the
//! operations of every resource served and their query parameters (cluster.md R8.4).
//!
//! kubectl needs them for `--validate=strict` (its default): before it sends an object it asks
//! whether the server validates fields itself (`cli-runtime
//! pkg/resource/query_param_verifier_v3.go :: queryParamVerifierV3.HasSupport`): it reads the
//! index, then the group-version's document, and looks for a `PATCH` operation whose
//! `x-kubernetes-group-version-kind` is the object's and which declares the `fieldValidation`
//! query parameter (`supportsQueryParamV3`). With no `/openapi/v3` it falls back to
//! `/openapi/v2` (`fallback_query_param_verifier.go`), and with neither it refuses to send:
//! `error validating data: failed to download openapi: ...`.
//!
//! What is built follows kube-openapi and the apiextensions-apiserver:
//! - the index is `handler3.OpenAPIV3Discovery`: `{"paths": {"<api/v1 | apis/<g>/<v>>":
//!   {"serverRelativeURL": "/openapi/v3/<path>?hash=<etag>"}}}` (`handler3/handler.go ::
//!   HandleDiscovery, constructServerRelativeURL`), the hash being the upper-case hex SHA-512
//!   of the document (`computeETag`), so a changed CRD changes its URL (kubectl caches these
//!   documents as immutable);
//! - a group-version document has, for each resource, the routes of
//!   `apiextensions-apiserver pkg/controller/openapi/builder/builder.go :: buildRoute` (the
//!   shape kube-apiserver's installer gives built-in kinds too): the collection (`list`,
//!   `post`, `deletecollection`), the item (`get`, `put`, `patch`, `delete`), `/status` when
//!   the resource has it, and the all-namespaces list of a namespaced resource; each operation
//!   carries `x-kubernetes-action`, `x-kubernetes-group-version-kind` and the query parameters
//!   of its options struct (`endpoints.AddObjectParams` of `GetOptions`, `ListOptions`,
//!   `CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`).
//!
//! Not built: `components.schemas` (the kinds' schemas: `kubectl explain` and client-side
//! validation would need them), request and response bodies, OpenAPI v2 (`/openapi/v2` stays a
//! 404; kubectl reads it only when v3 is missing), protobuf documents.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha512};

use super::resources::Resource;

/// The index path of a group-version: `api/v1` or `apis/<group>/<version>`.
fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `computeETag`: the upper-case hex SHA-512 of the served bytes.
pub fn etag(doc: &Value) -> String {
    Sha512::digest(doc.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// `/openapi/v3`: every group-version served, each with its document's URL.
pub fn index(resources: &[Resource], server_version: &str) -> Value {
    let mut gvs: Vec<(String, String)> = Vec::new();
    for r in resources {
        for v in &r.versions {
            let gv = (r.group.clone(), v.clone());
            if !gvs.contains(&gv) {
                gvs.push(gv);
            }
        }
    }
    let mut paths = Map::new();
    for (g, v) in gvs {
        let path = gv_path(&g, &v);
        if let Some(doc) = group_version(resources, &path, server_version) {
            paths.insert(
                path.clone(),
                json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={}", etag(&doc))}),
            );
        }
    }
    json!({"paths": paths})
}

fn query(name: &str, ty: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description,
           "schema": {"type": ty, "uniqueItems": true}})
}

/// The query parameters of an action's options struct (`endpoints.AddObjectParams`).
fn params(action: &str) -> Vec<Value> {
    let dry_run = query(
        "dryRun",
        "string",
        "When present, indicates that modifications should not be persisted.",
    );
    let field_manager = query(
        "fieldManager",
        "string",
        "fieldManager is a name associated with the actor or entity that is making these changes.",
    );
    let field_validation = query(
        "fieldValidation",
        "string",
        "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict.",
    );
    match action {
        "get" => vec![query(
            "resourceVersion",
            "string",
            "resourceVersion sets a constraint on what resource versions a request may be served from.",
        )],
        "list" | "deletecollection" => [
            ("allowWatchBookmarks", "boolean"),
            ("continue", "string"),
            ("fieldSelector", "string"),
            ("labelSelector", "string"),
            ("limit", "integer"),
            ("resourceVersion", "string"),
            ("resourceVersionMatch", "string"),
            ("sendInitialEvents", "boolean"),
            ("timeoutSeconds", "integer"),
            ("watch", "boolean"),
        ]
        .iter()
        .map(|(n, t)| query(n, t, n))
        .collect(),
        "post" | "put" => vec![dry_run, field_manager, field_validation],
        "patch" => vec![
            dry_run,
            field_manager,
            field_validation,
            query(
                "force",
                "boolean",
                "Force is going to \"force\" Apply requests. This field is required to be unset for non-apply patch requests.",
            ),
        ],
        "delete" => vec![
            dry_run,
            query("gracePeriodSeconds", "integer", "gracePeriodSeconds"),
            query("orphanDependents", "boolean", "orphanDependents"),
            query("propagationPolicy", "string", "propagationPolicy"),
        ],
        _ => Vec::new(),
    }
}

fn path_param(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "description": description, "required": true,
           "schema": {"type": "string", "uniqueItems": true}})
}

/// One operation (`buildRoute`): `operationVerb + Namespaced + Kind + Subresource` as its id.
fn operation(r: &Resource, version: &str, action: &str, op_verb: &str, id: String) -> Value {
    let mut responses =
        json!({"200": {"description": "OK"}, "401": {"description": "Unauthorized"}});
    match action {
        "post" => {
            responses["201"] = json!({"description": "Created"});
            responses["202"] = json!({"description": "Accepted"});
        }
        "put" => responses["201"] = json!({"description": "Created"}),
        "delete" => responses["202"] = json!({"description": "Accepted"}),
        _ => {}
    }
    json!({
        "tags": [r.group.replace('.', "_") + "_" + version],
        "description": format!("{op_verb} {}", r.kind),
        "operationId": id,
        "parameters": params(action),
        "responses": responses,
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": r.group, "version": version, "kind": r.kind},
    })
}

/// The document of one group-version (`api/v1`, `apis/<group>/<version>`), or `None` when
/// nothing is served there.
pub fn group_version(resources: &[Resource], path: &str, server_version: &str) -> Option<Value> {
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (group, version) = match parts.as_slice() {
        ["api", v] => ("", *v),
        ["apis", g, v] => (*g, *v),
        _ => return None,
    };
    let mut paths = Map::new();
    let mut any = false;
    for r in resources
        .iter()
        .filter(|r| r.group == group && r.versions.iter().any(|v| v == version))
    {
        any = true;
        let root = format!("/{}", gv_path(group, version));
        let scoped = if r.namespaced {
            format!("{root}/namespaces/{{namespace}}/{}", r.plural)
        } else {
            format!("{root}/{}", r.plural)
        };
        let ns = if r.namespaced { "Namespaced" } else { "" };
        let common = |with_name: bool| {
            let mut p = vec![query(
                "pretty",
                "string",
                "If 'true', then the output is pretty printed.",
            )];
            if r.namespaced {
                p.push(path_param(
                    "namespace",
                    "object name and auth scope, such as for teams and projects",
                ));
            }
            if with_name {
                p.push(path_param("name", &format!("name of the {}", r.kind)));
            }
            Value::Array(p)
        };
        let has = |v: &str| r.verbs.contains(&v);
        let mut collection = Map::new();
        collection.insert("parameters".into(), common(false));
        if has("list") {
            collection.insert(
                "get".into(),
                operation(r, version, "list", "list", format!("list{ns}{}", r.kind)),
            );
        }
        if has("create") {
            collection.insert(
                "post".into(),
                operation(
                    r,
                    version,
                    "post",
                    "create",
                    format!("create{ns}{}", r.kind),
                ),
            );
        }
        if has("deletecollection") {
            collection.insert(
                "delete".into(),
                operation(
                    r,
                    version,
                    "deletecollection",
                    "delete collection of",
                    format!("deletecollection{ns}{}", r.kind),
                ),
            );
        }
        paths.insert(scoped.clone(), Value::Object(collection));
        let mut item = Map::new();
        item.insert("parameters".into(), common(true));
        for (verb, method, action, op) in [
            ("get", "get", "get", "read"),
            ("update", "put", "put", "replace"),
            ("delete", "delete", "delete", "delete"),
            ("patch", "patch", "patch", "patch"),
        ] {
            if has(verb) {
                item.insert(
                    method.into(),
                    operation(r, version, action, op, format!("{op}{ns}{}", r.kind)),
                );
            }
        }
        if item.len() > 1 {
            paths.insert(format!("{scoped}/{{name}}"), Value::Object(item));
        }
        if r.status {
            let mut status = Map::new();
            status.insert("parameters".into(), common(true));
            for (method, action, op) in [
                ("get", "get", "read"),
                ("put", "put", "replace"),
                ("patch", "patch", "patch"),
            ] {
                status.insert(
                    method.into(),
                    operation(r, version, action, op, format!("{op}{ns}{}Status", r.kind)),
                );
            }
            paths.insert(format!("{scoped}/{{name}}/status"), Value::Object(status));
        }
        if r.namespaced && has("list") {
            let mut all = Map::new();
            all.insert(
                "parameters".into(),
                json!([query(
                    "pretty",
                    "string",
                    "If 'true', then the output is pretty printed."
                )]),
            );
            all.insert(
                "get".into(),
                operation(
                    r,
                    version,
                    "list",
                    "list",
                    format!("list{}ForAllNamespaces", r.kind),
                ),
            );
            paths.insert(format!("{root}/{}", r.plural), Value::Object(all));
        }
    }
    any.then(|| {
        json!({
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": server_version},
            "paths": paths,
            "components": {"securitySchemes": {"BearerToken": {
                "type": "apiKey", "description": "Bearer Token authentication",
                "name": "authorization", "in": "header"}}},
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::resources::builtins;

    #[test]
    fn every_patch_declares_field_validation() {
        let rs = builtins();
        let idx = index(&rs, "v1.30.2");
        let url = idx["paths"]["api/v1"]["serverRelativeURL"]
            .as_str()
            .expect("api/v1");
        let doc = group_version(&rs, "api/v1", "v1.30.2").expect("doc");
        assert_eq!(url, format!("/openapi/v3/api/v1?hash={}", etag(&doc)));
        let ns = &doc["paths"]["/api/v1/namespaces/{name}"]["patch"];
        assert_eq!(
            ns["x-kubernetes-group-version-kind"],
            json!({"group": "", "version": "v1", "kind": "Namespace"})
        );
        assert!(
            ns["parameters"]
                .as_array()
                .expect("params")
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
        let roles = group_version(&rs, "apis/rbac.authorization.k8s.io/v1", "v").expect("rbac");
        assert!(
            roles["paths"]["/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles/{name}"]
                ["patch"]
                .is_object()
        );
        assert!(group_version(&rs, "apis/nope.example.com/v1", "v").is_none());
        // The review kinds serve only create.
        let authz = group_version(&rs, "apis/authorization.k8s.io/v1", "v").expect("authz");
        assert!(
            authz["paths"]["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]["post"]
                .is_object()
        );
        assert!(
            authz["paths"]
                .get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews/{name}")
                .is_none()
        );
    }
}
