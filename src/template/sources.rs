//! Bundle sources for templates: a `--bundles` map file, a YAML mapping from an image reference
//! (exactly as the template writes it) to a bundle directory or an OCI image layout directory
//! (the image named by the reference's tag, or the only one), relative to the map file. Layout
//! images are extracted into the bundle cache by manifest digest.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::fbc::node::Value;

/// Reads a `--bundles` map. Errors name the file and line.
pub fn read_map(path: &Path, cache: &Path) -> Result<HashMap<String, PathBuf>, String> {
    let doc = crate::fbc::yaml::read_first_document(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut out = HashMap::new();
    let Some(doc) = doc else {
        return Ok(out);
    };
    let Value::Map(entries) = &doc.value else {
        return Err(format!(
            "{}:{}:{}: expected a mapping of bundle image to bundle directory, found {}",
            path.display(),
            doc.pos.line,
            doc.pos.col,
            doc.kind()
        ));
    };
    for e in entries {
        let Value::Str(dir) = &e.value.value else {
            return Err(format!(
                "{}:{}:{}: the value of {:?} must be a bundle directory",
                path.display(),
                e.value.pos.line,
                e.value.pos.col,
                e.key
            ));
        };
        let dir = base.join(dir);
        let at = |what: String| {
            format!(
                "{}:{}:{}: {what}",
                path.display(),
                e.value.pos.line,
                e.value.pos.col
            )
        };
        if crate::oci::layout_read::is_layout(&dir) {
            out.insert(e.key.clone(), from_layout(&dir, &e.key, cache).map_err(at)?);
            continue;
        }
        let Some(root) = crate::bundle::load::bundle_root(&dir) else {
            return Err(format!(
                "{}:{}:{}: {} is neither a bundle directory (manifests/ and metadata/) nor an OCI image layout",
                path.display(),
                e.value.pos.line,
                e.value.pos.col,
                dir.display()
            ));
        };
        out.insert(e.key.clone(), root);
    }
    Ok(out)
}

/// The bundle of image `reference` in the OCI layout `dir`, extracted into the cache: the image
/// with the reference's digest, else the one named by its tag, else the only one.
fn from_layout(dir: &Path, reference: &str, cache: &Path) -> Result<PathBuf, String> {
    use crate::oci::bundle_cache::{scratch, store};
    let parsed = crate::oci::registry::parse_ref(reference)?;
    let explicit_tag = reference
        .rsplit('/')
        .next()
        .map(|last| last.split('@').next().unwrap_or(last).contains(':'))
        .unwrap_or(false);
    let tag = explicit_tag.then(|| parsed.tag()).flatten();
    let tmp = scratch(cache)?;
    let res = crate::oci::layout_read::extract(dir, parsed.digest(), tag, &tmp, Default::default())
        .and_then(
            |(digest, labels)| match crate::oci::pull::kind(reference, &labels)? {
                crate::oci::pull::Kind::Bundle => Ok(digest),
                crate::oci::pull::Kind::Catalog(_) => Err(format!(
                    "{} holds a catalog image, not a bundle",
                    dir.display()
                )),
            },
        );
    match res {
        Ok(digest) => store(cache, &digest, None, &tmp),
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            Err(e)
        }
    }
}
