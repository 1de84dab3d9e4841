//! The names inside an object olmctl prints, checked as the API server's validation checks them
//! on create: a manifest that `kubectl apply` would have refused is refused before it is printed,
//! with the API server's own error (`Kind.group "name" is invalid: field: Invalid value: ...`).
//!
//! Which fields, and under which rule, follow `k8s.io/kubernetes/pkg/apis/core/validation/
//! validation.go` (`ValidateObjectMeta` with the kind's name function, `ValidatePodSpec`'s
//! `serviceAccountName`, `validateContainers`, `ValidateVolumes`), apimachinery's `ValidateLabels` and `ValidateAnnotations`,
//! and `pkg/apis/rbac/validation/validation.go` (`ValidateRBACName`, `ValidateRoleBindingSubject`,
//! the `roleRef`), and the ports those objects hold (`IsValidPortNum`: a Service's ports, a
//! container's, a webhook's service port). Names a kind's strategy gives: `ValidateNamespaceName` (a label),
//! `ValidateServiceName` (a DNS-1035 label), `ValidateRBACName` (a path segment) and
//! `NameIsDNSSubdomain` for every other kind, custom resources included.

use serde_json::Value;

use super::{Rule, problems};

/// One field the API server would refuse: its path, its value and the messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field, as `field.Path` writes it (`spec.template.spec.containers[0].name`).
    pub field: String,
    /// The value as given.
    pub value: String,
    /// The API server's message (`field.Invalid`'s detail, or "Required value").
    pub detail: String,
    /// The value is a number (`field.Invalid` prints it as `%v`, not quoted).
    pub number: bool,
}

/// An object the API server would refuse on create, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// `Kind.group` (just `Kind` in the core group), as `StatusError` names it.
    pub kind: String,
    /// The object's name.
    pub name: String,
    /// Every field it would refuse, in the order the validation visits them.
    pub errors: Vec<FieldError>,
}

impl std::fmt::Display for Invalid {
    /// `NewInvalid`'s message: `Kind.group "name" is invalid: ERR` (`[ERR, ERR]` for several),
    /// each `field: Invalid value: "value": detail`, values quoted as Go's `%q` quotes them.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let q = crate::range::go_quote;
        let errs: Vec<String> = self
            .errors
            .iter()
            .map(|e| {
                if e.detail.starts_with("Required value") {
                    format!("{}: {}", e.field, e.detail)
                } else if e.number {
                    format!("{}: Invalid value: {}: {}", e.field, e.value, e.detail)
                } else {
                    format!("{}: Invalid value: {}: {}", e.field, q(&e.value), e.detail)
                }
            })
            .collect();
        write!(f, "{} {} is invalid: ", self.kind, q(&self.name))?;
        if errs.len() == 1 {
            f.write_str(&errs[0])
        } else {
            write!(f, "[{}]", errs.join(", "))
        }
    }
}

impl std::error::Error for Invalid {}

/// `IsDNS1035Label` (`ValidateServiceName`): a letter first, then lower-case alphanumerics or
/// `-`, ending with an alphanumeric, at most 63.
fn dns1035_problems(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > super::LABEL_MAX {
        errs.push(format!(
            "must be no more than {} characters",
            super::LABEL_MAX
        ));
    }
    let b = value.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[b.len() - 1] != b'-';
    if !ok {
        errs.push("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string());
    }
    errs
}

/// The rule a kind's strategy applies to its names.
enum NameRule {
    Rule(Rule),
    Dns1035,
}

fn name_rule(kind: &str) -> NameRule {
    match kind {
        "Namespace" => NameRule::Rule(Rule::Label),
        "Service" => NameRule::Dns1035,
        "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding" => {
            NameRule::Rule(Rule::PathSegment)
        }
        _ => NameRule::Rule(Rule::Subdomain),
    }
}

struct Collect(Vec<FieldError>);

impl Collect {
    fn invalid(&mut self, field: &str, value: &str, msgs: Vec<String>) {
        for detail in msgs {
            self.0.push(FieldError {
                field: field.to_string(),
                value: value.to_string(),
                detail,
                number: false,
            });
        }
    }

    fn required(&mut self, field: &str) {
        self.0.push(FieldError {
            field: field.to_string(),
            value: String::new(),
            detail: "Required value".to_string(),
            number: false,
        });
    }

    /// A name under `rule`, when the field is set (an empty one is the field's default).
    fn name(&mut self, field: &str, v: &Value, rule: Rule) {
        if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
            self.invalid(field, s, problems(rule, s));
        }
    }

    /// `ValidateObjectMeta`'s checks of a name, a namespace, labels and annotation keys.
    fn meta(&mut self, at: &str, meta: &Value, name: Option<&NameRule>) {
        if let Some(rule) = name {
            match meta["name"].as_str() {
                Some(n) if !n.is_empty() => {
                    let msgs = match rule {
                        NameRule::Rule(r) => problems(*r, n),
                        NameRule::Dns1035 => dns1035_problems(n),
                    };
                    self.invalid(&format!("{at}name"), n, msgs);
                }
                _ if meta["generateName"].as_str().is_some_and(|g| !g.is_empty()) => {}
                _ => self.0.push(FieldError {
                    field: format!("{at}name"),
                    value: String::new(),
                    detail: "Required value: name or generateName is required".to_string(),
                    number: false,
                }),
            }
            self.name(&format!("{at}namespace"), &meta["namespace"], Rule::Label);
        }
        if let Some(labels) = meta["labels"].as_object() {
            for (k, v) in labels {
                self.invalid(&format!("{at}labels"), k, problems(Rule::QualifiedName, k));
                let v = v.as_str().unwrap_or_default();
                self.invalid(&format!("{at}labels"), v, problems(Rule::LabelValue, v));
            }
        }
        if let Some(ann) = meta["annotations"].as_object() {
            for k in ann.keys() {
                self.invalid(
                    &format!("{at}annotations"),
                    k,
                    problems(Rule::QualifiedName, &k.to_lowercase()),
                );
            }
        }
    }

    /// The names `ValidatePodSpec` checks.
    fn pod_spec(&mut self, at: &str, spec: &Value) {
        self.name(
            &format!("{at}serviceAccountName"),
            &spec["serviceAccountName"],
            Rule::Subdomain,
        );
        for list in ["initContainers", "containers"] {
            for (i, c) in items(&spec[list]) {
                self.name(&format!("{at}{list}[{i}].name"), &c["name"], Rule::Label);
                for (j, p) in items(&c["ports"]) {
                    self.port(
                        &format!("{at}{list}[{i}].ports[{j}].containerPort"),
                        &p["containerPort"],
                    );
                }
            }
        }
        for (i, v) in items(&spec["volumes"]) {
            let vat = format!("{at}volumes[{i}]");
            // A Secret's or ConfigMap's name in a volume is only required
            // (`validateSecretVolumeSource`, `validateConfigMapVolumeSource`).
            self.name(&format!("{vat}.name"), &v["name"], Rule::Label);
        }
    }

    /// `IsValidPortNum` of an integer port, when it is one (`validateServicePort`,
    /// `validateContainerPorts`; apiserver's `webhook.ValidateWebhookService` says it after
    /// `prefix`, "port is not valid: ").
    fn port_with(&mut self, field: &str, v: &Value, prefix: &str) {
        if let Some(n) = v.as_i64()
            && !(1..=65535).contains(&n)
        {
            self.0.push(FieldError {
                field: field.to_string(),
                value: n.to_string(),
                detail: format!("{prefix}must be between 1 and 65535, inclusive"),
                number: true,
            });
        }
    }

    fn port(&mut self, field: &str, v: &Value) {
        self.port_with(field, v, "");
    }

    /// A binding's `roleRef` and `subjects`.
    fn binding(&mut self, obj: &Value, namespaced: bool) {
        match obj["roleRef"]["name"].as_str() {
            Some(n) if !n.is_empty() => {
                self.invalid("roleRef.name", n, problems(Rule::PathSegment, n));
            }
            _ => self.required("roleRef.name"),
        }
        for (i, s) in items(&obj["subjects"]) {
            let at = format!("subjects[{i}]");
            let name = s["name"].as_str().unwrap_or_default();
            if name.is_empty() {
                self.required(&format!("{at}.name"));
            }
            if s["kind"] == "ServiceAccount" {
                self.name(&format!("{at}.name"), &s["name"], Rule::Subdomain);
                if !namespaced && s["namespace"].as_str().is_none_or(str::is_empty) {
                    self.required(&format!("{at}.namespace"));
                }
            }
        }
    }
}

/// The entries of a list field with their indices (none when it is not a list).
fn items(v: &Value) -> impl Iterator<Item = (usize, &Value)> {
    v.as_array().into_iter().flatten().enumerate()
}

/// `Kind.group` for an `apiVersion` and `kind`.
fn qualified_kind(obj: &Value) -> String {
    let kind = obj["kind"].as_str().unwrap_or_default();
    match obj["apiVersion"].as_str().and_then(|a| a.split_once('/')) {
        Some((group, _)) => format!("{kind}.{group}"),
        None => kind.to_string(),
    }
}

/// Whether the API server would accept the names in `obj` on create; if not, its error.
pub fn check(obj: &Value) -> Result<(), Invalid> {
    let kind = obj["kind"].as_str().unwrap_or_default();
    let mut c = Collect(Vec::new());
    c.meta("metadata.", &obj["metadata"], Some(&name_rule(kind)));
    match kind {
        "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet" | "Job" => {
            let t = &obj["spec"]["template"];
            c.meta("spec.template.metadata.", &t["metadata"], None);
            c.pod_spec("spec.template.spec.", &t["spec"]);
        }
        "Pod" => c.pod_spec("spec.", &obj["spec"]),
        "Service" => {
            for (i, p) in items(&obj["spec"]["ports"]) {
                c.port(&format!("spec.ports[{i}].port"), &p["port"]);
                // A targetPort of 0 is defaulted to the port before validation
                // (`SetDefaults_Service`).
                if p["targetPort"] != 0 {
                    c.port(&format!("spec.ports[{i}].targetPort"), &p["targetPort"]);
                }
            }
        }
        "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration" => {
            for (i, w) in items(&obj["webhooks"]) {
                c.port_with(
                    &format!("webhooks[{i}].clientConfig.service.port"),
                    &w["clientConfig"]["service"]["port"],
                    "port is not valid: ",
                );
            }
        }
        "RoleBinding" => c.binding(obj, true),
        "ClusterRoleBinding" => c.binding(obj, false),
        _ => {}
    }
    if c.0.is_empty() {
        return Ok(());
    }
    Err(Invalid {
        kind: qualified_kind(obj),
        name: obj["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        errors: c.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(sa: &str) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "demo", "namespace": "ops", "labels": {"app": "demo"}},
            "spec": {"template": {
                "metadata": {"labels": {"app": "demo"}},
                "spec": {
                    "serviceAccountName": sa,
                    "containers": [{"name": "manager"}],
                    "volumes": [{"name": "cert", "secret": {"secretName": "demo-cert"}}],
                },
            }},
        })
    }

    #[test]
    fn valid_objects_pass() {
        assert_eq!(check(&deployment("demo-sa")), Ok(()));
        let b = json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "system:demo"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "demo:x"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa", "namespace": "ops"}],
        });
        assert_eq!(check(&b), Ok(()));
    }

    #[test]
    fn a_service_account_name_is_a_subdomain() {
        let e = check(&deployment("sa\n# x\u{1b}[2J")).unwrap_err();
        assert_eq!(e.kind, "Deployment.apps");
        assert_eq!(e.errors.len(), 1);
        assert_eq!(e.errors[0].field, "spec.template.spec.serviceAccountName");
        let text = e.to_string();
        assert!(
            text.starts_with("Deployment.apps \"demo\" is invalid: spec.template.spec.serviceAccountName: Invalid value: \"sa\\n# x\\x1b[2J\": a lowercase RFC 1123 subdomain"),
            "{text}"
        );
        assert!(!text.chars().any(crate::text::needs_escape), "{text:?}");
    }

    #[test]
    fn names_follow_their_kinds_rule() {
        let obj = |kind: &str, api: &str, name: &str| json!({"apiVersion": api, "kind": kind, "metadata": {"name": name}});
        // A dotted name is a subdomain, not a Service's DNS-1035 label nor a Namespace's label.
        assert!(check(&obj("ConfigMap", "v1", "a.b")).is_ok());
        assert!(check(&obj("Service", "v1", "a.b-service")).is_err());
        assert!(check(&obj("Service", "v1", "1abc")).is_err());
        assert!(check(&obj("Service", "v1", "abc-1")).is_ok());
        assert!(check(&obj("Namespace", "v1", "a.b")).is_err());
        // RBAC names are path segments.
        assert!(
            check(&obj(
                "ClusterRole",
                "rbac.authorization.k8s.io/v1",
                "system:A b"
            ))
            .is_ok()
        );
        assert!(check(&obj("ClusterRole", "rbac.authorization.k8s.io/v1", "a/b")).is_err());
        // A custom resource's name is a subdomain.
        let e = check(&obj("Certificate", "cert-manager.io/v1", "A")).unwrap_err();
        assert_eq!(e.kind, "Certificate.cert-manager.io");
        let e = check(&json!({"kind": "Secret", "apiVersion": "v1", "metadata": {}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Secret \"\" is invalid: metadata.name: Required value: name or generateName is required"
        );
    }

    #[test]
    fn namespaces_labels_and_annotations_are_checked() {
        let mut d = deployment("sa");
        d["metadata"]["namespace"] = json!("../kube-system");
        d["metadata"]["labels"]["a b"] = json!("-x");
        d["metadata"]["annotations"] = json!({"Example.COM/Ok": "any value\n"});
        let e = check(&d).unwrap_err();
        let fields: Vec<&str> = e.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["metadata.namespace", "metadata.labels", "metadata.labels"]
        );
        assert!(
            e.to_string()
                .contains(", metadata.labels: Invalid value: \"-x\"")
        );
    }

    #[test]
    fn pod_names_are_checked() {
        let mut d = deployment("sa");
        let spec = &mut d["spec"]["template"]["spec"];
        spec["containers"][0]["name"] = json!("Manager");
        spec["volumes"][0]["name"] = json!("a.b");
        // Only required: upstream's own test bundles mount `testVolumeConfigMap`.
        spec["volumes"][0]["secret"]["secretName"] = json!("Any_Name");
        let e = check(&d).unwrap_err();
        let fields: Vec<&str> = e.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.template.spec.containers[0].name",
                "spec.template.spec.volumes[0].name"
            ]
        );
    }

    #[test]
    fn ports_are_between_1_and_65535() {
        let mut d = deployment("sa");
        d["spec"]["template"]["spec"]["containers"][0]["ports"] =
            json!([{"containerPort": 443}, {"containerPort": 0}]);
        let e = check(&d).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Deployment.apps \"demo\" is invalid: spec.template.spec.containers[0].ports[1].containerPort: Invalid value: 0: must be between 1 and 65535, inclusive"
        );
        let svc = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
            "spec": {"ports": [{"port": 65536, "targetPort": "https"}, {"port": 1, "targetPort": -1}, {"port": 2, "targetPort": 0}]}});
        let fields: Vec<String> = check(&svc)
            .unwrap_err()
            .errors
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["spec.ports[0].port", "spec.ports[1].targetPort"]);
        let wh = json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "w"}, "webhooks": [{"clientConfig": {"service": {"port": 443}}}, {"clientConfig": {"service": {"port": 0}}}]});
        let e = check(&wh).unwrap_err();
        assert_eq!(e.errors[0].field, "webhooks[1].clientConfig.service.port");
    }

    #[test]
    fn bindings_check_their_role_and_subjects() {
        let b = json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "b", "namespace": "ops"},
            "roleRef": {"name": "../x"},
            "subjects": [
                {"kind": "ServiceAccount", "name": "sa\n"},
                {"kind": "User", "name": "Any User"},
                {"kind": "Group"},
            ],
        });
        let e = check(&b).unwrap_err();
        let fields: Vec<&str> = e.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["roleRef.name", "subjects[0].name", "subjects[2].name"]
        );
        let mut crb = b.clone();
        crb["kind"] = json!("ClusterRoleBinding");
        crb["roleRef"]["name"] = json!("r");
        crb["subjects"] = json!([{"kind": "ServiceAccount", "name": "sa"}]);
        let e = check(&crb).unwrap_err();
        assert_eq!(
            e.to_string(),
            "ClusterRoleBinding.rbac.authorization.k8s.io \"b\" is invalid: subjects[0].namespace: Required value"
        );
    }
}
