//! Kubernetes APIs removed in 1.16 to 1.32 (API codes).
//!
//! Upstream (operator-framework/api's `AlphaDeprecatedAPIsValidator`) knows the 1.22, 1.25 and
//! 1.26 removals only, aggregates every hit of one removal version into one message, and matches
//! RBAC rules on resources that still exist under a newer version (the cronjob and PDB false
//! positives). Here the whole removal table is data ([`REMOVED_APIS`]), each hit is one finding
//! at the object's `apiVersion`, and RBAC rules are only reported for resources that no longer
//! exist in any version of their group.
//!
//! Severity: the target Kubernetes version is `--k8s-version` (or `--openshift-version`, mapped
//! by [`crate::openshift`]), else the Kubernetes releases of the OpenShift range the bundle's
//! `com.redhat.openshift.versions` annotation declares (every release of an open-ended range
//! such as `v4.12`), else the CSV's `spec.minKubeVersion` (read tolerantly: `v1.22`, `1.22`). A
//! hit is an error when the newest target is at or after the removal (the bundle declares it
//! runs on a cluster where the API does not exist), otherwise a warning; review versions are
//! judged by the oldest.

use std::path::Path;

use super::Ctx;
use crate::bundle::load::{field, kind_of, list_at, str_at};
use crate::diag::Severity::{self, Error, Warning};
use crate::fbc::node::{Node, Value};

codes! {
    REMOVED_MANIFEST_API = "API001", Error, "A bundle manifest uses a Kubernetes API version removed at or before the target Kubernetes version (a warning when the target is older or unknown).";
    REMOVED_RESOURCE_API = "API002", Error, "A CSV owned/required API lists a resource whose `group/version` is a removed Kubernetes API (a warning when the target is older or unknown).";
    REMOVED_EXAMPLE_API = "API003", Error, "An alm-examples object uses a removed Kubernetes API version (a warning when the target is older or unknown).";
    REMOVED_RBAC_RESOURCE = "API004", Warning, "A CSV permission rule grants access to a resource that no longer exists in any version of its group (policy podsecuritypolicies).";
    REVIEW_VERSIONS = "API005", Error, "A CRD's conversionReviewVersions or a webhook's admissionReviewVersions names no review version the target Kubernetes speaks (a warning when only v1beta1 is listed).";
}

/// One row of the upstream removal table: the API `group_version` stops serving `kinds` in
/// Kubernetes `removed_in` (major, minor); `replacement` is what to use instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RemovedApi {
    /// `group/version` as written in `apiVersion` (`extensions/v1beta1`).
    pub group_version: &'static str,
    /// The kinds of that group/version that are removed.
    pub kinds: &'static [&'static str],
    /// The Kubernetes release that no longer serves them.
    pub removed_in: (u64, u64),
    /// What to migrate to (an API, or advice when nothing replaces it).
    pub replacement: &'static str,
}

const fn row(
    group_version: &'static str,
    kinds: &'static [&'static str],
    removed_in: (u64, u64),
    replacement: &'static str,
) -> RemovedApi {
    RemovedApi {
        group_version,
        kinds,
        removed_in,
        replacement,
    }
}

const PSA: &str = "Pod Security Admission (no API replaces PodSecurityPolicy)";
const FLOWCONTROL: &str = "flowcontrol.apiserver.k8s.io/v1 (v1beta3 before Kubernetes 1.29)";

/// The Kubernetes API removals from 1.16 to 1.32, from the Kubernetes "Deprecated API Migration
/// Guide" (one row per group/version and removal release). operator-framework/api checks only
/// the 1.22, 1.25 and 1.26 rows; this table also has the 1.16, 1.27, 1.29 and 1.32 ones.
pub static REMOVED_APIS: &[RemovedApi] = &[
    // 1.16
    row(
        "extensions/v1beta1",
        &["NetworkPolicy"],
        (1, 16),
        "networking.k8s.io/v1",
    ),
    row(
        "extensions/v1beta1",
        &["DaemonSet", "Deployment", "ReplicaSet"],
        (1, 16),
        "apps/v1",
    ),
    row("extensions/v1beta1", &["PodSecurityPolicy"], (1, 16), PSA),
    row(
        "apps/v1beta1",
        &["Deployment", "StatefulSet", "ReplicaSet"],
        (1, 16),
        "apps/v1",
    ),
    row(
        "apps/v1beta2",
        &["DaemonSet", "Deployment", "StatefulSet", "ReplicaSet"],
        (1, 16),
        "apps/v1",
    ),
    // 1.22
    row(
        "admissionregistration.k8s.io/v1beta1",
        &[
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ],
        (1, 22),
        "admissionregistration.k8s.io/v1",
    ),
    row(
        "apiextensions.k8s.io/v1beta1",
        &["CustomResourceDefinition"],
        (1, 22),
        "apiextensions.k8s.io/v1",
    ),
    row(
        "apiregistration.k8s.io/v1beta1",
        &["APIService"],
        (1, 22),
        "apiregistration.k8s.io/v1",
    ),
    row(
        "authentication.k8s.io/v1beta1",
        &["TokenReview"],
        (1, 22),
        "authentication.k8s.io/v1",
    ),
    row(
        "authorization.k8s.io/v1beta1",
        &[
            "LocalSubjectAccessReview",
            "SelfSubjectAccessReview",
            "SubjectAccessReview",
        ],
        (1, 22),
        "authorization.k8s.io/v1",
    ),
    row(
        "certificates.k8s.io/v1beta1",
        &["CertificateSigningRequest"],
        (1, 22),
        "certificates.k8s.io/v1",
    ),
    row(
        "coordination.k8s.io/v1beta1",
        &["Lease"],
        (1, 22),
        "coordination.k8s.io/v1",
    ),
    row(
        "extensions/v1beta1",
        &["Ingress"],
        (1, 22),
        "networking.k8s.io/v1",
    ),
    row(
        "networking.k8s.io/v1beta1",
        &["Ingress", "IngressClass"],
        (1, 22),
        "networking.k8s.io/v1",
    ),
    row(
        "rbac.authorization.k8s.io/v1beta1",
        &["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"],
        (1, 22),
        "rbac.authorization.k8s.io/v1",
    ),
    row(
        "scheduling.k8s.io/v1beta1",
        &["PriorityClass"],
        (1, 22),
        "scheduling.k8s.io/v1",
    ),
    row(
        "storage.k8s.io/v1beta1",
        &["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"],
        (1, 22),
        "storage.k8s.io/v1",
    ),
    // 1.25
    row("batch/v1beta1", &["CronJob"], (1, 25), "batch/v1"),
    row(
        "discovery.k8s.io/v1beta1",
        &["EndpointSlice"],
        (1, 25),
        "discovery.k8s.io/v1",
    ),
    row(
        "events.k8s.io/v1beta1",
        &["Event"],
        (1, 25),
        "events.k8s.io/v1",
    ),
    row(
        "autoscaling/v2beta1",
        &["HorizontalPodAutoscaler"],
        (1, 25),
        "autoscaling/v2",
    ),
    row(
        "policy/v1beta1",
        &["PodDisruptionBudget"],
        (1, 25),
        "policy/v1",
    ),
    row("policy/v1beta1", &["PodSecurityPolicy"], (1, 25), PSA),
    row(
        "node.k8s.io/v1beta1",
        &["RuntimeClass"],
        (1, 25),
        "node.k8s.io/v1",
    ),
    // 1.26
    row(
        "flowcontrol.apiserver.k8s.io/v1beta1",
        &["FlowSchema", "PriorityLevelConfiguration"],
        (1, 26),
        FLOWCONTROL,
    ),
    row(
        "autoscaling/v2beta2",
        &["HorizontalPodAutoscaler"],
        (1, 26),
        "autoscaling/v2",
    ),
    // 1.27
    row(
        "storage.k8s.io/v1beta1",
        &["CSIStorageCapacity"],
        (1, 27),
        "storage.k8s.io/v1",
    ),
    // 1.29
    row(
        "flowcontrol.apiserver.k8s.io/v1beta2",
        &["FlowSchema", "PriorityLevelConfiguration"],
        (1, 29),
        FLOWCONTROL,
    ),
    // 1.32
    row(
        "flowcontrol.apiserver.k8s.io/v1beta3",
        &["FlowSchema", "PriorityLevelConfiguration"],
        (1, 32),
        "flowcontrol.apiserver.k8s.io/v1",
    ),
];

/// RBAC resources (group, plural) that no longer exist in any version of their group, with the
/// release that removed the last version. Rules carry no version, so only these can be proven
/// to grant access to a removed API; cronjobs, PDBs, HPAs etc. still exist under v1/v2.
const GONE_RESOURCES: [(&str, &str, (u64, u64)); 2] = [
    ("policy", "podsecuritypolicies", (1, 25)),
    ("extensions", "podsecuritypolicies", (1, 16)),
];

/// The removal row for `apiVersion` + `kind`, if that API is removed.
pub fn removed(api_version: &str, kind: &str) -> Option<&'static RemovedApi> {
    let api = api_version.trim();
    REMOVED_APIS
        .iter()
        .find(|r| r.group_version == api && r.kinds.contains(&kind))
}

/// A Kubernetes version read tolerantly, as `semver.ParseTolerant` reads `k8s-version` and
/// `minKubeVersion`: `v` prefix allowed, `X` and `X.Y` filled with zeros, a pre-release or build
/// suffix (`1.22.0-0`) ignored.
pub fn parse_kube_version(s: &str) -> Option<semver::Version> {
    let t = s.trim();
    let t = t.strip_prefix(['v', 'V']).unwrap_or(t);
    let core = t.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut nums = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        nums[i] = p.parse().ok()?;
    }
    Some(semver::Version::new(nums[0], nums[1], nums[2]))
}

/// Reads a Kubernetes version a user wrote (`--k8s-version`, a policy's `k8sVersion`) strictly:
/// `1.29`, `1.29.3` or a full semantic version such as `1.29.0-0`, with an optional `v`.
/// Unlike [`parse_kube_version`] (tolerant, for `minKubeVersion` values already in bundles),
/// nothing after the numbers is dropped: `1.29-abc` and `1.29-` are not versions.
pub fn parse_kube_version_strict(s: &str) -> Option<semver::Version> {
    let t = s.trim();
    let t = t.strip_prefix(['v', 'V']).unwrap_or(t);
    if let Ok(v) = semver::Version::parse(t) {
        return Some(v);
    }
    let parts: Vec<&str> = t.split('.').collect();
    if parts.len() != 2
        || parts
            .iter()
            .any(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    Some(semver::Version::new(
        parts[0].parse().ok()?,
        parts[1].parse().ok()?,
        0,
    ))
}

/// The Kubernetes releases the bundle is checked against, and where they come from.
struct Target {
    /// The oldest release the bundle must run on (review versions are judged by it).
    oldest: Option<semver::Version>,
    /// The newest: removals at or before it are errors. `Some(None)`: every later release too
    /// (an open-ended OpenShift range, `v4.12`). `None`: unknown.
    newest: Option<Option<semver::Version>>,
    /// Where they come from, as the start of a sentence (`--k8s-version is 1.22.0`).
    source: String,
    /// Whether the releases come from the bundle's OpenShift range.
    openshift: bool,
}

impl Target {
    /// One Kubernetes release, from `source` (`--k8s-version is 1.22.0`).
    fn one(v: Option<semver::Version>, source: String) -> Target {
        Target {
            oldest: v.clone(),
            newest: v.map(Some),
            source,
            openshift: false,
        }
    }

    /// The Kubernetes releases of the OpenShift range the bundle declares in its
    /// `com.redhat.openshift.versions` annotation ([`crate::openshift::Declared`]): OpenShift
    /// publishes the bundle in the catalog of every release of the range, so it must run on the
    /// Kubernetes release each of them ships. `None` without the annotation, or when its value
    /// is not Red Hat's syntax or names releases before the table.
    fn declared(value: &str) -> Option<Target> {
        let d = crate::openshift::Declared::parse(value).ok()?;
        let ((a, b), max) = d.kubernetes()?;
        let k = |(x, y): (u64, u64)| semver::Version::new(x, y, 0);
        let kube = match max {
            None => format!("{a}.{b} and later"),
            Some(m) if m == (a, b) => format!("{a}.{b}"),
            Some((c, e)) => format!("{a}.{b}-{c}.{e}"),
        };
        Some(Target {
            oldest: Some(k((a, b))),
            newest: Some(max.map(k)),
            source: format!(
                "{} {value:?} publishes the bundle for OpenShift {} (Kubernetes {kube})",
                crate::openshift::VERSIONS_ANNOTATION,
                d.display()
            ),
            openshift: true,
        })
    }

    fn severity(&self, removed_in: (u64, u64)) -> Severity {
        match &self.newest {
            Some(None) => Error,
            Some(Some(v)) if (v.major, v.minor) >= removed_in => Error,
            _ => Warning,
        }
    }

    fn help(&self, r: &RemovedApi, sev: Severity) -> String {
        let (maj, min) = r.removed_in;
        let migrate = format!("migrate to {}", r.replacement);
        match (&self.newest, sev) {
            (Some(_), Error) if self.openshift => format!(
                "{}, and Kubernetes {maj}.{min} and later do not serve {}: {migrate}, or end the range before the OpenShift release that ships Kubernetes {maj}.{min}",
                self.source, r.group_version
            ),
            (Some(_), Error) => format!(
                "{}, where the API server does not serve {} any more: {migrate}",
                self.source, r.group_version
            ),
            (Some(_), _) => format!(
                "{}, so clusters before {maj}.{min} still serve {}, but installs on {maj}.{min} and later fail: {migrate}",
                self.source, r.group_version
            ),
            (None, _) => format!(
                "no target version (set spec.minKubeVersion, the {} annotation, or pass --k8s-version or --openshift-version); installs on {maj}.{min} and later fail: {migrate}",
                crate::openshift::VERSIONS_ANNOTATION
            ),
        }
    }
}

/// The target: `--k8s-version` (or what the caller mapped to it, `--openshift-version`), else
/// the bundle's OpenShift range, else the CSV's `spec.minKubeVersion`.
fn target(cx: &Ctx<'_>) -> Target {
    if let Some(v) = &cx.opts.k8s_version {
        let from = cx
            .opts
            .k8s_version_from
            .as_deref()
            .unwrap_or("--k8s-version");
        return Target::one(Some(v.clone()), format!("{from} is {v}"));
    }
    if let Some(t) = cx
        .bundle
        .annotation(crate::openshift::VERSIONS_ANNOTATION)
        .and_then(Target::declared)
    {
        return t;
    }
    let min = cx
        .bundle
        .csv()
        .and_then(|(_, c)| str_at(c, &["spec", "minKubeVersion"]))
        .and_then(parse_kube_version);
    let source = format!(
        "spec.minKubeVersion is {}",
        min.as_ref().map(ToString::to_string).unwrap_or_default()
    );
    Target::one(min, source)
}

pub(super) fn check(cx: &mut Ctx<'_>) {
    let csv = cx.bundle.csv();
    let target = target(cx);
    let docs: Vec<_> = cx.bundle.first_docs().collect();
    for (file, doc) in docs {
        let (Some(api_node), Some(kind)) = (field(doc, &["apiVersion"]), kind_of(doc)) else {
            continue;
        };
        let Some(api) = api_node.as_str() else {
            continue;
        };
        let Some(r) = removed(api, kind) else {
            continue;
        };
        let name = str_at(doc, &["metadata", "name"]).unwrap_or("");
        let sev = target.severity(r.removed_in);
        let help = target.help(r, sev);
        let f = cx.push(
            &REMOVED_MANIFEST_API,
            format!("{kind} {name:?} uses {}", removal(r)),
            file,
            api_node.pos,
            Some("apiVersion"),
        );
        f.severity = sev;
        f.help = Some(help);
    }
    if let Some((file, csv)) = csv {
        resources(cx, &target, file, csv);
        examples(cx, &target, file, csv);
        rbac(cx, file, csv);
        for (i, w) in list_at(csv, &["spec", "webhookdefinitions"])
            .iter()
            .enumerate()
        {
            if let Some(list) = field(w, &["admissionReviewVersions"]) {
                let name = str_at(w, &["generateName"]).unwrap_or("");
                // A ConversionWebhook's list becomes the conversionReviewVersions of its CRDs.
                let api = if str_at(w, &["type"]) == Some("ConversionWebhook") {
                    "ConversionReview (apiextensions.k8s.io)"
                } else {
                    "AdmissionReview (admission.k8s.io)"
                };
                review_versions(
                    cx,
                    &target,
                    file,
                    &strings(list),
                    list.pos,
                    api,
                    &format!("webhook {name:?}"),
                    &format!("spec.webhookdefinitions[{i}].admissionReviewVersions"),
                );
            }
        }
    }
    // CRDs converted by a webhook of their own. OLM replaces the whole spec.conversion of a CRD
    // that a CSV ConversionWebhook lists, so those are checked through the webhook above.
    let by_csv: Vec<String> = csv
        .map(|(_, c)| crate::bundle::crd::csv_conversion_crds(c))
        .unwrap_or_default()
        .into_iter()
        .map(str::to_string)
        .collect();
    let crds: Vec<_> = cx
        .bundle
        .first_docs()
        .filter_map(|(f, d)| crate::bundle::crd::Crd::read(f, d))
        .filter(|c| c.webhook_conversion() && !by_csv.iter().any(|n| n == c.name))
        .map(|c| {
            let names: Vec<String> = c
                .review_versions
                .iter()
                .map(|(v, _)| v.to_string())
                .collect();
            // The list itself, or (v1beta1 default) the conversion block.
            let list = field(
                c.doc,
                &["spec", "conversion", "webhook", "conversionReviewVersions"],
            )
            .map(|n| (n.pos, "spec.conversion.webhook.conversionReviewVersions"))
            .or_else(|| {
                field(c.doc, &["spec", "conversion", "conversionReviewVersions"])
                    .map(|n| (n.pos, "spec.conversion.conversionReviewVersions"))
            })
            .unwrap_or((
                crate::bundle::load::pos_at(c.doc, &["spec", "conversion"]),
                "spec.conversion",
            ));
            (c.file.clone(), c.name.to_string(), names, list)
        })
        .collect();
    for (file, name, names, (pos, path)) in crds {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        if names.is_empty() {
            continue; // Required when strategy is Webhook: CRD019's business.
        }
        review_versions(
            cx,
            &target,
            &file,
            &names,
            pos,
            "ConversionReview (apiextensions.k8s.io)",
            &format!("CRD {name:?}"),
            path,
        );
    }
}

fn strings(list: &Node) -> Vec<&str> {
    match &list.value {
        Value::Seq(items) => items.iter().filter_map(Node::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Review API versions the Kubernetes API server sends to webhooks: `v1beta1` since before
/// 1.16, `v1` since 1.16 (both AdmissionReview and ConversionReview). Neither has been removed
/// as of Kubernetes 1.34; the API server uses the first listed version it speaks.
const REVIEW_V1_SINCE: (u64, u64) = (1, 16);

#[allow(clippy::too_many_arguments)]
fn review_versions(
    cx: &mut Ctx<'_>,
    target: &Target,
    file: &Path,
    names: &[&str],
    pos: crate::fbc::node::Pos,
    api: &str,
    owner: &str,
    path: &str,
) {
    let known: Vec<&str> = names
        .iter()
        .copied()
        .filter(|v| *v == "v1" || *v == "v1beta1")
        .collect();
    let old_target = target
        .oldest
        .as_ref()
        .is_some_and(|v| (v.major, v.minor) < REVIEW_V1_SINCE);
    let (sev, msg, help) = if known.is_empty() {
        (
            Error,
            format!(
                "{owner} lists review versions {names:?} for {api}: the API server speaks only v1 and v1beta1"
            ),
            "list v1 (and v1beta1 only if the webhook must serve clusters before 1.16)".to_string(),
        )
    } else if old_target && !known.contains(&"v1beta1") {
        (
            Error,
            format!(
                "{owner} lists only v1 for {api}, which Kubernetes serves since 1.16; {}",
                target.source
            ),
            "add v1beta1 after v1, or raise the minimum Kubernetes version to 1.16".to_string(),
        )
    } else if !known.contains(&"v1") {
        (
            Warning,
            format!(
                "{owner} lists only v1beta1 for {api}: v1 has been the GA review version since Kubernetes 1.16"
            ),
            "make the webhook accept v1 reviews and list v1 first".to_string(),
        )
    } else {
        return;
    };
    let f = cx.push(&REVIEW_VERSIONS, msg, file, pos, Some(path));
    f.severity = sev;
    f.help = Some(help);
}

/// `<group/version>, removed in Kubernetes X.Y; use <replacement>`.
fn removal(r: &RemovedApi) -> String {
    let (maj, min) = r.removed_in;
    format!(
        "{}, removed in Kubernetes {maj}.{min}; use {}",
        r.group_version, r.replacement
    )
}

/// `spec.{customresourcedefinitions,apiservicedefinitions}.{owned,required}[].resources[]`:
/// the `version` field holds `group/version` when the author wrote one (a bare `v1beta1` names
/// no group and cannot be matched).
fn resources(cx: &mut Ctx<'_>, target: &Target, file: &Path, csv: &Node) {
    for section in ["customresourcedefinitions", "apiservicedefinitions"] {
        for part in ["owned", "required"] {
            for (i, d) in list_at(csv, &["spec", section, part]).iter().enumerate() {
                let owner = str_at(d, &["name"]).unwrap_or("");
                for (j, res) in list_at(d, &["resources"]).iter().enumerate() {
                    let Some(vnode) = field(res, &["version"]) else {
                        continue;
                    };
                    let (Some(version), Some(kind)) = (vnode.as_str(), str_at(res, &["kind"]))
                    else {
                        continue;
                    };
                    let Some(r) = removed(version, kind) else {
                        continue;
                    };
                    let sev = target.severity(r.removed_in);
                    let help = target.help(r, sev);
                    let f = cx.push(
                        &REMOVED_RESOURCE_API,
                        format!(
                            "resource {kind} of {owner:?} ({section}.{part}) uses {}",
                            removal(r)
                        ),
                        file,
                        vnode.pos,
                        Some(&format!(
                            "spec.{section}.{part}[{i}].resources[{j}].version"
                        )),
                    );
                    f.severity = sev;
                    f.help = Some(help);
                }
            }
        }
    }
}

/// `alm-examples` objects (a malformed annotation is CSV003's business).
fn examples(cx: &mut Ctx<'_>, target: &Target, file: &Path, csv: &Node) {
    let Some(ex) = field(csv, &["metadata", "annotations", "alm-examples"]) else {
        return;
    };
    let Some(text) = ex.as_str() else {
        return;
    };
    let mut docs = Vec::new();
    if crate::fbc::json::parse_stream(text, |d| docs.push(d)).is_err() {
        return;
    }
    let Some(Value::Seq(items)) = docs.first().map(|d| &d.value) else {
        return;
    };
    for (i, it) in items.iter().enumerate() {
        let (Some(api), Some(kind)) = (str_at(it, &["apiVersion"]), kind_of(it)) else {
            continue;
        };
        let Some(r) = removed(api, kind) else {
            continue;
        };
        let name = str_at(it, &["metadata", "name"]).unwrap_or("");
        let sev = target.severity(r.removed_in);
        let help = target.help(r, sev);
        let f = cx.push(
            &REMOVED_EXAMPLE_API,
            format!(
                "alm-examples item {i}, {kind} {name:?}, uses {}",
                removal(r)
            ),
            file,
            ex.pos,
            Some(&format!(
                "metadata.annotations[\"alm-examples\"][{i}].apiVersion"
            )),
        );
        f.severity = sev;
        f.help = Some(help);
    }
}

/// Permission rules on resources gone from every version of their group.
fn rbac(cx: &mut Ctx<'_>, file: &Path, csv: &Node) {
    for section in ["permissions", "clusterPermissions"] {
        for (i, p) in list_at(csv, &["spec", "install", "spec", section])
            .iter()
            .enumerate()
        {
            let sa = str_at(p, &["serviceAccountName"]).unwrap_or("");
            for (j, rule) in list_at(p, &["rules"]).iter().enumerate() {
                let groups: Vec<&str> = list_at(rule, &["apiGroups"])
                    .iter()
                    .filter_map(Node::as_str)
                    .collect();
                for (k, res) in list_at(rule, &["resources"]).iter().enumerate() {
                    let Some(plural) = res.as_str() else {
                        continue;
                    };
                    let base = plural.split('/').next().unwrap_or("");
                    let Some((group, _, (maj, min))) = GONE_RESOURCES
                        .iter()
                        .find(|(g, r, _)| *r == base && groups.contains(g))
                    else {
                        continue;
                    };
                    cx.push(
                        &REMOVED_RBAC_RESOURCE,
                        format!(
                            "{section}[{i}] (service account {sa:?}) rule {j} grants access to {group} {plural}, removed in Kubernetes {maj}.{min} with no replacement"
                        ),
                        file,
                        res.pos,
                        Some(&format!("spec.install.spec.{section}[{i}].rules[{j}].resources[{k}]")),
                    )
                    .help = Some(
                        "drop the rule (PodSecurityPolicy is gone; Pod Security Admission needs no RBAC), unless the operator must also run on clusters before the removal".into(),
                    );
                }
            }
        }
    }
}
