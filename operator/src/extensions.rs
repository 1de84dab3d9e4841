//! OLM v1 (issue 31 §5): the ClusterExtensions an UpgradePolicy selects
//! (`spec.clusterExtensionSelector`, those installing into the policy's namespace). The gate
//! owns their `spec.source.catalog.version`: the decision is the library's
//! (`olmctl::gate::extension::evaluate`, the same as `olmctl gate evaluate`), and this module
//! gives it what it reads and writes what it decides:
//!
//! - the catalog content, as operator-controller reads it: `GET <status.urls.base>/api/v1/all`
//!   of each `Serving` ClusterCatalog the extension selects (`catalogmetadata/client/client.go
//!   :: Client.PopulateCache, validateCatalog`), kept per catalog while its
//!   `status.resolvedSource.image.ref` is the same (upstream caches by that reference) and never
//!   kept when the answer is not 200;
//! - the live CRDs the package's bundles ship, read by name as the InstallPlan path reads its
//!   CRDs (`olmctl::gate::extension::crd_names`);
//! - a move of the pin: the extension and its catalogs read again from the API (not the
//!   caches), decided again, and `ExtensionDecision::pin_patch` sent (guarded by the
//!   resourceVersion the decision was made on, stamping `olmctl.dev/pinned-at`) only while
//!   this replica leads. operator-controller then resolves the pinned direct successor, runs
//!   its CRD preflight and installs it (`status.install.bundle`), and the gate steps again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use olmctl::fbc::decl::DeclarativeConfig;
use olmctl::gate::catalogs::Contents;
use olmctl::gate::extension::{ExtContext, ExtVerdict, ExtensionDecision};
use olmctl::gate::objects::{Object, Objects};
use olmctl::gate::policy::Policy;

use crate::cluster;
use crate::crd::{ExtensionStatus, ReasonStatus, UpgradePolicyStatus};

/// A catalog fetch: at most this long for the whole answer.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// The content of ClusterCatalogs, fetched from catalogd's HTTP API.
pub struct Catalogs {
    /// `--catalogd-cas-dir`: read again whenever its files change.
    ca_dir: Option<PathBuf>,
    /// The client, and the CA directory's state it was built for.
    http: Mutex<(Option<DirState>, Result<reqwest::Client, String>)>,
    /// By catalog and package name: the key it was fetched for (resolved reference and base
    /// URL) and the package's content.
    cache: Mutex<HashMap<(String, String), Fetched>>,
}

/// A package's content, with the key it was fetched for.
type Fetched = (String, Arc<DeclarativeConfig>);

/// A CA directory's files as `stat` sees them through symlinks (a ConfigMap volume's files
/// are links into a directory the kubelet swaps): name, length and modification time.
type DirState = Vec<(String, u64, Option<std::time::SystemTime>)>;

impl Default for Catalogs {
    fn default() -> Self {
        Catalogs {
            ca_dir: None,
            http: Mutex::new((None, client(Vec::new()))),
            cache: Mutex::new(HashMap::new()),
        }
    }
}

fn is_serving(cc: &Object) -> bool {
    olmctl::bundle::load::list_at(&cc.node, &["status", "conditions"])
        .iter()
        .any(|c| {
            olmctl::bundle::load::str_at(c, &["type"]) == Some("Serving")
                && olmctl::bundle::load::str_at(c, &["status"]) == Some("True")
        })
}

/// An HTTP client trusting the system's roots and `roots`.
fn client(roots: Vec<reqwest::Certificate>) -> Result<reqwest::Client, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut b = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .timeout(FETCH_TIMEOUT)
        .user_agent(concat!("olmctl-operator/", env!("CARGO_PKG_VERSION")));
    for c in roots {
        b = b.add_root_certificate(c);
    }
    b.build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

/// The regular files of `dir` (symlinks followed; directories, such as a ConfigMap volume's
/// `..data`, skipped), sorted by name.
fn dir_state(dir: &Path) -> Result<DirState, String> {
    let mut state = Vec::new();
    for e in
        std::fs::read_dir(dir).map_err(|e| format!("--catalogd-cas-dir {}: {e}", dir.display()))?
    {
        let e = e.map_err(|e| format!("--catalogd-cas-dir {}: {e}", dir.display()))?;
        let path = e.path();
        let meta = std::fs::metadata(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if meta.is_file() {
            let name = e.file_name().to_string_lossy().into_owned();
            state.push((name, meta.len(), meta.modified().ok()));
        }
    }
    state.sort();
    Ok(state)
}

/// The certificates of the files of `dir`, as operator-controller's `NewCertPool` reads its
/// `--catalogd-cas-dir` (`internal/shared/util/http/certutil.go`): every regular file, symlinks
/// followed; a file without a PEM certificate is skipped; a directory with files but no
/// certificate is an error. Unlike upstream, an empty directory is not: the Deployment mounts
/// an optional ConfigMap there, empty until the deployer creates it.
fn read_roots(dir: &Path, state: &DirState) -> Result<Vec<reqwest::Certificate>, String> {
    let mut roots = Vec::new();
    for (name, _, _) in state {
        let f = dir.join(name);
        let pem = std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let certs = reqwest::Certificate::from_pem_bundle(&pem)
            .map_err(|e| format!("{}: not PEM certificates: {e}", f.display()))?;
        roots.extend(certs);
    }
    if roots.is_empty() && !state.is_empty() {
        return Err(format!(
            "--catalogd-cas-dir {}: no certificates found in {} file(s)",
            dir.display(),
            state.len()
        ));
    }
    Ok(roots)
}

impl Catalogs {
    /// A client that also trusts the certificate authorities of the files in `dir` (PEM), as
    /// operator-controller's `--catalogd-cas-dir` does for catalogd's HTTPS (the standard install
    /// serves it with a cert-manager CA). The directory is read again before a fetch whenever
    /// its files changed, as upstream's `CertPoolWatcher` rebuilds its pool on a change of the
    /// directory: a CA mounted or rotated later is used without a restart. Errors when `dir`
    /// cannot be read or holds files but no certificate (upstream exits then too).
    pub fn with_catalogd_cas_dir(dir: &Path) -> Result<Self, String> {
        let state = dir_state(dir)?;
        let roots = read_roots(dir, &state)?;
        Ok(Catalogs {
            ca_dir: Some(dir.to_path_buf()),
            http: Mutex::new((Some(state), client(roots))),
            cache: Mutex::new(HashMap::new()),
        })
    }

    /// The client to fetch with, rebuilt first if the CA directory changed.
    fn http(&self) -> Result<reqwest::Client, String> {
        let mut http = self.http.lock().map_err(|e| e.to_string())?;
        if let Some(dir) = &self.ca_dir {
            let state = dir_state(dir)?;
            if http.0.as_ref() != Some(&state) {
                let built = read_roots(dir, &state).and_then(client);
                *http = (Some(state), built);
            }
        }
        http.1.clone()
    }

    /// What to add to a failed HTTPS fetch's error when `--catalogd-cas-dir` holds no
    /// certificate yet.
    fn no_ca_hint(&self, url: &str) -> String {
        match &self.ca_dir {
            Some(dir)
                if url.starts_with("https://") && dir_state(dir).is_ok_and(|s| s.is_empty()) =>
            {
                format!(
                    " (--catalogd-cas-dir {} holds no certificate: put catalogd's CA there, see the README's \"Trusting catalogd\")",
                    dir.display()
                )
            }
            _ => String::new(),
        }
    }

    /// The content of `package` in the ClusterCatalog `cc`, as operator-controller's
    /// `Client.PopulateCache` gets it after `validateCatalog`: the catalog must be `Serving`
    /// and resolved; `GET <status.urls.base>/api/v1/all`; only a 200 is read, and of it only
    /// the package's blobs are kept ([`olmctl::fbc::lines`]), which is all a decision reads.
    pub async fn content(
        &self,
        cc: &Object,
        package: &str,
    ) -> Result<Arc<DeclarativeConfig>, String> {
        let name = cc.name();
        if !is_serving(cc) {
            return Err(format!("catalog {name:?} is not being served"));
        }
        let Some(resolved) = cc.str(&["status", "resolvedSource", "image", "ref"]) else {
            return Err(format!("catalog {name:?} has not been resolved"));
        };
        let base = cc.str(&["status", "urls", "base"]).unwrap_or_default();
        if base.is_empty() {
            return Err(format!("catalog {name:?} has no status.urls.base"));
        }
        let key = format!("{resolved} {base}");
        let at = (name.to_string(), package.to_string());
        if let Some((k, c)) = self.cache.lock().ok().and_then(|m| m.get(&at).cloned())
            && k == key
        {
            return Ok(c);
        }
        let url = format!("{}/api/v1/all", base.trim_end_matches('/'));
        let http = self.http().map_err(|e| format!("catalog {name:?}: {e}"))?;
        let resp =
            http.get(&url).send().await.map_err(|e| {
                format!("catalog {name:?}: GET {url}: {e}{}", self.no_ca_hint(&url))
            })?;
        if resp.status() != reqwest::StatusCode::OK {
            return Err(format!(
                "catalog {name:?}: GET {url}: error: received unexpected response status code {}",
                resp.status().as_u16()
            ));
        }
        // Read as it arrives, keeping only the package's blobs (olmctl::fbc::lines): a whole
        // community catalog parsed at once would not fit the pod's memory.
        let mut resp = resp;
        let mut lines = olmctl::fbc::lines::PackageLines::new(package);
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| format!("catalog {name:?}: GET {url}: {e}"))?
        {
            lines
                .push(&chunk)
                .map_err(|e| format!("catalog {name:?}: {url}: {e}"))?;
        }
        let text = lines
            .finish()
            .map_err(|e| format!("catalog {name:?}: {url}: {e}"))?;
        let mut cfg = DeclarativeConfig::default();
        let file: Arc<std::path::Path> = Arc::from(std::path::Path::new(&url));
        for p in olmctl::fbc::load::parse_text(&text, &file, &mut cfg) {
            if let olmctl::fbc::load::LoadProblem::Syntax { error, .. } = p {
                return Err(format!(
                    "catalog {name:?}: {url}:{}:{}: {}",
                    error.line, error.column, error.message
                ));
            }
        }
        let cfg = Arc::new(cfg);
        if let Ok(mut m) = self.cache.lock() {
            m.insert(at, (key, cfg.clone()));
        }
        Ok(cfg)
    }
}

/// The ClusterExtensions a reconcile of namespace `ns` looks at: those installing into it.
pub fn in_namespace(ce: &DynamicObject, ns: &str) -> bool {
    ce.data.pointer("/spec/namespace").and_then(|v| v.as_str()) == Some(ns)
}

/// What a decision for one extension reads: the extension, every ClusterCatalog, the live
/// CRDs its package ships, the merged content of the catalogs it selects, and each one's own
/// content by name (to resolve across catalogs as OLM v1 does).
async fn inputs(
    client: &Client,
    catalogs: &Catalogs,
    ce: &DynamicObject,
    ccs: &[DynamicObject],
) -> Result<(Objects, Arc<DeclarativeConfig>, Contents), String> {
    let err = |e: kube::Error| e.to_string();
    let mut objects = Objects::default();
    cluster::add(&mut objects, "ClusterExtension", ce).map_err(err)?;
    for cc in ccs {
        cluster::add(&mut objects, "ClusterCatalog", cc).map_err(err)?;
    }
    let package = ce
        .data
        .pointer("/spec/source/catalog/packageName")
        .and_then(|v| v.as_str())
        .unwrap_or_default();
    let mut by_name = Contents::new();
    let cfg = {
        let Some(ce_obj) = objects.cluster_extensions.first() else {
            return Err("the ClusterExtension does not read".into());
        };
        let selected: Vec<Object> = olmctl::gate::extension::selected_catalogs(&objects, ce_obj)
            .into_iter()
            .filter(|c| is_serving(c))
            .cloned()
            .collect();
        for cc in &selected {
            by_name.insert(cc.name().to_string(), catalogs.content(cc, package).await?);
        }
        // One catalog (the usual case) is used as fetched; several are merged.
        if by_name.len() == 1 {
            by_name.values().next().cloned().unwrap_or_default()
        } else {
            let mut cfg = DeclarativeConfig::default();
            for c in by_name.values() {
                cfg.merge((**c).clone());
            }
            Arc::new(cfg)
        }
    };
    let crd_api: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &cluster::resource("CustomResourceDefinition"),
    );
    // Names from the catalog: only valid CRD names are asked for ([`cluster::valid`]).
    for name in olmctl::gate::extension::crd_names(&cfg, package)
        .into_iter()
        .filter(|n| cluster::valid(olmctl::names::Rule::Subdomain, n))
    {
        if let Some(o) = crd_api.get_opt(&name).await.map_err(err)? {
            cluster::add(&mut objects, "CustomResourceDefinition", &o).map_err(err)?;
        }
    }
    Ok((objects, cfg, by_name))
}

/// The decision for `ce` by `policies` (none when no policy covers it).
pub async fn decide(
    client: &Client,
    catalogs: &Catalogs,
    policies: &[Policy],
    ce: &DynamicObject,
    ccs: &[DynamicObject],
    now: jiff::Timestamp,
    kube: Option<&semver::Version>,
) -> Result<Option<ExtensionDecision>, String> {
    // Policies first: no catalog is fetched for an extension nobody governs.
    let mut probe = Objects::default();
    cluster::add(&mut probe, "ClusterExtension", ce).map_err(|e| e.to_string())?;
    let covered = probe.cluster_extensions.first().is_some_and(|o| {
        policies
            .iter()
            .any(|p| olmctl::gate::extension::covers(p, o))
    });
    if !covered {
        return Ok(None);
    }
    let (objects, cfg, contents) = inputs(client, catalogs, ce, ccs).await?;
    Ok(olmctl::gate::extension::evaluate(&ExtContext {
        policies,
        objects: &objects,
        catalog: &cfg,
        contents: &contents,
        now,
        kube,
    })
    .into_iter()
    .next())
}

/// Reads the extension and the catalogs again from the API, decides again, and writes the pin
/// when the decision stands: [`ExtensionDecision::pin_patch`], one merge patch guarded by the
/// resourceVersion, sent only while `leading()`. Returns the decision written, or `None` when
/// the extension or the decision changed meanwhile (or a 409): judged again on its next event.
#[allow(clippy::too_many_arguments)]
pub async fn move_checked(
    client: &Client,
    catalogs: &Catalogs,
    policies: &[Policy],
    d: &ExtensionDecision,
    catalog_names: &[String],
    now: jiff::Timestamp,
    kube: Option<&semver::Version>,
    leading: impl Fn() -> bool,
) -> Result<Option<ExtensionDecision>, crate::controller::Error> {
    let ce_api = cluster_api(client, "ClusterExtension");
    let Some(ce) = ce_api.get_opt(&d.name).await? else {
        return Ok(None);
    };
    let cc_api = cluster_api(client, "ClusterCatalog");
    let mut ccs = Vec::new();
    for n in catalog_names {
        if let Some(c) = cc_api.get_opt(n).await? {
            ccs.push(c);
        }
    }
    let again = decide(client, catalogs, policies, &ce, &ccs, now, kube)
        .await
        .map_err(crate::controller::Error::Catalog)?;
    let Some(re) = again else {
        return Ok(None);
    };
    if re.pin != d.pin || !re.changes_pin() {
        return Ok(None);
    }
    if !leading() {
        tracing::info!(cluster_extension = %d.name, "pin not moved: this replica no longer leads");
        return Ok(None);
    }
    let Some(patch) = re.pin_patch(now) else {
        return Ok(None);
    };
    match ce_api
        .patch(&re.name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    tracing::info!(cluster_extension = %re.name, pin = ?re.pin, from = %re.version, "pin moved");
    Ok(Some(re))
}

/// The cluster-scoped dynamic API of `kind` (`ClusterExtension`, `ClusterCatalog`).
pub fn cluster_api(client: &Client, kind: &str) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &cluster::resource(kind))
}

/// The ClusterCatalogs an extension selects, by name (the move's re-check reads these again).
pub fn selected_names(ce: &DynamicObject, ccs: &[DynamicObject]) -> Vec<String> {
    let mut objects = Objects::default();
    if cluster::add(&mut objects, "ClusterExtension", ce).is_err() {
        return Vec::new();
    }
    for cc in ccs {
        let _ = cluster::add(&mut objects, "ClusterCatalog", cc);
    }
    let Some(o) = objects.cluster_extensions.first() else {
        return Vec::new();
    };
    olmctl::gate::extension::selected_catalogs(&objects, o)
        .into_iter()
        .map(|c| c.name().to_string())
        .collect()
}

/// `Moved`, `Current`, `Waiting` or `Held`.
pub fn word(v: ExtVerdict) -> &'static str {
    match v {
        ExtVerdict::Move => "Moved",
        ExtVerdict::Current => "Current",
        ExtVerdict::Wait => "Waiting",
        ExtVerdict::Hold => "Held",
    }
}

/// The reasons as the status lists them.
pub fn reasons(d: &ExtensionDecision) -> Vec<ReasonStatus> {
    d.reasons
        .iter()
        .map(|r| ReasonStatus {
            code: r.code.into(),
            effect: r.effect.as_str().into(),
            message: r.message.clone(),
        })
        .collect()
}

/// The policy's entries for the extensions `policy` governs, `since` kept from `previous`
/// while the decision and reasons are the same.
pub fn status_entries(
    previous: &UpgradePolicyStatus,
    policy: &str,
    decisions: &[ExtensionDecision],
    now: jiff::Timestamp,
) -> Vec<ExtensionStatus> {
    let mut out: Vec<ExtensionStatus> = decisions
        .iter()
        .filter(|d| d.policies.iter().any(|p| p == policy))
        .map(|d| {
            let rs = reasons(d);
            let old = previous
                .cluster_extensions
                .iter()
                .find(|x| x.name == d.name);
            let same = old.is_some_and(|o| o.decision == word(d.decision) && o.reasons == rs);
            ExtensionStatus {
                name: d.name.clone(),
                package: d.package.clone(),
                installed_bundle: d.installed_bundle.clone(),
                installed: d.installed.clone(),
                pin: d
                    .pin
                    .clone()
                    .or_else(|| Some(d.version.clone()).filter(|v| !v.is_empty())),
                next_bundle: d.next.as_ref().map(|s| s.bundle.clone()),
                decision: word(d.decision).into(),
                reasons: rs,
                since: match old {
                    Some(o) if same => o.since.clone(),
                    _ => now.to_string(),
                },
                next_check: match d.decision {
                    ExtVerdict::Wait | ExtVerdict::Hold => d.requeue_at.map(|t| t.to_string()),
                    _ => None,
                },
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The Ready condition's summary of the extensions' entries.
pub fn summary(entries: &[ExtensionStatus]) -> String {
    let count = |w: &str| entries.iter().filter(|e| e.decision == w).count();
    format!(
        "{} ClusterExtension(s): {} moved, {} current, {} waiting, {} held",
        entries.len(),
        count("Moved"),
        count("Current"),
        count("Waiting"),
        count("Held")
    )
}
