//! OLM v1's two controllers as doubles over the API double: catalogd (ClusterCatalogs unpacked
//! and served) and operator-controller (ClusterExtensions resolved from the served catalogs,
//! checked, rendered and applied), each step following the operator-controller source of
//! olmv1.md (`df2c201d`, v1.11.0; v1.10.0 `b5f05bbf` where the lines differ). They run on every
//! GET of a ClusterCatalog or ClusterExtension, as their informers would wake them, and write
//! through the API at once, so a client sees each state.
//!
//! Followed upstream:
//!
//! - catalogd `internal/catalogd/webhook/cluster_catalog_webhook.go :: ClusterCatalog.Default`
//!   (the `olm.operatorframework.io/metadata.name` label);
//!   `internal/catalogd/controllers/core/clustercatalog_controller.go :: reconcile,
//!   updateStatusProgressing, updateStatusServing` (an image that cannot be pulled: Retrying;
//!   one pulled: resolved by digest, `lastUnpacked`, `urls.base` from the external address
//!   ([`OlmV1::set_external_address`], catalogd's `--external-address`), Serving);
//! - operator-controller `controllers/clusterextension_reconcile_steps.go ::
//!   ServiceAccountValidator` (v1.10: the ServiceAccount must exist), `handleResolutionError`,
//!   `ApplyBundle`; `resolve/catalog.go :: CatalogResolver.Resolve, resolutionError.Error`
//!   (catalogs by selector that are Serving; channel, version and successor filters; the
//!   highest version, non-deprecated first); `catalogmetadata/filter/successors.go ::
//!   SuccessorsOf, legacySuccessor` (direct edges only); `controllers/common_controller.go ::
//!   setStatusProgressing, setInstalledStatusFromRevisionStates`;
//!   `controllers/clusterextension_controller.go :: wrapErrorWithResolutionInfo,
//!   SetDeprecationStatus`; `applier/helm.go :: Helm.Apply` (the CRD upgrade-safety preflight
//!   before anything is written, skipped with `enforcement: None`; objects labelled with their
//!   owner; uninstalled with the extension).
//!
//! The double never renders and never asks olmctl: a catalog image carries, for each bundle,
//! what operator-controller's renderer made of it ([`Rendered`]: `shared/fixtures/olmv1-render`
//! or upstream's regression data), or upstream's refusal; a skipRange is read by its own
//! blang reading ([`blang`]) and the CRD upgrade-safety preflight is its own ([`crdify`]), both
//! written from upstream's source. Objects are written at their resource's scope (a
//! cluster-scoped object's namespace is ignored, as the API server ignores it). Under v1.10
//! each object is authorized as the ServiceAccount by the
//! test cluster's RBAC authorizer and escalation check before it is written: `create` for a
//! new object, `patch` by name and the update's escalation check for one that exists (Helm's
//! `Client.Update`), and the old release's leftovers are deleted only where it may get and
//! delete them (Helm logs a failed delete and leaves the object: a step here); Helm's own
//! wrapping of the API error is not modelled (the message is the API server's).
//!
//! Not modelled: ClusterCatalog polling and availability modes, catalog priorities (every
//! catalog has priority 0), `SelfCertified`, release metadata, Boxcutter, config
//! (`watchNamespace`), the Helm release secrets, drift detection.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

mod blang;
mod crdify;

use crate::api::ApiServer;
use crate::api::rbac::escalation::{check_update, check_write};
use crate::api::rbac::{Attributes, Decision, UserInfo, authorize, forbidden_status};

/// OLM v1's API group.
pub const GROUP: &str = "olm.operatorframework.io";

/// What operator-controller's renderer made of a bundle, recorded from upstream (the double
/// never renders: it applies what upstream rendered).
#[derive(Debug, Clone)]
pub enum Rendered {
    /// The objects, rendered for the install namespace `namespace` (v1.11's renderer: the
    /// double takes `olm.operatorNamespace` off the pods for v1.10, whose renderer did not set
    /// it).
    Objects {
        /// The install namespace they were rendered for.
        namespace: String,
        /// The objects, in the order they are applied.
        objects: Vec<Value>,
    },
    /// Upstream refused the bundle: its message.
    Refused(String),
}

impl Rendered {
    /// One recording of `shared/fixtures/olmv1-render` (`<package>/<version>.<variant>.json`:
    /// the objects or the refusal, install namespace `olmv1-system`).
    pub fn recorded(file: &std::path::Path) -> Rendered {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let v: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        match v["objects"].as_array() {
            Some(objects) => Rendered::Objects {
                namespace: s(&v, "/install_namespace").to_string(),
                objects: objects.clone(),
            },
            None => Rendered::Refused(s(&v, "/error").to_string()),
        }
    }

    /// One case of operator-controller's own regression data
    /// (`test/regression/convert/testdata/expected-manifests/<bundle>/<case>/`, one object per
    /// file), rendered for `namespace`.
    pub fn expected_manifests(dir: &std::path::Path, namespace: &str) -> Rendered {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        files.sort();
        Rendered::Objects {
            namespace: namespace.to_string(),
            objects: files
                .iter()
                .flat_map(|f| crate::fixtures::yaml_file(f))
                .collect(),
        }
    }
}

/// A catalog image the double can "pull": its FBC directory, and what upstream renders of
/// each bundle its `olm.bundle` blobs name (by bundle name).
#[derive(Debug, Clone)]
pub struct CatalogImage {
    /// The FBC directory.
    pub dir: PathBuf,
    /// Bundle name → what operator-controller renders of it.
    pub bundles: BTreeMap<String, Rendered>,
    /// The image's manifest digest (`sha256:...`) when it was pushed to a real registry:
    /// catalogd's `status.resolvedSource` then names it, as a client pulling it expects.
    /// Otherwise a digest is made up from the reference.
    pub digest: Option<String>,
}

/// Which operator-controller release line runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// v1.10: `spec.serviceAccount` installs the bundle.
    V1_10,
    /// v1.11: operator-controller applies as cluster-admin.
    V1_11,
}

struct Inner {
    api: ApiServer,
    line: Line,
    /// Each pullable image: its content and its blobs, read once (an image does not change).
    images: BTreeMap<String, (CatalogImage, Vec<Value>)>,
    steps: Vec<String>,
    external_address: String,
}

/// The OLM v1 double.
#[derive(Clone)]
pub struct OlmV1 {
    inner: Arc<Mutex<Inner>>,
}

fn s<'a>(v: &'a Value, p: &str) -> &'a str {
    v.pointer(p).and_then(Value::as_str).unwrap_or_default()
}

fn cond(t: &str, status: &str, reason: &str, message: &str, generation: &Value) -> Value {
    json!({"type": t, "status": status, "reason": reason, "message": message,
           "observedGeneration": generation, "lastTransitionTime": crate::olm::now()})
}

/// Conditions as `meta.SetStatusCondition` keeps them: a condition whose status, reason and
/// message are unchanged keeps its transition time.
fn set_conditions(old: &Value, new: Vec<Value>) -> Value {
    let mut out = old
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for c in new {
        match out.iter_mut().find(|o| o["type"] == c["type"]) {
            Some(o) => {
                let same = o["status"] == c["status"]
                    && o["reason"] == c["reason"]
                    && o["message"] == c["message"];
                let time = o["lastTransitionTime"].clone();
                *o = c;
                if same {
                    o["lastTransitionTime"] = time;
                }
            }
            None => out.push(c),
        }
    }
    Value::Array(out)
}

impl OlmV1 {
    /// Installs OLM v1's CRDs (`clusterextensions` of `line`, `clustercatalogs`) from
    /// `tests/data/olmv1-crds` and starts the controllers on the API's hook.
    pub fn start(api: &ApiServer, line: Line) -> OlmV1 {
        let data = crate::fixtures::repo().join("tests/data/olmv1-crds");
        let ce = match line {
            Line::V1_10 => "clusterextensions-v1.10.yaml",
            Line::V1_11 => "clusterextensions-v1.11.yaml",
        };
        for f in [ce, "clustercatalogs.yaml"] {
            for crd in crate::fixtures::yaml_file(&data.join(f)) {
                api.insert("customresourcedefinitions", crd);
            }
        }
        let me = OlmV1 {
            inner: Arc::new(Mutex::new(Inner {
                api: api.clone(),
                line,
                images: BTreeMap::new(),
                steps: Vec::new(),
                external_address: "https://catalogd-service.olmv1-system.svc".into(),
            })),
        };
        let m = me.clone();
        api.set_hook(Arc::new(move |method, path| {
            if method == http::Method::GET
                && (path.contains("/clusterextensions") || path.contains("/clustercatalogs"))
            {
                m.tick();
            }
        }));
        me
    }

    /// Makes `image` pullable with this content.
    pub fn serve(&self, image: &str, content: CatalogImage) {
        let all = blobs(&content.dir);
        self.inner
            .lock()
            .expect("lock")
            .images
            .insert(image.to_string(), (content, all));
    }

    /// Where catalogd says it serves, as its `--external-address` flag (default
    /// `catalogd-service.olmv1-system.svc`): `status.urls.base` is
    /// `<address>/catalogs/<name>` (`clustercatalog_controller.go :: reconcile`, through
    /// `storage.LocalDirV1.BaseURL`). Here the scheme is part of it, so that a test can serve a
    /// catalog's content over plain HTTP (e.g. `http://127.0.0.1:PORT`); catalogs already
    /// served get the new base at the next pass.
    pub fn set_external_address(&self, address: &str) {
        self.inner.lock().expect("lock").external_address =
            address.trim_end_matches('/').to_string();
    }

    /// What the controllers did, in order (one line per status write).
    pub fn steps(&self) -> Vec<String> {
        self.inner.lock().expect("lock").steps.clone()
    }

    /// One pass of both controllers.
    pub fn tick(&self) {
        let mut inner = self.inner.lock().expect("lock");
        let api = inner.api.clone();
        for cc in api.list(GROUP, "clustercatalogs") {
            catalogd(&mut inner, &cc);
        }
        for ce in api.list(GROUP, "clusterextensions") {
            operator_controller(&mut inner, &ce);
        }
    }
}

/// The digest catalogd resolves a reference to: the image's own when it is known, else one
/// made up from the reference (deterministic).
fn digest_ref(image: &str, digest: Option<&str>) -> String {
    use sha2::Digest;
    let repo = image.split('@').next().unwrap_or(image);
    let repo = match repo.rsplit_once(':') {
        Some((r, tag)) if !tag.contains('/') => r,
        _ => repo,
    };
    let digest = digest.map(str::to_string).unwrap_or_else(|| {
        let hex: String = sha2::Sha256::digest(image.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        format!("sha256:{hex}")
    });
    format!("{repo}@{digest}")
}

/// catalogd's reconcile of one ClusterCatalog.
fn catalogd(inner: &mut Inner, cc: &Value) {
    let name = s(cc, "/metadata/name");
    let api = inner.api.clone();
    // ClusterCatalog.Default (the defaulting webhook; here on first sight).
    if cc.pointer("/metadata/labels/olm.operatorframework.io~1metadata.name") != Some(&json!(name))
    {
        api.merge(
            GROUP,
            "clustercatalogs",
            "",
            name,
            &json!({"metadata": {"labels": {"olm.operatorframework.io/metadata.name": name}}}),
            false,
        );
    }
    let image = s(cc, "/spec/source/image/ref");
    let generation = cc["metadata"]["generation"].clone();
    let (conditions, extra) = if let Some((content, _)) = inner.images.get(image) {
        let resolved = digest_ref(image, content.digest.as_deref());
        (
            vec![
                cond(
                    "Progressing",
                    "True",
                    "Succeeded",
                    "Successfully unpacked and stored content from resolved source",
                    &generation,
                ),
                cond(
                    "Serving",
                    "True",
                    "Available",
                    "Serving desired content from resolved source",
                    &generation,
                ),
            ],
            json!({
                "resolvedSource": {"type": "Image", "image": {"ref": resolved}},
                "urls": {"base": format!("{}/catalogs/{name}", inner.external_address)},
                "lastUnpacked": cc.pointer("/status/lastUnpacked").cloned().filter(|_| {
                    cc.pointer("/status/resolvedSource/image/ref") == Some(&json!(resolved))
                }).unwrap_or_else(|| json!(crate::olm::now())),
            }),
        )
    } else {
        (
            vec![cond(
                "Progressing",
                "True",
                "Retrying",
                &format!(
                    "source catalog content: error creating image source: reading manifest in {image}: manifest unknown"
                ),
                &generation,
            )],
            json!({}),
        )
    };
    let new = set_conditions(cc, conditions);
    if cc.pointer("/status/conditions") == Some(&new)
        && ["urls", "resolvedSource"].iter().all(|k| {
            extra
                .get(k)
                .is_none_or(|u| cc.pointer(&format!("/status/{k}")) == Some(u))
        })
    {
        return;
    }
    let mut status = extra;
    status["conditions"] = new;
    let line = format!("catalog {name} {}", s(&status, "/conditions/0/reason"));
    if inner.steps.last() != Some(&line) {
        inner.steps.push(line);
    }
    api.merge(
        GROUP,
        "clustercatalogs",
        "",
        name,
        &json!({"status": status}),
        true,
    );
}

/// A bundle of the catalog: name, version, image, channels' entries pointing at it.
#[derive(Debug, Clone)]
struct Candidate {
    name: String,
    version: semver::Version,
    image: String,
    deprecated: bool,
}

/// Masterminds constraints as operator-controller parses `spec.source.catalog.version`
/// (`compare.go :: NewVersionRange`): `,`/space AND, `||` OR; `=`, `!=`, `<`, `<=`, `>`, `>=`;
/// a bare version is `=` (build metadata ignored). Wildcards, `~` and `^` are not modelled.
fn version_matches(constraint: &str, v: &semver::Version) -> bool {
    let core = semver::Version::new(v.major, v.minor, v.patch);
    let mut plain = core.clone();
    plain.pre = v.pre.clone();
    constraint.split("||").any(|alt| {
        alt.split([',', ' '])
            .filter(|t| !t.trim().is_empty())
            .all(|t| {
                let t = t.trim();
                let (op, rest) = ["<=", ">=", "!=", "<", ">", "="]
                    .iter()
                    .find_map(|op| t.strip_prefix(op).map(|r| (*op, r)))
                    .unwrap_or(("=", t));
                let Ok(want) = semver::Version::parse(rest.trim().trim_start_matches('v')) else {
                    return false;
                };
                let want = {
                    let mut w = want;
                    w.build = semver::BuildMetadata::EMPTY;
                    w
                };
                match op {
                    "=" => plain == want,
                    "!=" => plain != want,
                    "<" => plain < want,
                    "<=" => plain <= want,
                    ">" => plain > want,
                    _ => plain >= want,
                }
            })
    })
}

/// Every blob of an FBC directory (its YAML and JSON files, walked in name order).
fn blobs(dir: &std::path::Path) -> Vec<Value> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
            {
                files.push(p);
            }
        }
    }
    files.sort();
    files
        .iter()
        .flat_map(|f| olmctl::bundle::load::parse_file(f).unwrap_or_default())
        .filter_map(|n| serde_json::from_str(&n.to_json()).ok())
        .collect()
}

/// `CatalogResolver.Resolve` over the served catalogs the extension selects: in each catalog
/// the best candidate left after the channel, version and successor filters; across catalogs
/// a deprecated one yields to one that is not, then the highest `spec.priority` wins, and a
/// tie at the top (or nothing found) is the resolver's error.
fn resolve(
    inner: &Inner,
    ce: &Value,
    installed: Option<(&str, &semver::Version)>,
) -> Result<(Candidate, CatalogImage), String> {
    let api = &inner.api;
    let pkg = s(ce, "/spec/source/catalog/packageName");
    let version = s(ce, "/spec/source/catalog/version");
    let channels: Vec<String> = ce
        .pointer("/spec/source/catalog/channels")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let wanted_catalog = ce
        .pointer(
            "/spec/source/catalog/selector/matchLabels/olm.operatorframework.io~1metadata.name",
        )
        .and_then(Value::as_str);
    // Each catalog's best candidate: (candidate, content, catalog, spec.priority).
    let mut resolved: Vec<(Candidate, CatalogImage, String, i64)> = Vec::new();
    for cc in api.list(GROUP, "clustercatalogs") {
        let name = s(&cc, "/metadata/name");
        if wanted_catalog.is_some_and(|w| w != name) {
            continue;
        }
        let serving = cc
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Serving" && c["status"] == "True")
            });
        if !serving {
            return Err(format!(
                "error walking catalogs: error getting package {} from catalog {}: catalog {} is not being served",
                crate::api::selectors::go_quote(pkg),
                crate::api::selectors::go_quote(name),
                crate::api::selectors::go_quote(name)
            ));
        }
        let Some((content, all)) = inner.images.get(s(&cc, "/spec/source/image/ref")) else {
            continue;
        };
        let of_pkg = |schema: &str| {
            all.iter()
                .filter(|b| b["schema"] == schema && b["package"] == pkg)
                .collect::<Vec<_>>()
        };
        let chans: Vec<&Value> = of_pkg("olm.channel")
            .into_iter()
            .filter(|c| channels.is_empty() || channels.iter().any(|w| c["name"] == w.as_str()))
            .collect();
        let deprecated: Vec<String> = of_pkg("olm.deprecations")
            .iter()
            .flat_map(|d| d["entries"].as_array().cloned().unwrap_or_default())
            .filter(|e| e["reference"]["schema"] == "olm.bundle")
            .filter_map(|e| e["reference"]["name"].as_str().map(str::to_string))
            .collect();
        let mut found: Vec<Candidate> = Vec::new();
        for b in of_pkg("olm.bundle") {
            let name = s(b, "/name");
            let Some(v) = b["properties"]
                .as_array()
                .into_iter()
                .flatten()
                .find_map(|p| {
                    (p["type"] == "olm.package")
                        .then(|| semver::Version::parse(s(p, "/value/version")).ok())
                        .flatten()
                })
            else {
                continue;
            };
            let entries: Vec<&Value> = chans
                .iter()
                .flat_map(|c| c["entries"].as_array().into_iter().flatten())
                .filter(|e| e["name"] == name)
                .collect();
            if entries.is_empty() {
                continue;
            }
            if !version.is_empty() && !version_matches(version, &v) {
                continue;
            }
            // SuccessorsOf: the installed bundle itself, or a direct edge from it.
            if let Some((iname, iversion)) = installed
                && v != *iversion
                && !entries.iter().any(|e| {
                    e["replaces"] == iname
                        || e["skips"]
                            .as_array()
                            .is_some_and(|sk| sk.iter().any(|x| x == iname))
                        || e["skipRange"].as_str().is_some_and(|r| {
                            blang::Range::parse(r).is_some_and(|r| r.contains(iversion))
                        })
                })
            {
                continue;
            }
            found.push(Candidate {
                name: name.to_string(),
                version: v,
                image: s(b, "/image").to_string(),
                deprecated: deprecated.iter().any(|d| d == name),
            });
        }
        // This catalog's best: not deprecated first, then the higher version.
        found.sort_by(|a, b| (a.deprecated, &b.version).cmp(&(b.deprecated, &a.version)));
        if let Some(best) = found.into_iter().next() {
            let priority = cc
                .pointer("/spec/priority")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            resolved.push((best, content.clone(), name.to_string(), priority));
        }
    }
    // Across catalogs: a deprecated best yields to one that is not; then the highest
    // priority, only when the top two differ (`sort.Slice`, highest first).
    if resolved.iter().any(|r| !r.0.deprecated) {
        resolved.retain(|r| !r.0.deprecated);
    }
    resolved.sort_by_key(|r| std::cmp::Reverse(r.3));
    if resolved.len() > 1 && resolved[0].3 != resolved[1].3 {
        resolved.truncate(1);
    }
    if resolved.len() == 1 {
        let (c, content, _, _) = resolved.remove(0);
        return Ok((c, content));
    }
    // `resolutionError.Error()`: the matched catalogs sorted.
    let mut catalogs: Vec<String> = resolved.into_iter().map(|r| r.2).collect();
    catalogs.sort();
    let matched = catalogs.len();
    let mut msg = String::new();
    if let Some((_, v)) = installed {
        msg.push_str(&format!(
            "error upgrading from currently installed version {}: ",
            crate::api::selectors::go_quote(&v.to_string())
        ));
    }
    msg.push_str(&format!(
        "{} for package {} ",
        if matched > 1 {
            "found bundles"
        } else {
            "no bundles found"
        },
        crate::api::selectors::go_quote(pkg)
    ));
    if !version.is_empty() {
        msg.push_str(&format!(
            "matching version {} ",
            crate::api::selectors::go_quote(version)
        ));
    }
    if !channels.is_empty() {
        msg.push_str(&format!("in channels [{}] ", channels.join(" ")));
    }
    if matched > 1 {
        msg.push_str(&format!(
            "in multiple catalogs with the same priority [{}] ",
            catalogs.join(" ")
        ));
    }
    Err(msg.trim_end().to_string())
}

/// The resource an object is written as, and the namespace of the request: discovery's plural
/// and scope (a cluster-scoped object's `metadata.namespace` is ignored, as the API server
/// ignores it); a kind not served is written under its lowercase plural where it says.
fn served<'a>(api: &ApiServer, o: &'a Value) -> (String, &'a str) {
    let kind = s(o, "/kind");
    match api.served(s(o, "/apiVersion"), kind) {
        Some((plural, true)) => (plural, s(o, "/metadata/namespace")),
        Some((plural, false)) => (plural, ""),
        None => (
            format!("{}s", kind.to_lowercase()),
            s(o, "/metadata/namespace"),
        ),
    }
}

/// The CRD upgrade-safety preflight (`crdupgradesafety.Preflight`): each rendered CRD against
/// the live one; an error per CRD that fails.
fn preflight(api: &ApiServer, objects: &[Value]) -> Result<(), String> {
    let mut errs = Vec::new();
    for crd in objects
        .iter()
        .filter(|o| o["kind"] == "CustomResourceDefinition")
    {
        let name = s(crd, "/metadata/name");
        let Some(live) = api.get(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            "",
            name,
        ) else {
            continue;
        };
        let problems = crdify::preflight(&live, crd);
        if !problems.is_empty() {
            errs.push(format!(
                "validating upgrade for CRD {}: {}",
                crate::api::selectors::go_quote(name),
                problems.join("\n")
            ));
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("\n"))
    }
}

/// `status.install` and the Installed condition for `bundle`, installed at `generation`.
fn installed_status(bundle: &Candidate, generation: &Value) -> (Value, Value) {
    (
        json!({"bundle": {"name": bundle.name, "version": bundle.version.to_string()}}),
        cond(
            "Installed",
            "True",
            "Succeeded",
            &format!("Installed bundle {} successfully", bundle.image),
            generation,
        ),
    )
}

/// operator-controller's reconcile of one ClusterExtension.
fn operator_controller(inner: &mut Inner, ce: &Value) {
    let api = inner.api.clone();
    let name = s(ce, "/metadata/name").to_string();
    let ns = s(ce, "/spec/namespace").to_string();
    let generation = ce["metadata"]["generation"].clone();
    let finalizers = [
        "olm.operatorframework.io/cleanup-unpack-cache",
        "olm.operatorframework.io/cleanup-contentmanager-cache",
    ];
    if ce.pointer("/metadata/deletionTimestamp").is_some() {
        // Uninstall: the release's objects, then the finalizers.
        for (group, plural, ons, oname) in owned(&api, &name) {
            api.delete(&group, &plural, &ons, &oname);
        }
        api.merge(
            GROUP,
            "clusterextensions",
            "",
            &name,
            &json!({"metadata": {"finalizers": null}}),
            false,
        );
        inner.steps.push(format!("extension {name} uninstalled"));
        return;
    }
    if ce.pointer("/metadata/finalizers").is_none() {
        api.merge(
            GROUP,
            "clusterextensions",
            "",
            &name,
            &json!({"metadata": {"finalizers": finalizers}}),
            false,
        );
    }
    let installed_name = s(ce, "/status/install/bundle/name").to_string();
    let installed_version = semver::Version::parse(s(ce, "/status/install/bundle/version")).ok();
    let installed = installed_version
        .as_ref()
        .map(|v| (installed_name.as_str(), v));
    let mut conditions = Vec::new();
    let mut status_install = None;
    let outcome: Result<(), String> = (|| {
        // ServiceAccountValidator (v1.10).
        let sa = s(ce, "/spec/serviceAccount/name").to_string();
        if inner.line == Line::V1_10 && api.get("", "serviceaccounts", &ns, &sa).is_none() {
            return Err(format!(
                "operation cannot proceed due to the following validation error(s): service account {} not found in namespace {}",
                crate::api::selectors::go_quote(&sa),
                crate::api::selectors::go_quote(&ns)
            ));
        }
        let (bundle, content) = resolve(inner, ce, installed).map_err(|e| match installed {
            None => format!("failed to resolve bundle: {e}"),
            Some(_) => format!("failed to resolve bundle, retrying: {e}"),
        })?;
        if installed.is_some_and(|(n, _)| n == bundle.name) {
            // Nothing to apply; the Installed condition is set again at this generation
            // (`setInstalledStatusFromRevisionStates` runs on every reconcile).
            let (install, c) = installed_status(&bundle, &generation);
            status_install = Some(install);
            conditions.push(c);
            return Ok(());
        }
        let wrap = |e: String| {
            format!(
                "error for resolved bundle {} with version {}: {e}",
                crate::api::selectors::go_quote(&bundle.name),
                crate::api::selectors::go_quote(&bundle.version.to_string())
            )
        };
        let mut objects = match content.bundles.get(&bundle.name) {
            None => return Err(wrap("bundle content not found".into())),
            Some(Rendered::Refused(e)) => return Err(wrap(e.clone())),
            Some(Rendered::Objects { namespace, .. }) if *namespace != ns => {
                // A test set-up error: the recording is for another install namespace.
                return Err(wrap(format!(
                    "the double holds the rendering of this bundle for install namespace {namespace}, not {ns}"
                )));
            }
            Some(Rendered::Objects { objects, .. }) => objects.clone(),
        };
        if inner.line == Line::V1_10 {
            // v1.10's renderer (b5f05bbf) sets no olm.operatorNamespace on the pods.
            for o in objects.iter_mut().filter(|o| o["kind"] == "Deployment") {
                if let Some(a) = o
                    .pointer_mut("/spec/template/metadata/annotations")
                    .and_then(Value::as_object_mut)
                {
                    a.remove("olm.operatorNamespace");
                }
            }
        }
        if s(ce, "/spec/install/preflight/crdUpgradeSafety/enforcement") != "None" {
            preflight(&api, &objects).map_err(wrap)?;
        }
        if inner.line == Line::V1_10 {
            let user = UserInfo::service_account(&ns, &sa);
            let mut rbac = api.rbac();
            for o in &objects {
                let g = s(o, "/apiVersion")
                    .rsplit_once('/')
                    .map_or("", |(g, _)| g)
                    .to_string();
                let (resource, namespace) = served(&api, o);
                // Helm's `Client.Update` creates what is new and patches what exists (by
                // name: the escalation check of an update sees the request's name).
                let old = api.get(&g, &resource, namespace, s(o, "/metadata/name"));
                let attrs = if old.is_some() {
                    Attributes::resource(user.clone(), "patch", &g, &resource)
                        .in_namespace(namespace)
                        .named(s(o, "/metadata/name"))
                } else {
                    Attributes::resource(user.clone(), "create", &g, &resource)
                        .in_namespace(namespace)
                };
                if let Decision::Deny(reason) = authorize(&attrs, &rbac) {
                    return Err(wrap(
                        s(&forbidden_status(&attrs, &reason), "/message").to_string(),
                    ));
                }
                match &old {
                    Some(old) => check_update(&user, o, Some(old), &rbac),
                    None => check_write(&user, o, false, &rbac),
                }
                .map_err(&wrap)?;
                if matches!(
                    s(o, "/kind"),
                    "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
                ) {
                    rbac.push(o.clone());
                }
            }
        }
        // Helm.Apply: every object labelled with its owner, then the old release's leftovers.
        let before = owned(&api, &name);
        for o in &mut objects {
            o["metadata"]["labels"]["olm.operatorframework.io/owner-kind"] =
                json!("ClusterExtension");
            o["metadata"]["labels"]["olm.operatorframework.io/owner-name"] = json!(name);
            let (plural, namespace) = served(&api, o);
            if namespace.is_empty()
                && let Some(m) = o["metadata"].as_object_mut()
            {
                m.remove("namespace");
            }
            api.insert(&plural, o.clone());
        }
        let now_keys: Vec<(String, String, String, String)> = objects
            .iter()
            .map(|o| {
                (
                    s(o, "/apiVersion")
                        .rsplit_once('/')
                        .map_or("", |(g, _)| g)
                        .to_string(),
                    served(&api, o).0,
                    s(o, "/metadata/namespace").to_string(),
                    s(o, "/metadata/name").to_string(),
                )
            })
            .collect();
        // The old release's leftovers: Helm's `Client.Update` gets and deletes each one (on
        // v1.10 as the ServiceAccount); a failure is logged and the object left in place.
        for k in before.into_iter().filter(|k| !now_keys.contains(k)) {
            if inner.line == Line::V1_10 {
                let user = UserInfo::service_account(&ns, &sa);
                let rbac = api.rbac();
                let denied = ["get", "delete"].iter().find_map(|verb| {
                    let attrs = Attributes::resource(user.clone(), verb, &k.0, &k.1)
                        .in_namespace(&k.2)
                        .named(&k.3);
                    match authorize(&attrs, &rbac) {
                        Decision::Deny(reason) => {
                            Some(s(&forbidden_status(&attrs, &reason), "/message").to_string())
                        }
                        Decision::Allow => None,
                    }
                });
                if let Some(why) = denied {
                    inner
                        .steps
                        .push(format!("helm: failed to delete {:?}: {why}", k.3));
                    continue;
                }
            }
            api.delete(&k.0, &k.1, &k.2, &k.3);
        }
        let (install, c) = installed_status(&bundle, &generation);
        status_install = Some(install);
        conditions.push(c);
        Ok(())
    })();
    match &outcome {
        Ok(()) => {
            conditions.push(cond(
                "Progressing",
                "True",
                "Succeeded",
                "Desired state reached",
                &generation,
            ));
        }
        Err(e) => {
            conditions.push(cond("Progressing", "True", "Retrying", e, &generation));
            if installed.is_none() {
                conditions.push(cond(
                    "Installed",
                    "False",
                    "Failed",
                    "No bundle installed",
                    &generation,
                ));
            }
        }
    }
    for (t, m) in [
        ("Deprecated", "not deprecated"),
        ("PackageDeprecated", "package not deprecated"),
        ("ChannelDeprecated", "channel not deprecated"),
        ("BundleDeprecated", "bundle not deprecated"),
    ] {
        conditions.push(cond(t, "False", "NotDeprecated", m, &generation));
    }
    let new = set_conditions(ce, conditions);
    let mut status = json!({"conditions": new, "observedGeneration": generation});
    if let Some(i) = status_install {
        status["install"] = i;
    }
    let same = ce.pointer("/status/conditions") == Some(&status["conditions"])
        && ce.pointer("/status/install") == status.get("install");
    if same {
        return;
    }
    inner.steps.push(match &outcome {
        Ok(()) => format!(
            "extension {name} installed {}",
            s(&status, "/install/bundle/name")
        ),
        Err(e) => format!("extension {name} retrying: {e}"),
    });
    api.merge(
        GROUP,
        "clusterextensions",
        "",
        &name,
        &json!({"status": status}),
        true,
    );
}

/// The objects an extension's release holds (by its owner labels): group, plural, namespace,
/// name.
fn owned(api: &ApiServer, extension: &str) -> Vec<(String, String, String, String)> {
    let kinds = [
        ("", "serviceaccounts"),
        ("", "services"),
        ("", "configmaps"),
        ("", "secrets"),
        ("apps", "deployments"),
        ("rbac.authorization.k8s.io", "roles"),
        ("rbac.authorization.k8s.io", "rolebindings"),
        ("rbac.authorization.k8s.io", "clusterroles"),
        ("rbac.authorization.k8s.io", "clusterrolebindings"),
        ("apiextensions.k8s.io", "customresourcedefinitions"),
        (
            "admissionregistration.k8s.io",
            "validatingwebhookconfigurations",
        ),
        (
            "admissionregistration.k8s.io",
            "mutatingwebhookconfigurations",
        ),
    ];
    let mut out = Vec::new();
    for (g, p) in kinds {
        for o in api.list(g, p) {
            if o.pointer("/metadata/labels/olm.operatorframework.io~1owner-name")
                == Some(&json!(extension))
            {
                out.push((
                    g.to_string(),
                    p.to_string(),
                    s(&o, "/metadata/namespace").to_string(),
                    s(&o, "/metadata/name").to_string(),
                ));
            }
        }
    }
    out
}
