//! Multiple architectures (ARC codes), an optional suite: operator-framework/api's
//! `MultipleArchitecturesValidator`. Every image of the CSV (its deployments' containers and
//! `spec.relatedImages`) is looked up in its registry (our OCI client, with the usual auth;
//! no container tool), and its platforms are compared with what the CSV declares: the labels
//! `operatorframework.io/arch.<arch>: supported` and `operatorframework.io/os.<os>: supported`
//! (none: `amd64` and `linux`), and each deployment's required node affinity on
//! `kubernetes.io/arch` and `kubernetes.io/os`. Run with `--select multiarch` (or `name=multiarch`).
//!
//! The "manager" images are the containers named `manager`, or, in a deployment without one,
//! every container but `kube-rbac-proxy`, as upstream picks them.
//!
//! Differences from upstream: findings are per image (at the image's field) rather than one
//! list per platform; images are read from the registry, never pulled through docker or podman
//! (`container-tools` is accepted and unused).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::Ctx;
use crate::bundle::load::{field, list_at, pos_at, str_at};
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::{Node, Pos, Value};

codes! {
    INSPECT_FAILED = "ARC001", Warning, "An image of the CSV could not be read from its registry, so its platforms are unknown.";
    DECLARED_MISSING = "ARC002", Error, "An image of the CSV is not built for a platform the CSV's operatorframework.io/arch.* and os.* labels declare.";
    ARCH_LABEL_MISSING = "ARC003", Warning, "The operator's (manager) image is built for an architecture the CSV has no operatorframework.io/arch.<arch> label for.";
    OS_LABEL_MISSING = "ARC004", Warning, "The operator's (manager) image is built for an OS the CSV has no operatorframework.io/os.<os> label for.";
    IMAGE_BEHIND_MANAGER = "ARC005", Warning, "Another image of the CSV is not built for a platform the operator's (manager) image supports.";
    NO_NODE_AFFINITY = "ARC006", Warning, "A deployment has no required node affinity on kubernetes.io/arch (or kubernetes.io/os), so its pods may land on nodes its images do not run on.";
    NODE_AFFINITY_MISMATCH = "ARC007", Warning, "A deployment's node affinity on kubernetes.io/arch or kubernetes.io/os differs from the platforms its images are built for.";
}

/// The platforms of each image (`os`, `architecture`), or why they could not be read.
pub type ImagePlatforms = BTreeMap<String, Result<Vec<(String, String)>, String>>;

/// One image use in the CSV.
#[derive(Debug, Clone)]
pub struct ImageUse {
    /// The pull spec.
    pub image: String,
    /// The JSON path of the field.
    pub path: String,
    /// Where it is written.
    pub pos: Pos,
    /// A manager container's image.
    pub manager: bool,
    /// The deployment's index, for deployment containers.
    pub deployment: Option<usize>,
}

/// The CSV's images: deployment containers (managers marked) and related images.
pub fn images(csv: &Node) -> Vec<ImageUse> {
    let mut out = Vec::new();
    for (d, dep) in list_at(csv, &["spec", "install", "spec", "deployments"])
        .iter()
        .enumerate()
    {
        let containers = list_at(dep, &["spec", "template", "spec", "containers"]);
        let has_manager = containers
            .iter()
            .any(|c| str_at(c, &["name"]) == Some("manager"));
        for (i, c) in containers.iter().enumerate() {
            let Some(image) = str_at(c, &["image"]).filter(|s| !s.is_empty()) else {
                continue;
            };
            let name = str_at(c, &["name"]).unwrap_or("");
            let manager = if has_manager {
                name == "manager"
            } else {
                name != "kube-rbac-proxy"
            };
            out.push(ImageUse {
                image: image.to_string(),
                path: format!(
                    "spec.install.spec.deployments[{d}].spec.template.spec.containers[{i}].image"
                ),
                pos: pos_at(c, &["image"]),
                manager,
                deployment: Some(d),
            });
        }
    }
    for (i, r) in list_at(csv, &["spec", "relatedImages"]).iter().enumerate() {
        if let Some(image) = str_at(r, &["image"]).filter(|s| !s.is_empty()) {
            out.push(ImageUse {
                image: image.to_string(),
                path: format!("spec.relatedImages[{i}].image"),
                pos: pos_at(r, &["image"]),
                manager: false,
                deployment: None,
            });
        }
    }
    out
}

/// The CSV's declared architectures and OSes (labels), with the defaults when none.
fn declared(csv: &Node) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut archs = BTreeSet::new();
    let mut oss = BTreeSet::new();
    if let Some(Node {
        value: Value::Map(entries),
        ..
    }) = field(csv, &["metadata", "labels"])
    {
        for e in entries {
            if e.value.as_str() != Some("supported") {
                continue;
            }
            if let Some(a) = e.key.strip_prefix("operatorframework.io/arch.") {
                archs.insert(a.to_string());
            } else if let Some(o) = e.key.strip_prefix("operatorframework.io/os.") {
                oss.insert(o.to_string());
            }
        }
    }
    if archs.is_empty() {
        archs.insert("amd64".into());
    }
    if oss.is_empty() {
        oss.insert("linux".into());
    }
    (archs, oss)
}

/// The values of a deployment's required node affinity for `key` (operator In), if any.
fn affinity(dep: &Node, key: &str) -> Option<BTreeSet<String>> {
    let terms = list_at(
        dep,
        &[
            "spec",
            "template",
            "spec",
            "affinity",
            "nodeAffinity",
            "requiredDuringSchedulingIgnoredDuringExecution",
            "nodeSelectorTerms",
        ],
    );
    let mut out: Option<BTreeSet<String>> = None;
    for t in terms {
        for e in list_at(t, &["matchExpressions"]) {
            if str_at(e, &["key"]) == Some(key) && str_at(e, &["operator"]) == Some("In") {
                out.get_or_insert_with(BTreeSet::new).extend(
                    list_at(e, &["values"])
                        .iter()
                        .filter_map(Node::as_str)
                        .map(str::to_string),
                );
            }
        }
    }
    out
}

fn list(v: &BTreeSet<String>) -> String {
    v.iter().cloned().collect::<Vec<_>>().join(", ")
}

pub(super) fn check(cx: &mut Ctx<'_>) {
    let Some(platforms) = cx.opts.image_platforms.clone() else {
        return; // not looked up (a library caller without registry access)
    };
    let bundle = cx.bundle;
    let Some((file, csv)) = bundle.csv() else {
        return;
    };
    let file: &Path = file;
    let uses = images(csv);
    let (archs, oss) = declared(csv);
    let labels_pos = field(csv, &["metadata", "labels"]).map_or(csv.pos, |n| n.pos);
    let known = |u: &ImageUse| match platforms.get(&u.image) {
        Some(Ok(p)) => Some(p.clone()),
        _ => None,
    };
    // ARC001: unreadable images (then treated as supporting everything).
    let mut reported = BTreeSet::new();
    for u in &uses {
        if let Some(Err(e)) = platforms.get(&u.image)
            && reported.insert(u.image.clone())
        {
            cx.push(
                &INSPECT_FAILED,
                format!("unable to inspect the image ({}): {e}", u.image),
                file,
                u.pos,
                Some(&u.path),
            );
        }
    }
    // ARC002: declared platforms every image must provide.
    for u in &uses {
        let Some(have) = known(u) else { continue };
        let missing: Vec<String> = oss
            .iter()
            .flat_map(|o| archs.iter().map(move |a| (o.clone(), a.clone())))
            .filter(|p| !have.contains(p))
            .map(|(o, a)| format!("{o}/{a}"))
            .collect();
        if !missing.is_empty() {
            cx.push(
                &DECLARED_MISSING,
                format!(
                    "not all images specified are providing the support described via the CSV labels: {} is not built for {} (it is built for {})",
                    u.image,
                    missing.join(", "),
                    have.iter().map(|(o, a)| format!("{o}/{a}")).collect::<Vec<_>>().join(", ")
                ),
                file,
                u.pos,
                Some(&u.path),
            )
            .help = Some("build the image for every platform the CSV labels declare, or drop those labels".into());
        }
    }
    // ARC003/ARC004: what the manager images support beyond the labels.
    let mut mgr_archs = BTreeSet::new();
    let mut mgr_oss = BTreeSet::new();
    let mut mgr_platforms = BTreeSet::new();
    for u in uses.iter().filter(|u| u.manager) {
        for (o, a) in known(u).unwrap_or_default() {
            mgr_archs.insert(a.clone());
            mgr_oss.insert(o.clone());
            mgr_platforms.insert((o, a));
        }
    }
    // Only the default (amd64, linux) alone needs no label.
    let label_checks = [
        (
            &ARCH_LABEL_MISSING,
            "arch",
            "Arch(s)",
            &mgr_archs,
            &archs,
            "amd64",
        ),
        (&OS_LABEL_MISSING, "os", "OS(s)", &mgr_oss, &oss, "linux"),
    ];
    for (code, key, what, built, labelled, default) in label_checks {
        if built.len() == 1 && built.contains(default) {
            continue;
        }
        for v in built.difference(labelled) {
            cx.push(
                code,
                format!("check if the CSV is missing the label (operatorframework.io/{key}.{v}) for the {what}: [{v}]: the operator's image is built for it"),
                file,
                labels_pos,
                Some("metadata.labels"),
            )
            .help = Some(format!("add the label operatorframework.io/{key}.{v}: supported"));
        }
    }
    // ARC005: other images behind the manager.
    for u in uses.iter().filter(|u| !u.manager) {
        let Some(have) = known(u) else { continue };
        let lacking: Vec<String> = mgr_platforms
            .iter()
            .filter(|p| !have.contains(p))
            .map(|(o, a)| format!("{o}/{a}"))
            .collect();
        if !lacking.is_empty() {
            cx.push(
                &IMAGE_BEHIND_MANAGER,
                format!(
                    "check if the image {} should not support [{}]: the operator's image is built for it",
                    u.image,
                    lacking.join(", ")
                ),
                file,
                u.pos,
                Some(&u.path),
            );
        }
    }
    // ARC006/ARC007: node affinity per deployment against its images' platforms.
    let deployments = list_at(csv, &["spec", "install", "spec", "deployments"]);
    for (d, dep) in deployments.iter().enumerate() {
        let dep_uses: Vec<&ImageUse> = uses.iter().filter(|u| u.deployment == Some(d)).collect();
        // The platforms every image of the pod runs on.
        let mut common: Option<BTreeSet<(String, String)>> = None;
        for u in &dep_uses {
            if let Some(p) = known(u) {
                let p: BTreeSet<(String, String)> = p.into_iter().collect();
                common = Some(match common {
                    None => p,
                    Some(c) => c.intersection(&p).cloned().collect(),
                });
            }
        }
        let Some(common) = common else { continue };
        let img_archs: BTreeSet<String> = common.iter().map(|(_, a)| a.clone()).collect();
        let img_oss: BTreeSet<String> = common.iter().map(|(o, _)| o.clone()).collect();
        let name = str_at(dep, &["name"]).unwrap_or("");
        let path = format!("spec.install.spec.deployments[{d}].spec.template.spec.affinity");
        let pos = pos_at(dep, &["spec", "template", "spec"]);
        let images = dep_uses
            .iter()
            .map(|u| u.image.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        for (key, have) in [
            ("kubernetes.io/arch", &img_archs),
            ("kubernetes.io/os", &img_oss),
        ] {
            match affinity(dep, key) {
                None => {
                    cx.push(
                        &NO_NODE_AFFINITY,
                        format!(
                            "check if the CSV has a missing or invalid node affinity configuration for the image(s) {images} of deployment {name}: no required node affinity on {key}; the image data suggests the following are supported: [{}]",
                            list(have)
                        ),
                        file,
                        pos,
                        Some(&path),
                    )
                    .help = Some(format!("add requiredDuringSchedulingIgnoredDuringExecution nodeSelectorTerms with {key} In [{}]", list(have)));
                }
                Some(set) if &set != have => {
                    let extra: BTreeSet<String> = set.difference(have).cloned().collect();
                    let missing: BTreeSet<String> = have.difference(&set).cloned().collect();
                    let mut why = Vec::new();
                    if !extra.is_empty() {
                        why.push(format!(
                            "it includes [{}], which the image(s) are not built for",
                            list(&extra)
                        ));
                    }
                    if !missing.is_empty() {
                        why.push(format!(
                            "it leaves out [{}], which the image(s) are built for",
                            list(&missing)
                        ));
                    }
                    cx.push(
                        &NODE_AFFINITY_MISMATCH,
                        format!(
                            "the node affinity on {key} of deployment {name} ({images}): {}",
                            why.join("; ")
                        ),
                        file,
                        pos,
                        Some(&path),
                    );
                }
                Some(_) => {}
            }
        }
    }
}
