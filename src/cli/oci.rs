//! The image commands: `bundle build`, `bundle unpack`, `catalog push`, `catalog pull` and the
//! image side of `catalog render`. Registry flags are shared.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use serde_json::json;

use super::{EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, Output, out};
use crate::oci::auth::Credential;
use crate::oci::extract::{Limits, Select};
use crate::oci::image::{Artifact, Platform};
use crate::oci::registry::{Options, PushReport, Registry, parse_ref};
use crate::text::esc;

/// Flags for talking to registries.
#[derive(Debug, Clone, Args)]
pub struct RegistryArgs {
    /// Use plain HTTP instead of HTTPS (loopback registries always use plain HTTP).
    #[arg(long)]
    pub plain_http: bool,
    /// Do not verify TLS certificates.
    #[arg(long)]
    pub insecure: bool,
    /// User name for the target registry (with --password-stdin). Without it, credentials come
    /// from REGISTRY_AUTH_FILE, containers auth.json or ~/.docker/config.json.
    #[arg(long, requires = "password_stdin")]
    pub username: Option<String>,
    /// Read the password (or token) for --username from stdin.
    #[arg(long, requires = "username")]
    pub password_stdin: bool,
    /// Retries for transient registry failures (5xx, 429, dropped connections, timeouts).
    #[arg(long, default_value_t = 4)]
    pub retries: u32,
    /// Longest time one attempt of one registry operation may take: authenticating, sending
    /// the request and reading the whole answer (a blob download or upload included). A
    /// registry that stays silent is given up on sooner: after 30 s when connecting, after
    /// 60 s without any data (or after --timeout when that is shorter). A timed-out attempt
    /// is retried like a dropped connection, so one operation takes at most
    /// (--retries + 1) x --timeout plus the backoff between attempts (250 ms, doubling, at
    /// most 30 s). Units ms, s, m, h (a bare number is seconds).
    #[arg(long, default_value = "10m", value_parser = parse_duration)]
    pub timeout: Duration,
}

/// Flags for pulling.
#[derive(Debug, Clone, Args)]
pub struct PullArgs {
    /// Platform to pick from a multi-platform index (default: this machine's, else
    /// linux/amd64).
    #[arg(long)]
    pub platform: Option<String>,
    /// Cap on the uncompressed size of all layers, in bytes (suffixes K, M, G allowed).
    #[arg(long, default_value = "2G", value_parser = parse_size)]
    pub max_size: u64,
}

/// Parses `123`, `10K`, `5M`, `2G` (binary units).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mul) = match t.chars().last() {
        Some('K' | 'k') => (&t[..t.len() - 1], 1u64 << 10),
        Some('M' | 'm') => (&t[..t.len() - 1], 1 << 20),
        Some('G' | 'g') => (&t[..t.len() - 1], 1 << 30),
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("{s:?} is not a size like 512M or 2G"))
}

/// Parses `500ms`, `30s`, `10m`, `1h`, `1h30m` or a bare number of seconds; zero is refused.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a duration like 30s, 10m, 1h30m or 500ms");
    let mut total = Duration::ZERO;
    let mut rest = s.trim();
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(bad());
        }
        let n: u64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let ms: u64 = match &rest[..unit_len] {
            "ms" => 1,
            // A bare number is seconds.
            "" | "s" => 1000,
            "m" => 60_000,
            "h" => 3_600_000,
            _ => return Err(bad()),
        };
        let part = n.checked_mul(ms).ok_or_else(bad)?;
        total = total.saturating_add(Duration::from_millis(part));
        rest = &rest[unit_len..];
    }
    if total.is_zero() {
        return Err(bad());
    }
    Ok(total)
}

/// A tokio runtime for one command.
pub fn runtime() -> Result<tokio::runtime::Runtime, u8> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            super::error(format_args!("cannot start the async runtime: {e}"));
            EXIT_USAGE
        })
}

/// A registry client for pushing, when `needed` (errors printed, usage exit status returned).
fn registry_if(
    needed: bool,
    reg_args: &RegistryArgs,
    named: &[&oci_client::Reference],
    all: &[&oci_client::Reference],
) -> Result<Option<Registry>, u8> {
    if !needed {
        return Ok(None);
    }
    registry(reg_args, named, all, u64::MAX)
        .map(Some)
        .map_err(|e| {
            super::error(e);
            EXIT_USAGE
        })
}

/// Builds the registry client; reads the password from stdin when asked.
pub fn registry(
    args: &RegistryArgs,
    targets: &[&oci_client::Reference],
    refs: &[&oci_client::Reference],
    max_blob: u64,
) -> Result<Registry, String> {
    let credentials = match (&args.username, args.password_stdin) {
        (Some(u), true) => {
            let mut p = String::new();
            std::io::stdin()
                .read_to_string(&mut p)
                .map_err(|e| format!("cannot read the password from stdin: {e}"))?;
            let p = p.trim_end_matches(['\n', '\r']).to_string();
            if p.is_empty() {
                return Err("--password-stdin: stdin was empty".into());
            }
            Some(Credential::Basic {
                username: u.clone(),
                password: p,
            })
        }
        _ => None,
    };
    let opts = Options {
        plain_http: args.plain_http,
        insecure: args.insecure,
        credentials,
        retries: args.retries,
        timeout: args.timeout,
        max_blob,
        ..Options::default()
    };
    Ok(Registry::new(opts, targets, refs))
}

pub fn platform(p: &Option<String>) -> Result<Platform, String> {
    match p {
        Some(s) => Platform::parse(s),
        None => Ok(Platform::host()),
    }
}

fn limits(max: u64) -> Limits {
    Limits {
        max_bytes: max,
        ..Limits::default()
    }
}

/// `<repo>@<digest>` for a pushed reference.
fn pinned(r: &oci_client::Reference, digest: &str) -> String {
    format!("{}/{}@{digest}", r.registry(), r.repository())
}

fn report_json(report: &PushReport) -> serde_json::Value {
    json!({
        "uploaded": report.uploaded,
        "existing": report.existing,
        "mounted": report.mounted,
        "copied": report.copied,
        "bytesUploaded": report.bytes,
        "manifests": report.manifests,
        "retries": report.retries,
    })
}

fn summary(report: &PushReport) -> String {
    format!(
        "{} blobs uploaded ({} bytes), {} already present, {} mounted, {} copied, {} manifests, {} retries",
        report.uploaded.len(),
        report.bytes,
        report.existing.len(),
        report.mounted.len(),
        report.copied.len(),
        report.manifests,
        report.retries
    )
}

/// Where a built artifact goes.
pub struct Dest<'a> {
    /// The reference (its tag names the image in a layout).
    pub tag: &'a str,
    /// Push to the registry.
    pub push: bool,
    /// Write an OCI layout here.
    pub layout: Option<&'a Path>,
}

/// Pushes and/or writes a layout; prints the result. `reg` is needed for a push or for
/// remote blobs.
async fn deliver(
    reg: Option<&Registry>,
    mut art: Artifact,
    dest: &Dest<'_>,
    output: Output,
    extra: serde_json::Value,
) -> Result<(), String> {
    let target = parse_ref(dest.tag)?;
    let mut report = None;
    if dest.push {
        let reg = reg.ok_or("internal: no registry client")?;
        let r = reg.push(&target, &art).await?;
        eprintln!("pushed {}: {}", esc(dest.tag), summary(&r));
        report = Some(r);
    }
    if let Some(dir) = dest.layout {
        if let Some(reg) = reg {
            reg.materialize(&mut art).await?;
        }
        let name = crate::oci::layout::tag_of(dest.tag);
        crate::oci::layout::write(dir, &name, &art)?;
        eprintln!(
            "wrote {} to the OCI layout {} as {}",
            art.digest(),
            esc(dir.display()),
            esc(format_args!("{name:?}"))
        );
    }
    match output {
        Output::Text => out(&format!("{}\n", esc(pinned(&target, art.digest())))),
        Output::Json => {
            let mut v = json!({
                "reference": dest.tag,
                "digest": art.digest(),
                "mediaType": art.media_type(),
                "size": art.bytes().len(),
                "pushed": dest.push,
                "layout": dest.layout.map(|p| p.display().to_string()),
                "push": report.as_ref().map(report_json),
            });
            if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
                for (k, x) in e {
                    o.insert(k.clone(), x.clone());
                }
            }
            out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            ));
        }
    }
    Ok(())
}

/// Stops a build on error-level findings (printed to stderr) unless `force`; codes in
/// `blocking` (content that does not load) stop it even then.
fn gate(
    findings: &[crate::diag::Finding],
    what: &str,
    verb: &str,
    force: bool,
    blocking: &[&str],
) -> Result<(), u8> {
    let errors: Vec<_> = findings
        .iter()
        .filter(|f| f.severity == crate::diag::Severity::Error)
        .cloned()
        .collect();
    if errors.is_empty() {
        return Ok(());
    }
    eprint!("{}", crate::diag::render_text(&errors, false));
    let blocked = errors.iter().any(|f| blocking.contains(&f.code));
    if !force || blocked {
        super::error(format_args!(
            "the {what} has {} error-level findings; fix them{}",
            errors.len(),
            if blocked {
                " (files that do not load cannot be used)"
            } else {
                match verb {
                    "build" => " or pass --force to build anyway",
                    _ => " or pass --force to push anyway",
                }
            }
        ));
        return Err(EXIT_FINDINGS);
    }
    eprintln!(
        "warning: {verb}ing despite {} error-level findings (--force)",
        errors.len()
    );
    Ok(())
}

/// `bundle build`.
pub fn bundle_build(
    dir: &Path,
    dest: &Dest<'_>,
    force: bool,
    reg_args: &RegistryArgs,
    output: Output,
) -> u8 {
    let target = match parse_ref(dest.tag) {
        Ok(r) => r,
        Err(e) => {
            super::error(format_args!("--tag: {e}"));
            return EXIT_USAGE;
        }
    };
    let b = match crate::bundle::load::load_bundle(dir) {
        Ok(b) => b,
        Err(e) => {
            super::error(e);
            return EXIT_USAGE;
        }
    };
    if let Err(c) = gate(
        &crate::checks::bundle::validate(&b),
        "bundle",
        "build",
        force,
        &[],
    ) {
        return c;
    }
    let epoch = crate::oci::layer::source_date_epoch();
    let created = std::env::var_os("SOURCE_DATE_EPOCH").map(|_| epoch);
    let img = match crate::oci::bundle_image::build(&b, epoch, created) {
        Ok(i) => i,
        Err(e) => {
            super::error(e);
            return EXIT_USAGE;
        }
    };
    eprintln!(
        "built bundle image {} ({} entries, {} labels)",
        img.artifact.digest(),
        img.files,
        img.labels.len()
    );
    let extra = json!({"labels": img.labels});
    if !dest.push && dest.layout.is_none() {
        return block(deliver(None, img.artifact, dest, output, extra));
    }
    let reg = match registry_if(dest.push, reg_args, &[&target], &[&target]) {
        Ok(r) => r,
        Err(c) => return c,
    };
    block(deliver(reg.as_ref(), img.artifact, dest, output, extra))
}

trait IntoExit {
    fn into_exit(self) -> u8;
}

impl IntoExit for Result<(), String> {
    fn into_exit(self) -> u8 {
        match self {
            Ok(()) => EXIT_OK,
            Err(e) => {
                super::error(e);
                EXIT_USAGE
            }
        }
    }
}

/// Runs a command's async part on a fresh runtime and maps its result to an exit status.
fn block(f: impl std::future::Future<Output = Result<(), String>>) -> u8 {
    match runtime() {
        Ok(rt) => rt.block_on(f).into_exit(),
        Err(c) => c,
    }
}

/// Options of `catalog push`.
pub struct CatalogPush<'a> {
    /// Catalog directory.
    pub dir: &'a Path,
    /// Destination.
    pub dest: Dest<'a>,
    /// Base image to append to.
    pub base_image: Option<&'a str>,
    /// Push even when validation finds errors.
    pub force: bool,
    /// Extra labels.
    pub labels: BTreeMap<String, String>,
    /// Encoding of the FBC files.
    pub format: crate::fbc::write::Format,
    /// What serves the catalog in the image (with a base image).
    pub server: crate::oci::catalog_image::Server,
}

/// `catalog push`.
pub fn catalog_push(p: &CatalogPush<'_>, reg_args: &RegistryArgs, output: Output) -> u8 {
    let target = match parse_ref(p.dest.tag) {
        Ok(r) => r,
        Err(e) => {
            super::error(format_args!("--tag: {e}"));
            return EXIT_USAGE;
        }
    };
    let base = match p.base_image.map(parse_ref).transpose() {
        Ok(b) => b,
        Err(e) => {
            super::error(format_args!("--base-image: {e}"));
            return EXIT_USAGE;
        }
    };
    let loaded = match super::graph::load_catalog(&[p.dir.to_path_buf()]) {
        Ok(l) => l,
        Err(c) => return c,
    };
    let blocking = ["FBC001", "FBC002", "FBC003"];
    if let Err(c) = gate(
        &crate::checks::fbc::validate(&loaded),
        "catalog",
        "push",
        p.force,
        &blocking,
    ) {
        return c;
    }
    let files = super::catalog::formatted_files(&loaded, p.format);
    let epoch = crate::oci::layer::source_date_epoch();
    let created = std::env::var_os("SOURCE_DATE_EPOCH").map(|_| epoch);
    let layer = match crate::oci::catalog_image::configs_layer(&files, epoch) {
        Ok(l) => l,
        Err(e) => {
            super::error(e);
            return EXIT_USAGE;
        }
    };
    let labels = crate::oci::catalog_image::labels(&p.labels);
    eprintln!(
        "catalog layer {} ({} files, {} bytes compressed)",
        layer.digest,
        files.len(),
        layer.blob.len()
    );
    let needs_registry = p.dest.push || base.is_some();
    let mut refs = vec![&target];
    refs.extend(base.iter());
    let reg = match registry_if(needs_registry, reg_args, &[&target], &refs) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let extra = json!({"layer": layer.digest, "files": files.len(), "baseImage": p.base_image});
    block(async {
        let art = match (&base, &reg) {
            (Some(b), Some(reg)) => {
                let exec = crate::oci::catalog_image::exec(p.server);
                let added = [(&layer, crate::oci::catalog_image::CREATED_BY)];
                append_to_base(reg, b, &added, &labels, &exec, None).await?
            }
            _ => crate::oci::catalog_image::standalone(&layer, &labels, created),
        };
        deliver(reg.as_ref(), art, &p.dest, output, extra).await
    })
}

/// Appends `layers` to `base`: to every runnable platform of an index, or, with `only`, to
/// that platform's image alone (a binary runs on one platform), as a single image.
async fn append_to_base(
    reg: &Registry,
    base: &oci_client::Reference,
    layers: &crate::oci::append::Added<'_>,
    labels: &BTreeMap<String, String>,
    exec: &crate::oci::append::Exec,
    only: Option<&Platform>,
) -> Result<Artifact, String> {
    use crate::oci::{media, registry::index_entries, registry::runnable};
    let (bytes, digest, mt) = reg.fetch_manifest(base).await?;
    let same = |p: &Platform, q: &Platform| {
        p.os == q.os
            && p.architecture == q.architecture
            && (q.variant.is_none() || p.variant == q.variant)
    };
    if media::is_index(&mt) {
        let entries = index_entries(&bytes, &base.whole())?;
        if let Some(want) = only {
            let d = runnable(&entries)
                .into_iter()
                .find(|d| d.platform.as_ref().is_some_and(|p| same(p, want)))
                .ok_or_else(|| {
                    format!(
                        "{}: the index has no {} image (pick the base's platform with --platform)",
                        base.whole(),
                        want
                    )
                })?;
            let img = reg.image_at(base, d).await?;
            eprintln!(
                "appending to the {want} image of {} ({})",
                esc(base.whole()),
                esc(&d.digest)
            );
            return crate::oci::append::append(&[(img, want.clone())], None, layers, labels, exec);
        }
        let mut bases = Vec::new();
        for d in runnable(&entries) {
            let img = reg.image_at(base, d).await?;
            let plat = d
                .platform
                .clone()
                .unwrap_or_else(crate::oci::image::default_platform);
            bases.push((img, plat));
        }
        if bases.is_empty() {
            return Err(format!(
                "{}: the index has no runnable images",
                base.whole()
            ));
        }
        eprintln!(
            "appending to {} platforms of {} ({})",
            bases.len(),
            esc(base.whole()),
            esc(digest)
        );
        crate::oci::append::append(&bases, Some(&mt), layers, labels, exec)
    } else {
        let img = reg.image_of(base, bytes, digest, mt).await?;
        let plat =
            Platform::from_json(&img.config).unwrap_or_else(crate::oci::image::default_platform);
        if let Some(want) = only
            && !same(&plat, want)
        {
            return Err(format!(
                "{}: the base image is {plat}, not {want} (pass --platform {plat} with a binary built for it, or another base)",
                base.whole()
            ));
        }
        crate::oci::append::append(&[(img, plat)], None, layers, labels, exec)
    }
}

/// Options of `image build`.
pub struct ImageBuild<'a> {
    /// The base image.
    pub base_image: &'a str,
    /// `PATH[:DEST]`.
    pub binary: &'a str,
    /// Directory trees added as layers between the base and the binary, in order, each as the
    /// image's root file system.
    pub layers: Vec<PathBuf>,
    /// `config.User` (numeric `UID[:GID]`); the base's when `None`.
    pub user: Option<String>,
    /// Destination.
    pub dest: Dest<'a>,
    /// The platform the binary runs on (default: the host's).
    pub platform: Option<String>,
    /// Labels.
    pub labels: BTreeMap<String, String>,
}

/// `image build`: a binary appended to a base image as its entrypoint, daemonless, as ko does;
/// directory trees (`--layer`) go between the base and the binary.
pub fn image_build(b: &ImageBuild<'_>, reg_args: &RegistryArgs, output: Output) -> u8 {
    use crate::oci::binary_image as bin;
    let parsed = (|| -> Result<_, String> {
        let target = parse_ref(b.dest.tag).map_err(|e| format!("--tag: {e}"))?;
        let base = match b.base_image {
            bin::SCRATCH => None,
            other => Some(parse_ref(other).map_err(|e| format!("--base-image: {e}"))?),
        };
        let (src, dest) = bin::parse_binary(b.binary)?;
        let plat = platform(&b.platform).map_err(|e| format!("--platform: {e}"))?;
        let user = b.user.as_deref().map(bin::parse_user).transpose()?;
        Ok((target, base, src, dest, plat, user))
    })();
    let (target, base, src, dest, plat, user) = match parsed {
        Ok(x) => x,
        Err(e) => {
            super::error(e);
            return EXIT_USAGE;
        }
    };
    let epoch = crate::oci::layer::source_date_epoch();
    let mut built = Vec::new();
    for dir in &b.layers {
        let l = match bin::tree_layer(dir, epoch) {
            Ok(l) => l,
            Err(e) => {
                super::error(e);
                return EXIT_USAGE;
            }
        };
        eprintln!(
            "layer {} ({}, {} bytes compressed)",
            l.digest,
            esc(dir.display()),
            l.blob.len()
        );
        built.push((l, bin::tree_created_by(dir)));
    }
    let layer = match bin::binary_layer(&src, &dest, epoch) {
        Ok(l) => l,
        Err(e) => {
            super::error(e);
            return EXIT_USAGE;
        }
    };
    eprintln!(
        "binary layer {} ({} at {}, {} bytes compressed)",
        layer.digest,
        esc(src.display()),
        esc(&dest),
        layer.blob.len()
    );
    built.push((layer, bin::created_by(&src, &dest)));
    let added: Vec<(&crate::oci::layer::Layer, &str)> =
        built.iter().map(|(l, by)| (l, by.as_str())).collect();
    let exec = bin::exec(&dest, user.clone());
    let mut refs = vec![&target];
    refs.extend(base.iter());
    let reg = match registry_if(b.dest.push || base.is_some(), reg_args, &[&target], &refs) {
        Ok(r) => r,
        Err(c) => return c,
    };
    let created = std::env::var_os("SOURCE_DATE_EPOCH").map(|_| epoch);
    let extra = json!({
        "layer": added.last().map(|(l, _)| &l.digest),
        "layers": added.iter().map(|(l, _)| &l.digest).collect::<Vec<_>>(),
        "baseImage": b.base_image,
        "entrypoint": [dest],
        "user": user,
        "platform": plat.to_string(),
    });
    block(async {
        let art = match (&base, &reg) {
            (Some(base), Some(reg)) => {
                append_to_base(reg, base, &added, &b.labels, &exec, Some(&plat)).await?
            }
            _ => bin::standalone(&added, &b.labels, &exec, &plat, created),
        };
        deliver(reg.as_ref(), art, &b.dest, output, extra).await
    })
}

/// `catalog pull`: extracts the FBC of a catalog image into `dir`.
pub fn catalog_pull(
    image: &str,
    dir: &Path,
    reg_args: &RegistryArgs,
    pull: &PullArgs,
    output: Output,
) -> u8 {
    pull_cmd(image, dir, reg_args, pull, output, Want::Catalog)
}

/// `bundle unpack`: extracts a bundle image into `dir`.
pub fn bundle_unpack(
    image: &str,
    dir: &Path,
    reg_args: &RegistryArgs,
    pull: &PullArgs,
    output: Output,
) -> u8 {
    pull_cmd(image, dir, reg_args, pull, output, Want::Bundle)
}

/// What a pull is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Only catalog images, only `/configs`.
    Catalog,
    /// Only bundle images, the whole filesystem.
    Bundle,
    /// Either.
    Any,
}

/// Pulls `image` into `dir` and returns what it was.
pub async fn pull_image(
    reg: &Registry,
    image: &str,
    dir: &Path,
    pull: &PullArgs,
    want: Want,
) -> Result<(crate::oci::pull::Kind, crate::oci::pull::Pulled), String> {
    use crate::oci::pull::{Kind, kind, pull_into};
    let r = parse_ref(image)?;
    let plat = platform(&pull.platform)?;
    let mut found = None;
    let pulled = pull_into(
        reg,
        &r,
        &plat,
        dir,
        |img| {
            let k = kind(image, &img.labels())?;
            let sel = match (&k, want) {
                (Kind::Catalog(p), Want::Catalog | Want::Any) => Select {
                    prefix: Some(p.clone()),
                },
                (Kind::Bundle, Want::Bundle | Want::Any) => Select::default(),
                (Kind::Bundle, Want::Catalog) => {
                    return Err(format!(
                        "{image} is a bundle image, not a catalog; use `olmctl bundle unpack`"
                    ));
                }
                (Kind::Catalog(_), Want::Bundle) => {
                    return Err(format!(
                        "{image} is a catalog image, not a bundle; use `olmctl catalog pull`"
                    ));
                }
            };
            found = Some(k);
            Ok(sel)
        },
        limits(pull.max_size),
    )
    .await?;
    Ok((found.ok_or("internal: image kind unknown")?, pulled))
}

fn pull_cmd(
    image: &str,
    dir: &Path,
    reg_args: &RegistryArgs,
    pull: &PullArgs,
    output: Output,
    want: Want,
) -> u8 {
    let r = match parse_ref(image) {
        Ok(r) => r,
        Err(e) => {
            super::error(e);
            return EXIT_USAGE;
        }
    };
    let reg = match registry(reg_args, &[&r], &[&r], pull.max_size) {
        Ok(r) => r,
        Err(e) => {
            super::error(e);
            return EXIT_USAGE;
        }
    };
    block(async {
        let (_, p) = pull_image(&reg, image, dir, pull, want).await?;
        eprintln!(
            "pulled {} ({} files, {} bytes uncompressed) into {}",
            p.image.top_digest(),
            p.files,
            p.bytes,
            esc(dir.display())
        );
        match output {
            Output::Text => out(&format!("{}\n", esc(pinned(&r, p.image.top_digest())))),
            Output::Json => out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&json!({
                    "reference": image,
                    "digest": p.image.top_digest(),
                    "manifestDigest": p.image.manifest_digest,
                    "labels": p.image.labels(),
                    "files": p.files,
                    "bytes": p.bytes,
                    "dir": dir.display().to_string(),
                }))
                .unwrap_or_default()
            )),
        }
        Ok(())
    })
}

/// Whether a command-line input names an image rather than a local path (it does not exist
/// on disk).
pub fn is_image(s: &str) -> bool {
    !Path::new(s).exists()
}

/// Inputs that were pulled: per input, the image kind and where it was extracted (`None` for
/// local paths), and the scratch directories to keep alive while they are read.
pub type Pulled = (
    Vec<Option<(crate::oci::pull::Kind, PathBuf)>>,
    Vec<ScratchDir>,
);

/// Pulls every input that is an image reference ([`is_image`]) into its own scratch directory,
/// with one registry client for all of them.
pub fn pull_inputs(
    inputs: &[&str],
    reg_args: &RegistryArgs,
    pull: &PullArgs,
    want: Want,
) -> Result<Pulled, String> {
    let mut pulled = vec![None; inputs.len()];
    let mut scratch = Vec::new();
    let refs = inputs
        .iter()
        .filter(|s| is_image(s))
        .map(|s| parse_ref(s).map_err(|e| format!("{e} (and no such file or directory)")))
        .collect::<Result<Vec<_>, _>>()?;
    if refs.is_empty() {
        return Ok((pulled, scratch));
    }
    let rr: Vec<&oci_client::Reference> = refs.iter().collect();
    let reg = registry(reg_args, &rr, &rr, pull.max_size)?;
    let rt = runtime().map_err(|_| "cannot start the async runtime".to_string())?;
    for (i, s) in inputs.iter().enumerate() {
        if !is_image(s) {
            continue;
        }
        let dir = ScratchDir::new();
        let (kind, _) = rt
            .block_on(pull_image(&reg, s, &dir.0, pull, want))
            .map_err(|e| format!("{s}: {e}"))?;
        pulled[i] = Some((kind, dir.0.clone()));
        scratch.push(dir);
    }
    Ok((pulled, scratch))
}

/// A directory removed on drop (for rendering images).
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    /// A fresh, not yet existing path under the system temp dir.
    pub fn new() -> ScratchDir {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        ScratchDir(std::env::temp_dir().join(format!(
            "olmctl-{}-{}-{nanos}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        )))
    }
}

impl Default for ScratchDir {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
        assert_eq!(parse_duration("45"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration(" 1h "), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        for bad in [
            "",
            "0",
            "0s",
            "s",
            "1.5s",
            "-1s",
            "5x",
            "99999999999999999999h",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad:?}");
        }
    }
}
