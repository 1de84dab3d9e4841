//! Talking to registries: the distribution API over [`super::net`], plus what users expect
//! around it.
//!
//! - Plain HTTP only with `plain_http` or for loopback hosts; TLS is verified unless
//!   `insecure`.
//! - Credentials per registry from [`super::auth`]; flag credentials apply only to the
//!   registry the command targets, so they never leak to a base image's registry.
//! - Transient failures (connection errors, timeouts, 5xx, 429) are retried with exponential
//!   backoff. Every attempt of an operation (authentication included) is bounded by
//!   `timeout`, so a silent registry costs at most `(retries + 1) x timeout` plus backoff.
//! - Pulls and the token flow go through [`super::net`], which bounds every answer while it
//!   streams (manifests, configs, blobs, tokens, error bodies).
//! - Blobs the target already has are not uploaded again; blobs from another repository of
//!   the same registry are mounted, others are copied.
//! - Every pulled blob and manifest is checked against its digest and declared size.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::future::Future;
use std::net::IpAddr;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use oci_client::Reference;
use oci_client::client::ClientProtocol;
use serde_json::Value;

use super::auth::{self, Credential};
use super::digest;
use super::image::{Artifact, Blob, BlobData, Descriptor, Platform, is_attestation};
use super::media;
use super::net::{
    Authz, Failure, IDLE_TIMEOUT, MAX_MANIFEST, Net, human_duration, human_size, read_limited,
    redact,
};

/// Default of `--timeout`: generous enough for a 2 GiB blob over a slow (~4 MB/s) link.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Longest wait between two attempts: the backoff doubles up to this.
pub const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Largest image config pulled: configs are JSON parsed in memory, real ones are KiBs.
pub const MAX_CONFIG: u64 = 64 << 20;

/// How to reach registries.
#[derive(Clone)]
pub struct Options {
    /// Use plain HTTP for every registry (loopback hosts always use it).
    pub plain_http: bool,
    /// Skip TLS certificate verification.
    pub insecure: bool,
    /// Credentials from flags, used for the registries of the command's targets only.
    pub credentials: Option<Credential>,
    /// Retries after the first attempt for transient failures.
    pub retries: u32,
    /// First backoff delay; doubles on each retry.
    pub backoff: Duration,
    /// Where retries and upload progress are reported (large blobs only).
    pub events: super::events::Sink,
    /// Largest blob a pull accepts (compressed bytes).
    pub max_blob: u64,
    /// Longest time one attempt of one operation may take (`--timeout`).
    pub timeout: Duration,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("plain_http", &self.plain_http)
            .field("insecure", &self.insecure)
            .field("credentials", &self.credentials.as_ref().map(|_| "<set>"))
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .field("max_blob", &self.max_blob)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            plain_http: false,
            insecure: false,
            credentials: None,
            retries: 4,
            backoff: Duration::from_millis(250),
            events: super::events::silent(),
            max_blob: 2 << 30,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// What a push did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PushReport {
    /// Blobs uploaded.
    pub uploaded: Vec<String>,
    /// Blobs the registry already had.
    pub existing: Vec<String>,
    /// Blobs mounted from another repository.
    pub mounted: Vec<String>,
    /// Blobs copied from another registry.
    pub copied: Vec<String>,
    /// Bytes uploaded.
    pub bytes: u64,
    /// Manifests written (children of an index, then the tagged one).
    pub manifests: usize,
    /// Retries that were needed.
    pub retries: u32,
}

/// Parses an image reference, naming it in the error.
pub fn parse_ref(s: &str) -> Result<Reference, String> {
    s.parse::<Reference>()
        .map_err(|e| format!("invalid image reference {s:?}: {e}"))
}

/// True for `localhost`, `127.0.0.0/8` and `::1`, with or without a port.
pub fn is_loopback(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        rest.split(']').next().unwrap_or(rest)
    } else if registry.matches(':').count() == 1 {
        registry.split(':').next().unwrap_or(registry)
    } else {
        registry
    };
    host == "localhost"
        || host.ends_with(".localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The protocol choice: HTTP for everything with `plain_http`, else HTTPS except loopback.
pub fn protocol(plain_http: bool, registries: &[&str]) -> ClientProtocol {
    if plain_http {
        return ClientProtocol::Http;
    }
    let lo: BTreeSet<String> = registries
        .iter()
        .filter(|r| is_loopback(r))
        .map(|r| r.to_string())
        .collect();
    ClientProtocol::HttpsExcept(lo.into_iter().collect())
}

/// A registry client for one command.
pub struct Registry {
    net: Net,
    opts: Options,
    flag_registries: BTreeSet<String>,
    creds: Mutex<HashMap<String, Credential>>,
    retries: AtomicU32,
}

/// Installs the process-wide rustls crypto provider (ring) once. oci-client is built without
/// a provider so that it does not pull in a second one next to kube's.
fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

impl Registry {
    /// A client for a command touching `refs`; flag credentials go only to the registries of
    /// `targets` (the images the user named, never a base image).
    pub fn new(opts: Options, targets: &[&Reference], refs: &[&Reference]) -> Registry {
        install_crypto();
        let regs: Vec<&str> = refs.iter().map(|r| r.resolve_registry()).collect();
        let proto = protocol(opts.plain_http, &regs);
        Registry {
            net: Net::new(proto, opts.insecure, opts.timeout),
            flag_registries: targets
                .iter()
                .map(|t| auth::canonical_registry(t.resolve_registry()))
                .collect(),
            opts,
            creds: Mutex::new(HashMap::new()),
            retries: AtomicU32::new(0),
        }
    }

    /// Retries used so far.
    pub fn retries_used(&self) -> u32 {
        self.retries.load(Ordering::Relaxed)
    }

    /// The credential for `r`'s registry (flags for a target registry, else auth files).
    fn credential(&self, r: &Reference) -> Result<Credential, String> {
        let reg = r.resolve_registry().to_string();
        if let Some(c) = self.creds.lock().ok().and_then(|g| g.get(&reg).cloned()) {
            return Ok(c);
        }
        let canon = auth::canonical_registry(&reg);
        let cred = match &self.opts.credentials {
            Some(c) if self.flag_registries.contains(&canon) => c.clone(),
            _ => {
                let env = |k: &str| std::env::var(k).ok();
                let files = auth::auth_files(&env);
                auth::lookup(r.registry(), &files)?
                    .map(|f| f.credential)
                    .unwrap_or(Credential::Anonymous)
            }
        };
        if let Ok(mut g) = self.creds.lock() {
            g.insert(reg, cred.clone());
        }
        Ok(cred)
    }

    /// Authorizes requests to `r`'s repository (pulls, or pushes with `push`).
    async fn authorize(&self, r: &Reference, push: bool) -> Result<Authz, Failure> {
        let cred = self.credential(r).map_err(Failure::Other)?;
        self.net.authorize(r, push, &cred).await
    }

    /// Runs `f`, each attempt bounded by the timeout, retrying transient failures with
    /// exponential backoff.
    async fn retry<T, F, Fut>(&self, what: &str, mut f: F) -> Result<T, String>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, Failure>>,
    {
        let mut attempt = 0;
        loop {
            let res = tokio::time::timeout(self.opts.timeout, f())
                .await
                .unwrap_or(Err(Failure::Timeout));
            match res {
                Ok(v) => return Ok(v),
                Err(e) if attempt < self.opts.retries && e.transient() => {
                    let delay = self
                        .opts
                        .backoff
                        .checked_mul(2u32.saturating_pow(attempt))
                        .map_or(MAX_BACKOFF, |d| d.min(MAX_BACKOFF));
                    attempt += 1;
                    self.retries.fetch_add(1, Ordering::Relaxed);
                    self.opts.events.warn(&format!(
                        "{}; retry {attempt}/{} in {} ms",
                        crate::text::esc(format_args!(
                            "{what}: {}",
                            describe(&e, self.opts.timeout)
                        )),
                        self.opts.retries,
                        delay.as_millis()
                    ));
                    tokio::time::sleep(delay).await;
                }
                Err(e) => return Err(format!("{what}: {}", describe(&e, self.opts.timeout))),
            }
        }
    }

    /// Whether the repository of `r` has blob `digest` (asked with push rights: a push
    /// target).
    pub async fn blob_exists(&self, r: &Reference, digest: &str) -> Result<bool, String> {
        self.retry(
            &format!("checking blob {digest} in {}", r.whole()),
            || async {
                let authz = self.authorize(r, true).await?;
                self.net.blob_exists(r, digest, &authz).await
            },
        )
        .await
    }

    /// Pushes an image or an index (with every image and blob it needs) and tags it as
    /// `target`.
    pub async fn push(&self, target: &Reference, art: &Artifact) -> Result<PushReport, String> {
        let mut report = PushReport::default();
        let mut seen = HashSet::new();
        for m in art.manifests() {
            for b in &m.blobs {
                if seen.insert(b.desc.digest.clone()) {
                    self.push_blob(target, b, &mut report).await?;
                }
            }
        }
        if let Artifact::Index { manifests, .. } = art {
            for m in manifests {
                self.put_manifest(&child_ref(target, &m.digest), &m.bytes, &m.media_type)
                    .await?;
                report.manifests += 1;
            }
        }
        self.put_manifest(target, art.bytes(), art.media_type())
            .await?;
        report.manifests += 1;
        report.retries = self.retries_used();
        Ok(report)
    }

    async fn put_manifest(&self, r: &Reference, bytes: &[u8], mt: &str) -> Result<(), String> {
        let body = Bytes::copy_from_slice(bytes);
        self.retry(&format!("pushing manifest to {}", r.whole()), || async {
            let authz = self.authorize(r, true).await?;
            self.net.put_manifest(r, body.clone(), mt, &authz).await
        })
        .await?;
        Ok(())
    }

    async fn push_blob(
        &self,
        target: &Reference,
        b: &Blob,
        report: &mut PushReport,
    ) -> Result<(), String> {
        let d = &b.desc.digest;
        if self.blob_exists(target, d).await? {
            report.existing.push(d.clone());
            return Ok(());
        }
        match &b.data {
            BlobData::Bytes(data) => {
                self.upload(target, data.clone(), d).await?;
                report.uploaded.push(d.clone());
                report.bytes += data.len() as u64;
            }
            BlobData::Remote(src) => {
                let src = parse_ref(src)?;
                if src.resolve_registry() == target.resolve_registry() {
                    // A registry may answer a mount with a plain upload session; check. A
                    // mount that fails (or times out) falls back to copying.
                    let mount = async {
                        let authz = self.authorize(target, true).await?;
                        self.net.mount(target, d, src.repository(), &authz).await
                    };
                    let mounted = tokio::time::timeout(self.opts.timeout, mount)
                        .await
                        .is_ok_and(|r| r.is_ok_and(|m| m))
                        && self.blob_exists(target, d).await?;
                    if mounted {
                        report.mounted.push(d.clone());
                        return Ok(());
                    }
                }
                let data = self.fetch_blob(&src, &b.desc).await?;
                report.bytes += data.len() as u64;
                self.upload(target, data, d).await?;
                report.copied.push(d.clone());
            }
        }
        Ok(())
    }

    /// Uploads one blob; large blobs show progress on a terminal.
    async fn upload(&self, target: &Reference, data: Bytes, d: &str) -> Result<(), String> {
        const CHUNK: usize = 1 << 20;
        let show = data.len() >= 4 * CHUNK;
        let what = format!("uploading {d} to {}", target.whole());
        let total = data.len();
        let short = d.get(7..19).unwrap_or(d).to_string();
        if show {
            self.opts.events.upload_started(&short, total as u64);
        }
        let res = self
            .retry(&what, || async {
                let authz = self.authorize(target, true).await?;
                let body = if show {
                    let (data, short, events) =
                        (data.clone(), short.clone(), self.opts.events.clone());
                    // Lazy: chunk i is produced when the connection asks for it, that is once
                    // chunk i - 1 was handed to it.
                    let chunks = (0..total.div_ceil(CHUNK)).map(move |i| {
                        events.upload_progress(&short, (i * CHUNK) as u64);
                        Ok::<_, std::io::Error>(data.slice(i * CHUNK..((i + 1) * CHUNK).min(total)))
                    });
                    reqwest::Body::wrap_stream(futures_util::stream::iter(chunks))
                } else {
                    reqwest::Body::from(data.clone())
                };
                self.net.upload(target, d, body, total as u64, &authz).await
            })
            .await;
        if show {
            if res.is_ok() {
                self.opts.events.upload_progress(&short, total as u64);
            }
            self.opts.events.upload_finished(&short, res.is_ok());
        }
        res
    }

    /// Pulls a manifest or index; returns bytes, digest and media type. When `r` carries a
    /// digest the bytes are checked against it.
    pub async fn fetch_manifest(&self, r: &Reference) -> Result<(Bytes, String, String), String> {
        let reference = r.digest().or(r.tag()).unwrap_or("latest");
        let url = self.net.url(r, &format!("manifests/{reference}"));
        let accept = media::ACCEPTED_MANIFESTS.join(", ");
        let bytes = self
            .retry(&format!("pulling manifest {}", r.whole()), || async {
                let authz = self.authorize(r, false).await?;
                let resp = self.net.get(r, &url, Some(&accept), &authz).await?;
                read_limited(resp, MAX_MANIFEST, || {
                    format!(
                        "the manifest is larger than {} (the limit for manifests and indexes); refused",
                        human_size(MAX_MANIFEST)
                    )
                })
                .await
            })
            .await?;
        let bytes = Bytes::from(bytes);
        let actual = digest::sha256(&bytes);
        if let Some(want) = r.digest()
            && want != actual
        {
            return Err(format!(
                "{}: manifest digest is {actual}, not the requested {want}",
                r.whole()
            ));
        }
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| format!("{}: manifest is not JSON: {e}", r.whole()))?;
        let mt = v
            .get("mediaType")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| {
                if v.get("manifests").is_some() {
                    media::OCI_INDEX.to_string()
                } else {
                    media::OCI_MANIFEST.to_string()
                }
            });
        Ok((bytes, actual, mt))
    }

    /// Pulls a blob of `r`'s repository, refusing more than the descriptor's size (and more
    /// than `max_blob`) and checking the digest.
    pub async fn fetch_blob(&self, r: &Reference, d: &Descriptor) -> Result<Bytes, String> {
        digest::parse(&d.digest).map_err(|e| format!("{}: {e}", r.whole()))?;
        if d.size > self.opts.max_blob {
            return Err(format!(
                "{}: blob {} is {} bytes, over the cap of {} (raise it with --max-size)",
                r.whole(),
                d.digest,
                d.size,
                self.opts.max_blob
            ));
        }
        let url = self.net.url(r, &format!("blobs/{}", d.digest));
        let what = format!("pulling blob {} from {}", d.digest, r.whole());
        let data = self
            .retry(&what, || async {
                let authz = self.authorize(r, false).await?;
                let resp = self.net.get(r, &url, None, &authz).await?;
                read_limited(resp, d.size, || {
                    format!(
                        "the registry sent more than the {} bytes the descriptor declares",
                        d.size
                    )
                })
                .await
            })
            .await?;
        if data.len() as u64 != d.size {
            return Err(format!(
                "{what}: got {} bytes, the descriptor declares {}",
                data.len(),
                d.size
            ));
        }
        digest::verify(&data, &d.digest).map_err(|e| format!("{what}: {e}"))?;
        Ok(Bytes::from(data))
    }

    /// Resolves `r` to one image: for an index, the entry for `platform` (else linux/amd64,
    /// else the only runnable entry).
    pub async fn resolve(&self, r: &Reference, platform: &Platform) -> Result<Resolved, String> {
        let (bytes, dg, mt) = self.fetch_manifest(r).await?;
        if media::is_index(&mt) {
            let entries = index_entries(&bytes, &r.whole())?;
            let pick = choose_platform(&entries, platform).ok_or_else(|| {
                let have: Vec<String> = entries
                    .iter()
                    .filter_map(|d| d.platform.as_ref().map(|p| p.to_string()))
                    .collect();
                format!(
                    "{}: no image for platform {platform} in the index (it has {}); pass --platform",
                    r.whole(),
                    have.join(", ")
                )
            })?;
            let mut res = self.image_at(r, pick).await?;
            res.index_digest = Some(dg);
            Ok(res)
        } else {
            self.image_of(r, bytes, dg, mt).await
        }
    }

    /// The image an index entry of `r` points at (its manifest size checked against the entry).
    pub async fn image_at(&self, r: &Reference, entry: &Descriptor) -> Result<Resolved, String> {
        let child = child_ref(r, &entry.digest);
        let (bytes, digest, mt) = self.fetch_manifest(&child).await?;
        if bytes.len() as u64 != entry.size {
            return Err(format!(
                "{}: manifest size differs from its index entry",
                child.whole()
            ));
        }
        self.image_of(&child, bytes, digest, mt).await
    }

    /// Reads an image manifest and pulls its config.
    pub async fn image_of(
        &self,
        r: &Reference,
        bytes: Bytes,
        digest: String,
        mt: String,
    ) -> Result<Resolved, String> {
        let (mt2, config, layers) = super::image::parse_manifest(&bytes, &r.whole())?;
        if mt2 != mt {
            return Err(format!(
                "{}: manifest media type {mt2} differs from {mt}",
                r.whole()
            ));
        }
        if config.size > MAX_CONFIG {
            return Err(format!(
                "{}: the image config is {} bytes, over the limit of {}; refused",
                r.whole(),
                config.size,
                human_size(MAX_CONFIG)
            ));
        }
        let cfg_bytes = self.fetch_blob(r, &config).await?;
        let cfg: Value = serde_json::from_slice(&cfg_bytes)
            .map_err(|e| format!("{}: image config is not JSON: {e}", r.whole()))?;
        Ok(Resolved {
            reference: r.clone(),
            manifest_digest: digest,
            media_type: mt,
            index_digest: None,
            config_desc: config,
            config: cfg,
            layers,
        })
    }

    /// Replaces every remote blob of `art` with its bytes (for writing an OCI layout).
    pub async fn materialize(&self, art: &mut Artifact) -> Result<(), String> {
        for m in art.manifests_mut() {
            for b in &mut m.blobs {
                if let BlobData::Remote(src) = &b.data {
                    let r = parse_ref(src)?;
                    let data = self.fetch_blob(&r, &b.desc).await?;
                    b.data = BlobData::Bytes(data);
                }
            }
        }
        Ok(())
    }
}

/// One resolved image.
#[derive(Debug, Clone)]
pub struct Resolved {
    /// Where it was pulled from (by digest for an index child).
    pub reference: Reference,
    /// Digest of the image manifest.
    pub manifest_digest: String,
    /// Manifest media type.
    pub media_type: String,
    /// The index it was picked from, if any.
    pub index_digest: Option<String>,
    /// Config descriptor.
    pub config_desc: Descriptor,
    /// Parsed config.
    pub config: Value,
    /// Layers in order.
    pub layers: Vec<Descriptor>,
}

/// An image config's labels (`config.Labels`, string values).
pub fn config_labels(config: &Value) -> std::collections::BTreeMap<String, String> {
    config
        .pointer("/config/Labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// An image config's `rootfs.diff_ids`.
pub fn config_diff_ids(config: &Value) -> Vec<String> {
    config
        .pointer("/rootfs/diff_ids")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

impl Resolved {
    /// The image's labels.
    pub fn labels(&self) -> std::collections::BTreeMap<String, String> {
        config_labels(&self.config)
    }

    /// The config's `rootfs.diff_ids`.
    pub fn diff_ids(&self) -> Vec<String> {
        config_diff_ids(&self.config)
    }

    /// The digest users refer to: the index's when pulled through one.
    pub fn top_digest(&self) -> &str {
        self.index_digest
            .as_deref()
            .unwrap_or(&self.manifest_digest)
    }
}

/// The entries of an index.
pub fn index_entries(bytes: &[u8], what: &str) -> Result<Vec<Descriptor>, String> {
    let v: Value =
        serde_json::from_slice(bytes).map_err(|e| format!("{what}: index is not JSON: {e}"))?;
    v.get("manifests")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{what}: index has no manifests list"))?
        .iter()
        .enumerate()
        .map(|(i, m)| Descriptor::from_json(m, &format!("{what} manifests[{i}]")))
        .collect()
}

/// `r`'s repository at `digest`.
pub fn child_ref(r: &Reference, digest: &str) -> Reference {
    Reference::with_digest(
        r.registry().to_string(),
        r.repository().to_string(),
        digest.to_string(),
    )
}

/// The entries of an index that are runnable images (no attestations, no nested indexes).
pub fn runnable(entries: &[Descriptor]) -> Vec<&Descriptor> {
    entries
        .iter()
        .filter(|d| !is_attestation(d) && media::is_manifest(&d.media_type))
        .collect()
}

/// The index entry for `want`: exact match (variant too when asked), else linux/amd64, else
/// the single runnable entry.
pub fn choose_platform<'a>(entries: &'a [Descriptor], want: &Platform) -> Option<&'a Descriptor> {
    let runnable = runnable(entries);
    let matches = |d: &&Descriptor, p: &Platform| {
        d.platform.as_ref().is_some_and(|q| {
            q.os == p.os
                && q.architecture == p.architecture
                && (p.variant.is_none() || q.variant == p.variant)
        })
    };
    runnable
        .iter()
        .find(|d| matches(d, want))
        .or_else(|| {
            runnable
                .iter()
                .find(|d| matches(d, &super::image::default_platform()))
        })
        .or_else(|| (runnable.len() == 1).then(|| &runnable[0]))
        .copied()
}

/// A one-line description of a failure, naming the timeout or limit that was hit.
pub fn describe(e: &Failure, timeout: Duration) -> String {
    if e.is_timeout() {
        let t = timeout;
        return format!(
            "timed out: no complete answer within --timeout {} (or no data for {}); check the registry address, or raise --timeout on a slow link",
            human_duration(t),
            human_duration(IDLE_TIMEOUT.min(t))
        );
    }
    match e {
        Failure::Http(e) => describe_http(e),
        Failure::Status { code, url, .. } if *code == 401 || *code == 403 => not_authorized(url),
        Failure::Status {
            code, url, message, ..
        } if *code < 500 => format!("registry refused {url} ({code}): {message}"),
        Failure::Status {
            code, url, message, ..
        } => format!("server error {code} for {url}: {message}"),
        Failure::Auth(m) => {
            format!("authentication failed: {m}; check the credentials for this registry")
        }
        Failure::TooLarge(m) | Failure::Other(m) => m.clone(),
        Failure::Timeout => "timed out".into(),
    }
}

/// The advice for a 401 or 403 from `url` (already redacted).
fn not_authorized(url: &str) -> String {
    format!(
        "not authorized ({url}); log in (docker/podman login, or REGISTRY_AUTH_FILE) or pass --username and --password-stdin"
    )
}

/// A transport error with its causes, the URL's query redacted.
fn describe_http(r: &reqwest::Error) -> String {
    if r.status()
        .is_some_and(|s| s.as_u16() == 401 || s.as_u16() == 403)
    {
        return not_authorized(&redact(r.url().map(|u| u.as_str()).unwrap_or("registry")));
    }
    let url = r.url().map(|u| redact(u.as_str()));
    let mut s = r.to_string();
    if let (Some(full), Some(url)) = (r.url(), &url) {
        s = s.replace(full.as_str(), url);
    }
    let mut src = std::error::Error::source(r);
    while let Some(c) = src {
        s.push_str(&format!(": {c}"));
        src = c.source();
    }
    if s.contains("InvalidContentType")
        || s.contains("invalid HTTP version")
        || s.contains("received HTTP/0.9")
    {
        s.push_str(" (is this a plain-HTTP registry? pass --plain-http)");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_query_in_messages() {
        assert_eq!(
            redact("https://s3.example/blob?X-Amz-Signature=abc"),
            "https://s3.example/blob?<redacted>"
        );
        let e = Failure::Status {
            code: 500,
            url: redact("https://s3.example/b?sig=SECRET"),
            message: "boom".into(),
            too_many: false,
        };
        let t = Duration::from_secs(1);
        assert!(!describe(&e, t).contains("SECRET"));
        assert!(describe(&e, t).contains("500"));
        assert!(describe(&Failure::Timeout, t).contains("--timeout 1s"));
    }

    #[test]
    fn loopback_hosts() {
        for r in [
            "localhost",
            "localhost:5000",
            "127.0.0.1:5000",
            "127.1.2.3",
            "[::1]:5000",
            "::1",
        ] {
            assert!(is_loopback(r), "{r}");
        }
        for r in [
            "quay.io",
            "10.0.0.1:5000",
            "example.com:443",
            "localhost.example.com",
        ] {
            assert!(!is_loopback(r), "{r}");
        }
    }

    #[test]
    fn plain_http_only_when_asked_or_loopback() {
        assert_eq!(protocol(true, &["quay.io"]), ClientProtocol::Http);
        assert_eq!(
            protocol(false, &["quay.io", "127.0.0.1:5000", "127.0.0.1:5000"]),
            ClientProtocol::HttpsExcept(vec!["127.0.0.1:5000".into()])
        );
    }

    #[test]
    fn platform_choice() {
        let d = |p: &str, ann: bool| Descriptor {
            media_type: media::OCI_MANIFEST.into(),
            digest: digest::sha256(p.as_bytes()),
            size: 1,
            platform: Some(Platform::parse(p).unwrap()),
            annotations: if ann {
                [(
                    "vnd.docker.reference.type".to_string(),
                    "attestation-manifest".to_string(),
                )]
                .into()
            } else {
                Default::default()
            },
        };
        let entries = vec![
            d("linux/arm64", false),
            d("linux/amd64", false),
            d("unknown/unknown", true),
        ];
        let arm = Platform::parse("linux/arm64").unwrap();
        assert_eq!(
            choose_platform(&entries, &arm).unwrap().digest,
            entries[0].digest
        );
        let s390 = Platform::parse("linux/s390x").unwrap();
        assert_eq!(
            choose_platform(&entries, &s390).unwrap().digest,
            entries[1].digest
        );
        let only = vec![d("linux/ppc64le", false), d("unknown/unknown", true)];
        assert_eq!(choose_platform(&only, &arm).unwrap().digest, only[0].digest);
        assert!(choose_platform(&entries[2..], &arm).is_none());
    }
}
