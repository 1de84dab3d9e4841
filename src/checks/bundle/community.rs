//! Community (COM codes), an optional suite: operator-framework/api's (deprecated)
//! `CommunityOperatorValidator`, the community-operators pipeline's rules for bundles that use
//! Kubernetes APIs removed in 1.22 (OpenShift 4.9). Such a bundle must stop OpenShift clusters
//! from upgrading past 4.8 while it is installed (`olm.maxOpenShiftVersion` below 4.9 in the
//! CSV's `olm.properties`), and must not be shipped to OpenShift 4.9 or later (the
//! `com.redhat.openshift.versions` label of the bundle image, read from `index-path`'s
//! Dockerfile). Bundles without such APIs have nothing to check here. Run with `--select
//! community` (or `--select-optional name=community`), with `--optional-values
//! index-path=bundle.Dockerfile`.
//!
//! Differences from upstream:
//! - without `index-path` the label is read from `metadata/annotations.yaml`, where the
//!   community-operators pipeline reads it, and only its absence from both is the warning;
//! - the label is parsed as a label (`key=value`, quotes removed), so `=v4.8` (exactly 4.8) is
//!   understood (upstream splits the line at every `=` and reports it unreadable);
//! - an `index-path` that cannot be read is a usage error of the command (exit 2) rather than a
//!   finding.

use std::path::Path;

use super::Ctx;
use crate::bundle::load::{field, kind_of, str_at};
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::Node;

codes! {
    MAX_OCP_MISSING = "COM001", Error, "The bundle uses APIs removed in Kubernetes 1.22 and its CSV has no olm.maxOpenShiftVersion property (olm.properties annotation) below 4.9.";
    MAX_OCP_INVALID = "COM002", Error, "The CSV's olm.properties annotation is not a JSON list of {type, value}, or its olm.maxOpenShiftVersion value is not a version.";
    MAX_OCP_TOO_HIGH = "COM003", Error, "The bundle uses APIs removed in Kubernetes 1.22 but olm.maxOpenShiftVersion lets OpenShift upgrade to 4.9 or later.";
    OCP_LABEL_UNKNOWN = "COM004", Warning, "The bundle uses APIs removed in Kubernetes 1.22 and neither index-path nor metadata/annotations.yaml gives com.redhat.openshift.versions to check.";
    OCP_LABEL_MISSING = "COM005", Error, "The bundle uses APIs removed in Kubernetes 1.22 and its bundle Dockerfile (index-path) has no com.redhat.openshift.versions label.";
    OCP_LABEL_INVALID = "COM006", Error, "The com.redhat.openshift.versions value is not vX.Y, =vX.Y or vX.Y-vX.Y.";
    OCP_LABEL_TOO_HIGH = "COM007", Error, "The bundle uses APIs removed in Kubernetes 1.22 but com.redhat.openshift.versions ships it to OpenShift 4.9 or later.";
}

/// The OpenShift release that runs Kubernetes 1.22.
const OCP_WITHOUT_V1BETA1: (u64, u64) = (4, 9);
const LABEL: &str = "com.redhat.openshift.versions";
const GUIDE: &str = "https://kubernetes.io/docs/reference/using-api/deprecation-guide/#v1-22";

pub(super) fn check(cx: &mut Ctx<'_>) {
    let bundle = cx.bundle;
    let Some((csv_file, csv)) = bundle.csv() else {
        return;
    };
    // What the bundle ships of the 1.22 removals, as `Kind: "name"`.
    let mut hits: Vec<String> = bundle
        .first_docs()
        .filter_map(|(_, d)| {
            let api = str_at(d, &["apiVersion"])?;
            let kind = kind_of(d)?;
            let r = super::apis::removed(api, kind)?;
            (r.removed_in == (1, 22)).then(|| {
                format!(
                    "{kind} {:?} ({api})",
                    str_at(d, &["metadata", "name"]).unwrap_or("")
                )
            })
        })
        .collect();
    if hits.is_empty() {
        return;
    }
    hits.sort();
    let apis = hits.join(", ");
    max_openshift_version(cx, csv_file, csv, &apis);
    label(cx, &apis);
}

/// `major.minor` of a tolerant version (`v4.8`, `4.8`, `4.8.1`).
fn major_minor(s: &str) -> Option<(u64, u64)> {
    let s = s.trim().trim_start_matches('v');
    let nums: Vec<u64> = s
        .split('.')
        .map(|p| p.parse().ok())
        .collect::<Option<Vec<u64>>>()?;
    match nums.as_slice() {
        [major] => Some((*major, 0)),
        [major, minor] | [major, minor, _] => Some((*major, *minor)),
        _ => None,
    }
}

fn max_openshift_version(cx: &mut Ctx<'_>, file: &Path, csv: &Node, apis: &str) {
    let props = field(csv, &["metadata", "annotations", "olm.properties"]);
    let path = "metadata.annotations[\"olm.properties\"]";
    let pos = props.map_or(csv.pos, |p| p.pos);
    let help = "add the annotation olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.8\"}]', or migrate the APIs";
    let text = props.and_then(Node::as_str).unwrap_or("");
    if text.trim().is_empty() {
        cx.push(
            &MAX_OCP_MISSING,
            format!("csv.Annotations not specified olm.maxOpenShiftVersion for an OCP version < 4.9: this bundle uses APIs removed in Kubernetes 1.22 ({GUIDE}): {apis}"),
            file,
            pos,
            Some(path),
        )
        .help = Some(help.into());
        return;
    }
    let list: Vec<serde_json::Value> = match serde_json::from_str(text) {
        Ok(serde_json::Value::Array(l)) => l,
        _ => {
            cx.push(
                &MAX_OCP_INVALID,
                format!("csv.Annotations has an invalid value specified for olm.properties ({text}): it must be a JSON list such as [{{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.8\"}}]"),
                file,
                pos,
                Some(path),
            );
            return;
        }
    };
    let Some(value) = list
        .iter()
        .find(|p| p["type"] == "olm.maxOpenShiftVersion")
        .map(|p| match &p["value"] {
            serde_json::Value::String(s) => s.clone(),
            v => v.to_string(),
        })
    else {
        cx.push(
            &MAX_OCP_MISSING,
            format!("csv.Annotations.olm.properties has no olm.maxOpenShiftVersion with an OCP version < 4.9, required for a bundle that uses APIs removed in Kubernetes 1.22 ({GUIDE}): {apis}"),
            file,
            pos,
            Some(path),
        )
        .help = Some(help.into());
        return;
    };
    match major_minor(&value) {
        None => {
            cx.push(
                &MAX_OCP_INVALID,
                format!("csv.Annotations.olm.properties has an invalid value: olm.maxOpenShiftVersion {value:?} is not a version"),
                file,
                pos,
                Some(path),
            );
        }
        Some(v) if v >= OCP_WITHOUT_V1BETA1 => {
            cx.push(
                &MAX_OCP_TOO_HIGH,
                format!("csv.Annotations.olm.properties olm.maxOpenShiftVersion {value} is >= 4.9, where the APIs this bundle uses are removed ({GUIDE}): {apis}"),
                file,
                pos,
                Some(path),
            )
            .help = Some("set olm.maxOpenShiftVersion to 4.8, or migrate the APIs".into());
        }
        Some(_) => {}
    }
}

/// Where the label comes from: the Dockerfile (`index-path`), else `annotations.yaml`.
fn label(cx: &mut Ctx<'_>, apis: &str) {
    let bundle = cx.bundle;
    let (file, line, value) = match &cx.opts.index_file {
        Some((path, text)) => {
            let found = text.lines().enumerate().find_map(|(i, l)| {
                let at = l.find(LABEL)?;
                Some((i, l[at + LABEL.len()..].to_string()))
            });
            let Some((i, rest)) = found else {
                cx.push(
                    &OCP_LABEL_MISSING,
                    format!("this bundle uses APIs removed in Kubernetes 1.22 ({GUIDE}): {apis}; {} has no {LABEL} label to keep it off OpenShift 4.9 and later", path.display()),
                    path,
                    crate::fbc::node::Pos::new(1, 1),
                    None,
                )
                .help = Some(format!("add LABEL {LABEL}=\"v4.6-v4.8\""));
                return;
            };
            // `LABEL key=value` (or the legacy `LABEL key value`).
            let rest = rest.trim_start();
            let value = rest.strip_prefix('=').unwrap_or(rest);
            let value = value.split_whitespace().next().unwrap_or("");
            (path.clone(), i as u32 + 1, value.to_string())
        }
        None => {
            let Some(a) = bundle.annotations.as_ref() else {
                return;
            };
            match field(&a.node, &[LABEL]).and_then(Node::as_str) {
                Some(v) => (
                    a.path.to_path_buf(),
                    field(&a.node, &[LABEL]).map_or(1, |n| n.pos.line),
                    v.to_string(),
                ),
                None => {
                    cx.push(
                        &OCP_LABEL_UNKNOWN,
                        format!("this bundle uses APIs removed in Kubernetes 1.22 ({GUIDE}): {apis}; pass --optional-values index-path=bundle.Dockerfile, or set {LABEL} in metadata/annotations.yaml, so that the OpenShift versions it ships to can be checked"),
                        &a.path,
                        a.node.pos,
                        None,
                    );
                    return;
                }
            }
        }
    };
    let v = value.trim().trim_matches(|c| c == '"' || c == '\'');
    let pos = crate::fbc::node::Pos::new(line, 1);
    // `=vX.Y` exactly; `vX.Y-vX.Y` a range; `vX.Y` that release and every later one.
    let upper = if let Some(exact) = v.strip_prefix('=') {
        major_minor(exact).map(Some)
    } else if let Some((lo, hi)) = v.split_once('-') {
        major_minor(lo).and(major_minor(hi)).map(Some)
    } else {
        major_minor(v).map(|_| None)
    };
    match upper {
        None => {
            cx.push(
                &OCP_LABEL_INVALID,
                format!("{LABEL} value {v:?} is not vX.Y, =vX.Y or vX.Y-vX.Y"),
                &file,
                pos,
                None,
            );
        }
        Some(u) if u.is_none_or(|u| u >= OCP_WITHOUT_V1BETA1) => {
            cx.push(
                &OCP_LABEL_TOO_HIGH,
                format!("this bundle uses APIs removed in Kubernetes 1.22 ({GUIDE}): {apis}; {LABEL}={v} ships it to OpenShift 4.9 or later"),
                &file,
                pos,
                None,
            )
            .help = Some(format!("use a range that ends before 4.9, e.g. {LABEL}='v4.6-v4.8', or migrate the APIs"));
        }
        Some(_) => {}
    }
}
