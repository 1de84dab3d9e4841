//! A catalog as the commands read it: every directory given loaded into one
//! [`Loaded`](crate::fbc::load::Loaded), and, for the commands that show a catalog rather than
//! check it, the refusal to show a partial one.

use std::path::PathBuf;

use crate::diag::Finding;
use crate::fbc::load::Loaded;

/// Loads the catalog below `dirs`; an error names what could not be read.
pub use crate::fbc::load::load_catalog as load;

/// Why a catalog is not shown.
#[derive(Debug)]
pub enum NotWhole {
    /// It could not be read at all.
    Unreadable(String),
    /// Files or blobs do not load: the findings that say which.
    Partial(Vec<Finding>),
}

impl NotWhole {
    /// The closing message of a [`NotWhole::Partial`] catalog (after its findings).
    pub fn partial_message(count: usize) -> String {
        format!(
            "{count} problem{} in files that do not load; nothing is shown from a partial catalog \
             (fix them, or list stray files in .indexignore)",
            if count == 1 { "" } else { "s" }
        )
    }
}

/// Loads a catalog for a command that shows it rather than checks it (`ls`, `graph`, `path`,
/// `render`): files or blobs that do not load make it [`NotWhole::Partial`] instead of showing
/// what remains.
pub fn load_whole(dirs: &[PathBuf]) -> Result<Loaded, NotWhole> {
    let loaded = load(dirs).map_err(NotWhole::Unreadable)?;
    let errors = crate::checks::fbc::load_errors(&loaded);
    if errors.is_empty() {
        Ok(loaded)
    } else {
        Err(NotWhole::Partial(errors))
    }
}

/// Keeps only the blobs of package `name` (its `olm.package`, channels, bundles,
/// deprecations and other blobs naming it), as `opm alpha list channels|bundles INDEX PACKAGE`
/// narrows the model (operator-registry alpha/action/list.go, `getPackages`); load problems are
/// kept (a file that does not load may hold the package). An error names the package and
/// the catalog's packages when no blob names it (opm: `package "x" not found`).
pub fn only_package(loaded: &mut Loaded, name: &str) -> Result<(), String> {
    let cfg = &mut loaded.cfg;
    let found = cfg.packages.iter().any(|p| p.name == name)
        || cfg.channels.iter().any(|c| c.package == name)
        || cfg.bundles.iter().any(|b| b.package == name);
    if !found {
        let mut names: Vec<&str> = cfg.packages.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        return Err(format!(
            "package {name:?} not found (packages: {})",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    cfg.packages.retain(|p| p.name == name);
    cfg.channels.retain(|c| c.package == name);
    cfg.bundles.retain(|b| b.package == name);
    cfg.deprecations.retain(|d| d.package == name);
    cfg.others.retain(|o| o.package == name);
    Ok(())
}

/// What `opm render` does to a catalog it reads (operator-registry alpha/action/render.go,
/// `Render.Run`): every bundle's `olm.bundle.object` and `olm.csv.metadata` properties moved
/// after the others (`moveBundleObjectsToEndOfPropertySlices`, order kept), its
/// `relatedImages` sorted by image (opm's `sort.Slice`; stable here, so equal images keep
/// their order).
pub fn as_opm_renders(cfg: &mut crate::fbc::decl::DeclarativeConfig) {
    for b in &mut cfg.bundles {
        let is_object = |t: &str| t == "olm.bundle.object" || t == "olm.csv.metadata";
        let (objects, mut others): (Vec<_>, Vec<_>) = std::mem::take(&mut b.properties)
            .into_iter()
            .partition(|p| is_object(&p.type_));
        others.extend(objects);
        b.properties = others;
        b.related_images.sort_by(|x, y| x.image.cmp(&y.image));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::sync::Arc;

    #[test]
    fn only_package_keeps_its_blobs_and_names_the_others_when_missing() {
        let mut loaded = Loaded::default();
        let file: Arc<Path> = Path::new("/c/x.yaml").into();
        let text = "schema: olm.package\nname: a\n---\nschema: olm.package\nname: b\n---\n\
                    schema: olm.channel\npackage: b\nname: s\nentries: []\n---\n\
                    schema: olm.bundle\npackage: a\nname: a.v1\nimage: x\n---\n\
                    schema: custom\npackage: a\n";
        assert!(crate::fbc::load::parse_text(text, &file, &mut loaded.cfg).is_empty());
        let mut b = Loaded {
            cfg: loaded.cfg.clone(),
            ..Loaded::default()
        };
        only_package(&mut b, "b").expect("b");
        assert_eq!(b.cfg.packages.len(), 1);
        assert_eq!(b.cfg.channels.len(), 1);
        assert!(b.cfg.bundles.is_empty() && b.cfg.others.is_empty());
        only_package(&mut loaded, "a").expect("a");
        assert_eq!(loaded.cfg.bundles.len(), 1);
        assert_eq!(loaded.cfg.others.len(), 1);
        let e = only_package(&mut loaded, "zz").expect_err("missing");
        assert_eq!(e, "package \"zz\" not found (packages: a)");
    }

    #[test]
    fn as_opm_renders_moves_objects_last_and_sorts_related_images() {
        let mut loaded = Loaded::default();
        let file: Arc<Path> = Path::new("/c/x.yaml").into();
        let text = "schema: olm.bundle\npackage: a\nname: a.v1\nimage: x\nproperties:\n\
                    - type: olm.bundle.object\n  value: {data: e30=}\n\
                    - type: olm.package\n  value: {packageName: a, version: 1.0.0}\n\
                    - type: olm.csv.metadata\n  value: {}\n\
                    - type: olm.gvk\n  value: {group: g, kind: K, version: v1}\n\
                    relatedImages:\n- {name: z, image: quay.io/z}\n- {name: a, image: quay.io/a}\n";
        assert!(crate::fbc::load::parse_text(text, &file, &mut loaded.cfg).is_empty());
        as_opm_renders(&mut loaded.cfg);
        let b = &loaded.cfg.bundles[0];
        let types: Vec<&str> = b.properties.iter().map(|p| p.type_.as_str()).collect();
        assert_eq!(
            types,
            [
                "olm.package",
                "olm.gvk",
                "olm.bundle.object",
                "olm.csv.metadata"
            ]
        );
        let images: Vec<&str> = b.related_images.iter().map(|r| r.image.as_str()).collect();
        assert_eq!(images, ["quay.io/a", "quay.io/z"]);
    }
}
