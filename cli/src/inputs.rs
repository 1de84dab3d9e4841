//! Reading a command's inputs, with the messages and exit statuses of the command line: catalogs
//! (whole or not), and inputs that name images, pulled into scratch directories.

use std::path::{Path, PathBuf};
use std::time::Duration;

use olmctl::catalog::NotWhole;
use olmctl::fbc::load::Loaded;
use olmctl::oci::deliver::{PulledInputs, Want};

use crate::args::{PullArgs, RegistryArgs, pull_options, registry_options};
use crate::term::{EXIT_FINDINGS, EXIT_USAGE, error, runtime};

/// Loads a catalog; an unreadable one is an error printed, exit status 2.
pub fn catalog(dirs: &[PathBuf]) -> Result<Loaded, u8> {
    olmctl::catalog::load(dirs).map_err(|e| {
        error(e);
        EXIT_USAGE
    })
}

/// `loaded` narrowed to `package` when one is given (`-p/--package`,
/// [`olmctl::catalog::only_package`]); an unknown package is a usage error (exit 2).
pub fn narrowed(loaded: Result<Loaded, u8>, package: Option<&str>) -> Result<Loaded, u8> {
    let mut loaded = loaded?;
    if let Some(p) = package {
        olmctl::catalog::only_package(&mut loaded, p).map_err(|e| {
            error(olmctl::text::esc(e));
            EXIT_USAGE
        })?;
    }
    Ok(loaded)
}

/// Loads a catalog for a command that shows it ([`olmctl::catalog::load_whole`]): files that
/// do not load are reported on stderr, as `validate` reports them, with exit status 1.
pub fn whole_catalog(dirs: &[PathBuf]) -> Result<Loaded, u8> {
    match olmctl::catalog::load_whole(dirs) {
        Ok(l) => Ok(l),
        Err(NotWhole::Unreadable(e)) => {
            error(e);
            Err(EXIT_USAGE)
        }
        Err(NotWhole::Partial(errors)) => {
            eprint!("{}", olmctl::diag::render_text(&errors, false));
            error(NotWhole::partial_message(errors.len()));
            Err(EXIT_FINDINGS)
        }
    }
}

/// Pulls every input that names an image into its own scratch directory
/// ([`olmctl::oci::deliver::pull_inputs`]).
pub fn pulled(
    inputs: &[&str],
    reg_args: &RegistryArgs,
    pull: &PullArgs,
    want: Want,
) -> Result<PulledInputs, String> {
    if !inputs.iter().any(|s| olmctl::oci::deliver::is_image(s)) {
        return Ok((vec![None; inputs.len()], Vec::new()));
    }
    let opts = registry_options(reg_args, pull.max_size)?;
    let pull = pull_options(pull)?;
    let rt = runtime().map_err(|_| "cannot start the async runtime".to_string())?;
    rt.block_on(olmctl::oci::deliver::pull_inputs(
        inputs, &opts, &pull, want,
    ))
}

/// `catalog pull` and `bundle unpack`: extracts `image` into `dir` and prints what was pulled.
pub fn pull_to_dir(
    image: &str,
    dir: &std::path::Path,
    reg_args: &RegistryArgs,
    pull: &PullArgs,
    output: crate::term::Output,
    want: Want,
) -> u8 {
    use crate::term::{EXIT_OK, Output, out};
    use olmctl::text::esc;
    let run = || -> Result<(), String> {
        if let Some(oci) = olmctl::oci::transport::parse(image) {
            // An OCI layout (oci:PATH[:REFERENCE]): read offline, nothing asked of a registry.
            let oci = oci.map_err(|e| format!("{image}: {e}"))?;
            let (_, digest) =
                olmctl::oci::deliver::read_layout(image, &oci, dir, &pull_options(pull)?, want)
                    .map_err(|e| format!("{image}: {e}"))?;
            eprintln!(
                "extracted {digest} from the OCI layout {} into {}",
                esc(oci.dir.display()),
                esc(dir.display())
            );
            match output {
                Output::Text => out(&format!("{digest}\n")),
                Output::Json => out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&serde_json::json!({
                        "reference": image,
                        "digest": digest,
                        "dir": dir.display().to_string(),
                    }))
                    .unwrap_or_default()
                )),
            }
            return Ok(());
        }
        let r = olmctl::oci::registry::parse_ref(image)?;
        let opts = registry_options(reg_args, pull.max_size)?;
        let pull = pull_options(pull)?;
        let reg = olmctl::oci::registry::Registry::new(opts, &[&r], &[&r]);
        let rt = runtime().map_err(|_| "cannot start the async runtime".to_string())?;
        let (_, p) = rt.block_on(olmctl::oci::deliver::pull_image(
            &reg, image, dir, &pull, want,
        ))?;
        eprintln!(
            "pulled {} ({} files, {} bytes uncompressed) into {}",
            p.image.top_digest(),
            p.files,
            p.bytes,
            esc(dir.display())
        );
        match output {
            Output::Text => out(&format!(
                "{}\n",
                esc(olmctl::oci::deliver::pinned(&r, p.image.top_digest()))
            )),
            Output::Json => out(&format!(
                "{}\n",
                serde_json::to_string_pretty(&serde_json::json!({
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
    };
    match run() {
        Ok(()) => EXIT_OK,
        Err(e) => {
            error(e);
            EXIT_USAGE
        }
    }
}

/// A bundle named by a directory or an image (pulled first), loaded; the image's scratch
/// directory lives as long as the returned guard. Errors are printed (exit status 2).
pub fn bundle(
    arg: &str,
    reg_args: &RegistryArgs,
    pull: &PullArgs,
) -> Result<
    (
        olmctl::bundle::load::BundleDir,
        Vec<olmctl::oci::deliver::ScratchDir>,
    ),
    u8,
> {
    let (pulled, scratch) = pulled(&[arg], reg_args, pull, Want::Bundle).map_err(|e| {
        error(e);
        EXIT_USAGE
    })?;
    let dir = pulled
        .into_iter()
        .next()
        .flatten()
        .map_or_else(|| PathBuf::from(arg), |(_, d)| d);
    let bundle = olmctl::bundle::load::load_bundle(&dir).map_err(|e| {
        error(e);
        EXIT_USAGE
    })?;
    Ok((bundle, scratch))
}

/// An image's config labels, its manifest and config read from the registry (no layers),
/// for the host's platform when it is an index.
pub fn image_labels(
    image: &str,
    reg_args: &RegistryArgs,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let r = olmctl::oci::registry::parse_ref(image)?;
    let opts = registry_options(reg_args, 64 << 20)?;
    let reg = olmctl::oci::registry::Registry::new(opts, &[&r], &[&r]);
    let rt = runtime().map_err(|_| "cannot start the async runtime".to_string())?;
    let resolved = rt.block_on(reg.resolve(&r, &olmctl::oci::image::Platform::host()))?;
    Ok(resolved.labels())
}

/// The files of `-f`: files as given, directories expanded to their YAML and JSON files (sorted,
/// not recursive; a linked one must resolve inside the directory, see [`olmctl::input::tree`]).
pub fn object_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.extension()
                        .is_some_and(|x| x == "yaml" || x == "yml" || x == "json")
                })
                .filter(|f| f.is_file())
                .collect();
            files.sort();
            let tree =
                olmctl::input::tree::Tree::new(p).map_err(|e| format!("{}: {e}", p.display()))?;
            for f in &files {
                tree.check(f).map_err(|e| format!("{}: {e}", f.display()))?;
            }
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// An image pulled into a scratch directory (kept as long as the guard), with the registry
/// defaults of `install` (no flags of its own: loopback registries are plain HTTP).
pub fn pulled_dir(
    image: &str,
    want: Want,
    timeout: Duration,
) -> Result<(PathBuf, Vec<olmctl::oci::deliver::ScratchDir>), String> {
    let registry = RegistryArgs::defaults(timeout);
    let pull = PullArgs {
        platform: None,
        max_size: 2 << 30,
    };
    crate::inputs::pulled(&[image], &registry, &pull, want).and_then(|(dirs, scratch)| {
        let dir = dirs.into_iter().next().flatten().map(|(_, d)| d);
        dir.map(|d| (d, scratch))
            .ok_or_else(|| format!("{image}: not an image reference"))
    })
}

/// Reads an FBC catalog directory or file; a file that does not parse is an error at its
/// line.
pub fn catalog_cfg(dir: &Path) -> Result<olmctl::fbc::decl::DeclarativeConfig, String> {
    let loaded = olmctl::fbc::load::load_catalog(&[dir.to_path_buf()])?;
    for p in &loaded.problems {
        if let olmctl::fbc::load::LoadProblem::Syntax { file, error } = p {
            return Err(format!(
                "{}:{}:{}: {}",
                file.display(),
                error.line,
                error.column,
                error.message
            ));
        }
    }
    Ok(loaded.cfg)
}
