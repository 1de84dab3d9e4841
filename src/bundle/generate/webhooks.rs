//! CSV `webhookdefinitions` from Mutating/ValidatingWebhookConfigurations and from CRD
//! conversion webhooks. OLM creates the webhook configurations, the Service
//! (`<deployment>-service`) and the serving certificate itself, so the CSV says only which
//! deployment serves each webhook, on which port and path.
//!
//! Each webhook's `clientConfig.service` names a Service in the input; the Service's selector
//! picks the deployment whose pod template labels it matches, and the Service port that equals
//! the webhook port gives `containerPort` (the Service port) and `targetPort`. Conversion
//! webhooks are grouped per (deployment, port, target port, path) into one `ConversionWebhook`
//! listing its `conversionCRDs`. The result is sorted by `generateName`, then type.

use std::collections::BTreeMap;

use super::collect::{Inputs, Obj};
use crate::bundle::load::{BundleError, field, list_at, str_at};
use crate::bundle::tree::{is_blank, num, obj, s, seq};
use crate::fbc::node::{Node, Value};

/// (deployment, container port, target port JSON, path): where a conversion webhook is served.
type GroupKey = (String, u64, String, String);

/// Where a webhook is served.
struct Target {
    deployment: String,
    container_port: f64,
    target_port: Option<Node>,
    path: Option<String>,
}

fn port_of(n: Option<&Node>) -> Option<f64> {
    match n.map(|n| &n.value) {
        Some(Value::Number(p)) => Some(*p),
        _ => None,
    }
}

/// Resolves a `service` reference (`{name, namespace, path, port}`) of `owner`.
fn resolve(
    inputs: &Inputs,
    owner: &Obj,
    what: &str,
    service: &Node,
) -> Result<Target, BundleError> {
    let name = str_at(service, &["name"]).unwrap_or("");
    let port = port_of(field(service, &["port"])).unwrap_or(443.0);
    let path = str_at(service, &["path"]).map(String::from);
    let svc = inputs.services.iter().find(|s| s.name() == name);
    let Some(svc) = svc else {
        return Err(owner.error(format!(
            "{what} uses Service \"{name}\", which is not in the input; add the Service that \
             selects the operator's pods so the serving deployment and port can be found"
        )));
    };
    let selector = match field(&svc.doc, &["spec", "selector"]).map(|n| &n.value) {
        Some(Value::Map(entries)) if !entries.is_empty() => entries.clone(),
        _ => Vec::new(),
    };
    let deployment = inputs.deployments.iter().find(|d| {
        !selector.is_empty()
            && selector.iter().all(|e| {
                str_at(&d.doc, &["spec", "template", "metadata", "labels", &e.key])
                    == e.value.as_str()
            })
    });
    let deployment = match deployment {
        Some(d) => d.name().to_string(),
        None => {
            let guess = name.strip_suffix("-service").unwrap_or(name);
            if inputs.deployments.iter().any(|d| d.name() == guess) {
                guess.to_string()
            } else {
                return Err(svc.error(format!(
                    "Service \"{name}\" (used by {what}) selects no Deployment of the input; its \
                     spec.selector must match the operator Deployment's pod template labels"
                )));
            }
        }
    };
    let sp = list_at(&svc.doc, &["spec", "ports"])
        .iter()
        .find(|p| port_of(field(p, &["port"])) == Some(port));
    let target_port = sp
        .and_then(|p| field(p, &["targetPort"]))
        .filter(|t| !is_blank(t))
        .cloned();
    Ok(Target {
        deployment,
        container_port: port,
        target_port,
        path,
    })
}

fn served_at(def: &mut Vec<(&str, Node)>, t: &Target) {
    def.push(("deploymentName", s(&t.deployment)));
    def.push(("containerPort", num(t.container_port)));
    if let Some(tp) = &t.target_port {
        def.push(("targetPort", tp.clone()));
    }
    if let Some(p) = &t.path {
        def.push(("webhookPath", s(p)));
    }
}

/// The webhook definitions the input describes; `base` is the base CSV's list, whose
/// conversion webhook names are kept when they convert the same CRDs. `notes` collects what
/// was changed on the way.
pub fn build(
    inputs: &Inputs,
    base: &[Node],
    notes: &mut Vec<String>,
) -> Result<Vec<Node>, BundleError> {
    let mut defs: Vec<Node> = Vec::new();
    for cfg in &inputs.webhook_configs {
        let ty = if cfg.kind() == "MutatingWebhookConfiguration" {
            "MutatingAdmissionWebhook"
        } else {
            "ValidatingAdmissionWebhook"
        };
        for w in list_at(&cfg.doc, &["webhooks"]) {
            let name = str_at(w, &["name"]).unwrap_or("");
            let what = format!("webhook \"{name}\" of {} \"{}\"", cfg.kind(), cfg.name());
            if name.is_empty() {
                return Err(cfg.error(format!("{what}: the webhook has no name")));
            }
            let Some(service) = field(w, &["clientConfig", "service"]) else {
                return Err(cfg.error(format!(
                    "{what} has no clientConfig.service; OLM serves webhooks only from the \
                     CSV's deployments (a URL webhook cannot be bundled)"
                )));
            };
            let t = resolve(inputs, cfg, &what, service)?;
            let mut def: Vec<(&str, Node)> = vec![("type", s(ty)), ("generateName", s(name))];
            served_at(&mut def, &t);
            let review = field(w, &["admissionReviewVersions"])
                .filter(|n| !is_blank(n))
                .cloned()
                .unwrap_or_else(|| seq(vec![s("v1")]));
            def.push(("admissionReviewVersions", review));
            let side = field(w, &["sideEffects"])
                .filter(|n| !is_blank(n))
                .cloned()
                .unwrap_or_else(|| s("None"));
            def.push(("sideEffects", side));
            for key in [
                "failurePolicy",
                "matchPolicy",
                "objectSelector",
                "rules",
                "timeoutSeconds",
                "reinvocationPolicy",
            ] {
                if key == "reinvocationPolicy" && ty != "MutatingAdmissionWebhook" {
                    continue;
                }
                if let Some(v) = field(w, &[key]).filter(|n| !is_blank(n)) {
                    def.push((key, v.clone()));
                }
            }
            if field(w, &["namespaceSelector"]).is_some_and(|n| !is_blank(n)) {
                notes.push(format!(
                    "{what}: namespaceSelector dropped; OLM sets it from the OperatorGroup"
                ));
            }
            defs.push(obj(def));
        }
    }
    // Conversion webhooks, grouped by where they are served.
    let mut groups: BTreeMap<GroupKey, (Target, Vec<String>, Node)> = BTreeMap::new();
    for crd in &inputs.crds {
        let strategy = str_at(&crd.doc, &["spec", "conversion", "strategy"]).unwrap_or("None");
        if strategy != "Webhook" {
            continue;
        }
        let service = field(
            &crd.doc,
            &["spec", "conversion", "webhook", "clientConfig", "service"],
        )
        .or_else(|| {
            field(
                &crd.doc,
                &["spec", "conversion", "webhookClientConfig", "service"],
            )
        });
        let what = format!("the conversion webhook of CRD \"{}\"", crd.name());
        let Some(service) = service else {
            return Err(crd.error(format!(
                "{what} has no clientConfig.service; OLM serves conversion webhooks only from \
                 the CSV's deployments"
            )));
        };
        let svc_name = str_at(service, &["name"]).unwrap_or("");
        if !inputs.services.iter().any(|s| s.name() == svc_name) {
            // Served by something other than the operator (an operand's webhook, say): OLM
            // leaves such a CRD's conversion settings alone, so the CSV does not describe it.
            notes.push(format!(
                "{what} uses Service \"{svc_name}\", which is not in the input; it is left to \
                 that Service and gets no webhook definition"
            ));
            continue;
        }
        let t = resolve(inputs, crd, &what, service)?;
        let review = field(
            &crd.doc,
            &["spec", "conversion", "webhook", "conversionReviewVersions"],
        )
        .or_else(|| {
            field(
                &crd.doc,
                &["spec", "conversion", "conversionReviewVersions"],
            )
        })
        .filter(|n| !is_blank(n))
        .cloned()
        .unwrap_or_else(|| seq(vec![s("v1")]));
        let key = (
            t.deployment.clone(),
            t.container_port as u64,
            t.target_port
                .as_ref()
                .map(Node::to_json)
                .unwrap_or_default(),
            t.path.clone().unwrap_or_default(),
        );
        groups
            .entry(key)
            .or_insert_with(|| (t, Vec::new(), review))
            .1
            .push(crd.name().to_string());
    }
    for (_, (t, mut crds, review)) in groups {
        crds.sort();
        let kept = base.iter().find_map(|d| {
            let names: Vec<&str> = list_at(d, &["conversionCRDs"])
                .iter()
                .filter_map(Node::as_str)
                .collect();
            let mut names = names;
            names.sort_unstable();
            (str_at(d, &["type"]) == Some("ConversionWebhook") && names == crds)
                .then(|| str_at(d, &["generateName"]).map(String::from))
                .flatten()
        });
        let name = kept.unwrap_or_else(|| conversion_name(&crds));
        let mut def: Vec<(&str, Node)> =
            vec![("type", s("ConversionWebhook")), ("generateName", s(&name))];
        served_at(&mut def, &t);
        def.push(("admissionReviewVersions", review));
        def.push(("sideEffects", s("None")));
        def.push(("conversionCRDs", seq(crds.iter().map(|c| s(c)).collect())));
        defs.push(obj(def));
    }
    defs.sort_by(|a, b| {
        let k = |n: &Node| {
            (
                str_at(n, &["generateName"]).unwrap_or("").to_string(),
                str_at(n, &["type"]).unwrap_or("").to_string(),
            )
        };
        k(a).cmp(&k(b))
    });
    Ok(defs)
}

/// `c<plural>[<plural>...].kb.io` for the CRDs `<plural>.<group>` one webhook converts: the
/// name operator-sdk gives, so webhook names stay the same when a project moves to olmctl.
fn conversion_name(crds: &[String]) -> String {
    let plurals: String = crds
        .iter()
        .map(|c| c.split_once('.').map_or(c.as_str(), |(p, _)| p))
        .collect();
    format!("c{plurals}.kb.io")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversion_names() {
        assert_eq!(
            conversion_name(&["widgets.demo.io".into()]),
            "cwidgets.kb.io"
        );
        assert_eq!(
            conversion_name(&["a.x.io".into(), "b.y.io".into()]),
            "cab.kb.io"
        );
    }
}
