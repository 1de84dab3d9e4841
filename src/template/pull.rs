//! The bundle directories a template's images name: from the `--bundles` map first, then from
//! the bundle cache (by digest), then pulled from their registries (8 at a time) into the
//! cache. Every failure names the template file and the line of the image.

use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use futures_util::StreamExt;

use super::ImageRef;
use crate::oci::bundle_cache::{default_root, lookup, scratch, store};
use crate::oci::deliver::{PullOptions, Want, pull_image};
use crate::oci::events::Events;
use crate::oci::registry::{Options, Registry, parse_ref};
use crate::text::esc;

/// Where a template's bundles come from.
#[derive(Debug, Clone)]
pub struct Sources {
    /// A `--bundles` map file (image to directory), read first.
    pub bundles: Option<PathBuf>,
    /// The bundle cache (default: [`default_root`]).
    pub cache_dir: Option<PathBuf>,
    /// How to reach registries.
    pub registry: Options,
    /// How to pull.
    pub pull: PullOptions,
}

impl Sources {
    fn cache(&self) -> PathBuf {
        self.cache_dir.clone().unwrap_or_else(default_root)
    }
}

/// Bundle directories for `refs` of template `file`.
pub async fn bundle_dirs(
    file: &Path,
    refs: &[ImageRef],
    sources: &Sources,
    events: &dyn Events,
) -> Result<HashMap<String, PathBuf>, String> {
    let cache = sources.cache();
    let map = sources
        .bundles
        .as_deref()
        .map(|b| super::sources::read_map(b, &cache))
        .transpose()?
        .unwrap_or_default();
    let at = |r: &ImageRef, e: &dyn std::fmt::Display| {
        format!("{}:{}:{}: {e}", file.display(), r.pos.line, r.pos.col)
    };
    let plat = &sources.pull.platform;
    let mut dirs = HashMap::new();
    let mut to_pull = Vec::new();
    for r in refs {
        if let Some(d) = map.get(&r.image) {
            dirs.insert(r.image.clone(), d.clone());
            continue;
        }
        let parsed = parse_ref(&r.image)
            .map_err(|e| at(r, &format!("{e} (and the image is not in --bundles)")))?;
        // Pinned by digest and cached: no registry is asked.
        if let Some(d) = parsed.digest().and_then(|d| lookup(&cache, d, plat)) {
            dirs.insert(r.image.clone(), d);
            continue;
        }
        to_pull.push((r, parsed));
    }
    if to_pull.is_empty() {
        return Ok(dirs);
    }
    let all: Vec<&oci_client::Reference> = to_pull.iter().map(|(_, p)| p).collect();
    let opts = Options {
        max_blob: sources.pull.max_size,
        ..sources.registry.clone()
    };
    let reg = Registry::new(opts, &all, &all);
    let total = to_pull.len();
    events.step(&format!(
        "pulling {total} bundle image{}",
        if total == 1 { "" } else { "s" }
    ));
    let done = Cell::new(0usize);
    let pulls = to_pull.iter().map(|(r, parsed)| {
        let (reg, done, cache) = (&reg, &done, &cache);
        async move {
            // A tag is resolved to the digest it names now (its manifest or index, one
            // request) and pulled by that digest; a digest names itself.
            let digest = match parsed.digest() {
                Some(d) => d.to_string(),
                None => reg.fetch_manifest(parsed).await?.1,
            };
            let dir = match lookup(cache, &digest, plat) {
                Some(d) => d,
                None => {
                    let by_digest =
                        format!("{}/{}@{digest}", parsed.registry(), parsed.repository());
                    let tmp = scratch(cache)?;
                    let pulled =
                        pull_image(reg, &by_digest, &tmp, &sources.pull, Want::Bundle).await;
                    let pulled = match pulled {
                        Ok((_, p)) => p,
                        Err(e) => {
                            let _ = std::fs::remove_dir_all(&tmp);
                            return Err(e);
                        }
                    };
                    let through_index = pulled.image.index_digest.is_some().then_some(plat);
                    store(cache, &digest, through_index, &tmp)?
                }
            };
            done.set(done.get() + 1);
            events.step(&format!("  [{}/{total}] {}", done.get(), esc(&r.image)));
            Ok::<PathBuf, String>(dir)
        }
    });
    // At most 8 pulls at a time.
    let results: Vec<Result<PathBuf, String>> = futures_util::stream::iter(pulls)
        .buffered(8)
        .collect::<Vec<_>>()
        .await;
    for ((r, _), res) in to_pull.iter().zip(results) {
        let dir = res.map_err(|e| at(r, &format!("{}: {e}", r.image)))?;
        dirs.insert(r.image.clone(), dir);
    }
    Ok(dirs)
}
