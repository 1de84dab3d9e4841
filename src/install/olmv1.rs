//! What `olmctl install --olmv1` creates for OLM v1 (olmv1.md §1, §2): a ClusterCatalog for a
//! catalog image (or an existing one by name), the Namespace when asked (operator-controller
//! never creates it: `Helm.Apply` runs with `CreateNamespace = false`), the installer
//! ServiceAccount's RBAC when the cluster's operator-controller still honours
//! `spec.serviceAccount` (v1.10 and earlier), and the ClusterExtension, its catalog selector
//! narrowed to that one catalog by catalogd's `olm.operatorframework.io/metadata.name` label.
//! Then where it stands, read from the conditions catalogd and operator-controller write.
//! Pure: the same options give the same manifests (`install --olmv1 --print`) and the same
//! objects the same progress lines.

use serde_json::{Value, json};

/// OLM v1's API group and version.
pub const API_VERSION: &str = "olm.operatorframework.io/v1";

/// The label catalogd's defaulting webhook puts on every ClusterCatalog
/// (`internal/catalogd/webhook/cluster_catalog_webhook.go :: ClusterCatalog.Default`).
pub const CATALOG_NAME_LABEL: &str = "olm.operatorframework.io/metadata.name";

/// Where the catalog comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Catalog {
    /// A catalog image: a ClusterCatalog `<package>-catalog` is created for it.
    Image(String),
    /// An existing ClusterCatalog, by name.
    Existing(String),
}

/// The options of `olmctl install --olmv1`.
#[derive(Debug, Clone)]
pub struct InstallV1 {
    /// The package (and the ClusterExtension's name).
    pub package: String,
    /// The catalog.
    pub catalog: Catalog,
    /// `spec.source.catalog.version`: a version or range (Masterminds syntax).
    pub version: Option<String>,
    /// `spec.source.catalog.channels`.
    pub channels: Vec<String>,
    /// `spec.namespace`.
    pub namespace: String,
    /// `spec.serviceAccount.name` (operator-controller v1.10 and earlier).
    pub service_account: Option<String>,
    /// Whether to write the Namespace too.
    pub create_namespace: bool,
    /// The catalog's poll interval in minutes, for an image given by tag.
    pub poll_interval_minutes: Option<u32>,
    /// The installer RBAC to create with the ServiceAccount (`rbac::installer`).
    pub installer_rbac: Vec<Value>,
}

impl InstallV1 {
    /// Checks every name the manifests carry as the API server checks it ([`crate::names`]):
    /// the namespace is a label; the package (the ClusterExtension's name and `packageName`),
    /// the ClusterCatalog and the ServiceAccount are subdomains; the package is also the value
    /// of the `olmctl.dev/installer-for` label on the installer's RBAC, so at most 63
    /// characters. Errors name the flag.
    pub fn check(&self) -> Result<(), String> {
        use crate::names::{Rule, check};
        let name =
            |rule, what: &str, value: &str| check(rule, what, value).map_err(|e| e.to_string());
        name(Rule::Label, "--namespace", &self.namespace)?;
        name(Rule::Subdomain, "the package name", &self.package)?;
        match &self.catalog {
            Catalog::Image(image) => {
                name(
                    Rule::Subdomain,
                    "the ClusterCatalog name (<package>-catalog)",
                    &self.catalog_name(),
                )?;
                crate::oci::registry::parse_ref(image).map_err(|e| format!("--catalog: {e}"))?;
            }
            Catalog::Existing(c) => name(Rule::Subdomain, "--cluster-catalog", c)?,
        }
        name(
            Rule::LabelValue,
            "the ClusterCatalog name (the value of the selector's label olm.operatorframework.io/metadata.name)",
            &self.catalog_name(),
        )?;
        if let Some(sa) = &self.service_account {
            name(Rule::Subdomain, "--service-account", sa)?;
            name(
                Rule::LabelValue,
                "the package name (the value of the label olmctl.dev/installer-for)",
                &self.package,
            )?;
        }
        Ok(())
    }

    /// The ClusterCatalog's name.
    pub fn catalog_name(&self) -> String {
        match &self.catalog {
            Catalog::Image(_) => format!("{}-catalog", self.package),
            Catalog::Existing(n) => n.clone(),
        }
    }

    /// The ClusterCatalog for an image (`api/v1/clustercatalog_types.go`): `source.type:
    /// Image`, the reference, and the poll interval only for a tag (the CRD refuses it with a
    /// digest: `cannot specify pollIntervalMinutes while using digest-based image`).
    pub fn cluster_catalog(&self) -> Option<Value> {
        let Catalog::Image(image) = &self.catalog else {
            return None;
        };
        let mut src = json!({ "ref": image });
        if !image.contains('@')
            && let Some(m) = self.poll_interval_minutes
        {
            src["pollIntervalMinutes"] = json!(m);
        }
        Some(json!({
            "apiVersion": API_VERSION,
            "kind": "ClusterCatalog",
            "metadata": {"name": self.catalog_name()},
            "spec": {"source": {"type": "Image", "image": src}},
        }))
    }

    /// The ClusterExtension (`api/v1/clusterextension_types.go`).
    pub fn cluster_extension(&self) -> Value {
        let mut catalog = json!({
            "packageName": self.package,
            "selector": {"matchLabels": {CATALOG_NAME_LABEL: self.catalog_name()}},
        });
        if let Some(v) = &self.version {
            catalog["version"] = json!(v);
        }
        if !self.channels.is_empty() {
            catalog["channels"] = json!(self.channels);
        }
        let mut spec = json!({
            "namespace": self.namespace,
            "source": {"sourceType": "Catalog", "catalog": catalog},
        });
        if let Some(sa) = &self.service_account {
            spec["serviceAccount"] = json!({ "name": sa });
        }
        json!({
            "apiVersion": API_VERSION,
            "kind": "ClusterExtension",
            "metadata": {"name": self.package},
            "spec": spec,
        })
    }

    /// Everything, in the order it is applied: Namespace, ClusterCatalog, the installer's
    /// ServiceAccount and RBAC, the ClusterExtension last (it needs all of them).
    pub fn manifests(&self) -> Vec<Value> {
        let mut out = Vec::new();
        if self.create_namespace {
            out.push(json!({"apiVersion": "v1", "kind": "Namespace",
                            "metadata": {"name": self.namespace}}));
        }
        out.extend(self.cluster_catalog());
        out.extend(self.installer_rbac.iter().cloned());
        out.push(self.cluster_extension());
        out
    }
}

/// Whether a served ClusterExtension CRD still honours `spec.serviceAccount`: the v1.10 schema
/// requires it; from v1.11 it is optional and deprecated (olmv1.md §1.3, §1.4).
pub fn honours_service_account(crd: &Value) -> bool {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| v["name"] == "v1" && v["served"] == true)
        .any(|v| {
            v.pointer("/schema/openAPIV3Schema/properties/spec/required")
                .and_then(Value::as_array)
                .is_some_and(|r| r.iter().any(|f| f == "serviceAccount"))
        })
}

/// The catalog image a ClusterCatalog serves, to resolve and pull its bundles as
/// operator-controller would: `status.resolvedSource.image.ref` (the digest catalogd unpacked,
/// `ClusterCatalogReconciler.reconcile`), else `spec.source.image.ref` (not unpacked yet);
/// `None` for a catalog without an image source.
pub fn catalog_image(cluster_catalog: &Value) -> Option<String> {
    ["/status/resolvedSource/image/ref", "/spec/source/image/ref"]
        .iter()
        .map(|p| s(cluster_catalog, p))
        .find(|r| !r.is_empty())
        .map(str::to_string)
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

fn condition<'a>(obj: &'a Value, kind: &str) -> Option<&'a Value> {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c["type"] == kind)
}

/// What to do next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Keep watching.
    Wait(String),
    /// operator-controller or catalogd gave up: the condition's reason and message.
    Failed {
        /// The reason (`Blocked`, `InvalidConfiguration`, ...).
        reason: String,
        /// The message.
        message: String,
    },
    /// Installed: the bundle's name and version.
    Done {
        /// `status.install.bundle.name`.
        bundle: String,
        /// `status.install.bundle.version`.
        version: String,
    },
}

/// The progress lines so far and the next move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assessment {
    /// One line per state seen (stable text).
    pub lines: Vec<String>,
    /// The next move.
    pub outcome: Outcome,
}

fn describe(c: &Value) -> String {
    let msg = s(c, "/message");
    let reason = s(c, "/reason");
    if msg.is_empty() {
        format!("{}={} ({reason})", s(c, "/type"), s(c, "/status"))
    } else {
        format!("{}={} ({reason}: {msg})", s(c, "/type"), s(c, "/status"))
    }
}

/// Where an install stands, from the ClusterCatalog (none: an existing catalog not read) and
/// the ClusterExtension.
///
/// - catalog: `Serving=True` is ready; `Progressing=False` (Blocked) is catalogd giving up
///   (`clustercatalog_controller.go :: updateStatusProgressing`);
/// - extension: every condition is shown as it changes; `Progressing=False` is terminal
///   (`common_controller.go :: setStatusProgressing`: a terminal error, `Blocked` or its own
///   reason such as `InvalidConfiguration`); done is `Installed=True` with
///   `Progressing=True/Succeeded` at the current generation (olmv1.md §1.16);
/// - deprecation conditions are shown only when true.
pub fn assess(catalog: Option<&Value>, extension: Option<&Value>) -> Assessment {
    let mut lines = Vec::new();
    if let Some(cc) = catalog {
        let name = s(cc, "/metadata/name");
        if let Some(c) = condition(cc, "Progressing") {
            lines.push(format!("ClusterCatalog {name}: {}", describe(c)));
            if c["status"] == "False" {
                return Assessment {
                    lines,
                    outcome: Outcome::Failed {
                        reason: s(c, "/reason").to_string(),
                        message: s(c, "/message").to_string(),
                    },
                };
            }
        }
        match condition(cc, "Serving") {
            Some(c) if c["status"] == "True" => {
                lines.push(format!("ClusterCatalog {name}: {}", describe(c)));
            }
            _ => {
                return Assessment {
                    lines,
                    outcome: Outcome::Wait(format!("catalogd to serve ClusterCatalog {name}")),
                };
            }
        }
    }
    let Some(ce) = extension else {
        return Assessment {
            lines,
            outcome: Outcome::Wait("the ClusterExtension".to_string()),
        };
    };
    let name = s(ce, "/metadata/name");
    for kind in ["Progressing", "Installed"] {
        if let Some(c) = condition(ce, kind) {
            lines.push(format!("ClusterExtension {name}: {}", describe(c)));
        }
    }
    for kind in [
        "Deprecated",
        "PackageDeprecated",
        "ChannelDeprecated",
        "BundleDeprecated",
    ] {
        if let Some(c) = condition(ce, kind).filter(|c| c["status"] == "True") {
            lines.push(format!("ClusterExtension {name}: {}", describe(c)));
        }
    }
    let progressing = condition(ce, "Progressing");
    if let Some(p) = progressing.filter(|p| p["status"] == "False") {
        return Assessment {
            lines,
            outcome: Outcome::Failed {
                reason: s(p, "/reason").to_string(),
                message: s(p, "/message").to_string(),
            },
        };
    }
    let current = ce.pointer("/status/observedGeneration").is_none()
        || ce.pointer("/metadata/generation") == ce.pointer("/status/observedGeneration");
    let installed = condition(ce, "Installed").is_some_and(|c| c["status"] == "True");
    let succeeded =
        progressing.is_some_and(|p| p["status"] == "True" && p["reason"] == "Succeeded");
    if installed && succeeded && current {
        return Assessment {
            lines,
            outcome: Outcome::Done {
                bundle: s(ce, "/status/install/bundle/name").to_string(),
                version: s(ce, "/status/install/bundle/version").to_string(),
            },
        };
    }
    Assessment {
        lines,
        outcome: Outcome::Wait(format!(
            "operator-controller to install ClusterExtension {name}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_catalog_serves_its_resolved_image() {
        let unpacked = serde_json::json!({
            "spec": {"source": {"type": "Image", "image": {"ref": "quay.io/x/c:v1"}}},
            "status": {"resolvedSource": {"type": "Image",
                "image": {"ref": "quay.io/x/c@sha256:ab"}}}});
        assert_eq!(
            catalog_image(&unpacked).as_deref(),
            Some("quay.io/x/c@sha256:ab")
        );
        let new = serde_json::json!({
            "spec": {"source": {"type": "Image", "image": {"ref": "quay.io/x/c:v1"}}}});
        assert_eq!(catalog_image(&new).as_deref(), Some("quay.io/x/c:v1"));
        assert_eq!(catalog_image(&serde_json::json!({"spec": {}})), None);
    }

    fn opts() -> InstallV1 {
        InstallV1 {
            package: "argocd-operator".into(),
            catalog: Catalog::Image("quay.io/example/catalog:v1".into()),
            version: Some("0.6.0".into()),
            channels: vec!["alpha".into()],
            namespace: "argocd".into(),
            service_account: None,
            create_namespace: true,
            poll_interval_minutes: Some(30),
            installer_rbac: Vec::new(),
        }
    }

    #[test]
    fn manifests_name_and_narrow_the_catalog() {
        let m = opts().manifests();
        let kinds: Vec<&str> = m
            .iter()
            .map(|o| o["kind"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(kinds, ["Namespace", "ClusterCatalog", "ClusterExtension"]);
        assert_eq!(
            m[1]["spec"],
            json!({"source": {"type": "Image", "image": {"ref": "quay.io/example/catalog:v1", "pollIntervalMinutes": 30}}})
        );
        assert_eq!(
            m[2]["spec"],
            json!({"namespace": "argocd", "source": {"sourceType": "Catalog", "catalog": {
                "packageName": "argocd-operator", "version": "0.6.0", "channels": ["alpha"],
                "selector": {"matchLabels": {"olm.operatorframework.io/metadata.name": "argocd-operator-catalog"}}}}})
        );
        // A digest is never polled; a service account is written when given.
        let mut o = opts();
        o.catalog = Catalog::Image(format!("quay.io/example/catalog@sha256:{}", "a".repeat(64)));
        o.service_account = Some("argocd-installer".into());
        let m = o.manifests();
        assert!(
            m[1].pointer("/spec/source/image/pollIntervalMinutes")
                .is_none()
        );
        assert_eq!(
            m[2]["spec"]["serviceAccount"],
            json!({"name": "argocd-installer"})
        );
        o.catalog = Catalog::Existing("operatorhubio".into());
        o.create_namespace = false;
        let m = o.manifests();
        assert_eq!(m.len(), 1);
        assert_eq!(
            m[0].pointer(
                "/spec/source/catalog/selector/matchLabels/olm.operatorframework.io~1metadata.name"
            ),
            Some(&json!("operatorhubio"))
        );
    }

    fn cond(t: &str, status: &str, reason: &str, msg: &str) -> Value {
        json!({"type": t, "status": status, "reason": reason, "message": msg})
    }

    #[test]
    fn progress_follows_the_conditions() {
        let serving = json!({"metadata": {"name": "c"}, "status": {"conditions": [
            cond("Progressing", "True", "Succeeded", "Successfully unpacked and stored content from resolved source"),
            cond("Serving", "True", "Available", "Serving desired content from resolved source")]}});
        let unpacking = json!({"metadata": {"name": "c"}, "status": {"conditions": [
            cond("Progressing", "True", "Retrying", "source catalog content: error pulling image")]}});
        let a = assess(Some(&unpacking), None);
        assert_eq!(
            a.outcome,
            Outcome::Wait("catalogd to serve ClusterCatalog c".into())
        );
        assert_eq!(
            a.lines,
            [
                "ClusterCatalog c: Progressing=True (Retrying: source catalog content: error pulling image)"
            ]
        );
        let blocked = json!({"metadata": {"name": "c"}, "status": {"conditions": [
            cond("Progressing", "False", "Blocked", "catalog image is missing the required label \"operators.operatorframework.io.index.configs.v1\"")]}});
        assert!(
            matches!(assess(Some(&blocked), None).outcome, Outcome::Failed { ref reason, .. } if reason == "Blocked")
        );

        let mut ce = json!({"metadata": {"name": "p", "generation": 1}, "status": {"observedGeneration": 1, "conditions": [
            cond("Progressing", "True", "Retrying", "no bundles found for package \"p\" matching version \"9.9.9\""),
            cond("Installed", "False", "Failed", "No bundle installed"),
            cond("Deprecated", "False", "NotDeprecated", "not deprecated")]}});
        let a = assess(Some(&serving), Some(&ce));
        assert!(matches!(a.outcome, Outcome::Wait(_)));
        assert_eq!(a.lines[2..], [
            "ClusterExtension p: Progressing=True (Retrying: no bundles found for package \"p\" matching version \"9.9.9\")".to_string(),
            "ClusterExtension p: Installed=False (Failed: No bundle installed)".to_string(),
        ]);
        ce["status"]["conditions"] = json!([
            cond("Progressing", "True", "Succeeded", "Desired state reached"),
            cond(
                "Installed",
                "True",
                "Succeeded",
                "Installed bundle quay.io/p@sha256:1 successfully"
            ),
            cond("BundleDeprecated", "True", "Deprecated", "use 2.x")
        ]);
        ce["status"]["install"] = json!({"bundle": {"name": "p.v1.0.0", "version": "1.0.0"}});
        let a = assess(Some(&serving), Some(&ce));
        assert_eq!(
            a.outcome,
            Outcome::Done {
                bundle: "p.v1.0.0".into(),
                version: "1.0.0".into()
            }
        );
        assert_eq!(
            a.lines.last().unwrap(),
            "ClusterExtension p: BundleDeprecated=True (Deprecated: use 2.x)"
        );
        // A newer generation not yet observed is not done.
        ce["metadata"]["generation"] = json!(2);
        assert!(matches!(
            assess(Some(&serving), Some(&ce)).outcome,
            Outcome::Wait(_)
        ));
        ce["status"]["conditions"] = json!([cond(
            "Progressing",
            "False",
            "InvalidConfiguration",
            "invalid ClusterExtension configuration: invalid configuration: unknown field \"x\""
        )]);
        assert_eq!(
            assess(Some(&serving), Some(&ce)).outcome,
            Outcome::Failed { reason: "InvalidConfiguration".into(), message: "invalid ClusterExtension configuration: invalid configuration: unknown field \"x\"".into() }
        );
    }

    #[test]
    fn the_served_crd_tells_the_release_line() {
        let crd = |required: Value| {
            json!({"spec": {"versions": [{"name": "v1", "served": true,
            "schema": {"openAPIV3Schema": {"properties": {"spec": {"required": required}}}}}]}})
        };
        assert!(honours_service_account(&crd(json!([
            "namespace",
            "serviceAccount",
            "source"
        ]))));
        assert!(!honours_service_account(&crd(json!([
            "namespace",
            "source"
        ]))));
    }
}

#[cfg(test)]
mod crd_tests {
    use super::*;

    fn crd(file: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/olmv1-crds")
            .join(file);
        let node = crate::bundle::load::parse_file(&path)
            .expect("parses")
            .into_iter()
            .next()
            .expect("one document");
        serde_json::from_str(&node.to_json()).expect("json")
    }

    /// operator-controller's own CRDs: v1.10 requires `spec.serviceAccount`, v1.11 does not.
    #[test]
    fn the_real_crds_tell_the_release_lines_apart() {
        assert!(honours_service_account(&crd(
            "clusterextensions-v1.10.yaml"
        )));
        assert!(!honours_service_account(&crd(
            "clusterextensions-v1.11.yaml"
        )));
    }
}
