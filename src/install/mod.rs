//! What `olmctl install` creates for OLM (operator.md §6): a CatalogSource when given a catalog
//! image, an OperatorGroup for the namespace, a Subscription (with `startingCSV` when a version
//! is asked for), and, with a gate policy, the UpgradePolicy (approval then `Manual`). Pure:
//! the same options give the same manifests, which `install --print` writes for GitOps.

pub mod olmv1;
pub mod one_bundle;
pub mod preview;
pub mod progress;
pub mod starting_csv;
pub mod uninstall;

use serde_json::{Value, json};

/// Where the catalog comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Catalog {
    /// An index image: a CatalogSource is created for it.
    Image(String),
    /// An existing CatalogSource, by name.
    Source(String),
}

/// The options of `olmctl install`.
#[derive(Debug, Clone)]
pub struct Install {
    /// The package.
    pub package: String,
    /// The catalog.
    pub catalog: Catalog,
    /// The CatalogSource's namespace (OLM's global catalog namespace, `olm` upstream,
    /// `openshift-marketplace` on OpenShift).
    pub catalog_namespace: String,
    /// The channel; OLM uses the package's default channel without one.
    pub channel: Option<String>,
    /// The version to start from. Without `starting_csv` its CSV name is guessed as
    /// `<package>.v<version>` ([`starting_csv::guess`]); a caller with the catalog sets
    /// `starting_csv` to the name found there ([`starting_csv::lookup`]).
    pub version: Option<String>,
    /// The starting CSV name: given, or looked up in the catalog.
    pub starting_csv: Option<String>,
    /// The install namespace.
    pub namespace: String,
    /// Target namespaces of the OperatorGroup; empty: all namespaces.
    pub target_namespaces: Vec<String>,
    /// Whether to create the OperatorGroup (the namespace has none).
    pub operator_group: bool,
    /// Whether to create the Namespace object (`--print` output for an empty cluster).
    pub create_namespace: bool,
    /// `Automatic` or `Manual`.
    pub approval: String,
    /// An UpgradePolicy document (JSON), with `--gate`.
    pub gate: Option<Value>,
    /// Poll interval of a catalog image given by tag.
    pub poll_interval: String,
    /// Annotations of the CatalogSource created for an image (`install --bundle` records its
    /// bundle: [`one_bundle::BUNDLE_ANNOTATION`]).
    pub catalog_annotations: std::collections::BTreeMap<String, String>,
}

/// The CatalogSource name for a package's catalog image.
pub fn catalog_source_name(package: &str) -> String {
    format!("{package}-catalog")
}

impl Install {
    /// The starting CSV, when a version or CSV is given.
    pub fn starting_csv(&self) -> Option<String> {
        self.starting_csv
            .clone()
            .or_else(|| self.guessed_starting_csv())
    }

    /// The starting CSV when it is a guess: a version given and no name (none given, none
    /// looked up in a catalog).
    pub fn guessed_starting_csv(&self) -> Option<String> {
        match (&self.starting_csv, &self.version) {
            (None, Some(v)) => Some(starting_csv::guess(&self.package, v)),
            _ => None,
        }
    }

    /// Why the starting CSV is a guess, for a warning and the `--print` output; `None` when
    /// it is not one.
    pub fn guess_note(&self) -> Option<String> {
        let csv = self.guessed_starting_csv()?;
        Some(format!(
            "startingCSV {} is a guess (<package>.v<version>): no catalog was read to look version {} up in; CSV names often differ (pass --catalog-dir DIR, or --starting-csv NAME)",
            csv,
            self.version.as_deref().unwrap_or_default()
        ))
    }

    /// The source name and namespace the Subscription uses.
    pub fn source(&self) -> (String, String) {
        match &self.catalog {
            Catalog::Image(_) => (
                catalog_source_name(&self.package),
                self.catalog_namespace.clone(),
            ),
            Catalog::Source(s) => (s.clone(), self.catalog_namespace.clone()),
        }
    }

    /// The CSV an install is pinned to: a starting CSV with Manual approval and no gate. Only
    /// its InstallPlan is approved, and the install stays there (OLM's follow-up plans for
    /// newer versions wait for approval).
    pub fn pinned(&self) -> Option<String> {
        (self.gate.is_none() && self.approval == "Manual")
            .then(|| self.starting_csv())
            .flatten()
    }

    /// The approval mode: `Manual` whenever a gate decides.
    pub fn approval(&self) -> &str {
        if self.gate.is_some() {
            "Manual"
        } else {
            &self.approval
        }
    }

    /// Checks the options; errors name the flag. Every name the manifests carry is checked as
    /// the API server checks it ([`crate::names`]): the namespaces are labels, the package (the
    /// Subscription's and, with an image, the CatalogSource's name), the CatalogSource and the
    /// starting CSV are subdomains.
    pub fn check(&self) -> Result<(), String> {
        use crate::names::{Rule, check};
        let name =
            |rule, what: &str, value: &str| check(rule, what, value).map_err(|e| e.to_string());
        name(Rule::Label, "--namespace", &self.namespace)?;
        name(Rule::Label, "--catalog-namespace", &self.catalog_namespace)?;
        for ns in &self.target_namespaces {
            name(Rule::Label, "--target-namespace", ns)?;
        }
        name(Rule::Subdomain, "the package name", &self.package)?;
        match &self.catalog {
            Catalog::Image(_) => name(
                Rule::Subdomain,
                "the CatalogSource name (<package>-catalog)",
                &catalog_source_name(&self.package),
            )?,
            Catalog::Source(s) => name(Rule::Subdomain, "--catalog-source", s)?,
        }
        if !matches!(self.approval.as_str(), "Automatic" | "Manual") {
            return Err(format!(
                "--approval {:?}: use Automatic or Manual (OLM compares it case-sensitively)",
                self.approval
            ));
        }
        if let Some(v) = &self.version {
            semver::Version::parse(v.trim_start_matches('v')).map_err(|e| {
                format!(
                    "--version {} is not semver: {e}",
                    crate::text::esc(format!("{v:?}"))
                )
            })?;
        }
        if let Some(csv) = &self.starting_csv {
            name(Rule::Subdomain, "--starting-csv", csv)?;
        } else if let Some(csv) = self.starting_csv() {
            name(
                Rule::Subdomain,
                "the starting CSV (<package>.v<version>)",
                &csv,
            )?;
        }
        if let Catalog::Image(i) = &self.catalog {
            crate::oci::registry::parse_ref(i).map_err(|e| format!("--catalog: {e}"))?;
        }
        Ok(())
    }

    /// The objects to create, in apply order.
    pub fn manifests(&self) -> Vec<Value> {
        let mut out = Vec::new();
        if self.create_namespace {
            out.push(json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": self.namespace},
            }));
        }
        let (source, source_ns) = self.source();
        if let Catalog::Image(image) = &self.catalog {
            let mut spec = json!({
                "sourceType": "grpc",
                "image": image,
                "displayName": format!("{} catalog", self.package),
                "publisher": uninstall::PUBLISHER,
                "grpcPodConfig": {"securityContextConfig": "restricted"},
            });
            // A tag moves; a digest does not: poll only tags.
            if !image.contains("@sha256:") {
                spec["updateStrategy"] = json!({"registryPoll": {"interval": self.poll_interval}});
            }
            let mut cs = json!({
                "apiVersion": "operators.coreos.com/v1alpha1", "kind": "CatalogSource",
                "metadata": {"name": source, "namespace": source_ns},
                "spec": spec,
            });
            if !self.catalog_annotations.is_empty() {
                cs["metadata"]["annotations"] = json!(self.catalog_annotations);
            }
            out.push(cs);
        }
        if self.operator_group {
            let mut spec = json!({});
            if !self.target_namespaces.is_empty() {
                spec["targetNamespaces"] = json!(self.target_namespaces);
            }
            out.push(json!({
                "apiVersion": "operators.coreos.com/v1", "kind": "OperatorGroup",
                "metadata": {"name": self.namespace, "namespace": self.namespace},
                "spec": spec,
            }));
        }
        if let Some(g) = &self.gate {
            let mut g = g.clone();
            g["metadata"]["namespace"] = json!(self.namespace);
            if let Some(m) = g["metadata"].as_object_mut() {
                for k in ["resourceVersion", "uid", "creationTimestamp", "generation"] {
                    m.remove(k);
                }
            }
            if let Some(o) = g.as_object_mut() {
                o.remove("status");
            }
            out.push(g);
        }
        let mut spec = json!({
            "name": self.package,
            "source": source,
            "sourceNamespace": source_ns,
            "installPlanApproval": self.approval(),
        });
        if let Some(c) = &self.channel {
            spec["channel"] = json!(c);
        }
        if let Some(s) = self.starting_csv() {
            spec["startingCSV"] = json!(s);
        }
        out.push(json!({
            "apiVersion": "operators.coreos.com/v1alpha1", "kind": "Subscription",
            "metadata": {"name": self.package, "namespace": self.namespace},
            "spec": spec,
        }));
        out
    }

    /// The manifests as a multi-document YAML stream (sorted keys, as olmctl writes YAML), with
    /// a comment first when the starting CSV is a guess ([`Install::guess_note`]).
    pub fn yaml(&self) -> String {
        let mut s = String::new();
        if let Some(note) = self.guess_note() {
            s.push_str(&format!("# {}\n", note.replace('\n', " ")));
        }
        for m in self.manifests() {
            // Our own JSON always parses.
            if let Some(y) = crate::fbc::emit_yaml::json_to_yaml(&m.to_string()) {
                s.push_str("---\n");
                s.push_str(&y);
            }
        }
        s
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn base() -> Install {
        Install {
            package: "olmctl-operator".into(),
            catalog: Catalog::Image("ghcr.io/olmctl/olmctl-catalog:v0.3.0".into()),
            catalog_namespace: "olm".into(),
            channel: Some("stable-v0".into()),
            version: Some("0.2.0".into()),
            starting_csv: None,
            namespace: "operators".into(),
            target_namespaces: Vec::new(),
            operator_group: true,
            create_namespace: false,
            approval: "Automatic".into(),
            gate: None,
            poll_interval: "30m".into(),
            catalog_annotations: Default::default(),
        }
    }

    #[test]
    fn manifests_for_an_image() {
        let m = base().manifests();
        let kinds: Vec<&str> = m.iter().map(|o| o["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["CatalogSource", "OperatorGroup", "Subscription"]);
        assert_eq!(m[0]["metadata"]["name"], "olmctl-operator-catalog");
        assert_eq!(
            m[0]["spec"]["updateStrategy"]["registryPoll"]["interval"],
            "30m"
        );
        assert_eq!(m[1]["spec"], json!({}));
        let sub = &m[2]["spec"];
        assert_eq!(sub["startingCSV"], "olmctl-operator.v0.2.0");
        assert_eq!(sub["source"], "olmctl-operator-catalog");
        assert_eq!(sub["sourceNamespace"], "olm");
        assert_eq!(sub["installPlanApproval"], "Automatic");
        // A version without a name looked up: the name is a guess, and the YAML says so.
        assert!(
            base().yaml().starts_with(
                "# startingCSV olmctl-operator.v0.2.0 is a guess (<package>.v<version>)"
            )
        );
        let mut named = base();
        named.starting_csv = Some("olmctl-operator.v0.2.0".into());
        assert_eq!(named.guess_note(), None);
        assert!(
            named
                .yaml()
                .starts_with("---\napiVersion: operators.coreos.com/v1alpha1\n")
        );
    }

    #[test]
    fn a_gate_makes_approval_manual_and_a_digest_is_not_polled() {
        let mut i = base();
        i.catalog = Catalog::Image(format!("quay.io/x/c@sha256:{}", "a".repeat(64)));
        i.gate = Some(
            json!({"apiVersion": "olmctl.dev/v1", "kind": "UpgradePolicy",
            "metadata": {"name": "default", "namespace": "elsewhere", "uid": "x"},
            "spec": {"maxVersionJump": "minor"}, "status": {}}),
        );
        let m = i.manifests();
        assert!(m[0]["spec"].get("updateStrategy").is_none());
        let g = m.iter().find(|o| o["kind"] == "UpgradePolicy").unwrap();
        assert_eq!(
            g["metadata"],
            json!({"name": "default", "namespace": "operators"})
        );
        assert!(g.get("status").is_none());
        assert_eq!(m.last().unwrap()["spec"]["installPlanApproval"], "Manual");
    }

    #[test]
    fn bad_options_name_the_flag() {
        let mut i = base();
        i.approval = "manual".into();
        assert!(i.check().unwrap_err().contains("--approval"));
        let mut i = base();
        i.namespace = "Bad_NS".into();
        assert!(i.check().unwrap_err().contains("--namespace"));
        let mut i = base();
        i.version = Some("one".into());
        assert!(i.check().unwrap_err().contains("--version"));
        assert!(base().check().is_ok());
    }
}
