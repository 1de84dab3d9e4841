//! A community-operators package's `ci.yaml`: which template feeds which catalog
//! (`fbc.catalog_mapping`), and the migration the community pipeline applies per catalog.

use std::path::Path;

use crate::bundle::load::{list_at, str_at};
use crate::fbc::node::{Pos, Value};

/// One `fbc.catalog_mapping` item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    /// `template_name`: a file under `catalog-templates/`.
    pub template: String,
    /// `type` (`olm.template.basic`, `olm.semver`), as written.
    pub kind: String,
    /// `catalog_names`, e.g. `v4.18`.
    pub catalogs: Vec<String>,
    /// Where the item is.
    pub pos: Pos,
}

/// Reads `fbc.catalog_mapping` of a `ci.yaml`. Errors name the file and line.
pub fn read_mapping(path: &Path) -> Result<Vec<Mapping>, String> {
    let doc = crate::fbc::yaml::read_first_document(path)?;
    let Some(doc) = doc else {
        return Err(format!("{}: empty file", path.display()));
    };
    let items = list_at(&doc, &["fbc", "catalog_mapping"]);
    if items.is_empty() {
        return Err(format!(
            "{}: no fbc.catalog_mapping: the package does not publish from templates",
            path.display()
        ));
    }
    let mut out = Vec::new();
    for m in items {
        let at = |what: &str| format!("{}:{}:{}: {what}", path.display(), m.pos.line, m.pos.col);
        let template = str_at(m, &["template_name"])
            .ok_or_else(|| at("a catalog_mapping item needs template_name"))?;
        if template.is_empty() || template.contains('/') || template.contains("..") {
            return Err(at(
                "template_name must be a file name under catalog-templates/",
            ));
        }
        let mut catalogs = Vec::new();
        for c in list_at(m, &["catalog_names"]) {
            match &c.value {
                Value::Str(s) if parse_catalog(s).is_some() => catalogs.push(s.clone()),
                _ => {
                    return Err(format!(
                        "{}:{}:{}: catalog names are vMAJOR.MINOR (e.g. v4.18)",
                        path.display(),
                        c.pos.line,
                        c.pos.col
                    ));
                }
            }
        }
        out.push(Mapping {
            template: template.to_string(),
            kind: str_at(m, &["type"]).unwrap_or_default().to_string(),
            catalogs,
            pos: m.pos,
        });
    }
    Ok(out)
}

/// `v4.18` → `(4, 18)`.
pub fn parse_catalog(name: &str) -> Option<(u64, u64)> {
    let (maj, min) = name.strip_prefix('v')?.split_once('.')?;
    Some((maj.parse().ok()?, min.parse().ok()?))
}

/// Whether the community pipeline renders `catalog` with
/// `--migrate-level bundle-object-to-csv-metadata` (OpenShift 4.17 and later).
pub fn migrates(catalog: &str) -> bool {
    parse_catalog(catalog).is_some_and(|v| v >= (4, 17))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_names_and_migration() {
        assert_eq!(parse_catalog("v4.18"), Some((4, 18)));
        assert_eq!(parse_catalog("4.18"), None);
        assert!(migrates("v4.17") && migrates("v4.22") && migrates("v5.0"));
        assert!(!migrates("v4.16") && !migrates("v4.9"));
    }
}
