//! The `Status` bodies kube-apiserver writes for errors (cluster.md R2.1), with their exact
//! messages: apimachinery `pkg/api/errors/errors.go` (`NewNotFound`, `NewAlreadyExists`,
//! `NewConflict`, `NewInvalid`, `NewBadRequest`, `NewResourceExpired`, ...) through
//! `responsewriters/status.go :: ErrorToAPIStatus`.

use http::StatusCode;
use serde_json::{Value, json};

/// An error the API answers with: the HTTP code and the `Status` body.
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status (always the body's `code`).
    pub code: StatusCode,
    /// The `Status` object.
    pub body: Value,
}

impl ApiError {
    /// A `Status` with `reason`, `message` and `details`.
    pub fn new(code: StatusCode, reason: &str, message: String, details: Option<Value>) -> Self {
        let mut body = json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code.as_u16(),
        });
        if let Some(d) = details {
            body["details"] = d;
        }
        ApiError { code, body }
    }

    /// The message.
    pub fn message(&self) -> &str {
        self.body["message"].as_str().unwrap_or_default()
    }
}

/// `{name, group, kind: <plural>}` as `errors.go` fills `StatusDetails`.
fn details(group: &str, plural: &str, name: &str) -> Value {
    let mut d = json!({"kind": plural});
    if !name.is_empty() {
        d["name"] = json!(name);
    }
    if !group.is_empty() {
        d["group"] = json!(group);
    }
    d
}

/// `plural.group` or `plural` (`GroupResource.String`).
pub fn group_resource(group: &str, plural: &str) -> String {
    if group.is_empty() {
        plural.to_string()
    } else {
        format!("{plural}.{group}")
    }
}

/// 404 `NotFound`: `<resource>.<group> "<name>" not found` (`NewNotFound`).
pub fn not_found(group: &str, plural: &str, name: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NotFound",
        format!("{} \"{name}\" not found", group_resource(group, plural)),
        Some(details(group, plural, name)),
    )
}

/// 404 for a path no resource serves (the apiserver's `NotFound` handler).
pub fn no_route() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NotFound",
        "the server could not find the requested resource".into(),
        Some(json!({})),
    )
}

/// 409 `AlreadyExists` (`NewAlreadyExists`).
pub fn already_exists(group: &str, plural: &str, name: &str) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "AlreadyExists",
        format!(
            "{} \"{name}\" already exists",
            group_resource(group, plural)
        ),
        Some(details(group, plural, name)),
    )
}

/// 409 `Conflict` for a stale resourceVersion (`NewConflict` with `OptimisticLockErrorMsg`).
pub fn conflict(group: &str, plural: &str, name: &str) -> ApiError {
    ApiError::new(
        StatusCode::CONFLICT,
        "Conflict",
        format!(
            "Operation cannot be fulfilled on {} \"{name}\": the object has been modified; please apply your changes to the latest version and try again",
            group_resource(group, plural)
        ),
        Some(details(group, plural, name)),
    )
}

/// One `details.causes[]` entry.
#[derive(Debug, Clone)]
pub struct Cause {
    /// `FieldValueRequired`, `FieldValueInvalid`, ...
    pub reason: String,
    /// The body without the field (`Required value`, `Invalid value: ...`).
    pub message: String,
    /// The dotted path.
    pub field: String,
}

/// 422 `Invalid` (`NewInvalid`): `<Kind>.<group> "<name>" is invalid: <err>` or
/// `[<err1>, <err2>]`; `details.kind` is the qualified kind given.
pub fn invalid(
    kind_group: &str,
    group: &str,
    kind: &str,
    name: &str,
    causes: &[Cause],
) -> ApiError {
    let errs: Vec<String> = causes
        .iter()
        .map(|c| {
            if c.field.is_empty() {
                c.message.clone()
            } else {
                format!("{}: {}", c.field, c.message)
            }
        })
        .collect();
    let joined = match errs.len() {
        1 => errs[0].clone(),
        _ => format!("[{}]", errs.join(", ")),
    };
    let mut d = json!({"name": name, "kind": kind, "causes": causes.iter().map(|c| json!({
        "reason": c.reason, "message": c.message, "field": c.field})).collect::<Vec<_>>()});
    if !group.is_empty() {
        d["group"] = json!(group);
    }
    ApiError::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "Invalid",
        format!("{kind_group} \"{name}\" is invalid: {joined}"),
        Some(d),
    )
}

/// 400 `BadRequest` (`NewBadRequest`).
pub fn bad_request(message: String) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "BadRequest", message, None)
}

/// 403 `Forbidden` for admission refusals (`NewForbidden` with a cause).
pub fn forbidden(group: &str, plural: &str, name: &str, why: &str) -> ApiError {
    let what = if name.is_empty() {
        group_resource(group, plural)
    } else {
        format!("{} \"{name}\"", group_resource(group, plural))
    };
    ApiError::new(
        StatusCode::FORBIDDEN,
        "Forbidden",
        format!("{what} is forbidden: {why}"),
        Some(details(group, plural, name)),
    )
}

/// 410 `Expired` (`NewResourceExpired`): `too old resource version: <rv> (<oldest-1>)`.
pub fn expired(message: String) -> ApiError {
    ApiError::new(StatusCode::GONE, "Expired", message, None)
}

/// 415 for a patch type the resource does not take (`errUnsupportedMediaType`).
pub fn unsupported_patch(accepted: &[&str]) -> ApiError {
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UnsupportedMediaType",
        format!(
            "the body of the request was in an unknown format - accepted media types include: {}",
            accepted.join(", ")
        ),
        None,
    )
}

/// 405 for a verb the resource does not serve.
pub fn method_not_allowed(what: &str) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        format!("the server does not allow this method on the requested resource ({what})"),
        Some(json!({})),
    )
}

/// 500 `InternalError` (`NewInternalError`).
pub fn internal(message: String) -> ApiError {
    ApiError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "InternalError",
        format!("Internal error occurred: {message}"),
        Some(json!({"causes": [{"message": message}]})),
    )
}

/// 401 for a request whose credentials are not known.
pub fn unauthorized() -> ApiError {
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "Unauthorized",
        "Unauthorized".into(),
        None,
    )
}

/// 200 `Success` for an immediate delete of a custom resource (R2.17).
pub fn deleted(group: &str, plural: &str, name: &str, uid: &str) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
           "details": {"name": name, "group": group, "kind": plural, "uid": uid}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_group_resource() {
        assert_eq!(
            not_found("coordination.k8s.io", "leases", "x").message(),
            "leases.coordination.k8s.io \"x\" not found"
        );
        assert_eq!(
            not_found("", "configmaps", "y").message(),
            "configmaps \"y\" not found"
        );
        assert_eq!(
            conflict("operators.coreos.com", "installplans", "p").message(),
            "Operation cannot be fulfilled on installplans.operators.coreos.com \"p\": the object has been modified; please apply your changes to the latest version and try again"
        );
        let e = invalid(
            "UpgradePolicy.olmctl.dev",
            "olmctl.dev",
            "UpgradePolicy",
            "p",
            &[
                Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value".into(),
                    field: "spec.a".into(),
                },
                Cause {
                    reason: "FieldValueInvalid".into(),
                    message: "Invalid value: 3: bad".into(),
                    field: "spec.b".into(),
                },
            ],
        );
        assert_eq!(
            e.message(),
            "UpgradePolicy.olmctl.dev \"p\" is invalid: [spec.a: Required value, spec.b: Invalid value: 3: bad]"
        );
        assert_eq!(e.body["code"], 422);
        assert_eq!(
            e.body["details"]["causes"][0]["reason"],
            "FieldValueRequired"
        );
    }
}
