//! OLM's OLM operator: a CSV's phases, the Deployments and webhook plumbing it creates, the
//! RBAC lift under an AllNamespaces OperatorGroup, the replacement of one CSV by the next,
//! and the cleanup when a CSV goes.
//!
//! - Phases (operator.md §4.2, §4.3): `Pending` (requirements: owned CRDs established and
//!   serving their versions, one OperatorGroup whose targets the install modes support) →
//!   `InstallReady` → `Installing` (Deployments, the webhook Service and certificate, the
//!   conversion config) → `Succeeded` once every Deployment passes OLM's status check
//!   (`install/status_viewer.go :: DeploymentStatus`, R6.2); a replaced CSV goes `Replacing`,
//!   then `Deleting` once its successor succeeded, and is deleted.
//! - Deployments (`install/deployment.go :: installDeployments`, R6.1, R6.3): named as the
//!   install strategy names them, labelled with the CSV owner labels and
//!   `olm.deployment-spec-hash`, owned by the CSV (an existing one is taken over: the new CSV
//!   is added as an owner); `OPERATOR_CONDITION_NAME` in every container's environment.
//! - A `ConversionWebhook` definition (R4.3–R4.5): Service `<deployment>-service`, Secret
//!   `<service>-cert` (`tls.crt`, `tls.key`, `olmCAKey`) signed by OLM's CA for
//!   `<svc>.<ns>`, `<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`, mounted at
//!   `/tmp/k8s-webhook-server/serving-certs` (pod annotation `olmcahash`); then each
//!   `conversionCRDs` CRD's `spec.conversion` replaced wholesale (service, path, port,
//!   `caBundle`, `conversionReviewVersions`). Preconditions as
//!   `createOrUpdateConversionWebhook` checks them (R4.1, R4.2).
//! - The RBAC lift (R7.2) after the CSV's status update, when the OperatorGroup targets all
//!   namespaces and the rules are not granted at cluster scope already.
//! - A CSV that goes: the ClusterRoles and ClusterRoleBindings with its owner labels are
//!   deleted (they have no owner reference), and its conversion CRDs are set back to
//!   `strategy: None` unless a CSV replacing it is there (R4.7).

use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{OLM, OlmInner, now};

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or("")
}

const CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

impl OlmInner {
    fn csv_phase(&self, csv: &Value, phase: &str, reason: &str, message: &str) {
        let ns = s(csv, "/metadata/namespace");
        let name = s(csv, "/metadata/name");
        let mut conds = csv["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        conds.push(json!({"phase": phase, "reason": reason, "message": message,
            "lastUpdateTime": now(), "lastTransitionTime": now()}));
        let skip = conds.len().saturating_sub(20);
        let conds: Vec<Value> = conds.into_iter().skip(skip).collect();
        if self.api.merge(
            OLM,
            "clusterserviceversions",
            ns,
            name,
            &json!({"status": {"phase": phase, "reason": reason, "message": message,
                "lastUpdateTime": now(), "lastTransitionTime": now(), "conditions": conds}}),
            true,
        ) {
            self.step(format!(
                "ClusterServiceVersion {ns}/{name} {phase} ({reason})"
            ));
        }
    }

    /// One CSV's sync.
    pub(super) fn sync_csv(&self, csv: &Value, all: &[Value]) {
        let ns = s(csv, "/metadata/namespace");
        let name = s(csv, "/metadata/name");
        let replacer = all
            .iter()
            .find(|c| s(c, "/metadata/namespace") == ns && s(c, "/spec/replaces") == name);
        match s(csv, "/status/phase") {
            "" => self.csv_phase(
                csv,
                "Pending",
                "RequirementsUnknown",
                "requirements not yet checked",
            ),
            "Pending" => {
                if let Err(why) = self.requirements(csv) {
                    if s(csv, "/status/message") != why {
                        self.csv_phase(csv, "Pending", "RequirementsNotMet", &why);
                    }
                    return;
                }
                // The CSV it replaces must be Replacing first.
                let replaces = s(csv, "/spec/replaces");
                if let Some(old) = all.iter().find(|c| {
                    s(c, "/metadata/namespace") == ns
                        && s(c, "/metadata/name") == replaces
                        && !replaces.is_empty()
                }) && s(old, "/status/phase") != "Replacing"
                    && s(old, "/status/phase") != "Deleting"
                {
                    return;
                }
                self.csv_phase(
                    csv,
                    "InstallReady",
                    "AllRequirementsMet",
                    "all requirements found, attempting install",
                );
            }
            "InstallReady" => match self.install(csv) {
                Ok(()) => self.csv_phase(
                    csv,
                    "Installing",
                    "InstallSucceeded",
                    "waiting for install components to report healthy",
                ),
                Err(e) => self.csv_phase(csv, "Failed", "InstallComponentFailed", &e),
            },
            "Installing" => {
                // Keep the Deployments as the CSV says (a rollout of a changed spec).
                if let Err(e) = self.install(csv) {
                    self.csv_phase(csv, "Failed", "InstallComponentFailed", &e);
                    return;
                }
                match self.deployments_ready(csv) {
                    Ok(()) => {
                        self.csv_phase(
                            csv,
                            "Succeeded",
                            "InstallSucceeded",
                            "install strategy completed with no errors",
                        );
                        self.lift_rbac(csv);
                    }
                    Err(why) => {
                        if s(csv, "/status/message") != why {
                            self.csv_phase(csv, "Installing", "InstallWaiting", &why);
                        }
                    }
                }
            }
            "Succeeded" => {
                if let Some(r) = replacer {
                    self.csv_phase(
                        csv,
                        "Replacing",
                        "BeingReplaced",
                        &format!("being replaced by csv: {}", s(r, "/metadata/name")),
                    );
                }
            }
            "Replacing" => {
                if let Some(r) = replacer
                    && s(r, "/status/phase") == "Succeeded"
                {
                    self.csv_phase(csv, "Deleting", "Replaced", "has been replaced by a newer ClusterServiceVersion that has successfully installed.");
                    self.api.delete(OLM, "clusterserviceversions", ns, name);
                }
            }
            _ => {}
        }
    }

    /// The requirements of a `Pending` CSV.
    fn requirements(&self, csv: &Value) -> Result<(), String> {
        let ns = s(csv, "/metadata/namespace");
        for o in csv["spec"]["customresourcedefinitions"]["owned"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let crd_name = s(o, "/name");
            let crd = self
                .api
                .get(
                    "apiextensions.k8s.io",
                    "customresourcedefinitions",
                    "",
                    crd_name,
                )
                .ok_or("one or more requirements couldn't be found")?;
            let v = s(o, "/version");
            let served = crd["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|x| x["name"] == v && x["served"] == true);
            if !served {
                return Err("CRD version not served".into());
            }
        }
        let groups: Vec<Value> = self
            .api
            .list_in(OLM, "operatorgroups", ns)
            .into_iter()
            .collect();
        match groups.len() {
            0 => return Err("csv in namespace with no operatorgroups".into()),
            1 => {}
            n => {
                return Err(format!(
                    "csv created in namespace with multiple operatorgroups, can't pick one automatically: {n}"
                ));
            }
        }
        let all_ns = groups[0]["spec"]["targetNamespaces"]
            .as_array()
            .is_none_or(|t| t.is_empty());
        let supported = |ty: &str| {
            csv["spec"]["installModes"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|m| m["type"] == ty && m["supported"] == true)
        };
        if all_ns && !supported("AllNamespaces") {
            return Err("AllNamespaces InstallModeType not supported, cannot configure to watch all namespaces".into());
        }
        Ok(())
    }

    /// OLM's CA (one per OLM, as its cert rotation keeps one), created on first use.
    fn ca(&self) -> (String, rcgen::Issuer<'static, rcgen::KeyPair>) {
        let mut ca = self.ca.lock().expect("ca");
        if ca.is_none() {
            let key = rcgen::KeyPair::generate().expect("key");
            let params = Self::ca_params();
            let cert = params.self_signed(&key).expect("ca");
            *ca = Some((cert.pem(), key.serialize_pem()));
        }
        let (pem, key_pem) = ca.clone().expect("set");
        let key = rcgen::KeyPair::from_pem(&key_pem).expect("ca key");
        (pem, rcgen::Issuer::new(Self::ca_params(), key))
    }

    fn ca_params() -> rcgen::CertificateParams {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, "Red Hat, Inc.");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "olm-selfsigned");
        params
    }

    /// Deployments, the webhook Service and certificate, and the conversion config.
    fn install(&self, csv: &Value) -> Result<(), String> {
        let ns = s(csv, "/metadata/namespace");
        let name = s(csv, "/metadata/name");
        let owner = json!({"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion",
            "name": name, "uid": csv["metadata"]["uid"], "controller": false, "blockOwnerDeletion": false});
        let webhooks: Vec<Value> = csv["spec"]["webhookdefinitions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let conversion: Vec<&Value> = webhooks
            .iter()
            .filter(|w| w["type"] == "ConversionWebhook")
            .collect();
        if !conversion.is_empty() {
            // R4.1: singleton operators only.
            let modes = csv["spec"]["installModes"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let ok = modes
                .iter()
                .all(|m| m["type"] == "AllNamespaces" || m["supported"] != true)
                && !modes
                    .iter()
                    .any(|m| m["type"] == "AllNamespaces" && m["supported"] == false);
            if !ok {
                return Err("unable to manage conversion webhook: CSVs with conversion webhooks must support only AllNamespaces".into());
            }
        }
        let (ca_pem, issuer) = self.ca();
        let ca_hash: String = Sha256::digest(ca_pem.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        for d in csv["spec"]["install"]["spec"]["deployments"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let dname = s(d, "/name");
            let mut spec = d["spec"].clone();
            let hooks: Vec<&&Value> = conversion
                .iter()
                .filter(|w| w["deploymentName"] == dname)
                .collect();
            if !hooks.is_empty() {
                let svc = format!("{}-service", dname.replace('.', "-"));
                let secret = format!("{svc}-cert");
                // The serving certificate.
                let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
                let params = rcgen::CertificateParams::new(vec![
                    format!("{svc}.{ns}"),
                    format!("{svc}.{ns}.svc"),
                    format!("{svc}.{ns}.svc.cluster.local"),
                ])
                .map_err(|e| e.to_string())?;
                let cert = params.signed_by(&key, &issuer).map_err(|e| e.to_string())?;
                let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t.as_bytes());
                if self.api.get("", "secrets", ns, &secret).is_none() {
                    self.api.insert("secrets", json!({"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": secret, "namespace": ns, "ownerReferences": [owner.clone()],
                                     "labels": {"olm.managed": "true"}},
                        "type": "kubernetes.io/tls",
                        "data": {"tls.crt": b64(&cert.pem()), "tls.key": b64(&key.serialize_pem()),
                                 "olmCAKey": b64(&ca_pem)}}));
                }
                let w = hooks[0];
                let port = w["containerPort"].as_u64().unwrap_or(443);
                let target = w["targetPort"].clone();
                let target = if target.is_null() {
                    json!(port)
                } else {
                    target
                };
                self.api.insert("services", json!({"apiVersion": "v1", "kind": "Service",
                    "metadata": {"name": svc, "namespace": ns, "ownerReferences": [owner.clone()],
                                 "labels": {"olm.managed": "true"}},
                    "spec": {"selector": spec["selector"]["matchLabels"],
                             "ports": [{"name": port.to_string(), "port": port, "targetPort": target}]}}));
                // The certificate volume and the CA hash.
                let pod = &mut spec["template"];
                pod["metadata"]["annotations"]["olmcahash"] = json!(ca_hash);
                let vols = pod["spec"]["volumes"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let mut vols: Vec<Value> = vols
                    .into_iter()
                    .filter(|v| v["name"] != "webhook-cert")
                    .collect();
                vols.push(json!({"name": "webhook-cert", "secret": {"secretName": secret,
                    "items": [{"key": "tls.crt", "path": "tls.crt"}, {"key": "tls.key", "path": "tls.key"}]}}));
                pod["spec"]["volumes"] = json!(vols);
                for c in pod["spec"]["containers"]
                    .as_array_mut()
                    .into_iter()
                    .flatten()
                {
                    let mounts = c["volumeMounts"].as_array().cloned().unwrap_or_default();
                    let mut mounts: Vec<Value> = mounts
                        .into_iter()
                        .filter(|m| m["name"] != "webhook-cert")
                        .collect();
                    mounts.push(json!({"name": "webhook-cert", "mountPath": CERT_DIR}));
                    c["volumeMounts"] = json!(mounts);
                }
            }
            for c in spec["template"]["spec"]["containers"]
                .as_array_mut()
                .into_iter()
                .flatten()
            {
                let env = c["env"].as_array().cloned().unwrap_or_default();
                let mut env: Vec<Value> = env
                    .into_iter()
                    .filter(|e| e["name"] != "OPERATOR_CONDITION_NAME")
                    .collect();
                env.push(json!({"name": "OPERATOR_CONDITION_NAME", "value": name}));
                c["env"] = json!(env);
            }
            let spec_hash: String = Sha256::digest(spec.to_string().as_bytes())
                .iter()
                .take(8)
                .map(|b| format!("{b:02x}"))
                .collect();
            let mut labels = d["label"].clone();
            if !labels.is_object() {
                labels = json!({});
            }
            for (k, v) in crate::olm::rbac::owner_labels(name, ns)
                .as_object()
                .into_iter()
                .flatten()
            {
                labels[k] = v.clone();
            }
            labels["olm.deployment-spec-hash"] = json!(spec_hash);
            let live = self.api.get("apps", "deployments", ns, dname);
            let mut owners = live
                .as_ref()
                .and_then(|l| l["metadata"]["ownerReferences"].as_array().cloned())
                .unwrap_or_default();
            if !owners.iter().any(|o| o["uid"] == owner["uid"]) {
                owners.push(owner.clone());
            }
            let same = live.as_ref().is_some_and(|l| {
                l["metadata"]["labels"]["olm.deployment-spec-hash"] == json!(spec_hash)
                    && l["metadata"]["ownerReferences"] == json!(owners)
            });
            if !same {
                let mut obj = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": dname, "namespace": ns, "labels": labels,
                                 "ownerReferences": owners},
                    "spec": spec});
                if let Some(l) = &live {
                    obj["metadata"]["uid"] = l["metadata"]["uid"].clone();
                    obj["status"] = l["status"].clone();
                    obj["metadata"]["generation"] = l["metadata"]["generation"].clone();
                }
                self.insert_deployment(obj, live.as_ref());
                self.step(format!(
                    "Deployment {ns}/{dname} {}",
                    if live.is_some() { "updated" } else { "created" }
                ));
            }
        }
        // The conversion config, after the Deployment and its certificate (R4.4).
        for w in &conversion {
            let dname = s(w, "/deploymentName");
            let svc = format!("{}-service", dname.replace('.', "-"));
            let crds: Vec<&str> = w["conversionCRDs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if crds.is_empty() {
                return Err("unable to manager conversion webhook: conversion webhook must have at least one CRD specified".into());
            }
            for crd_name in crds {
                let owned = csv["spec"]["customresourcedefinitions"]["owned"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|o| o["name"] == crd_name);
                if !owned {
                    return Err(format!(
                        "csv {} does not own CRD {crd_name}",
                        s(csv, "/metadata/name")
                    ));
                }
                let crd = self
                    .api
                    .get("apiextensions.k8s.io", "customresourcedefinitions", "", crd_name)
                    .ok_or_else(|| format!("unable to get CRD {crd_name} specified in Conversion Webhook: customresourcedefinitions.apiextensions.k8s.io \"{crd_name}\" not found"))?;
                if crd["spec"]["preserveUnknownFields"] == true {
                    return Err("crd.Spec.PreserveUnknownFields must be false to let API Server call webhook to do the conversion".into());
                }
                let want = json!({"strategy": "Webhook", "webhook": {
                    "clientConfig": {"service": {"namespace": ns, "name": svc,
                        "path": w["webhookPath"].as_str().unwrap_or("/"),
                        "port": w["containerPort"].as_u64().unwrap_or(443)},
                        "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem.as_bytes())},
                    "conversionReviewVersions": w["admissionReviewVersions"]}});
                if crd["spec"]["conversion"] != want {
                    self.api.merge(
                        "apiextensions.k8s.io",
                        "customresourcedefinitions",
                        "",
                        crd_name,
                        &json!({"spec": {"conversion": null}}),
                        false,
                    );
                    self.api.merge(
                        "apiextensions.k8s.io",
                        "customresourcedefinitions",
                        "",
                        crd_name,
                        &json!({"spec": {"conversion": want}}),
                        false,
                    );
                    self.step(format!(
                        "CustomResourceDefinition {crd_name}: conversion webhook {ns}/{svc}"
                    ));
                }
            }
        }
        Ok(())
    }

    fn insert_deployment(&self, obj: Value, live: Option<&Value>) {
        match live {
            None => {
                self.api.insert("deployments", obj);
            }
            Some(_) => {
                // An update of the main resource: the spec and metadata (status kept, and the
                // generation bumped by the API as for a spec change).
                let ns = s(&obj, "/metadata/namespace").to_string();
                let name = s(&obj, "/metadata/name").to_string();
                self.api.merge(
                    "apps",
                    "deployments",
                    &ns,
                    &name,
                    &json!({"metadata": {"labels": obj["metadata"]["labels"],
                        "ownerReferences": obj["metadata"]["ownerReferences"]},
                        "spec": null}),
                    false,
                );
                self.api.merge(
                    "apps",
                    "deployments",
                    &ns,
                    &name,
                    &json!({"spec": obj["spec"]}),
                    false,
                );
            }
        }
    }

    /// OLM's own check of a CSV's Deployments (`DeploymentStatus`, R6.2).
    fn deployments_ready(&self, csv: &Value) -> Result<(), String> {
        let ns = s(csv, "/metadata/namespace");
        for d in csv["spec"]["install"]["spec"]["deployments"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let n = s(d, "/name");
            let dep = self
                .api
                .get("apps", "deployments", ns, n)
                .ok_or_else(|| format!("missing deployment with name={n}"))?;
            let generation = dep["metadata"]["generation"].as_i64().unwrap_or(0);
            let observed = dep["status"]["observedGeneration"].as_i64().unwrap_or(0);
            if generation > observed {
                return Err(format!(
                    "waiting for spec update of deployment \"{n}\" to be observed..."
                ));
            }
            let conds = dep["status"]["conditions"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            if conds
                .iter()
                .any(|c| c["type"] == "Progressing" && c["reason"] == "ProgressDeadlineExceeded")
            {
                return Err(format!("deployment \"{n}\" exceeded its progress deadline"));
            }
            let replicas = dep["status"]["replicas"].as_i64().unwrap_or(0);
            let updated = dep["status"]["updatedReplicas"].as_i64().unwrap_or(0);
            if replicas > updated {
                return Err(format!(
                    "deployment \"{n}\" waiting for {} outdated replica(s) to be terminated",
                    replicas - updated
                ));
            }
            match conds.iter().find(|c| c["type"] == "Available") {
                Some(c) if c["status"] == "True" => {}
                Some(c) => {
                    return Err(format!(
                        "deployment \"{n}\" not available: {}",
                        s(c, "/message")
                    ));
                }
                None => {
                    return Err(format!(
                        "deployment \"{n}\" not available: missing condition \"Available\""
                    ));
                }
            }
        }
        Ok(())
    }

    /// R7.2: owner-labelled Roles and RoleBindings copied to cluster scope when the
    /// OperatorGroup targets all namespaces.
    fn lift_rbac(&self, csv: &Value) {
        let ns = s(csv, "/metadata/namespace");
        let name = s(csv, "/metadata/name");
        let all_ns = self
            .api
            .list_in(OLM, "operatorgroups", ns)
            .into_iter()
            .any(|g| {
                g["spec"]["targetNamespaces"]
                    .as_array()
                    .is_none_or(|t| t.is_empty())
            });
        if !all_ns {
            return;
        }
        let mut owned: Vec<Value> = self.api.list_in("rbac.authorization.k8s.io", "roles", ns);
        owned.extend(
            self.api
                .list_in("rbac.authorization.k8s.io", "rolebindings", ns),
        );
        for o in crate::olm::rbac::lift(name, ns, &owned, false) {
            let plural = if o["kind"] == "ClusterRole" {
                "clusterroles"
            } else {
                "clusterrolebindings"
            };
            let oname = s(&o, "/metadata/name").to_string();
            if self
                .api
                .get("rbac.authorization.k8s.io", plural, "", &oname)
                .is_none()
            {
                let kind = s(&o, "/kind").to_string();
                self.api.insert(plural, o);
                self.step(format!("{kind} {oname} lifted to cluster scope"));
            }
        }
    }

    /// A CSV that went: its cluster-scoped RBAC, and its conversion CRDs back to None unless
    /// a CSV replacing it is there.
    pub(super) fn csv_gone(&self, csv: &Value, all: &[Value]) {
        let ns = s(csv, "/metadata/namespace");
        let name = s(csv, "/metadata/name");
        for plural in ["clusterroles", "clusterrolebindings"] {
            for o in self.api.list("rbac.authorization.k8s.io", plural) {
                let l = &o["metadata"]["labels"];
                if l["olm.owner"] == name && l["olm.owner.namespace"] == ns {
                    self.api.delete(
                        "rbac.authorization.k8s.io",
                        plural,
                        "",
                        s(&o, "/metadata/name"),
                    );
                }
            }
        }
        let replaced = all
            .iter()
            .any(|c| s(c, "/metadata/namespace") == ns && s(c, "/spec/replaces") == name);
        if replaced {
            return;
        }
        for w in csv["spec"]["webhookdefinitions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if w["type"] != "ConversionWebhook" {
                continue;
            }
            for crd in w["conversionCRDs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if self
                    .api
                    .get("apiextensions.k8s.io", "customresourcedefinitions", "", crd)
                    .is_some()
                {
                    self.api.merge(
                        "apiextensions.k8s.io",
                        "customresourcedefinitions",
                        "",
                        crd,
                        &json!({"spec": {"conversion": {"strategy": "None", "webhook": null}}}),
                        false,
                    );
                    self.step(format!("CustomResourceDefinition {crd}: conversion None"));
                }
            }
        }
        self.step(format!("ClusterServiceVersion {ns}/{name} gone"));
    }
}
