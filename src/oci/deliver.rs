//! The last step of every image command: a built [`Artifact`] pushed to a registry and/or
//! written to an OCI layout, reported as [`Delivered`]; and the first step of the commands that
//! read images: pulling inputs that name images into scratch directories.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use oci_client::Reference;

use super::events::Events;
use super::extract::{Limits, Select};
use super::image::{Artifact, Platform};
use super::pull::{Kind, Pulled, kind, pull_into};
use super::registry::{Options, PushReport, Registry, index_entries, parse_ref, runnable};
use super::{append, layout, media};
use crate::text::esc;

/// Where a built artifact goes.
#[derive(Debug, Clone)]
pub struct Dest {
    /// The reference (its tag names the image in a layout).
    pub tag: String,
    /// Push to the registry.
    pub push: bool,
    /// Write an OCI layout here.
    pub layout: Option<PathBuf>,
}

/// What a delivery did.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The reference delivered to (as given).
    pub reference: String,
    /// `<registry>/<repository>@<digest>`.
    pub pinned: String,
    /// The artifact's digest.
    pub digest: String,
    /// The artifact's media type.
    pub media_type: String,
    /// The artifact's size in bytes.
    pub size: usize,
    /// Whether it was pushed.
    pub pushed: bool,
    /// The OCI layout written, if any.
    pub layout: Option<PathBuf>,
    /// What the push did.
    pub push: Option<PushReport>,
}

/// `<registry>/<repository>@<digest>` for a pushed reference.
pub fn pinned(r: &Reference, digest: &str) -> String {
    format!("{}/{}@{digest}", r.registry(), r.repository())
}

/// A one-line summary of a push.
pub fn summary(report: &PushReport) -> String {
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

/// Pushes and/or writes a layout. `reg` is needed for a push or for remote blobs.
pub async fn deliver(
    reg: Option<&Registry>,
    mut art: Artifact,
    dest: &Dest,
    events: &dyn Events,
) -> Result<Delivered, String> {
    let target = parse_ref(&dest.tag)?;
    let mut report = None;
    if dest.push {
        let reg = reg.ok_or("internal: no registry client")?;
        let r = reg.push(&target, &art).await?;
        events.note(&format!("pushed {}: {}", esc(&dest.tag), summary(&r)));
        report = Some(r);
    }
    if let Some(dir) = &dest.layout {
        if let Some(reg) = reg {
            reg.materialize(&mut art).await?;
        }
        let name = layout::tag_of(&dest.tag);
        layout::write(dir, &name, &art)?;
        events.note(&format!(
            "wrote {} to the OCI layout {} as {}",
            art.digest(),
            esc(dir.display()),
            esc(format_args!("{name:?}"))
        ));
    }
    Ok(Delivered {
        reference: dest.tag.clone(),
        pinned: pinned(&target, art.digest()),
        digest: art.digest().to_string(),
        media_type: art.media_type().to_string(),
        size: art.bytes().len(),
        pushed: dest.push,
        layout: dest.layout.clone(),
        push: report,
    })
}

/// Appends `layers` to `base`: to every runnable platform of an index, or, with `only`, to
/// that platform's image alone (a binary runs on one platform), as a single image.
pub async fn append_to_base(
    reg: &Registry,
    base: &Reference,
    layers: &append::Added<'_>,
    labels: &BTreeMap<String, String>,
    exec: &append::Exec,
    only: Option<&Platform>,
    events: &dyn Events,
) -> Result<Artifact, String> {
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
            events.note(&format!(
                "appending to the {want} image of {} ({})",
                esc(base.whole()),
                esc(&d.digest)
            ));
            return append::append(&[(img, want.clone())], None, layers, labels, exec);
        }
        let mut bases = Vec::new();
        for d in runnable(&entries) {
            let img = reg.image_at(base, d).await?;
            let plat = d
                .platform
                .clone()
                .unwrap_or_else(super::image::default_platform);
            bases.push((img, plat));
        }
        if bases.is_empty() {
            return Err(format!(
                "{}: the index has no runnable images",
                base.whole()
            ));
        }
        events.note(&format!(
            "appending to {} platforms of {} ({})",
            bases.len(),
            esc(base.whole()),
            esc(digest)
        ));
        append::append(&bases, Some(&mt), layers, labels, exec)
    } else {
        let img = reg.image_of(base, bytes, digest, mt).await?;
        let plat = Platform::from_json(&img.config).unwrap_or_else(super::image::default_platform);
        if let Some(want) = only
            && !same(&plat, want)
        {
            return Err(format!(
                "{}: the base image is {plat}, not {want} (pass --platform {plat} with a binary built for it, or another base)",
                base.whole()
            ));
        }
        append::append(&[(img, plat)], None, layers, labels, exec)
    }
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

/// How to pull: the platform to pick from an index and the cap on the uncompressed size.
#[derive(Debug, Clone)]
pub struct PullOptions {
    /// The platform (this machine's, else linux/amd64, by default).
    pub platform: Platform,
    /// Cap on the uncompressed size of all layers, in bytes.
    pub max_size: u64,
}

/// Pulls `image` into `dir` and returns what it was.
pub async fn pull_image(
    reg: &Registry,
    image: &str,
    dir: &Path,
    pull: &PullOptions,
    want: Want,
) -> Result<(Kind, Pulled), String> {
    let r = parse_ref(image)?;
    let mut found = None;
    let pulled = pull_into(
        reg,
        &r,
        &pull.platform,
        dir,
        |img| {
            let (k, sel) = select_for(image, &img.labels(), want)?;
            found = Some(k);
            Ok(sel)
        },
        Limits {
            max_bytes: pull.max_size,
            ..Limits::default()
        },
    )
    .await?;
    Ok((found.ok_or("internal: image kind unknown")?, pulled))
}

/// What an image of `labels` is and the files read from it, when it is what `want` asks for.
fn select_for(
    image: &str,
    labels: &BTreeMap<String, String>,
    want: Want,
) -> Result<(Kind, Select), String> {
    let k = kind(image, labels)?;
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
    Ok((k, sel))
}

/// Reads the image an `oci:PATH[:REFERENCE]` input names ([`super::transport`]) out of its
/// OCI layout into `dir`, offline, with the same checks and limits as a pull; returns what it
/// was and its manifest digest.
pub fn read_layout(
    input: &str,
    oci: &super::transport::LayoutRef,
    dir: &Path,
    pull: &PullOptions,
    want: Want,
) -> Result<(Kind, String), String> {
    if !super::layout_read::is_layout(&oci.dir) {
        return Err(format!(
            "{}: not an OCI image layout (no oci-layout and index.json)",
            oci.dir.display()
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut found = None;
    let (digest, _) = super::layout_read::extract_picked(
        &oci.dir,
        oci.pick(),
        dir,
        Limits {
            max_bytes: pull.max_size,
            ..Limits::default()
        },
        |labels| {
            let (k, sel) = select_for(input, labels, want)?;
            found = Some(k);
            Ok(sel)
        },
    )?;
    Ok((found.ok_or("internal: image kind unknown")?, digest))
}

/// Whether a command-line input names an image rather than a local path (it does not exist
/// on disk): a registry reference or an `oci:PATH[:REFERENCE]` layout.
pub fn is_image(s: &str) -> bool {
    !Path::new(s).exists()
}

/// Inputs that were pulled: per input, the image kind and where it was extracted (`None` for
/// local paths), and the scratch directories to keep alive while they are read.
pub type PulledInputs = (Vec<Option<(Kind, PathBuf)>>, Vec<ScratchDir>);

/// Pulls every input that is an image reference ([`is_image`]) into its own scratch directory,
/// with one registry client for all of them. `opts.max_blob` is set to the pull's size cap.
pub async fn pull_inputs(
    inputs: &[&str],
    opts: &Options,
    pull: &PullOptions,
    want: Want,
) -> Result<PulledInputs, String> {
    let mut pulled = vec![None; inputs.len()];
    let mut scratch = Vec::new();
    // An input that is not on disk is read as an image: when it is not one either, or cannot
    // be pulled, both readings are named (it may be a mistyped path).
    let local = if matches!(want, Want::Bundle) {
        "no such directory"
    } else {
        "no such file or directory"
    };
    let layout_ref = |s: &str| super::transport::parse(s).filter(|_| is_image(s));
    let refs = inputs
        .iter()
        .filter(|s| is_image(s) && layout_ref(s).is_none())
        .map(|s| {
            s.parse::<Reference>()
                .map_err(|e| format!("{s}: {local}, and not an image reference ({e})"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if !inputs.iter().any(|s| is_image(s)) {
        return Ok((pulled, scratch));
    }
    let rr: Vec<&Reference> = refs.iter().collect();
    let opts = Options {
        max_blob: pull.max_size,
        ..opts.clone()
    };
    // A client only when a registry is asked (an oci: layout is read offline).
    let reg = (!refs.is_empty()).then(|| Registry::new(opts, &rr, &rr));
    for (i, s) in inputs.iter().enumerate() {
        if !is_image(s) {
            continue;
        }
        let dir = ScratchDir::new();
        let got = match (layout_ref(s), &reg) {
            (Some(oci), _) => read_layout(
                s,
                &oci.map_err(|e| format!("{e} (and {local})"))?,
                &dir.0,
                pull,
                want,
            )
            .map(|(k, _)| k)
            .map_err(|e| format!("{s}: {e}")),
            (None, Some(reg)) => pull_image(reg, s, &dir.0, pull, want)
                .await
                .map(|(k, _)| k)
                .map_err(|e| {
                    if names_registry(s) {
                        format!("{s}: {e}")
                    } else {
                        format!("{s}: {local}, and pulling it as an image failed: {e}")
                    }
                }),
            (None, None) => Err("internal: no registry client".to_string()),
        };
        let kind = got?;
        pulled[i] = Some((kind, dir.0.clone()));
        scratch.push(dir);
    }
    Ok((pulled, scratch))
}

/// Whether `s` names its registry: its first `/`-separated part is a domain (has a `.` or a
/// `:`, or is `localhost`), as distribution/reference's `splitDockerDomain` (normalize.go)
/// decides. An input without one may as well be a mistyped relative path.
fn names_registry(s: &str) -> bool {
    s.split_once('/')
        .is_some_and(|(first, _)| first.contains(['.', ':']) || first == "localhost")
}

/// A directory removed on drop (for reading pulled images): `.0` is a path that does not exist
/// yet, inside a directory of its own that was created for it, empty and private (0700), so
/// that nobody else can have put a link or a file where the image is extracted.
#[derive(Debug)]
pub struct ScratchDir(pub PathBuf, bool);

impl ScratchDir {
    /// A fresh, not yet existing path in a new private directory under the system temp dir
    /// (`create_dir` refuses a name that exists, a link included: another name is tried).
    pub fn new() -> ScratchDir {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        loop {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let parent = std::env::temp_dir().join(format!(
                "olmctl-{}-{}-{nanos}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&parent) {
                Ok(()) => return ScratchDir(parent.join("image"), true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                // The temp dir is not writable: the pull says so when it writes there, and
                // nothing is removed that this did not create.
                Err(_) => return ScratchDir(parent.join("image"), false),
            }
        }
    }
}

impl Default for ScratchDir {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let (true, Some(parent)) = (self.1, self.0.parent()) {
            let _ = std::fs::remove_dir_all(parent);
        }
    }
}

#[cfg(test)]
mod scratch_tests {
    use super::ScratchDir;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_scratch_directory_is_new_private_and_removed() {
        let d = ScratchDir::new();
        let parent = d.0.parent().expect("parent").to_path_buf();
        assert!(!d.0.exists(), "the image path does not exist yet");
        let meta = std::fs::symlink_metadata(&parent).expect("created");
        assert!(meta.is_dir() && !meta.file_type().is_symlink());
        assert_eq!(meta.permissions().mode() & 0o777, 0o700);
        std::fs::create_dir(&d.0).expect("the pull creates it");
        let other = ScratchDir::new();
        assert_ne!(other.0.parent(), d.0.parent());
        drop(d);
        assert!(!parent.exists());
    }
}
