//! What OLM v0 finds only at install time (the CSV goes `Failed`, or the API server rejects the
//! CSV or the objects OLM creates from it) and OLM v1's static registry+v1 rules (OLM codes).
//!
//! Sources: operator-lifecycle-manager `pkg/controller/install/webhook.go` (webhook rules,
//! conversion webhooks), operator-controller `rukpak/render/registryv1/validators` (names,
//! uniqueness, conversion CRD ownership), the CSV CRD's OpenAPI schema (webhook `type`,
//! `containerPort`, required `sideEffects` and `admissionReviewVersions`) and the
//! admissionregistration/v1 API validation the webhooks OLM creates go through.
//!
//! OLM014 (a warning) is the one rule about what OLM does in between: the catalog operator
//! applies a bundle's CRD as it is, and the OLM operator replaces its `spec.conversion` from the
//! CSV's ConversionWebhook only later (`install/webhook.go :: createOrUpdateConversionWebhook`),
//! so a stanza the bundle ships is live until then (cluster.md R4.3, R4.4).
//!
//! Covered elsewhere: conversion webhooks outside AllNamespaces (CSV007), webhook
//! `deploymentName` (CSV016), owned CRDs missing or duplicated (BND007, BND009).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::Ctx;
use crate::bundle::load::{field, kind_of, list_at, pos_at, str_at};
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::{Node, Value};

codes! {
    WEBHOOK_RULE_GROUP = "OLM001", Error, "An admission webhook rule matches API group `*`, operators.coreos.com or olm.operatorframework.io; OLM refuses to install it.";
    WEBHOOK_RULE_WEBHOOKS = "OLM002", Error, "An admission webhook rule matches admissionregistration.k8s.io `*` or webhook configurations; OLM refuses to install it.";
    CONVERSION_NO_CRDS = "OLM003", Error, "A ConversionWebhook lists no conversionCRDs; OLM v0 fails the CSV.";
    CONVERSION_CRD_NOT_OWNED = "OLM004", Error, "A conversion webhook's conversionCRDs entry is not a CRD the CSV owns.";
    CONVERSION_CRD_SHARED = "OLM005", Error, "A CRD is listed by more than one conversion webhook.";
    CONVERSION_PRESERVE_UNKNOWN = "OLM006", Error, "A conversion webhook's CRD keeps preserveUnknownFields true; the API server would not call the webhook.";
    DUPLICATE_DEPLOYMENT = "OLM007", Error, "Two install-strategy deployments have the same name.";
    DEPLOYMENT_NAME = "OLM008", Error, "An install-strategy deployment name is not a DNS-1123 subdomain.";
    DUPLICATE_WEBHOOK = "OLM009", Error, "Two webhook definitions of the same type have the same generateName.";
    WEBHOOK_NAME = "OLM010", Error, "A webhook generateName is not a DNS-1123 subdomain (admission webhooks: with at least three dot-separated segments).";
    WEBHOOK_TYPE = "OLM011", Error, "A webhook definition's type is missing or not ValidatingAdmissionWebhook, MutatingAdmissionWebhook or ConversionWebhook.";
    WEBHOOK_PORT = "OLM012", Error, "A webhook definition's containerPort is not in 1-65535.";
    WEBHOOK_REVIEW = "OLM013", Error, "A webhook definition lacks sideEffects or admissionReviewVersions, or has values admissionregistration/v1 rejects.";
    CONVERSION_STANZA = "OLM014", Warning, "A CRD a ConversionWebhook names in conversionCRDs carries spec.conversion; OLM applies it as it is, then overwrites it from the CSV.";
}

const VALIDATING: &str = "ValidatingAdmissionWebhook";
const MUTATING: &str = "MutatingAdmissionWebhook";
const CONVERSION: &str = "ConversionWebhook";
const FORBIDDEN_GROUPS: [&str; 3] = ["*", "operators.coreos.com", "olm.operatorframework.io"];
const WEBHOOK_RESOURCES: [&str; 5] = [
    "*",
    "mutatingwebhookconfiguration",
    "mutatingwebhookconfigurations",
    "validatingwebhookconfiguration",
    "validatingwebhookconfigurations",
];

pub(super) fn check(cx: &mut Ctx<'_>) {
    let Some((file, csv)) = cx.bundle.csv() else {
        return;
    };
    let file: &Path = file;
    deployments(cx, file, csv);
    webhooks(cx, file, csv);
    conversion(cx, file, csv);
}

fn deployments(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let mut seen = BTreeSet::new();
    for (i, d) in list_at(csv, &["spec", "install", "spec", "deployments"])
        .iter()
        .enumerate()
    {
        let Some(name) = str_at(d, &["name"]) else {
            continue; // required by the CSV schema; not this group's concern
        };
        let path = format!("spec.install.spec.deployments[{i}].name");
        let pos = pos_at(d, &["name"]);
        if !seen.insert(name) {
            cx.push(
                &DUPLICATE_DEPLOYMENT,
                format!(
                    "cluster service version contains duplicate strategy deployment spec {name:?}"
                ),
                file,
                pos,
                Some(&path),
            )
            .help = Some(
                "give each deployment its own name; OLM would install only one of them".into(),
            );
        }
        let p = super::subdomain_problems(name);
        if !p.is_empty() {
            cx.push(
                &DEPLOYMENT_NAME,
                format!(
                    "invalid cluster service version strategy deployment name {name:?}: {}",
                    p.join(", ")
                ),
                file,
                pos,
                Some(&path),
            )
            .help = Some("the name becomes the Deployment's metadata.name: use lowercase letters, digits, '-' and '.'".into());
        }
    }
}

fn strings<'a>(n: &'a Node, key: &str) -> impl Iterator<Item = (usize, &'a Node, &'a str)> {
    list_at(n, &[key])
        .iter()
        .enumerate()
        .filter_map(|(i, x)| x.as_str().map(|s| (i, x, s)))
}

fn webhooks(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for (i, w) in list_at(csv, &["spec", "webhookdefinitions"])
        .iter()
        .enumerate()
    {
        let base = format!("spec.webhookdefinitions[{i}]");
        let ty = str_at(w, &["type"]).unwrap_or("");
        let name = str_at(w, &["generateName"]).unwrap_or("");
        let known = [VALIDATING, MUTATING, CONVERSION].contains(&ty);
        if !known {
            let msg = if ty.is_empty() {
                format!("webhook {name:?} has no type")
            } else {
                format!("webhook {name:?} has unknown type {ty:?}")
            };
            cx.push(
                &WEBHOOK_TYPE,
                msg,
                file,
                pos_at(w, &["type"]),
                Some(&format!("{base}.type")),
            )
            .help = Some(format!(
                "set type to {VALIDATING}, {MUTATING} or {CONVERSION}; the API server rejects the CSV otherwise"
            ));
        }
        // Names: unique per type, DNS-1123; admission webhook names must be fully qualified.
        let npath = format!("{base}.generateName");
        let npos = pos_at(w, &["generateName"]);
        if !name.is_empty() && !seen.insert((ty, name)) {
            cx.push(
                &DUPLICATE_WEBHOOK,
                format!("duplicate webhook {name:?} of type {ty:?}"),
                file,
                npos,
                Some(&npath),
            )
            .help = Some("give each webhook of a type its own generateName".into());
        }
        let mut problems: Vec<&str> = super::subdomain_problems(name);
        let admission = ty == VALIDATING || ty == MUTATING;
        if admission && problems.is_empty() && name.split('.').count() < 3 {
            problems.push("should be a domain with at least three segments separated by dots (the API server requires a fully qualified webhook name)");
        }
        if !problems.is_empty() {
            let msg = if name.is_empty() {
                "webhook has no generateName".to_string()
            } else {
                format!(
                    "webhook of type {ty:?} has invalid name {name:?}: {}",
                    problems.join(", ")
                )
            };
            cx.push(&WEBHOOK_NAME, msg, file, npos, Some(&npath)).help = Some(
                "use a lowercase DNS name such as vwidget.demo.io (OLM uses it as the webhook's name)"
                    .into(),
            );
        }
        // containerPort: 1-65535 (CSV schema; absent means 443).
        if let Some(p) = field(w, &["containerPort"]) {
            let ok = matches!(p.value, Value::Number(n) if n.fract() == 0.0 && (1.0..=65535.0).contains(&n));
            if !ok {
                cx.push(
                    &WEBHOOK_PORT,
                    format!(
                        "webhook {name:?} has containerPort {}, not a port number (1-65535)",
                        p.to_json()
                    ),
                    file,
                    p.pos,
                    Some(&format!("{base}.containerPort")),
                )
                .help = Some(
                    "set the port the webhook server listens on, or leave it out for 443".into(),
                );
            }
        }
        review(cx, file, w, &base, name, admission);
        if admission {
            rules(cx, file, w, &base, name);
        }
    }
}

/// sideEffects and admissionReviewVersions: required by the CSV schema; admission webhooks
/// must use the admissionregistration/v1 values, and OLM passes admissionReviewVersions on as
/// a conversion webhook's conversionReviewVersions, which must also name v1 or v1beta1.
fn review(cx: &mut Ctx<'_>, file: &Path, w: &Node, base: &str, name: &str, admission: bool) {
    match field(w, &["sideEffects"]) {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => {
            cx.push(
                &WEBHOOK_REVIEW,
                format!("webhook {name:?} has no sideEffects; the CSV schema requires it"),
                file,
                w.pos,
                Some(&format!("{base}.sideEffects")),
            )
            .help = Some("add sideEffects: None (or NoneOnDryRun)".into());
        }
        Some(s) => {
            let v = s.as_str().unwrap_or("");
            if admission && v != "None" && v != "NoneOnDryRun" {
                cx.push(
                    &WEBHOOK_REVIEW,
                    format!(
                        "webhook {name:?} has sideEffects {}; admissionregistration/v1 accepts only None and NoneOnDryRun",
                        s.to_json()
                    ),
                    file,
                    s.pos,
                    Some(&format!("{base}.sideEffects")),
                )
                .help = Some("use None, or NoneOnDryRun if the webhook has side effects it skips on dry runs".into());
            }
        }
    }
    let path = format!("{base}.admissionReviewVersions");
    match field(w, &["admissionReviewVersions"]) {
        None
        | Some(Node {
            value: Value::Null, ..
        }) => {
            cx.push(
                &WEBHOOK_REVIEW,
                format!(
                    "webhook {name:?} has no admissionReviewVersions; the CSV schema requires it"
                ),
                file,
                w.pos,
                Some(&path),
            )
            .help = Some("add admissionReviewVersions: [v1]".into());
        }
        Some(v) => {
            let ok =
                strings(w, "admissionReviewVersions").any(|(_, _, s)| s == "v1" || s == "v1beta1");
            if !ok {
                cx.push(
                    &WEBHOOK_REVIEW,
                    format!(
                        "webhook {name:?} has admissionReviewVersions {}; it must include v1 or v1beta1",
                        v.to_json()
                    ),
                    file,
                    v.pos,
                    Some(&path),
                )
                .help = Some("list the review versions the webhook server understands, e.g. [v1]".into());
            }
        }
    }
}

/// OLM v0 `ValidWebhookRules` and OLM v1 `CheckWebhookRules`, together: v0 forbids
/// operators.coreos.com, v1 olm.operatorframework.io; v0 compares resources with the kind
/// names, v1 with lowercase resource names.
fn rules(cx: &mut Ctx<'_>, file: &Path, w: &Node, base: &str, name: &str) {
    for (r, rule) in list_at(w, &["rules"]).iter().enumerate() {
        for (g, gnode, group) in strings(rule, "apiGroups") {
            let path = format!("{base}.rules[{r}].apiGroups[{g}]");
            if FORBIDDEN_GROUPS.contains(&group) {
                let what = if group == "*" {
                    "all API groups (`*`), which include OLM's own".to_string()
                } else {
                    format!("the OLM API group {group}")
                };
                cx.push(
                    &WEBHOOK_RULE_GROUP,
                    format!("webhook {name:?} contains forbidden rule: admission webhook rules cannot include {what}; OLM fails the install"),
                    file,
                    gnode.pos,
                    Some(&path),
                )
                .help = Some("list the API groups the webhook serves explicitly".into());
            }
            if group == "admissionregistration.k8s.io" {
                for (k, rnode, res) in strings(rule, "resources") {
                    let base_res = res.split('/').next().unwrap_or(res).to_ascii_lowercase();
                    if WEBHOOK_RESOURCES.contains(&base_res.as_str()) {
                        cx.push(
                            &WEBHOOK_RULE_WEBHOOKS,
                            format!("webhook {name:?} contains forbidden rule: admission webhook rules cannot include resource {res:?} of admissionregistration.k8s.io (MutatingWebhookConfiguration or ValidatingWebhookConfiguration); OLM fails the install"),
                            file,
                            rnode.pos,
                            Some(&format!("{base}.rules[{r}].resources[{k}]")),
                        )
                        .help = Some("webhooks must not intercept webhook configurations; drop the resource from the rule".into());
                    }
                }
            }
        }
    }
}

fn conversion(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let owned: BTreeSet<&str> = list_at(csv, &["spec", "customresourcedefinitions", "owned"])
        .iter()
        .filter_map(|d| str_at(d, &["name"]))
        .collect();
    // CRD name -> first conversion webhook naming it.
    let mut claimed: BTreeMap<&str, &str> = BTreeMap::new();
    for (i, w) in list_at(csv, &["spec", "webhookdefinitions"])
        .iter()
        .enumerate()
    {
        if str_at(w, &["type"]) != Some(CONVERSION) {
            continue;
        }
        let name = str_at(w, &["generateName"]).unwrap_or("");
        let base = format!("spec.webhookdefinitions[{i}]");
        let crds: Vec<(usize, &Node, &str)> = strings(w, "conversionCRDs").collect();
        if crds.is_empty() {
            cx.push(
                &CONVERSION_NO_CRDS,
                format!("conversion webhook {name:?} must have at least one CRD specified"),
                file,
                w.pos,
                Some(&format!("{base}.conversionCRDs")),
            )
            .help = Some(
                "list the owned CRDs it converts in conversionCRDs, or remove the webhook".into(),
            );
        }
        for (k, node, crd) in crds {
            let path = format!("{base}.conversionCRDs[{k}]");
            if !owned.contains(crd) {
                cx.push(
                    &CONVERSION_CRD_NOT_OWNED,
                    format!("conversion webhook {name:?} references CRD {crd:?}, which the CSV does not own"),
                    file,
                    node.pos,
                    Some(&path),
                )
                .help = Some("a conversion webhook can only serve CRDs of its own bundle: add the CRD to spec.customresourcedefinitions.owned or drop it here".into());
            }
            if let Some(first) = claimed.get(crd) {
                cx.push(
                    &CONVERSION_CRD_SHARED,
                    format!(
                        "conversion webhooks {first:?} and {name:?} reference the same CRD {crd:?}"
                    ),
                    file,
                    node.pos,
                    Some(&path),
                )
                .help = Some(
                    "a CRD has one conversion webhook: keep it in one webhook definition".into(),
                );
            } else {
                claimed.insert(crd, name);
            }
        }
    }
    if claimed.is_empty() {
        return;
    }
    for (path, doc) in cx.bundle.first_docs() {
        if kind_of(doc) != Some("CustomResourceDefinition") {
            continue;
        }
        let Some(crd) = str_at(doc, &["metadata", "name"]) else {
            continue;
        };
        let Some(webhook) = claimed.get(crd) else {
            continue;
        };
        let v1beta1 = str_at(doc, &["apiVersion"]) == Some("apiextensions.k8s.io/v1beta1");
        let (keeps, pos, why) = match field(doc, &["spec", "preserveUnknownFields"]) {
            Some(n) => (
                matches!(n.value, Value::Bool(true)),
                n.pos,
                "preserveUnknownFields is true",
            ),
            None => (
                v1beta1,
                doc.pos,
                "preserveUnknownFields is not set, and apiextensions.k8s.io/v1beta1 defaults it to true",
            ),
        };
        // At the key: a block mapping's own position is its first entry's line.
        let stanza = match field(doc, &["spec"]).map(|s| &s.value) {
            Some(Value::Map(es)) => es.iter().rev().find(|e| e.key == "conversion"),
            _ => None,
        };
        if let Some(conv) = stanza.filter(|e| !matches!(e.value.value, Value::Null)) {
            cx.push(
                &CONVERSION_STANZA,
                format!("CRD {crd:?} carries spec.conversion, but the CSV's ConversionWebhook {webhook:?} lists it in conversionCRDs: OLM applies the CRD with this stanza as it is and overwrites it only once the operator's deployment is installed; remove spec.conversion from the CRD, OLM writes it from the CSV's ConversionWebhook definition"),
                path,
                conv.key_pos,
                Some("spec.conversion"),
            )
            .help = Some("remove spec.conversion from the CRD; OLM writes it from the CSV's ConversionWebhook definition (`olmctl bundle generate` leaves it out)".into());
        }
        if keeps {
            cx.push(
                &CONVERSION_PRESERVE_UNKNOWN,
                format!("CRD {crd:?} is converted by webhook {webhook:?} but {why}: crd.Spec.PreserveUnknownFields must be false to let API Server call webhook to do the conversion"),
                path,
                pos,
                Some("spec.preserveUnknownFields"),
            )
            .help = Some("set spec.preserveUnknownFields: false (and give every version a structural schema)".into());
        }
    }
}
