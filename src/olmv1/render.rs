//! A registry+v1 bundle as the plain objects OLM v1's operator-controller applies for it.
//!
//! Follows operator-controller's `rukpak/render/registryv1` (`registryv1.go ::
//! ResourceGenerators`, each generator in `generators/generators.go`) and `rukpak/render/
//! render.go` (target namespaces): ServiceAccounts, Roles and RoleBindings, ClusterRoles and
//! ClusterRoleBindings, CRDs, the bundle's other objects, Deployments, validating and mutating
//! webhook configurations, webhook Services, then the certificate provider's objects. Where
//! upstream iterates a Go set (ServiceAccounts, certificate objects) the order here is by name.
//! The objects are JSON values in the API's field names; fields a CSV leaves out stay out.

use std::collections::{BTreeMap, BTreeSet};

use super::gotype::round_trip;
use serde_json::{Map, Value, json};

use super::names::{Rule, name_for_base_and_suffix, permission_json, unique_name};
use crate::bundle::load::BundleDir;

/// How webhook certificates are provided (`render/certprovider.go`; operator-controller's main
/// prefers cert-manager, then OpenShift's service CA).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertProvider {
    /// No provider: what upstream's renderer produces without one (its regression data).
    None,
    /// `certproviders/certmanager.go`: an Issuer and a Certificate per webhook service.
    CertManager,
    /// `certproviders/openshift_serviceca.go`: the service CA injects and serves.
    OpenshiftServiceCa,
}

/// What to render for.
#[derive(Debug, Clone)]
pub struct Options {
    /// The ClusterExtension's `spec.namespace`.
    pub install_namespace: String,
    /// The watch namespace (`spec.config.inline.watchNamespace`); `None`: the bundle's default
    /// (all namespaces when it supports AllNamespaces).
    pub watch_namespace: Option<String>,
    /// The certificate provider.
    pub cert_provider: CertProvider,
    /// Set `olm.operatorNamespace` on the pods (operator-controller v1.11 and later; v1.10 did
    /// not).
    pub operator_namespace_annotation: bool,
    /// operator-controller's `SingleOwnNamespaceInstallSupport` gate (Alpha, off by default):
    /// without it a bundle must support AllNamespaces.
    pub single_own_namespace: bool,
    /// The ClusterExtension's `deploymentConfig` (the Alpha `DeploymentConfig` gate), applied to
    /// every Deployment ([`super::deployment_config::apply`]).
    pub deployment_config: Option<Value>,
}

/// Why operator-controller would not install the bundle, in its words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused(pub String);

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn refuse<T>(msg: impl Into<String>) -> Result<T, Refused> {
    Err(Refused(msg.into()))
}

fn strings(v: &Value) -> Option<Vec<String>> {
    v.as_array().map(|a| {
        a.iter()
            .map(|s| match s {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect()
    })
}

/// A CSV rule as rbac/v1 `PolicyRule`.
fn rule(v: &Value) -> Rule {
    Rule {
        verbs: strings(&v["verbs"]),
        api_groups: strings(&v["apiGroups"]),
        resources: strings(&v["resources"]),
        resource_names: strings(&v["resourceNames"]),
        non_resource_urls: strings(&v["nonResourceURLs"]),
    }
}

/// A `PolicyRule` as the API writes it (`omitempty` lists left out).
fn rule_json(r: &Rule) -> Value {
    let mut m = Map::new();
    m.insert(
        "verbs".into(),
        r.verbs.as_ref().map_or(Value::Null, |v| json!(v)),
    );
    for (k, v) in [
        ("apiGroups", &r.api_groups),
        ("resources", &r.resources),
        ("resourceNames", &r.resource_names),
        ("nonResourceURLs", &r.non_resource_urls),
    ] {
        if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
            m.insert(k.into(), json!(v));
        }
    }
    Value::Object(m)
}

/// One CSV `permissions`/`clusterPermissions` entry.
#[derive(Debug, Clone)]
struct Permission {
    service_account: String,
    rules: Option<Vec<Rule>>,
}

impl Permission {
    fn of(v: &Value) -> Permission {
        Permission {
            service_account: v["serviceAccountName"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            rules: v["rules"].as_array().map(|r| r.iter().map(rule).collect()),
        }
    }

    /// `saNameOrDefault`.
    fn sa(&self) -> &str {
        if self.service_account.is_empty() {
            "default"
        } else {
            &self.service_account
        }
    }

    fn name(&self, csv_name: &str) -> String {
        unique_name(
            &format!("{csv_name}-{}", self.sa()),
            &permission_json(&self.service_account, self.rules.as_deref()),
        )
    }

    fn rules_json(&self) -> Value {
        self.rules.as_ref().map_or(Value::Null, |r| {
            Value::Array(r.iter().map(rule_json).collect())
        })
    }
}

/// `CertProvisionerFor(deploymentName)`: the webhook service and certificate names.
fn service_name(deployment: &str) -> String {
    name_for_base_and_suffix(&deployment.replace('.', "-"), "service")
}

/// The certificate (and secret) of a webhook service.
fn cert_name(service: &str) -> String {
    name_for_base_and_suffix(service, "cert")
}

/// The supported install modes, by type.
fn install_modes(csv: &Value) -> BTreeSet<String> {
    csv["spec"]["installModes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["supported"].as_bool() == Some(true))
        .filter_map(|m| m["type"].as_str().map(str::to_string))
        .collect()
}

/// Go's `%v` of a string list: `[a b]`.
fn go_list<S: AsRef<str>>(items: &[S]) -> String {
    let parts: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
    format!("[{}]", parts.join(" "))
}

/// `render.go :: validateTargetNamespaces`.
fn validate_targets(
    modes: &BTreeSet<String>,
    install: &str,
    targets: &[String],
) -> Result<(), String> {
    let set: BTreeSet<&str> = targets.iter().map(String::as_str).collect();
    let modes_list: Vec<&String> = modes.iter().collect();
    let has = |m: &str| modes.contains(m);
    match set.len() {
        0 => {
            return Err(if has("MultiNamespace") {
                "at least one target namespace must be specified".into()
            } else {
                "exactly one target namespace must be specified".into()
            });
        }
        1 if set.contains("") => {
            if has("AllNamespaces") {
                return Ok(());
            }
            return Err(format!(
                "supported install modes {} do not support targeting all namespaces",
                go_list(&modes_list)
            ));
        }
        1 => {
            if targets[0] == install {
                if !has("OwnNamespace") {
                    return Err(format!(
                        "supported install modes {} do not support targeting own namespace",
                        go_list(&modes_list)
                    ));
                }
                return Ok(());
            }
            if has("SingleNamespace") {
                return Ok(());
            }
        }
        _ => {
            if !has("OwnNamespace") && set.contains(install) {
                return Err(format!(
                    "supported install modes {} do not support targeting own namespace",
                    go_list(&modes_list)
                ));
            }
            if has("MultiNamespace") && !set.contains("") {
                return Ok(());
            }
        }
    }
    Err(format!(
        "supported install modes {} do not support target namespaces {}",
        go_list(&modes_list),
        go_list(targets)
    ))
}

fn meta(name: &str, namespace: Option<&str>) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    if let Some(ns) = namespace {
        m.insert("namespace".into(), json!(ns));
    }
    Value::Object(m)
}

fn object(api_version: &str, kind: &str, metadata: Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("apiVersion".into(), json!(api_version));
    m.insert("kind".into(), json!(kind));
    m.insert("metadata".into(), metadata);
    m
}

/// Annotations on an object's metadata (created when missing).
fn annotate(obj: &mut Value, key: &str, value: &str) {
    if !obj["metadata"]["annotations"].is_object() {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"][key] = json!(value);
}

/// The render context: the bundle's CSV and the options.
struct Ctx<'a> {
    csv: &'a Value,
    csv_name: String,
    opts: &'a Options,
    targets: Vec<String>,
}

impl Ctx<'_> {
    fn all_namespaces(&self) -> bool {
        self.targets.len() == 1 && self.targets[0].is_empty()
    }

    fn strategy(&self) -> &Value {
        &self.csv["spec"]["install"]["spec"]
    }

    fn permissions(&self, key: &str) -> Vec<Permission> {
        self.strategy()[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(Permission::of)
            .collect()
    }

    fn webhooks(&self) -> Vec<&Value> {
        self.csv["spec"]["webhookdefinitions"]
            .as_array()
            .into_iter()
            .flatten()
            .collect()
    }

    fn ns(&self) -> &str {
        &self.opts.install_namespace
    }

    /// `CertProvider.InjectCABundle` of the provider for the webhook service `svc`.
    fn inject_ca(&self, obj: &mut Value, svc: &str, is_service: bool) {
        let cert = cert_name(svc);
        match (self.opts.cert_provider, is_service) {
            (CertProvider::None, _) => {}
            (CertProvider::CertManager, false) => annotate(
                obj,
                "cert-manager.io/inject-ca-from",
                &format!("{}/{cert}", self.ns()),
            ),
            (CertProvider::CertManager, true) => {}
            (CertProvider::OpenshiftServiceCa, false) => {
                annotate(obj, "service.beta.openshift.io/inject-cabundle", "true")
            }
            (CertProvider::OpenshiftServiceCa, true) => annotate(
                obj,
                "service.beta.openshift.io/serving-cert-secret-name",
                &cert,
            ),
        }
    }
}

/// `BundleCSVServiceAccountGenerator`.
fn service_accounts(c: &Ctx<'_>) -> Vec<Value> {
    let mut names: BTreeSet<String> = BTreeSet::new();
    for p in c
        .permissions("permissions")
        .iter()
        .chain(&c.permissions("clusterPermissions"))
    {
        names.insert(p.sa().to_string());
    }
    names
        .into_iter()
        .filter(|n| n != "default")
        .map(|n| Value::Object(object("v1", "ServiceAccount", meta(&n, Some(c.ns())))))
        .collect()
}

fn binding(
    kind: &str,
    role_kind: &str,
    name: &str,
    ns: Option<&str>,
    c: &Ctx<'_>,
    sa: &str,
) -> Value {
    let mut b = object("rbac.authorization.k8s.io/v1", kind, meta(name, ns));
    b.insert(
        "roleRef".into(),
        json!({"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name}),
    );
    b.insert(
        "subjects".into(),
        json!([{"kind": "ServiceAccount", "name": sa, "namespace": c.ns()}]),
    );
    Value::Object(b)
}

/// `BundleCSVPermissionsGenerator`: a Role and RoleBinding per target namespace per
/// permission (none in AllNamespaces mode, where they become cluster roles).
fn roles(c: &Ctx<'_>) -> Vec<Value> {
    if c.all_namespaces() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for ns in &c.targets {
        for p in c.permissions("permissions") {
            let name = p.name(&c.csv_name);
            let mut role = object(
                "rbac.authorization.k8s.io/v1",
                "Role",
                meta(&name, Some(ns)),
            );
            role.insert("rules".into(), p.rules_json());
            out.push(Value::Object(role));
            out.push(binding("RoleBinding", "Role", &name, Some(ns), c, p.sa()));
        }
    }
    out
}

/// `BundleCSVClusterPermissionsGenerator`: clusterPermissions, plus in AllNamespaces mode each
/// permission with get/list/watch on namespaces appended.
fn cluster_roles(c: &Ctx<'_>) -> Vec<Value> {
    let mut perms = c.permissions("clusterPermissions");
    if c.all_namespaces() {
        for mut p in c.permissions("permissions") {
            p.rules.get_or_insert_with(Vec::new).push(Rule {
                verbs: Some(vec!["get".into(), "list".into(), "watch".into()]),
                api_groups: Some(vec![String::new()]),
                resources: Some(vec!["namespaces".into()]),
                ..Rule::default()
            });
            perms.push(p);
        }
    }
    let mut out = Vec::new();
    for p in perms {
        let name = p.name(&c.csv_name);
        let mut role = object(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            meta(&name, None),
        );
        role.insert("rules".into(), p.rules_json());
        out.push(Value::Object(role));
        out.push(binding(
            "ClusterRoleBinding",
            "ClusterRole",
            &name,
            None,
            c,
            p.sa(),
        ));
    }
    out
}

/// `BundleCRDGenerator`: the bundle's CRDs, with conversion webhooks wired.
fn crds(c: &Ctx<'_>, bundle_crds: &[Value]) -> Result<Vec<Value>, Refused> {
    let mut conversion: BTreeMap<String, &Value> = BTreeMap::new();
    for wh in c.webhooks() {
        if wh["type"] != "ConversionWebhook" {
            continue;
        }
        for crd in strings(&wh["conversionCRDs"]).unwrap_or_default() {
            if conversion.insert(crd.clone(), wh).is_some() {
                return refuse(format!(
                    "custom resource definition '{crd}' is referenced by multiple conversion \
                     webhook definitions"
                ));
            }
        }
    }
    let mut out = Vec::new();
    for crd in bundle_crds {
        let mut cp = crd.clone();
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        if let Some(wh) = conversion.get(name) {
            if crd["spec"]["preserveUnknownFields"] == json!(true) {
                return refuse(format!(
                    "custom resource definition '{name}' must have .spec.preserveUnknownFields \
                     set to false to let API Server call webhook to do the conversion"
                ));
            }
            let path = wh["webhookPath"].as_str().unwrap_or("/");
            let svc = service_name(wh["deploymentName"].as_str().unwrap_or_default());
            let client = json!({"service": {"namespace": c.ns(), "name": svc, "path": path,
                "port": container_port(wh)}});
            let mut webhook = json!({"clientConfig": client});
            if !wh["admissionReviewVersions"].is_null() {
                webhook["conversionReviewVersions"] = wh["admissionReviewVersions"].clone();
            }
            cp["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": webhook});
            c.inject_ca(&mut cp, &svc, false);
        }
        out.push(cp);
    }
    Ok(out)
}

/// `BundleAdditionalResourcesGenerator`: the other objects; namespaced kinds get the install
/// namespace.
fn others(c: &Ctx<'_>, objs: &[Value]) -> Result<Vec<Value>, Refused> {
    let mut out = Vec::new();
    for o in objs {
        let kind = o["kind"].as_str().unwrap_or_default();
        let Some(namespaced) = crate::bundle::kind_namespaced(kind) else {
            return refuse(format!(
                "bundle contains unsupported resource: Name: {}, Kind: {kind}",
                o["metadata"]["name"].as_str().unwrap_or_default()
            ));
        };
        let mut o = o.clone();
        if namespaced {
            o["metadata"]["namespace"] = json!(c.ns());
        }
        out.push(o);
    }
    Ok(out)
}

/// The webhook certificate volumes and mounts (`certVolumeConfigs`).
const CERT_VOLUMES: [(&str, &str, &str, &str); 2] = [
    (
        "webhook-cert",
        "/tmp/k8s-webhook-server/serving-certs",
        "tls.crt",
        "tls.key",
    ),
    (
        "apiservice-cert",
        "/apiserver.local.config/certificates",
        "apiserver.crt",
        "apiserver.key",
    ),
];

/// `ensureCorrectDeploymentCertVolumes`: the secret's volumes replace volumes of the same name
/// or mount path.
fn cert_volumes(dep: &mut Value, secret: &str) {
    let mut remove: BTreeSet<String> = CERT_VOLUMES.iter().map(|v| v.0.to_string()).collect();
    let paths: BTreeSet<&str> = CERT_VOLUMES.iter().map(|v| v.1).collect();
    let pod = &mut dep["spec"]["template"]["spec"];
    for c in pod["containers"].as_array().into_iter().flatten() {
        for m in c["volumeMounts"].as_array().into_iter().flatten() {
            if m["mountPath"].as_str().is_some_and(|p| paths.contains(p))
                && let Some(n) = m["name"].as_str()
            {
                remove.insert(n.to_string());
            }
        }
    }
    // The entries of `list` whose name is not removed.
    let kept = |list: &Value| -> Vec<Value> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter(|v| !v["name"].as_str().is_some_and(|n| remove.contains(n)))
            .cloned()
            .collect()
    };
    let mut volumes = kept(&pod["volumes"]);
    for (name, _, cert, key) in CERT_VOLUMES {
        volumes.push(
            json!({"name": name, "secret": {"secretName": secret, "items": [
            {"key": "tls.crt", "path": cert}, {"key": "tls.key", "path": key}]}}),
        );
    }
    pod["volumes"] = Value::Array(volumes);
    if let Some(containers) = pod["containers"].as_array_mut() {
        for c in containers {
            let mut mounts = kept(&c["volumeMounts"]);
            for (name, path, _, _) in CERT_VOLUMES {
                mounts.push(json!({"name": name, "mountPath": path}));
            }
            c["volumeMounts"] = Value::Array(mounts);
        }
    }
}

/// `BundleCSVDeploymentGenerator`.
fn deployments(c: &Ctx<'_>, csv_annotations: &Map<String, Value>) -> Vec<Value> {
    let webhook_deployments: BTreeSet<&str> = c
        .webhooks()
        .iter()
        .filter_map(|w| w["deploymentName"].as_str())
        .collect();
    let mut out = Vec::new();
    for spec in c.strategy()["deployments"].as_array().into_iter().flatten() {
        let name = spec["name"].as_str().unwrap_or_default();
        let mut dspec = spec["spec"].clone();
        // `util.MergeMaps(csv annotations, template annotations)`, then OLM's two.
        let mut annotations = csv_annotations.clone();
        if let Some(t) = dspec["template"]["metadata"]["annotations"].as_object() {
            for (k, v) in t {
                annotations.insert(k.clone(), v.clone());
            }
        }
        annotations.insert("olm.targetNamespaces".into(), json!(c.targets.join(",")));
        if c.opts.operator_namespace_annotation {
            annotations.insert("olm.operatorNamespace".into(), json!(c.ns()));
        }
        if !dspec["template"]["metadata"].is_object() {
            dspec["template"]["metadata"] = json!({});
        }
        dspec["template"]["metadata"]["annotations"] = Value::Object(annotations);
        dspec["revisionHistoryLimit"] = json!(1);
        let mut metadata = meta(name, Some(c.ns()));
        if spec["label"].is_object() {
            metadata["labels"] = spec["label"].clone();
        }
        let mut dep = object("apps/v1", "Deployment", metadata);
        dep.insert("spec".into(), dspec);
        let mut dep = Value::Object(dep);
        if webhook_deployments.contains(name) && c.opts.cert_provider != CertProvider::None {
            cert_volumes(&mut dep, &cert_name(&service_name(name)));
        }
        // Apply deployment configuration if provided.
        if let Some(config) = &c.opts.deployment_config {
            super::deployment_config::apply(&mut dep, config);
        }
        out.push(dep);
    }
    out
}

/// `getWebhookNamespaceSelector`.
fn namespace_selector(targets: &[String]) -> Option<Value> {
    (!targets.is_empty() && !targets.iter().any(String::is_empty)).then(|| {
        json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In",
            "values": targets}]})
    })
}

/// `Bundle{Validating,Mutating}WebhookResourceGenerator`.
fn webhook_configurations(c: &Ctx<'_>, kind: &str, type_: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for wh in c.webhooks().into_iter().filter(|w| w["type"] == type_) {
        let name = wh["generateName"]
            .as_str()
            .unwrap_or_default()
            .trim_end_matches('-')
            .to_string();
        let svc = service_name(wh["deploymentName"].as_str().unwrap_or_default());
        let mut service = json!({"namespace": c.ns(), "name": svc, "port": container_port(wh)});
        if let Some(p) = wh.get("webhookPath").filter(|p| !p.is_null()) {
            service["path"] = p.clone();
        }
        let mut hook = Map::new();
        hook.insert("name".into(), json!(name));
        hook.insert("clientConfig".into(), json!({"service": service}));
        let mut fields = vec![
            "rules",
            "failurePolicy",
            "matchPolicy",
            "objectSelector",
            "sideEffects",
            "timeoutSeconds",
            "admissionReviewVersions",
        ];
        if type_ == "MutatingAdmissionWebhook" {
            fields.push("reinvocationPolicy");
        }
        for f in fields {
            if let Some(v) = wh.get(f).filter(|v| !v.is_null()) {
                hook.insert(f.into(), v.clone());
            }
        }
        if let Some(sel) = namespace_selector(&c.targets) {
            hook.insert("namespaceSelector".into(), sel);
        }
        let mut obj = object(
            "admissionregistration.k8s.io/v1",
            kind,
            meta(&name, Some(c.ns())),
        );
        obj.insert("webhooks".into(), json!([Value::Object(hook)]));
        let mut obj = Value::Object(obj);
        c.inject_ca(&mut obj, &svc, false);
        out.push(obj);
    }
    out
}

/// A webhook's `containerPort` as the decoded `WebhookDescription` holds it (an int32; 0 when
/// left out).
fn container_port(wh: &Value) -> i64 {
    wh["containerPort"].as_i64().unwrap_or(0)
}

/// `intstr.IntOrString.IntValue`: the number, or `strconv.Atoi` of the string (0 when it is no
/// decimal integer; clamped to int64 as `Atoi` returns it on overflow).
fn int_value(v: &Value) -> i64 {
    match v {
        Value::String(s) => match s.parse::<i64>() {
            Ok(i) => i,
            Err(e) => match e.kind() {
                std::num::IntErrorKind::PosOverflow => i64::MAX,
                std::num::IntErrorKind::NegOverflow => i64::MIN,
                _ => 0,
            },
        },
        other => other.as_i64().unwrap_or(0),
    }
}

/// `BundleDeploymentServiceResourceGenerator`: a Service per webhook deployment, one port per
/// distinct (port, targetPort), sorted.
fn webhook_services(c: &Ctx<'_>) -> Vec<Value> {
    let mut ports: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for wh in c.webhooks() {
        let port = Some(container_port(wh)).filter(|p| *p > 0).unwrap_or(443);
        let target = match wh.get("targetPort") {
            Some(t) if !t.is_null() => t.clone(),
            _ => json!(port),
        };
        let p = json!({"name": port.to_string(), "port": port, "targetPort": target});
        let list = ports
            .entry(
                wh["deploymentName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
            .or_default();
        if !list.contains(&p) {
            list.push(p);
        }
    }
    let mut out = Vec::new();
    for spec in c.strategy()["deployments"].as_array().into_iter().flatten() {
        let name = spec["name"].as_str().unwrap_or_default();
        let Some(list) = ports.get_mut(name) else {
            continue;
        };
        // By port, then by the target port's `IntValue`.
        list.sort_by_key(|p| (p["port"].as_i64(), int_value(&p["targetPort"])));
        let svc = service_name(name);
        let mut spec_json = json!({"ports": list});
        if let Some(sel) = spec["spec"]["selector"]["matchLabels"].as_object() {
            spec_json["selector"] = Value::Object(sel.clone());
        }
        let mut obj = object("v1", "Service", meta(&svc, Some(c.ns())));
        obj.insert("spec".into(), spec_json);
        let mut obj = Value::Object(obj);
        c.inject_ca(&mut obj, &svc, true);
        out.push(obj);
    }
    out
}

/// `CertProviderResourceGenerator` with cert-manager (`certmanager.go :: AdditionalObjects`):
/// a self-signed Issuer and a Certificate per webhook deployment, by deployment name.
fn cert_objects(c: &Ctx<'_>) -> Vec<Value> {
    if c.opts.cert_provider != CertProvider::CertManager {
        return Vec::new();
    }
    let deployments: BTreeSet<&str> = c
        .webhooks()
        .iter()
        .filter_map(|w| w["deploymentName"].as_str())
        .collect();
    let mut out = Vec::new();
    for d in deployments {
        let svc = service_name(d);
        let cert = cert_name(&svc);
        let issuer = name_for_base_and_suffix(&cert, "selfsigned-issuer");
        let ns = c.ns();
        // `util.ToUnstructured` of the typed objects: their `status` structs are written
        // empty.
        let mut i = object("cert-manager.io/v1", "Issuer", meta(&issuer, Some(ns)));
        i.insert("spec".into(), json!({"selfSigned": {}}));
        i.insert("status".into(), json!({}));
        out.push(Value::Object(i));
        let mut crt = object("cert-manager.io/v1", "Certificate", meta(&cert, Some(ns)));
        crt.insert(
            "spec".into(),
            json!({
                "secretName": cert,
                "commonName": format!("{svc}.{ns}"),
                "dnsNames": [format!("{svc}.{ns}"), format!("{svc}.{ns}.svc"),
                    format!("{svc}.{ns}.svc.cluster.local")],
                "usages": ["server auth"],
                "issuerRef": {"name": issuer},
                "duration": "17520h0m0s",
                "renewBefore": "24h0m0s",
            }),
        );
        crt.insert("status".into(), json!({}));
        out.push(Value::Object(crt));
    }
    out
}

/// The CSV's annotations as operator-controller's bundle source leaves them: with
/// `metadata/properties.yaml`'s properties appended to `olm.properties`
/// (`source.go :: copyMetadataPropertiesToCSV`).
fn csv_annotations(csv: &Value, bundle: &BundleDir) -> Result<Map<String, Value>, Refused> {
    let mut a = csv["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    // `metadata/properties.yaml` itself (not opm's any-file metadata blocks): absent or empty,
    // the annotations stay as they are.
    let file = bundle.dir.join("metadata/properties.yaml");
    if std::fs::metadata(&file).map_or(true, |m| m.len() == 0) {
        return Ok(a);
    }
    let doc = crate::fbc::yaml::read_first_document(&file)
        .map_err(|e| Refused(format!("failed to unmarshal metadata/properties.yaml: {e}")))?;
    let doc: Value = doc
        .and_then(|d| serde_json::from_str(&d.to_json()).ok())
        .unwrap_or_default();
    // `RegistryV1Properties.Properties`, matched as encoding/json matches a key: exactly, else
    // without regard to case.
    let key = doc.as_object().and_then(|m| {
        m.get("properties").or_else(|| {
            m.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("properties"))
                .map(|(_, v)| v)
        })
    });
    let extra: Vec<Value> = key.and_then(Value::as_array).cloned().unwrap_or_default();
    let mut all: Vec<Value> = match a.get("olm.properties").and_then(Value::as_str) {
        Some(s) => serde_json::from_str::<Vec<Value>>(s).map_err(|e| {
            Refused(format!(
                "failed to unmarshal csv.metadata.annotations['olm.properties']: {e}"
            ))
        })?,
        None => Vec::new(),
    };
    all.extend(extra);
    // No property at all: `json.Marshal` of a nil slice.
    if all.is_empty() {
        a.insert("olm.properties".into(), json!("null"));
        return Ok(a);
    }
    let mut s = String::from("[");
    for (i, p) in all.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        // property.Property: {type, value}, value kept as raw JSON.
        s.push_str("{\"type\":");
        crate::gojson::write_string(&mut s, p["type"].as_str().unwrap_or_default());
        s.push_str(",\"value\":");
        crate::gojson::write(&mut s, &p["value"], 0);
        s.push('}');
    }
    s.push(']');
    a.insert("olm.properties".into(), json!(s));
    Ok(a)
}

/// A bundle's objects as operator-controller's bundle source reads them
/// (`rukpak/bundle/source/source.go :: fsBundleSource.GetBundle`): every document of every file
/// of `manifests/` in name order, dotfiles included, lists flattened; the last CSV; no
/// subdirectories.
struct Objects {
    csv: Value,
    crds: Vec<Value>,
    others: Vec<Value>,
}

fn objects(bundle: &BundleDir) -> Result<Objects, Refused> {
    if let Some(p) = bundle.problems.first() {
        return refuse(p.to_string());
    }
    let mut files: Vec<(String, Vec<Value>)> = Vec::new();
    let to_values = |docs: &[crate::fbc::node::Node]| -> Vec<Value> {
        docs.iter()
            .filter_map(|d| serde_json::from_str(&d.to_json()).ok())
            .collect()
    };
    for m in &bundle.manifests {
        let name = m.path.file_name().map(|n| n.to_string_lossy().into_owned());
        files.push((name.unwrap_or_default(), to_values(&m.docs)));
    }
    for p in &bundle.skipped {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() {
            return refuse(format!(
                "subdirectories are not allowed within the \"manifests\" directory of the bundle \
                 image filesystem: found \"manifests/{name}\""
            ));
        }
        // opm skips dotfiles; operator-controller reads them.
        let docs = crate::bundle::load::parse_file(p).map_err(|e| Refused(e.to_string()))?;
        files.push((name, to_values(&docs)));
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    let mut csv = None;
    let mut crds = Vec::new();
    let mut others = Vec::new();
    for (file, docs) in files {
        for doc in docs {
            // The resource builder's Flatten: a list's items, each on its own.
            let items = match doc["items"].as_array() {
                Some(items) if doc["kind"].as_str().is_some_and(|k| k.ends_with("List")) => {
                    items.clone()
                }
                _ => vec![doc],
            };
            // `fsBundleSource.GetBundle`'s wrapping of a file's decoding error.
            let parsing = |e: String| {
                Refused(format!(
                    "error parsing objects in {}: {e}",
                    crate::range::go_quote(&format!("manifests/{file}"))
                ))
            };
            for o in items {
                match o["kind"].as_str() {
                    Some("ClusterServiceVersion") => {
                        let mut o = o;
                        super::csv_type::read(&mut o).map_err(parsing)?;
                        // The deployments' specs are `appsv1.DeploymentSpec`s.
                        let deployments =
                            o["spec"]["install"]["spec"]["deployments"].as_array_mut();
                        for d in deployments.into_iter().flatten() {
                            if let Some(spec) = d.get_mut("spec") {
                                *spec = round_trip(spec, "apps.DeploymentSpec").map_err(parsing)?;
                            }
                        }
                        csv = Some(o);
                    }
                    Some("CustomResourceDefinition") => {
                        crds.push(
                            round_trip(&o, "apiext.CustomResourceDefinition").map_err(parsing)?,
                        );
                    }
                    _ => others.push(o),
                }
            }
        }
    }
    let Some(csv) = csv else {
        return refuse("no ClusterServiceVersion found in \"manifests\"");
    };
    Ok(Objects { csv, crds, others })
}

/// What operator-controller's manifest provider refuses before rendering
/// (`applier/provider.go :: RegistryV1ManifestProvider.Get`, in its order).
fn check_supported(csv: &Value, opts: &Options) -> Result<(), Refused> {
    let owned_api = csv["spec"]["apiservicedefinitions"]["owned"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    if owned_api {
        // Spelled as upstream spells it.
        return refuse("unsupported bundle: apiServiceDefintions are not supported");
    }
    let webhooks = csv["spec"]["webhookdefinitions"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    if webhooks && opts.cert_provider == CertProvider::None {
        return refuse(
            "unsupported bundle: webhookDefinitions are not supported: certificate provider is nil",
        );
    }
    let modes = install_modes(csv);
    if !opts.single_own_namespace && !modes.contains("AllNamespaces") {
        return refuse("unsupported bundle: bundle does not support AllNamespaces install mode");
    }
    if !["AllNamespaces", "SingleNamespace", "OwnNamespace"]
        .iter()
        .any(|m| modes.contains(*m))
    {
        return refuse(
            "unsupported bundle: bundle must support at least one of [AllNamespaces \
             SingleNamespace OwnNamespace] install modes",
        );
    }
    Ok(())
}

/// What operator-controller's resolver refuses (`resolve/validation.go ::
/// NoDependencyValidation`): a bundle whose catalog entry (the `olm.bundle` blob opm renders for
/// it) has an `olm.package.required`, `olm.gvk.required` or `olm.constraint` property; the
/// first such property is named, as upstream names it.
pub fn check_dependencies(bundle: &BundleDir) -> Result<(), Refused> {
    let rendered =
        crate::bundle::render::render(bundle, "", crate::bundle::render::ObjectMode::BundleObjects)
            .map_err(|e| Refused(e.to_string()))?;
    let blob: Value = serde_json::from_str(&rendered.blob.to_json()).unwrap_or(Value::Null);
    let types = blob["properties"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| p["type"].as_str().unwrap_or_default());
    super::dependencies::no_dependency(&rendered.name, types).map_err(Refused)
}

/// What operator-controller installs for `bundle` from a catalog: [`check_dependencies`] (its
/// resolver refuses a bundle that declares dependencies), then [`manifests`].
pub fn for_install(bundle: &BundleDir, opts: &Options) -> Result<Vec<Value>, Refused> {
    check_dependencies(bundle)?;
    manifests(bundle, opts)
}

/// The manifest provider's refusals (`check_supported`), then [`render`]: what
/// `olmctl bundle render --olmv1` prints, as operator-controller's renderer makes it of the
/// bundle (its resolver's refusals, [`check_dependencies`], are not the renderer's).
pub fn manifests(bundle: &BundleDir, opts: &Options) -> Result<Vec<Value>, Refused> {
    let objs = objects(bundle)?;
    check_supported(&objs.csv, opts)?;
    // `RegistryV1ManifestProvider.Get`: with the SingleOwnNamespace gate on, or a configuration
    // given (`--watch-namespace`, `--deployment-config` stand for the ClusterExtension's
    // `spec.config.inline`), the configuration is validated against the bundle's schema
    // before rendering (`extractBundleConfigOptions`).
    if opts.single_own_namespace
        || opts.watch_namespace.is_some()
        || opts.deployment_config.is_some()
    {
        super::config_schema::check(&super::config_schema::Config {
            install_modes: &install_modes(&objs.csv),
            install_namespace: &opts.install_namespace,
            watch_namespace: opts.watch_namespace.as_deref(),
            deployment_config: opts.deployment_config.as_ref(),
        })
        .map_err(Refused)?;
    }
    // The webhooks' names, in the CSV's order: to point a port refused at its containerPort.
    let webhooks: Vec<String> = objs.csv["spec"]["webhookdefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|w| w["generateName"].as_str().unwrap_or_default().to_string())
        .collect();
    let out = render_objects(bundle, objs, opts)?;
    // What the ClusterExtension's apply would meet: the API server's validation of each name
    // and port (upstream's renderer leaves that to it; printed, such an object would fail
    // `kubectl apply`).
    for o in &out {
        crate::names::object::check(o).map_err(|e| {
            // A webhook's port is the CSV's containerPort, which upstream copies as it is
            // (`Port: &wh.ContainerPort`).
            let hint = e
                .errors
                .iter()
                .find_map(|f| {
                    let i: usize = f
                        .field
                        .strip_prefix("webhooks[")?
                        .strip_suffix("].clientConfig.service.port")?
                        .parse()
                        .ok()?;
                    let name = o["webhooks"][i]["name"].as_str()?;
                    let at = webhooks.iter().position(|w| w == name)?;
                    Some(format!(
                        " (the CSV's webhookdefinitions[{at}].containerPort: OLM v1 reads it as the bundle has it, where OLM v0's CSV CRD defaults it to 443)"
                    ))
                })
                .unwrap_or_default();
            Refused(format!(
                "the API server would refuse a rendered object: {e}{hint}"
            ))
        })?;
    }
    Ok(out)
}

/// The objects as a multi-document YAML stream (`---` before each; keys sorted).
pub fn to_yaml(objects: &[Value]) -> String {
    let mut s = String::new();
    for o in objects {
        if let Some(y) = crate::fbc::emit_yaml::json_to_yaml(&o.to_string()) {
            s.push_str("---\n");
            s.push_str(&y);
        }
    }
    s
}

/// Renders `bundle` as operator-controller's renderer does for a ClusterExtension
/// (`render.go :: BundleRenderer.Render` with the registry+v1 generators): the objects, in its
/// generators' order; or why it cannot.
pub fn render(bundle: &BundleDir, opts: &Options) -> Result<Vec<Value>, Refused> {
    render_objects(bundle, objects(bundle)?, opts)
}

/// [`render`] of the objects already read from `bundle`.
fn render_objects(
    bundle: &BundleDir,
    objs: Objects,
    opts: &Options,
) -> Result<Vec<Value>, Refused> {
    let Objects {
        csv,
        crds: bundle_crds,
        others: bundle_others,
    } = objs;
    let csv_name = csv["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // `BundleRenderer.Render`: the validators first, then the options.
    let mut parts = super::validate::Parts {
        csv: &csv,
        crds: Vec::new(),
        others: Vec::new(),
        package: bundle
            .annotation("operators.operatorframework.io.bundle.package.v1")
            .unwrap_or_default()
            .to_string(),
    };
    let name = |o: &Value| {
        o["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    parts.crds = bundle_crds.iter().map(name).collect();
    parts.others = bundle_others
        .iter()
        .map(|o| (name(o), o["kind"].as_str().unwrap_or_default().to_string()))
        .collect();
    let errs = super::validate::validate(&parts);
    if !errs.is_empty() {
        return refuse(errs.join("\n"));
    }
    let modes = install_modes(&csv);
    let targets = match &opts.watch_namespace {
        Some(w) => vec![w.clone()],
        None if modes.contains("AllNamespaces") => vec![String::new()],
        None => Vec::new(),
    };
    if let Err(e) = validate_targets(&modes, &opts.install_namespace, &targets) {
        let shown: Vec<&str> = targets.iter().map(String::as_str).collect();
        return refuse(format!(
            "invalid option(s): invalid target namespaces {}: {e}",
            go_list(&shown)
        ));
    }
    let c = Ctx {
        csv: &csv,
        csv_name,
        opts,
        targets,
    };
    let annotations = csv_annotations(&csv, bundle)?;
    let mut typed = service_accounts(&c);
    typed.extend(roles(&c));
    typed.extend(cluster_roles(&c));
    typed.extend(crds(&c, &bundle_crds)?);
    let mut out = written(typed);
    out.extend(others(&c, &bundle_others)?);
    let mut typed = deployments(&c, &annotations);
    typed.extend(webhook_configurations(
        &c,
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionWebhook",
    ));
    typed.extend(webhook_configurations(
        &c,
        "MutatingWebhookConfiguration",
        "MutatingAdmissionWebhook",
    ));
    typed.extend(webhook_services(&c));
    out.extend(written(typed));
    out.extend(cert_objects(&c));
    Ok(out)
}

/// The generated objects as upstream writes them: each is a Go struct of its kind, written by
/// `encoding/json` ([`round_trip`]). The bundle's other objects stay unstructured.
fn written(objs: Vec<Value>) -> Vec<Value> {
    objs.into_iter()
        .map(|o| {
            let ty = match o["kind"].as_str().unwrap_or_default() {
                "ServiceAccount" => "core.ServiceAccount",
                "Service" => "core.Service",
                "Role" => "rbac.Role",
                "RoleBinding" => "rbac.RoleBinding",
                "ClusterRole" => "rbac.ClusterRole",
                "ClusterRoleBinding" => "rbac.ClusterRoleBinding",
                "CustomResourceDefinition" => "apiext.CustomResourceDefinition",
                "Deployment" => "apps.Deployment",
                "ValidatingWebhookConfiguration" => "admission.ValidatingWebhookConfiguration",
                "MutatingWebhookConfiguration" => "admission.MutatingWebhookConfiguration",
                _ => return o,
            };
            // Every value was read into these types already (the CSV and the CRDs as they
            // were loaded), so the round trip cannot fail here.
            round_trip(&o, ty).unwrap_or(o)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modes(m: &[&str]) -> BTreeSet<String> {
        m.iter().map(|s| s.to_string()).collect()
    }

    fn t(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// `validateTargetNamespaces`, case by case.
    #[test]
    fn target_namespaces_follow_upstream() {
        let all = modes(&["AllNamespaces"]);
        let multi = modes(&["MultiNamespace", "SingleNamespace"]);
        assert_eq!(validate_targets(&all, "ns", &t(&[""])), Ok(()));
        assert_eq!(
            validate_targets(&all, "ns", &[]),
            Err("exactly one target namespace must be specified".into())
        );
        assert_eq!(
            validate_targets(&multi, "ns", &[]),
            Err("at least one target namespace must be specified".into())
        );
        assert_eq!(
            validate_targets(&multi, "ns", &t(&[""])),
            Err(
                "supported install modes [MultiNamespace SingleNamespace] do not support \
                 targeting all namespaces"
                    .into()
            )
        );
        assert_eq!(validate_targets(&multi, "ns", &t(&["a"])), Ok(()));
        assert_eq!(validate_targets(&multi, "ns", &t(&["a", "b"])), Ok(()));
        assert_eq!(
            validate_targets(&multi, "ns", &t(&["a", "ns"])),
            Err(
                "supported install modes [MultiNamespace SingleNamespace] do not support \
                 targeting own namespace"
                    .into()
            )
        );
        assert_eq!(
            validate_targets(&modes(&["OwnNamespace"]), "ns", &t(&["ns"])),
            Ok(())
        );
    }

    /// `IntOrString.IntValue`: a string's `strconv.Atoi`, 0 when it is not a decimal integer.
    #[test]
    fn int_values_are_atois() {
        for (v, want) in [
            (json!(9443), 9443),
            (json!("9443"), 9443),
            (json!("+8"), 8),
            (json!("-8"), -8),
            (json!("https"), 0),
            (json!(" 1"), 0),
            (json!("0x10"), 0),
            (json!("99999999999999999999"), i64::MAX),
            (Value::Null, 0),
        ] {
            assert_eq!(int_value(&v), want, "{v}");
        }
    }

    #[test]
    fn webhook_services_are_named_from_the_deployment() {
        assert_eq!(service_name("a.b.c"), "a-b-c-service");
        assert_eq!(cert_name("a-b-c-service"), "a-b-c-service-cert");
        let long = "x".repeat(60);
        assert_eq!(service_name(&long).len(), 63);
    }
}
