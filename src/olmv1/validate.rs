//! The bundle checks operator-controller's renderer runs before rendering
//! (`rukpak/render/registryv1/registryv1.go :: BundleValidator`, each in
//! `registryv1/validators/validator.go`), in its order, with its messages; all run and their
//! errors are joined (`BundleValidator.Validate`, `errors.Join`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

/// What the validators read of a bundle.
pub struct Parts<'a> {
    /// The CSV.
    pub csv: &'a Value,
    /// The names of the bundle's CRDs, in file order.
    pub crds: Vec<String>,
    /// The bundle's other objects: (name, kind).
    pub others: Vec<(String, String)>,
    /// The package name (`metadata/annotations.yaml`).
    pub package: String,
}

/// Kubernetes' `IsDNS1123Subdomain`, its messages sorted (`k8s.io/apimachinery/pkg/util/
/// validation`).
fn dns1123_subdomain(n: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if n.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    if !crate::bundle::is_dns1123_subdomain_form(n) {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
        );
    }
    errs.sort();
    errs
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or_default()
}

fn list<'a>(v: &'a Value, path: &[&str]) -> Vec<&'a Value> {
    let mut at = v;
    for p in path {
        at = &at[*p];
    }
    at.as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn deployments(csv: &Value) -> Vec<&Value> {
    list(csv, &["spec", "install", "spec", "deployments"])
}

fn webhooks(csv: &Value) -> Vec<&Value> {
    list(csv, &["spec", "webhookdefinitions"])
}

fn duplicates<'a>(names: impl Iterator<Item = &'a str>) -> BTreeSet<&'a str> {
    let mut seen = BTreeSet::new();
    let mut dup = BTreeSet::new();
    for n in names {
        if !seen.insert(n) {
            dup.insert(n);
        }
    }
    dup
}

/// `CheckDeploymentSpecUniqueness`.
fn deployment_spec_uniqueness(p: &Parts<'_>) -> Vec<String> {
    duplicates(deployments(p.csv).into_iter().map(|d| str_of(d, "name")))
        .into_iter()
        .map(|d| {
            format!("cluster service version contains duplicate strategy deployment spec '{d}'")
        })
        .collect()
}

/// `CheckDeploymentNameIsDNS1123SubDomain`.
fn deployment_names(p: &Parts<'_>) -> Vec<String> {
    let mut bad: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for d in deployments(p.csv) {
        let errs = dns1123_subdomain(str_of(d, "name"));
        if !errs.is_empty() {
            bad.insert(str_of(d, "name"), errs);
        }
    }
    bad.into_iter()
        .map(|(d, e)| {
            format!(
                "invalid cluster service version strategy deployment name '{d}': {}",
                e.join(", ")
            )
        })
        .collect()
}

/// `CheckCRDResourceUniqueness`.
fn crd_uniqueness(p: &Parts<'_>) -> Vec<String> {
    duplicates(p.crds.iter().map(String::as_str))
        .into_iter()
        .map(|c| format!("bundle contains duplicate custom resource definition '{c}'"))
        .collect()
}

fn owned_crds(csv: &Value) -> BTreeSet<&str> {
    list(csv, &["spec", "customresourcedefinitions", "owned"])
        .into_iter()
        .map(|c| str_of(c, "name"))
        .collect()
}

/// `CheckOwnedCRDExistence`.
fn owned_crd_existence(p: &Parts<'_>) -> Vec<String> {
    let have: BTreeSet<&str> = p.crds.iter().map(String::as_str).collect();
    owned_crds(p.csv)
        .into_iter()
        .filter(|c| !have.contains(c))
        .map(|c| {
            format!(
                "cluster service definition references owned custom resource definition '{c}' \
                 not found in bundle"
            )
        })
        .collect()
}

/// `CheckPackageNameNotEmpty`.
fn package_name(p: &Parts<'_>) -> Vec<String> {
    if p.package.is_empty() {
        vec!["package name is empty".into()]
    } else {
        Vec::new()
    }
}

/// `CheckConversionWebhookSupport`.
fn conversion_webhook_support(p: &Parts<'_>) -> Vec<String> {
    let names: Vec<&str> = webhooks(p.csv)
        .into_iter()
        .filter(|w| w["type"] == "ConversionWebhook")
        .map(|w| str_of(w, "generateName"))
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    let modes: BTreeSet<&str> = list(p.csv, &["spec", "installModes"])
        .into_iter()
        .filter(|m| m["supported"].as_bool() == Some(true))
        .map(|m| str_of(m, "type"))
        .collect();
    if modes.len() == 1 && modes.contains("AllNamespaces") {
        return Vec::new();
    }
    let shown = modes.iter().copied().collect::<Vec<_>>().join(" ");
    names
        .into_iter()
        .map(|n| {
            format!(
                "bundle contains conversion webhook {} and supports install modes [{shown}] - \
                 conversion webhooks are only supported for bundles that only support \
                 AllNamespaces install mode",
                quoted(n)
            )
        })
        .collect()
}

/// Go's `%q` of a string (ASCII-printable names; others escaped as JSON escapes them, which
/// agrees with Go for the common cases).
fn quoted(s: &str) -> String {
    let mut out = String::new();
    crate::gojson::write_string(&mut out, s);
    out
}

/// `CheckWebhookDeploymentReferentialIntegrity`.
fn webhook_deployments(p: &Parts<'_>) -> Vec<String> {
    let have: BTreeSet<&str> = deployments(p.csv)
        .into_iter()
        .map(|d| str_of(d, "name"))
        .collect();
    let mut missing: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
    for w in webhooks(p.csv) {
        let d = str_of(w, "deploymentName");
        if !have.contains(d) {
            missing
                .entry(d)
                .or_default()
                .push((str_of(w, "type"), str_of(w, "generateName")));
        }
    }
    let mut out = Vec::new();
    for (d, mut hooks) in missing {
        hooks.sort();
        for (t, n) in hooks {
            out.push(format!(
                "webhook of type '{t}' with name '{n}' references non-existent deployment '{d}'"
            ));
        }
    }
    out
}

/// `CheckWebhookNameUniqueness`.
fn webhook_name_uniqueness(p: &Parts<'_>) -> Vec<String> {
    let mut by_type: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for w in webhooks(p.csv) {
        by_type
            .entry(str_of(w, "type"))
            .or_default()
            .push(str_of(w, "generateName"));
    }
    let mut out = Vec::new();
    for (t, names) in by_type {
        for n in duplicates(names.into_iter()) {
            out.push(format!("duplicate webhook '{n}' of type '{t}'"));
        }
    }
    out
}

/// `CheckWebhookNameIsDNS1123SubDomain`.
fn webhook_names(p: &Parts<'_>) -> Vec<String> {
    let mut bad: BTreeMap<(&str, &str), Vec<String>> = BTreeMap::new();
    for w in webhooks(p.csv) {
        let errs = dns1123_subdomain(str_of(w, "generateName"));
        if !errs.is_empty() {
            bad.insert((str_of(w, "type"), str_of(w, "generateName")), errs);
        }
    }
    bad.into_iter()
        .map(|((t, n), e)| {
            format!(
                "webhook of type '{t}' has invalid name '{n}': {}",
                e.join(",")
            )
        })
        .collect()
}

/// `CheckConversionWebhookCRDReferenceUniqueness`.
fn conversion_crd_uniqueness(p: &Parts<'_>) -> Vec<String> {
    let mut by_crd: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for w in webhooks(p.csv)
        .into_iter()
        .filter(|w| w["type"] == "ConversionWebhook")
    {
        for c in list(w, &["conversionCRDs"]) {
            by_crd
                .entry(c.as_str().unwrap_or_default())
                .or_default()
                .push(str_of(w, "generateName"));
        }
    }
    by_crd
        .into_iter()
        .filter(|(_, w)| w.len() > 1)
        .map(|(c, mut w)| {
            w.sort_unstable();
            format!(
                "conversion webhooks [{}] reference same custom resource definition '{c}'",
                w.join(",")
            )
        })
        .collect()
}

/// `CheckConversionWebhooksReferenceOwnedCRDs`.
fn conversion_owned_crds(p: &Parts<'_>) -> Vec<String> {
    let owned = owned_crds(p.csv);
    let mut hooks: Vec<&Value> = webhooks(p.csv)
        .into_iter()
        .filter(|w| w["type"] == "ConversionWebhook")
        .collect();
    hooks.sort_by_key(|w| str_of(w, "generateName"));
    let mut out = Vec::new();
    for w in hooks {
        let mut crds: Vec<&str> = list(w, &["conversionCRDs"])
            .into_iter()
            .map(|c| c.as_str().unwrap_or_default())
            .collect();
        crds.sort_unstable();
        for c in crds.into_iter().filter(|c| !owned.contains(c)) {
            out.push(format!(
                "conversion webhook '{}' references custom resource definition '{c}' not owned \
                 bundle",
                str_of(w, "generateName")
            ));
        }
    }
    out
}

/// `CheckWebhookRules`.
fn webhook_rules(p: &Parts<'_>) -> Vec<String> {
    const FORBIDDEN_RESOURCES: [&str; 5] = [
        "*",
        "mutatingwebhookconfiguration",
        "mutatingwebhookconfigurations",
        "validatingwebhookconfiguration",
        "validatingwebhookconfigurations",
    ];
    let mut out = Vec::new();
    for w in webhooks(p.csv)
        .into_iter()
        .filter(|w| w["type"] != "ConversionWebhook")
    {
        let name = quoted(str_of(w, "generateName"));
        for rule in list(w, &["rules"]) {
            for g in list(rule, &["apiGroups"])
                .into_iter()
                .filter_map(Value::as_str)
            {
                if g == "olm.operatorframework.io" || g == "*" {
                    out.push(format!(
                        "webhook {name} contains forbidden rule: admission webhook rules cannot \
                         reference API group {}",
                        quoted(g)
                    ));
                }
                if g == "admissionregistration.k8s.io" {
                    for r in list(rule, &["resources"])
                        .into_iter()
                        .filter_map(Value::as_str)
                    {
                        if FORBIDDEN_RESOURCES.contains(&r.to_lowercase().as_str()) {
                            out.push(format!(
                                "webhook {name} contains forbidden rule: admission webhook rules \
                                 cannot reference resource {} for API group {}",
                                quoted(r),
                                quoted(g)
                            ));
                        }
                    }
                }
            }
        }
    }
    out
}

/// `CheckObjectSupport`.
fn object_support(p: &Parts<'_>) -> Vec<String> {
    p.others
        .iter()
        .filter(|(_, kind)| crate::bundle::kind_namespaced(kind).is_none())
        .map(|(name, kind)| {
            format!(
                "unsupported resource {} with kind {}",
                quoted(name),
                quoted(kind)
            )
        })
        .collect()
}

/// Every validator's errors, in `BundleValidator`'s order.
pub fn validate(p: &Parts<'_>) -> Vec<String> {
    let validators: [fn(&Parts<'_>) -> Vec<String>; 13] = [
        deployment_spec_uniqueness,
        deployment_names,
        crd_uniqueness,
        owned_crd_existence,
        package_name,
        conversion_webhook_support,
        webhook_deployments,
        webhook_name_uniqueness,
        webhook_names,
        conversion_crd_uniqueness,
        conversion_owned_crds,
        webhook_rules,
        object_support,
    ];
    validators.iter().flat_map(|v| v(p)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parts(csv: &Value) -> Parts<'_> {
        Parts {
            csv,
            crds: vec!["a.example.com".into(), "a.example.com".into()],
            others: vec![("x".into(), "Pod".into())],
            package: String::new(),
        }
    }

    #[test]
    fn each_validator_speaks_as_upstream() {
        let csv = json!({"spec": {
        "install": {"spec": {"deployments": [{"name": "Dep"}, {"name": "Dep"}, {"name": "ok"}]}},
        "customresourcedefinitions": {"owned": [{"name": "b.example.com"}]},
        "installModes": [{"type": "AllNamespaces", "supported": true},
                         {"type": "OwnNamespace", "supported": true}],
        "webhookdefinitions": [
            {"type": "ConversionWebhook", "generateName": "c1", "deploymentName": "ok",
             "conversionCRDs": ["z.example.com", "a.example.com"]},
            {"type": "ConversionWebhook", "generateName": "c0", "deploymentName": "ok",
             "conversionCRDs": ["a.example.com"]},
            {"type": "ValidatingAdmissionWebhook", "generateName": "v", "deploymentName": "gone",
             "rules": [{"apiGroups": ["*", "admissionregistration.k8s.io"],
                        "resources": ["ValidatingWebhookConfigurations"]}]},
            {"type": "ValidatingAdmissionWebhook", "generateName": "v", "deploymentName": "ok"},
        ]}});
        let errs = validate(&parts(&csv));
        let regex = "(e.g. 'example.com', regex used for validation is \
                     '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        assert_eq!(
            errs,
            vec![
                "cluster service version contains duplicate strategy deployment spec 'Dep'"
                    .to_string(),
                format!(
                    "invalid cluster service version strategy deployment name 'Dep': a lowercase \
                     RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' \
                     or '.', and must start and end with an alphanumeric character {regex}"
                ),
                "bundle contains duplicate custom resource definition 'a.example.com'".into(),
                "cluster service definition references owned custom resource definition \
                 'b.example.com' not found in bundle"
                    .into(),
                "package name is empty".into(),
                "bundle contains conversion webhook \"c1\" and supports install modes \
                 [AllNamespaces OwnNamespace] - conversion webhooks are only supported for bundles \
                 that only support AllNamespaces install mode"
                    .into(),
                "bundle contains conversion webhook \"c0\" and supports install modes \
                 [AllNamespaces OwnNamespace] - conversion webhooks are only supported for bundles \
                 that only support AllNamespaces install mode"
                    .into(),
                "webhook of type 'ValidatingAdmissionWebhook' with name 'v' references \
                 non-existent deployment 'gone'"
                    .into(),
                "duplicate webhook 'v' of type 'ValidatingAdmissionWebhook'".into(),
                "conversion webhooks [c0,c1] reference same custom resource definition \
                 'a.example.com'"
                    .into(),
                "conversion webhook 'c0' references custom resource definition 'a.example.com' \
                 not owned bundle"
                    .into(),
                "conversion webhook 'c1' references custom resource definition 'a.example.com' \
                 not owned bundle"
                    .into(),
                "conversion webhook 'c1' references custom resource definition 'z.example.com' \
                 not owned bundle"
                    .into(),
                "webhook \"v\" contains forbidden rule: admission webhook rules cannot reference \
                 API group \"*\""
                    .into(),
                "webhook \"v\" contains forbidden rule: admission webhook rules cannot reference \
                 resource \"ValidatingWebhookConfigurations\" for API group \
                 \"admissionregistration.k8s.io\""
                    .into(),
                "unsupported resource \"x\" with kind \"Pod\"".into(),
            ]
        );
    }
}
