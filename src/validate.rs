//! `bundle validate` as one operation: the bundle directories read, the platforms of every
//! image their CSVs name read from the registries when the multi-arch checks (ARC) run, and
//! every selected check run, findings sorted.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use futures_util::StreamExt;

use crate::bundle::load::load_bundle;
use crate::checks::bundle::Options;
use crate::checks::bundle::multiarch::{ImagePlatforms, images};
use crate::diag::{Finding, sort_findings};
use crate::oci::registry::{self, parse_ref};

/// Validates the bundles at `dirs` with `opts`; `registry` reaches the images' registries for
/// the ARC checks (without it, or when ARC does not run, no registry is asked). The first
/// directory that cannot be read is the error.
pub async fn bundles(
    dirs: &[PathBuf],
    opts: Options,
    registry: Option<&registry::Options>,
) -> Result<Vec<Finding>, String> {
    let mut findings = Vec::new();
    let mut failed = None;
    each(dirs, opts, registry, |_, r| match r {
        Ok(f) => findings.extend(f),
        Err(e) => {
            failed.get_or_insert(e);
        }
    })
    .await;
    if let Some(e) = failed {
        return Err(e);
    }
    sort_findings(&mut findings);
    Ok(findings)
}

/// Validates the bundles at `dirs` one after the other, in their order, handing `done` each
/// one's index and its findings (sorted), or why its directory cannot be read, as soon as it
/// is checked: one bundle is held at a time. When ARC runs with a `registry`, the images of
/// every CSV are read first (the directories are read twice).
pub async fn each(
    dirs: &[PathBuf],
    mut opts: Options,
    registry: Option<&registry::Options>,
    mut done: impl FnMut(usize, Result<Vec<Finding>, String>),
) {
    if let Some(registry) = registry.filter(|_| opts.runs("ARC")) {
        let mut names = BTreeSet::new();
        for d in dirs {
            if let Ok(b) = load_bundle(d)
                && let Some((_, csv)) = b.csv()
            {
                names.extend(images(csv).into_iter().map(|u| u.image));
            }
        }
        opts.image_platforms = Some(Arc::new(image_platforms(names, registry).await));
    }
    for (i, d) in dirs.iter().enumerate() {
        done(
            i,
            load_bundle(d)
                .map(|b| {
                    let mut f = crate::checks::bundle::validate_with(&b, &opts);
                    sort_findings(&mut f);
                    f
                })
                .map_err(|e| e.to_string()),
        );
    }
}

/// The platforms of the images `names`, read from their registries (8 at a time); an image
/// that cannot be read is recorded with why (ARC001), not an error.
pub async fn image_platforms(names: BTreeSet<String>, opts: &registry::Options) -> ImagePlatforms {
    let mut out = ImagePlatforms::new();
    let mut refs = Vec::new();
    for i in names {
        match parse_ref(&i) {
            Ok(r) => refs.push((i, r)),
            Err(e) => {
                out.insert(i, Err(e));
            }
        }
    }
    if refs.is_empty() {
        return out;
    }
    let all: Vec<&oci_client::Reference> = refs.iter().map(|(_, r)| r).collect();
    let reg = registry::Registry::new(opts.clone(), &[], &all);
    let reg = &reg;
    let results: Vec<Result<Vec<(String, String)>, String>> = futures_util::stream::iter(
        refs.iter()
            .map(|(_, r)| async move { crate::oci::platforms::platforms(reg, r).await }),
    )
    .buffered(8)
    .collect::<Vec<_>>()
    .await;
    for ((i, _), res) in refs.into_iter().zip(results) {
        out.insert(i, res);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies the directory tree `from` to `to`.
    fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
        std::fs::create_dir_all(to).expect("mkdir");
        for e in std::fs::read_dir(from).expect("read_dir") {
            let e = e.expect("entry");
            let dest = to.join(e.file_name());
            if e.file_type().expect("type").is_dir() {
                copy_tree(&e.path(), &dest);
            } else {
                std::fs::copy(e.path(), dest).expect("copy");
            }
        }
    }

    /// Each bundle is handed on before the next directory is read: the second directory
    /// only exists once the first bundle's findings have been handed on, and it is read.
    #[test]
    fn each_bundle_is_handed_on_before_the_next_is_read() {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/fixtures/first-day/operators/cloudnative-pg/1.29.2");
        let tmp = tempfile::tempdir().expect("tmp");
        let dirs = [tmp.path().join("first"), tmp.path().join("second")];
        copy_tree(&fixture, &dirs[0]);
        let mut seen = Vec::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        rt.block_on(each(&dirs, Options::default(), None, |i, r| {
            if i == 0 {
                assert!(!dirs[1].exists());
                copy_tree(&fixture, &dirs[1]);
            }
            seen.push((i, r.map(|f| f.len())));
        }));
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert_eq!(seen[0].0, 0);
        assert_eq!(seen[1].0, 1);
        let first = seen[0].1.clone().expect("the first bundle is read");
        assert_eq!(seen[1].1, Ok(first), "{seen:?}");
    }
}
