//! ClusterServiceVersion rules (CSV codes) and the CSV-based bundle rules (release naming,
//! related images).

use std::collections::BTreeSet;
use std::path::Path;

use super::Ctx;
use super::codes::*;
use crate::bundle::csv_types::{api_services, crd_descriptions};
use crate::bundle::load::{field, keys, list_at, pos_at, str_at};
use crate::bundle::name_problems;
use crate::fbc::node::{Node, Value};

/// Reserved annotation keys OLM reads with this exact case.
const RESERVED: [&str; 5] = [
    "olm.operatorGroup",
    "olm.operatorNamespace",
    "olm.targetNamespaces",
    "olm.providedAPIs",
    "olm.skipRange",
];

const INSTALL_MODE_TYPES: [&str; 4] = [
    "OwnNamespace",
    "SingleNamespace",
    "MultiNamespace",
    "AllNamespaces",
];

pub(super) fn check(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    // Required fields (api's reflective walk, with JSON paths).
    for (path, what) in [
        (&["apiVersion"][..], "apiVersion"),
        (&["kind"][..], "kind"),
        (&["metadata", "name"][..], "metadata.name"),
        (&["spec", "displayName"][..], "spec.displayName"),
        (&["spec", "install"][..], "spec.install"),
        (
            &["spec", "install", "strategy"][..],
            "spec.install.strategy",
        ),
    ] {
        let missing = match field(csv, path) {
            None => true,
            Some(n) => matches!(&n.value, Value::Null) || n.as_str() == Some(""),
        };
        if missing {
            cx.push(
                &REQUIRED_FIELD,
                format!("required field {what} is missing"),
                file,
                csv.pos,
                Some(what),
            );
        }
    }
    let name = str_at(csv, &["metadata", "name"]).unwrap_or("");
    if !name.is_empty() {
        let p = name_problems(name);
        if !p.is_empty() {
            cx.push(
                &INVALID_NAME,
                format!("metadata.name {name:?} is invalid: {}", p.join(", ")),
                file,
                pos_at(csv, &["metadata", "name"]),
                Some("metadata.name"),
            );
        }
    }
    if let Some(r) = str_at(csv, &["spec", "replaces"]).filter(|r| !r.is_empty()) {
        let p = name_problems(r);
        if !p.is_empty() {
            cx.push(
                &INVALID_NAME,
                format!("spec.replaces {r:?} is invalid: {}", p.join(", ")),
                file,
                pos_at(csv, &["spec", "replaces"]),
                Some("spec.replaces"),
            );
        }
    }
    version(cx, file, csv, name);
    annotations(cx, file, csv);
    install_modes(cx, file, csv);
    min_kube(cx, file, csv);
    install(cx, file, csv);
    for owned in [true, false] {
        let section = if owned { "owned" } else { "required" };
        for (i, d) in list_at(csv, &["spec", "customresourcedefinitions", section])
            .iter()
            .enumerate()
        {
            let n = str_at(d, &["name"]).unwrap_or("");
            if !n.contains('.') {
                cx.push(
                    &CRD_DESCRIPTION_NAME,
                    format!("CRD name {n:?} is not <plural>.<group>"),
                    file,
                    pos_at(d, &["name"]),
                    Some(&format!(
                        "spec.customresourcedefinitions.{section}[{i}].name"
                    )),
                );
            }
        }
    }
    examples(cx, file, csv);
    related_images(cx, file, csv);
}

fn version(cx: &mut Ctx<'_>, file: &Path, csv: &Node, name: &str) {
    let pos = pos_at(csv, &["spec", "version"]);
    match str_at(csv, &["spec", "version"]) {
        None | Some("") => {
            cx.push(
                &VERSION,
                "spec.version is missing (or not a string)",
                file,
                pos,
                Some("spec.version"),
            );
        }
        Some(v) => match semver::Version::parse(v) {
            Err(e) => {
                cx.push(
                    &VERSION,
                    format!("spec.version {v:?} is not a semantic version: {e}"),
                    file,
                    pos,
                    Some("spec.version"),
                );
            }
            Ok(_) => {
                if !name.is_empty() && !name.contains(v) {
                    cx.push(
                        &VERSION_NAME_MISMATCH,
                        format!("metadata.name {name:?} does not contain spec.version {v}"),
                        file,
                        pos,
                        Some("spec.version"),
                    );
                }
                if let Some(rel) = str_at(csv, &["spec", "release"]).filter(|r| !r.is_empty())
                    && let Some(pkg) = cx.bundle.annotation(keys::PACKAGE)
                {
                    let want = format!("{pkg}-v{v}-{rel}");
                    if name != want {
                        cx.push(
                            &RELEASE_NAME,
                            format!("bundle name with release versioning {name:?} does not match expected name {want:?}"),
                            file,
                            pos_at(csv, &["metadata", "name"]),
                            Some("metadata.name"),
                        );
                    }
                }
            }
        },
    }
}

fn annotations(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let Some(Node {
        value: Value::Map(entries),
        ..
    }) = field(csv, &["metadata", "annotations"])
    else {
        return;
    };
    for e in entries {
        if let Some(r) = RESERVED
            .iter()
            .find(|r| r.eq_ignore_ascii_case(&e.key) && **r != e.key)
        {
            cx.push(
                &ANNOTATION_CASE,
                format!(
                    "annotation {} uses wrong case and should be {r}; OLM ignores it",
                    e.key
                ),
                file,
                e.key_pos,
                Some(&format!("metadata.annotations[\"{}\"]", e.key)),
            );
        }
        if e.key == "olm.properties" {
            cx.push(
                &PROPERTIES_ANNOTATION,
                "found olm.properties annotation, please define these properties in metadata/properties.yaml instead",
                file,
                e.key_pos,
                Some("metadata.annotations[\"olm.properties\"]"),
            );
        }
        if e.key == "olm.skipRange"
            && let Some(r) = e.value.as_str()
            && let Err(err) = crate::range::Range::parse(r)
        {
            cx.push(
                &SKIP_RANGE,
                format!("olm.skipRange {r:?} does not parse: {err}"),
                file,
                e.value.pos,
                Some("metadata.annotations[\"olm.skipRange\"]"),
            );
        }
    }
}

fn install_modes(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let modes = list_at(csv, &["spec", "installModes"]);
    let pos = pos_at(csv, &["spec", "installModes"]);
    if modes.is_empty() {
        cx.push(
            &INSTALL_MODES,
            "install modes not found",
            file,
            pos,
            Some("spec.installModes"),
        );
        return;
    }
    let mut seen = BTreeSet::new();
    let mut supported = Vec::new();
    for (i, m) in modes.iter().enumerate() {
        let t = str_at(m, &["type"]).unwrap_or("");
        let path = format!("spec.installModes[{i}].type");
        if !INSTALL_MODE_TYPES.contains(&t) {
            cx.push(
                &INSTALL_MODES,
                format!(
                    "unknown install mode type {t:?} (expected one of {})",
                    INSTALL_MODE_TYPES.join(", ")
                ),
                file,
                m.pos,
                Some(&path),
            );
        } else if !seen.insert(t) {
            cx.push(
                &INSTALL_MODES,
                format!("duplicate install mode {t}"),
                file,
                m.pos,
                Some(&path),
            );
        }
        if matches!(
            field(m, &["supported"]).map(|n| &n.value),
            Some(Value::Bool(true))
        ) {
            supported.push(t);
        }
    }
    if supported.is_empty() {
        cx.push(
            &INSTALL_MODES,
            "none of InstallModeTypes are supported",
            file,
            pos,
            Some("spec.installModes"),
        );
    }
    let conversion = list_at(csv, &["spec", "webhookdefinitions"])
        .iter()
        .any(|w| !list_at(w, &["conversionCRDs"]).is_empty());
    if conversion && supported != ["AllNamespaces"] {
        cx.push(
            &CONVERSION_INSTALL_MODES,
            "only AllNamespaces InstallModeType is supported when conversionCRDs is present",
            file,
            pos,
            Some("spec.installModes"),
        )
        .help = Some(
            "a conversion webhook serves the CRD cluster-wide: support only AllNamespaces".into(),
        );
    }
}

fn min_kube(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    match str_at(csv, &["spec", "minKubeVersion"]).map(str::trim) {
        None | Some("") => {
            cx.push(
                &MIN_KUBE_MISSING,
                "spec.minKubeVersion is not set: the operator can be installed on any cluster version",
                file,
                csv.pos,
                Some("spec.minKubeVersion"),
            );
        }
        Some(v) => {
            if semver::Version::parse(v).is_err() {
                let pos = pos_at(csv, &["spec", "minKubeVersion"]);
                cx.push(
                    &MIN_KUBE_INVALID,
                    format!("spec.minKubeVersion has an invalid value: {v} (write it like 1.25.0)"),
                    file,
                    pos,
                    Some("spec.minKubeVersion"),
                );
            }
        }
    }
}

fn install(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let Some(strategy) = str_at(csv, &["spec", "install", "strategy"]).filter(|s| !s.is_empty())
    else {
        return; // reported as a missing required field
    };
    let pos = pos_at(csv, &["spec", "install", "strategy"]);
    if strategy != "deployment" {
        cx.push(
            &INSTALL_STRATEGY,
            format!("install strategy {strategy:?} is not supported; OLM only knows `deployment`"),
            file,
            pos,
            Some("spec.install.strategy"),
        );
        return;
    }
    let deployments = list_at(csv, &["spec", "install", "spec", "deployments"]);
    if deployments.is_empty() {
        cx.push(
            &INSTALL_STRATEGY,
            "the install strategy lists no deployments",
            file,
            pos,
            Some("spec.install.spec.deployments"),
        );
    }
    let names: BTreeSet<&str> = deployments
        .iter()
        .filter_map(|d| str_at(d, &["name"]))
        .collect();
    let webhooks = list_at(csv, &["spec", "webhookdefinitions"])
        .iter()
        .enumerate()
        .map(|(i, w)| (format!("spec.webhookdefinitions[{i}].deploymentName"), w));
    let api_services = list_at(csv, &["spec", "apiservicedefinitions", "owned"])
        .iter()
        .enumerate()
        .map(|(i, w)| {
            (
                format!("spec.apiservicedefinitions.owned[{i}].deploymentName"),
                w,
            )
        });
    for (path, w) in webhooks.chain(api_services) {
        let Some(d) = str_at(w, &["deploymentName"]) else {
            continue;
        };
        if !names.contains(d) {
            cx.push(
                &WEBHOOK_DEPLOYMENT,
                format!(
                    "deploymentName {d:?} is not a deployment of the install strategy ({})",
                    names.iter().copied().collect::<Vec<_>>().join(", ")
                ),
                file,
                pos_at(w, &["deploymentName"]),
                Some(&path),
            );
        }
    }
}

/// `alm-examples`: JSON, a list of objects, each of a provided API; every provided API shown.
fn examples(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    let anns = field(csv, &["metadata", "annotations"]);
    let alm = anns.and_then(|a| field(a, &["alm-examples"]));
    let olm = anns.and_then(|a| field(a, &["olm.examples"]));
    let ex = match (alm, olm) {
        (None, None) => {
            cx.push(
                &NO_EXAMPLES,
                "example annotations not found: add alm-examples with one object per provided API",
                file,
                csv.pos,
                Some("metadata.annotations[\"alm-examples\"]"),
            );
            return;
        }
        (Some(a), Some(_)) => {
            cx.push(
                &NO_EXAMPLES,
                "both `alm-examples` and `olm.examples` are present; only alm-examples is used",
                file,
                a.pos,
                Some("metadata.annotations[\"olm.examples\"]"),
            );
            a
        }
        (Some(a), None) | (None, Some(a)) => a,
    };
    let path = "metadata.annotations[\"alm-examples\"]";
    let Some(text) = ex.as_str() else {
        cx.push(
            &BAD_EXAMPLES,
            "alm-examples is not a string",
            file,
            ex.pos,
            Some(path),
        );
        return;
    };
    // Go's YAML-or-JSON decoder reads an empty annotation as an empty list (io.EOF), so every
    // provided API lacks an example.
    let mut docs = Vec::new();
    if !text.trim().is_empty()
        && let Err(e) = crate::fbc::json::parse_stream(text, |d| docs.push(d))
    {
        cx.push(
            &BAD_EXAMPLES,
            format!(
                "invalid example: {} (at line {}, column {} of the JSON)",
                e.message, e.line, e.column
            ),
            file,
            ex.pos,
            Some(path),
        );
        return;
    }
    let items: &[Node] = match docs.first().map(|d| &d.value) {
        None => &[],
        Some(Value::Seq(items)) if docs.len() == 1 => items,
        _ => {
            cx.push(
                &BAD_EXAMPLES,
                "error decoding example CustomResource: alm-examples must be one JSON list of objects",
                file,
                ex.pos,
                Some(path),
            );
            return;
        }
    };
    let mut provided: BTreeSet<(String, String, String)> = crd_descriptions(csv, true)
        .into_iter()
        .map(|(_, g, v, k)| (g, v, k))
        .collect();
    provided.extend(
        api_services(csv, true)
            .into_iter()
            .map(|(_, g, v, k)| (g, v, k)),
    );
    let mut shown = BTreeSet::new();
    for (i, it) in items.iter().enumerate() {
        let api = str_at(it, &["apiVersion"]).unwrap_or("");
        let kind = str_at(it, &["kind"]).unwrap_or("").to_string();
        let (g, v) = api.split_once('/').unwrap_or(("", api));
        let key = (g.to_string(), v.to_string(), kind.clone());
        if !matches!(it.value, Value::Map(_)) {
            cx.push(
                &BAD_EXAMPLES,
                format!("error decoding example CustomResource: item {i} is not an object"),
                file,
                ex.pos,
                Some(path),
            );
        } else if !provided.contains(&key) {
            cx.push(
                &EXAMPLE_NOT_PROVIDED,
                format!("example must have a provided API: {api}, Kind={kind} (item {i})"),
                file,
                ex.pos,
                Some(path),
            );
        }
        shown.insert(key);
    }
    for (g, v, k) in provided.difference(&shown) {
        cx.push(
            &API_WITHOUT_EXAMPLE,
            format!("provided API should have an example annotation: {g}/{v}, Kind={k}"),
            file,
            ex.pos,
            Some(path),
        );
    }
}

fn related_images(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    for (i, r) in list_at(csv, &["spec", "relatedImages"]).iter().enumerate() {
        let path = format!("spec.relatedImages[{i}].image");
        let pos = pos_at(r, &["image"]);
        match str_at(r, &["image"]) {
            None | Some("") => {
                cx.push(
                    &RELATED_IMAGE,
                    format!("relatedImages[{i}] has an empty image field"),
                    file,
                    pos,
                    Some(&path),
                );
            }
            Some(img) => {
                if let Err(e) = crate::imageref::validate(img) {
                    cx.push(
                        &RELATED_IMAGE,
                        format!("relatedImages[{i}] has an invalid image pullspec {img:?}: {e}"),
                        file,
                        pos,
                        Some(&path),
                    );
                }
            }
        }
    }
}
