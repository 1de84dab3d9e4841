//! The `UpgradePolicy` custom resource (group `olmctl.dev`, namespaced), generated from these
//! types: `v1` (storage) and the deprecated `v1alpha1`, whose spec has another shape
//! (`olmctl::gate::convert`), converted by the operator's webhook.
//!
//! The gate itself reads policies with `olmctl::gate::policy` (the same reader as
//! `olmctl gate evaluate`), so what the API server stores and what the gate decides on agree.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, ServiceReference, WebhookClientConfig,
    WebhookConversion,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector};
use kube::CustomResourceExt;
use kube::core::crd::merge_crds;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The namespace and Service of the conversion webhook in `operator/config/`.
pub const WEBHOOK_NAMESPACE: &str = "olmctl-system";
/// The webhook Service.
pub const WEBHOOK_SERVICE: &str = "olmctl-operator-webhook";
/// The webhook path.
pub const WEBHOOK_PATH: &str = "/convert";

/// `maxVersionJump`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Jump {
    /// Same major and minor.
    Patch,
    /// Same major.
    Minor,
    /// Any.
    Major,
}

/// `crdSafety`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum CrdSafety {
    /// Hold plans whose CRD changes fail the checks.
    Enforce,
    /// Report and approve.
    Warn,
    /// Do not check.
    Ignore,
}

/// `newDependencies`.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum NewDependencies {
    /// Approve a plan that installs a package the namespace did not have, reporting it.
    Allow,
    /// Hold such a plan for a person.
    Hold,
}

/// A day of the week.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, JsonSchema)]
pub enum Day {
    /// Monday.
    Mon,
    /// Tuesday.
    Tue,
    /// Wednesday.
    Wed,
    /// Thursday.
    Thu,
    /// Friday.
    Fri,
    /// Saturday.
    Sat,
    /// Sunday.
    Sun,
}

/// A maintenance window.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MaintenanceWindow {
    /// The local days the window starts on; empty: every day.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub days: Vec<Day>,
    /// Local wall-clock start, `HH:MM` (a start in a DST gap opens at the next valid instant).
    #[schemars(regex(pattern = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"))]
    pub start: String,
    /// How long it stays open: `90m`, `4h`, `1h30m`.
    #[schemars(regex(pattern = r"^([0-9]+h)?([0-9]+m)?([0-9]+s)?$"))]
    pub duration: String,
    /// IANA time zone; default UTC.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

/// One reason of a decision.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
pub struct ReasonStatus {
    /// The GATE code (`olmctl explain GATE007`).
    pub code: String,
    /// `hold`, `wait`, `warn` or `info`.
    pub effect: String,
    /// What happened.
    pub message: String,
}

/// The gate's decision for one covered Subscription's pending InstallPlan.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionStatus {
    /// The Subscription.
    pub name: String,
    /// Its installed CSV (`status.installedCSV`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_csv: Option<String>,
    /// The CSV it is moving to (`status.currentCSV`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_csv: Option<String>,
    /// The pending InstallPlan.
    pub install_plan: String,
    /// `Approved`, `Held` or `Waiting` (for the whole plan: every CSV in it).
    pub decision: String,
    /// Every reason.
    pub reasons: Vec<ReasonStatus>,
    /// When the decision was first made as it stands (RFC 3339).
    pub since: String,
    /// When a waiting plan is looked at again (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_check: Option<String>,
}

/// The gate's decision for one covered ClusterExtension (OLM v1): where its pin
/// (`spec.source.catalog.version`) stands and why.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionStatus {
    /// The ClusterExtension.
    pub name: String,
    /// Its package (`spec.source.catalog.packageName`).
    pub package: String,
    /// The installed bundle (`status.install.bundle.name`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed_bundle: Option<String>,
    /// The installed version (`status.install.bundle.version`), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed: Option<String>,
    /// The pin (`spec.source.catalog.version`) as the gate left it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pin: Option<String>,
    /// The step considered: the bundle the pin moved to, or the one that waits or is held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_bundle: Option<String>,
    /// `Moved`, `Current`, `Waiting` or `Held`.
    pub decision: String,
    /// Every reason.
    pub reasons: Vec<ReasonStatus>,
    /// When the decision was first made as it stands (RFC 3339).
    pub since: String,
    /// When a waiting extension is looked at again (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_check: Option<String>,
}

/// `status` of an UpgradePolicy (both versions).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UpgradePolicyStatus {
    /// `Ready` (the policy is read and evaluated) and `Degraded` (it cannot be).
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// One entry per covered Subscription with a pending InstallPlan, by name.
    #[serde(default)]
    pub subscriptions: Vec<SubscriptionStatus>,
    /// One entry per covered ClusterExtension (OLM v1), by name; absent when there is none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_extensions: Vec<ExtensionStatus>,
    /// The policy generation the status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The `v1` (storage) version.
pub mod v1 {
    use super::*;

    /// Approves this namespace's pending OLM InstallPlans by policy.
    #[derive(kube::CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
    #[kube(
        group = "olmctl.dev",
        version = "v1",
        kind = "UpgradePolicy",
        namespaced,
        status = "UpgradePolicyStatus",
        shortname = "upgpol",
        doc = "An UpgradePolicy: which pending OLM InstallPlans of its namespace olmctl-operator approves, and when.",
        printcolumn = r#"{"name":"Jump","type":"string","jsonPath":".spec.maxVersionJump"}"#,
        printcolumn = r#"{"name":"CRD safety","type":"string","jsonPath":".spec.crdSafety"}"#,
        printcolumn = r#"{"name":"Paused","type":"boolean","jsonPath":".spec.paused"}"#,
        printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
    )]
    #[serde(rename_all = "camelCase")]
    pub struct UpgradePolicySpec {
        /// Subscriptions of this namespace; empty selects all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub selector: Option<LabelSelector>,
        /// OLM v1 ClusterExtensions that install into this namespace (`spec.namespace`), whose
        /// version pin the gate moves; absent: none, empty: all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub cluster_extension_selector: Option<LabelSelector>,
        /// How far an upgrade may move from the installed CSV's version (default major).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_version_jump: Option<Jump>,
        /// The CRD checks of `olmctl check upgrade` against the live CRDs (default Enforce).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub crd_safety: Option<CrdSafety>,
        /// A plan that installs a package the namespace did not have (a dependency OLM's
        /// resolver pulled in, with a Subscription step of its own): Allow (default) or Hold.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub new_dependencies: Option<NewDependencies>,
        /// When plans may be approved; empty: any time.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub maintenance_windows: Vec<MaintenanceWindow>,
        /// The InstallPlan must be at least this old (soak), e.g. `24h`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub min_age: Option<String>,
        /// Approve nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub paused: Option<bool>,
    }
}

/// The deprecated `v1alpha1` version.
pub mod v1alpha1 {
    use super::*;

    /// The first shape of UpgradePolicy (deprecated: use olmctl.dev/v1).
    #[derive(kube::CustomResource, Serialize, Deserialize, Clone, Debug, Default, JsonSchema)]
    #[kube(
        group = "olmctl.dev",
        version = "v1alpha1",
        kind = "UpgradePolicy",
        namespaced,
        status = "UpgradePolicyStatus",
        shortname = "upgpol",
        doc = "An UpgradePolicy in its first, deprecated shape (use olmctl.dev/v1).",
        deprecated = "olmctl.dev/v1alpha1 UpgradePolicy is deprecated; use olmctl.dev/v1"
    )]
    #[serde(rename_all = "camelCase")]
    pub struct UpgradePolicySpec {
        /// v1 `selector`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub subscription_selector: Option<LabelSelector>,
        /// v1 `clusterExtensionSelector` (the same name in both versions).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub cluster_extension_selector: Option<LabelSelector>,
        /// v1 `maxVersionJump`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub max_upgrade: Option<Jump>,
        /// v1 `crdSafety`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub crd_checks: Option<CrdSafety>,
        /// v1 `newDependencies` (the same name in both versions).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub new_dependencies: Option<NewDependencies>,
        /// One string per window: `DAYS START+DURATION [ZONE]`, e.g. `Sat,Sun 02:00+4h Europe/Berlin`
        /// (`*` for every day).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pub maintenance_windows: Vec<String>,
        /// v1 `minAge`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub soak: Option<String>,
        /// Approve nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub paused: Option<bool>,
    }
}

/// The CRD with both versions, `v1` stored, converted by the operator's webhook. OLM injects
/// the CA bundle of the certificates it mounts when the CSV declares the webhook.
pub fn crd() -> CustomResourceDefinition {
    let mut crd = merge_crds(
        vec![v1alpha1::UpgradePolicy::crd(), v1::UpgradePolicy::crd()],
        "v1",
    )
    .expect("the two versions merge");
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "Webhook".into(),
        webhook: Some(WebhookConversion {
            conversion_review_versions: vec!["v1".into()],
            client_config: Some(WebhookClientConfig {
                service: Some(ServiceReference {
                    namespace: WEBHOOK_NAMESPACE.into(),
                    name: WEBHOOK_SERVICE.into(),
                    path: Some(WEBHOOK_PATH.into()),
                    port: Some(443),
                }),
                ..Default::default()
            }),
        }),
    });
    crd
}

/// The operator's releases and the CRD each shipped: the history `bundle/` and the catalog keep.
pub const RELEASES: [&str; 3] = ["0.1.0", "0.2.0", "0.3.0"];

/// The CRD of a release:
/// - `0.1.0`: `v1alpha1` only (stored), no conversion;
/// - `0.2.0`: adds `v1` (stored) with the conversion webhook, `v1alpha1` still served;
/// - `0.3.0` (current, [`crd`]): marks `v1alpha1` deprecated.
pub fn crd_for(release: &str) -> Option<CustomResourceDefinition> {
    let mut c = crd();
    match release {
        "0.1.0" => {
            c.spec.versions.retain(|v| v.name == "v1alpha1");
            let v = &mut c.spec.versions[0];
            v.storage = true;
            v.deprecated = None;
            v.deprecation_warning = None;
            c.spec.conversion = None;
        }
        "0.2.0" => {
            for v in &mut c.spec.versions {
                v.deprecated = None;
                v.deprecation_warning = None;
            }
        }
        "0.3.0" => {}
        _ => return None,
    }
    if release != "0.3.0" {
        // `clusterExtensionSelector` (issue 31, OLM v1) came after 0.2.0, and with it
        // `status.clusterExtensions`; so did `newDependencies` (issue 41).
        for v in &mut c.spec.versions {
            for (part, field) in [
                ("spec", "clusterExtensionSelector"),
                ("spec", "newDependencies"),
                ("status", "clusterExtensions"),
            ] {
                if let Some(props) = v
                    .schema
                    .as_mut()
                    .and_then(|s| s.open_api_v3_schema.as_mut())
                    .and_then(|s| s.properties.as_mut())
                    .and_then(|p| p.get_mut(part))
                    .and_then(|s| s.properties.as_mut())
                {
                    props.remove(field);
                }
            }
        }
    }
    Some(c)
}

/// A serializable value as YAML, in olmctl's deterministic style (sorted keys).
pub fn to_yaml(v: &impl Serialize) -> String {
    let json = serde_json::to_string(v).expect("serializable");
    olmctl::fbc::emit_yaml::json_to_yaml(&json).expect("valid JSON")
}

/// What `olmctl-operator crd` prints and `operator/config/crd.yaml` holds.
pub fn crd_yaml() -> String {
    format!(
        "# Generated by `olmctl-operator crd`; do not edit (a test fails when it is stale).\n{}",
        to_yaml(&crd())
    )
}

/// The CRD of an earlier release as YAML (`olmctl-operator crd --release X`), for the bundle
/// history.
pub fn crd_yaml_for(release: &str) -> Option<String> {
    crd_for(release).map(|c| to_yaml(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crd_has_both_versions_v1_stored_v1alpha1_deprecated() {
        let c = crd();
        assert_eq!(
            c.metadata.name.as_deref(),
            Some("upgradepolicies.olmctl.dev")
        );
        assert_eq!(c.spec.scope, "Namespaced");
        let vs: Vec<(&str, bool, bool, Option<bool>)> = c
            .spec
            .versions
            .iter()
            .map(|v| (v.name.as_str(), v.served, v.storage, v.deprecated))
            .collect();
        assert_eq!(
            vs,
            [
                ("v1", true, true, None),
                ("v1alpha1", true, false, Some(true))
            ]
        );
        assert!(
            c.spec.versions[1]
                .deprecation_warning
                .as_deref()
                .is_some_and(|w| w.contains("use olmctl.dev/v1"))
        );
        let conv = c.spec.conversion.expect("conversion");
        assert_eq!(conv.strategy, "Webhook");
        // Both have the status subresource.
        assert!(
            c.spec
                .versions
                .iter()
                .all(|v| v.subresources.as_ref().is_some_and(|s| s.status.is_some()))
        );
    }

    #[test]
    fn the_crd_history_is_the_realistic_one() {
        let shape = |r: &str| -> Vec<(String, bool, bool)> {
            crd_for(r)
                .expect("release")
                .spec
                .versions
                .iter()
                .map(|v| (v.name.clone(), v.storage, v.deprecated == Some(true)))
                .collect()
        };
        let s = |n: &str, st: bool, d: bool| (n.to_string(), st, d);
        assert_eq!(shape("0.1.0"), [s("v1alpha1", true, false)]);
        assert!(crd_for("0.1.0").expect("r").spec.conversion.is_none());
        assert_eq!(
            shape("0.2.0"),
            [s("v1", true, false), s("v1alpha1", false, false)]
        );
        assert_eq!(
            shape("0.3.0"),
            [s("v1", true, false), s("v1alpha1", false, true)]
        );
        assert!(crd_for("0.9.0").is_none());
    }

    #[test]
    fn cluster_extension_selector_is_in_both_versions_and_reads_the_same_in_the_gate() {
        for (api, rest) in [
            ("v1", "maxVersionJump: patch"),
            ("v1alpha1", "maxUpgrade: patch"),
        ] {
            let text = format!(
                "apiVersion: olmctl.dev/{api}\nkind: UpgradePolicy\nmetadata: {{name: db, namespace: acme-system}}\nspec:\n  clusterExtensionSelector: {{matchLabels: {{team: db}}}}\n  {rest}\n"
            );
            let json = olmctl::fbc::yaml::first_document(&text)
                .expect("yaml")
                .expect("doc")
                .to_json();
            let back = if api == "v1" {
                let p: v1::UpgradePolicy = serde_json::from_str(&json).expect("typed");
                serde_json::to_string(&p).expect("json")
            } else {
                let p: v1alpha1::UpgradePolicy = serde_json::from_str(&json).expect("typed");
                serde_json::to_string(&p).expect("json")
            };
            let a = olmctl::gate::policy::parse(&text).expect("text");
            let b = olmctl::gate::policy::parse(&back).expect("typed");
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
            let sel = b.cluster_extension_selector.expect("kept");
            assert_eq!(sel.match_labels.get("team").map(String::as_str), Some("db"));
        }
        // The CRD's schema has the field in both versions (the API server would prune it).
        let yaml = crd_yaml();
        assert_eq!(
            yaml.matches("clusterExtensionSelector:").count(),
            2,
            "{yaml}"
        );
    }

    #[test]
    fn new_dependencies_is_in_both_versions_of_the_current_crd_and_in_no_earlier_release() {
        let values = |c: &CustomResourceDefinition| -> Vec<(String, Vec<String>)> {
            c.spec
                .versions
                .iter()
                .filter_map(|v| {
                    let spec = v
                        .schema
                        .as_ref()?
                        .open_api_v3_schema
                        .as_ref()?
                        .properties
                        .as_ref()?
                        .get("spec")?;
                    let f = spec.properties.as_ref()?.get("newDependencies")?;
                    let e = f
                        .enum_
                        .iter()
                        .flatten()
                        .map(|x| x.0.as_str().unwrap_or_default().to_string())
                        .collect();
                    Some((v.name.clone(), e))
                })
                .collect()
        };
        let both = vec!["Allow".to_string(), "Hold".to_string()];
        assert_eq!(
            values(&crd()),
            [("v1".into(), both.clone()), ("v1alpha1".into(), both)]
        );
        for r in ["0.1.0", "0.2.0"] {
            assert!(values(&crd_for(r).expect("release")).is_empty(), "{r}");
        }
        // The typed v1alpha1 object keeps it, and the gate reads it as in v1.
        let text = "apiVersion: olmctl.dev/v1alpha1\nkind: UpgradePolicy\nmetadata: {name: db, namespace: acme-system}\nspec:\n  newDependencies: Hold\n";
        let json = olmctl::fbc::yaml::first_document(text)
            .expect("yaml")
            .expect("doc")
            .to_json();
        let p: v1alpha1::UpgradePolicy = serde_json::from_str(&json).expect("typed");
        assert_eq!(p.spec.new_dependencies, Some(NewDependencies::Hold));
        let read =
            olmctl::gate::policy::parse(&serde_json::to_string(&p).expect("json")).expect("policy");
        assert_eq!(
            read.new_dependencies,
            olmctl::gate::policy::NewDependencies::Hold
        );
    }

    #[test]
    fn the_readme_policy_deserializes_and_reads_the_same_in_the_gate() {
        let text = "apiVersion: olmctl.dev/v1\nkind: UpgradePolicy\nmetadata: {name: default, namespace: acme-system}\nspec:\n  selector: {matchLabels: {}}\n  maxVersionJump: minor\n  crdSafety: Enforce\n  newDependencies: Allow\n  maintenanceWindows:\n  - days: [Sat, Sun]\n    start: \"02:00\"\n    duration: 4h\n    timeZone: Europe/Berlin\n  minAge: 24h\n  paused: false\n";
        let node = olmctl::fbc::yaml::first_document(text)
            .expect("yaml")
            .expect("doc");
        let p: v1::UpgradePolicy = serde_json::from_str(&node.to_json()).expect("typed");
        assert_eq!(p.spec.max_version_jump, Some(Jump::Minor));
        assert_eq!(p.spec.maintenance_windows[0].days, [Day::Sat, Day::Sun]);
        assert_eq!(p.spec.new_dependencies, Some(NewDependencies::Allow));
        // Typed -> JSON -> the gate's reader: the same policy as the text.
        let back = serde_json::to_string(&p).expect("json");
        let a = olmctl::gate::policy::parse(text).expect("text");
        let b = olmctl::gate::policy::parse(&back).expect("typed");
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
    }
}
