//! Bundle sources for templates: a `--bundles` map file, a YAML mapping from an image reference
//! (exactly as the template writes it) to a bundle directory, relative to the map file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::fbc::node::Value;

/// Reads a `--bundles` map. Errors name the file and line.
pub fn read_map(path: &Path) -> Result<HashMap<String, PathBuf>, String> {
    let bytes = crate::input::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text =
        String::from_utf8(bytes).map_err(|_| format!("{}: not UTF-8 text", path.display()))?;
    let mut doc = None;
    crate::fbc::yaml::parse_documents(&text, |n| {
        if doc.is_none() {
            doc = Some(n);
        }
    })
    .map_err(|e| format!("{}:{}:{}: {}", path.display(), e.line, e.column, e.message))?;
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
        let Some(root) = crate::bundle::load::bundle_root(&dir) else {
            return Err(format!(
                "{}:{}:{}: {} is not a bundle directory (manifests/ and metadata/)",
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
