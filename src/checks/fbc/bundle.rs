//! Bundle rules: package (FBC040-041), uniqueness (FBC042, FBC054), the `olm.package` property
//! (FBC044-045, FBC048-049, FBC051-052), images (FBC046-047, FBC053, FBC059), channel membership
//! (FBC050), and property sanity opm leaves to serve time or runtime (FBC055-058).

use std::collections::{BTreeMap, HashSet};

use super::Sink;
use super::codes::*;
use crate::diag::Subject;
use crate::fbc::decl::Bundle;
use crate::fbc::node::Value;
use crate::fbc::property::{self, Typed};
use crate::model::Index;

/// Checks a release string like operator-registry's `alpha/model/versionrelease.go`:
/// dot-separated pre-release identifiers, at most 20 characters.
pub fn release_error(r: &str) -> Option<String> {
    if r.len() > 20 {
        return Some(format!(
            "invalid release \"{r}\": must be at most 20 characters"
        ));
    }
    for (i, seg) in r.split('.').enumerate() {
        if seg.is_empty() {
            return Some(format!(
                "invalid release \"{r}\": segment {i}: Prerelease is empty"
            ));
        }
        if !seg.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
            return Some(format!(
                "invalid release \"{r}\": segment {i}: Invalid character(s) found in prerelease \"{seg}\""
            ));
        }
        if seg.bytes().all(|c| c.is_ascii_digit()) && seg.len() > 1 && seg.starts_with('0') {
            return Some(format!(
                "invalid release \"{r}\": segment {i}: Numeric PreRelease version must not contain leading zeroes \"{seg}\""
            ));
        }
    }
    None
}

/// Runs the bundle rules.
pub fn check(idx: &Index<'_>, sink: &mut Sink) {
    for (pkg, view) in &idx.packages {
        let known_package = view.package().is_some() && !pkg.is_empty();
        let in_channel: HashSet<&str> = view
            .channels
            .values()
            .flat_map(|cs| cs[0].entries.iter().map(|e| e.name.as_str()))
            .collect();
        let mut versions: BTreeMap<String, Vec<&str>> = BTreeMap::new();
        for (name, blobs) in &view.bundles {
            let b = blobs[0];
            let subj = Subject::bundle(pkg, name);
            if pkg.is_empty() {
                for b in blobs {
                    sink.push(
                        &BUNDLE_NO_PACKAGE,
                        format!("package name must be set for bundle \"{name}\""),
                        &b.src.file,
                        b.src.pos,
                        subj.clone(),
                    );
                }
            } else if !known_package {
                for b in blobs {
                    sink.push(
                        &BUNDLE_UNKNOWN_PACKAGE,
                        format!("unknown package \"{pkg}\" for bundle \"{name}\""),
                        &b.src.file,
                        b.src.pos,
                        subj.clone(),
                    )
                    .help = Some(format!(
                        "add an olm.package blob named \"{pkg}\" or fix the bundle's `package`"
                    ));
                }
            }
            for dup in blobs.iter().skip(1) {
                sink.push(
                    &DUPLICATE_BUNDLE,
                    format!("package \"{pkg}\" has duplicate bundle \"{name}\""),
                    &dup.src.file,
                    dup.src.pos,
                    subj.clone(),
                )
                .help = Some(format!(
                    "the first definition is at {}:{}",
                    b.src.file.display(),
                    b.src.pos.line
                ));
            }
            if known_package && !name.is_empty() && !in_channel.contains(name) {
                sink.push(
                    &BUNDLE_NOT_IN_CHANNEL,
                    format!(
                        "package \"{pkg}\", bundle \"{name}\" not found in any channel entries"
                    ),
                    &b.src.file,
                    b.src.pos,
                    subj.clone(),
                )
                .help = Some("add it as an entry of a channel, or remove the bundle".into());
            }
            if let Some(v) = version_key(b, pkg, sink) {
                versions.entry(v).or_default().push(name);
            }
            images(b, pkg, sink);
            properties(b, pkg, sink);
        }
        let dups: Vec<String> = versions
            .iter()
            .filter(|(_, names)| names.len() > 1)
            .map(|(v, names)| format!("{{{v}: [{}]}}", names.join(", ")))
            .collect();
        if !dups.is_empty()
            && let Some(p) = view.package()
        {
            sink.push(
                &DUPLICATE_VERSION,
                format!("duplicate versions found in bundles: [{}]", dups.join(" ")),
                &p.src.file,
                p.src.pos,
                Subject::package(pkg),
            )
            .help = Some("every bundle of a package needs its own version (or release)".into());
        }
    }
}

/// Checks the `olm.package` property and returns the bundle's version key (version plus
/// `-release`) when it is valid.
fn version_key(b: &Bundle, pkg: &str, sink: &mut Sink) -> Option<String> {
    let subj = Subject::bundle(pkg, &b.name);
    let file = &b.src.file;
    let props: Vec<_> = b
        .properties
        .iter()
        .filter(|p| p.type_ == property::PACKAGE)
        .collect();
    if props.len() != 1 {
        sink.push(
            &PACKAGE_PROPERTY_COUNT,
            format!("package \"{pkg}\" bundle \"{}\" must have exactly 1 \"olm.package\" property, found {}", b.name, props.len()),
            file,
            props.get(1).map_or(b.src.pos, |p| p.pos),
            subj,
        );
        return None;
    }
    let p = props[0];
    let (ppkg, version, release) = p.as_package()?;
    if ppkg != pkg {
        sink.push(
            &PACKAGE_PROPERTY_MISMATCH,
            format!("package \"{pkg}\" does not match \"olm.package\" property \"{ppkg}\""),
            file,
            p.pos,
            subj.clone(),
        );
    }
    let v = match semver::Version::parse(version) {
        Ok(v) => v,
        Err(e) => {
            let why = if version.is_empty() {
                "Version string empty".to_string()
            } else {
                e.to_string()
            };
            sink.push(&BAD_VERSION, format!("error parsing bundle \"{}\" version \"{version}\": {why}", b.name), file, p.pos, subj)
                .help = Some("use a strict semantic version such as 1.2.3 or 1.2.3-rc.1 (no leading `v`, no leading zeros)".into());
            return None;
        }
    };
    let mut key = v.to_string();
    if let Some(r) = release.filter(|r| !r.is_empty()) {
        if let Some(e) = release_error(r) {
            sink.push(
                &BAD_RELEASE,
                format!(
                    "error parsing bundle \"{}\" release version \"{r}\": {e}",
                    b.name
                ),
                file,
                p.pos,
                subj,
            );
            return None;
        }
        if !v.build.is_empty() {
            sink.push(
                &BUILD_METADATA_WITH_RELEASE,
                "cannot use build metadata in version with a release version",
                file,
                p.pos,
                subj.clone(),
            );
        }
        let normalized = format!("{pkg}-v{v}-{r}");
        if b.name != normalized {
            sink.push(
                &RELEASE_NAME,
                format!(
                    "name \"{}\" does not match normalized name \"{normalized}\"",
                    b.name
                ),
                file,
                b.src.pos,
                subj,
            );
        }
        key = format!("{key}-{r}");
    }
    Some(key)
}

fn images(b: &Bundle, pkg: &str, sink: &mut Sink) {
    let subj = Subject::bundle(pkg, &b.name);
    let file = &b.src.file;
    if b.image.is_empty() {
        if !b
            .properties
            .iter()
            .any(|p| p.type_ == property::BUNDLE_OBJECT)
        {
            sink.push(
                &NO_IMAGE,
                "bundle image must be set",
                file,
                b.src.pos,
                subj.clone(),
            );
        }
    } else if let Err(e) = crate::imageref::validate(&b.image) {
        sink.push(
            &BAD_IMAGE,
            format!(
                "package \"{pkg}\" bundle \"{}\" image: invalid image pull spec \"{}\": {e}",
                b.name, b.image
            ),
            file,
            b.image_pos,
            subj.clone(),
        );
    }
    for (i, ri) in b.related_images.iter().enumerate() {
        if ri.image.is_empty() {
            sink.push(
                &EMPTY_RELATED_IMAGE,
                format!("relatedImages[{i}] has an empty image"),
                file,
                ri.pos,
                subj.clone(),
            );
        } else if let Err(e) = crate::imageref::validate(&ri.image) {
            sink.push(&BAD_RELATED_IMAGE, format!("package \"{pkg}\" bundle \"{}\" relatedImages[{i}].image: invalid image pull spec \"{}\": {e}", b.name, ri.image), file, ri.pos, subj.clone());
        }
    }
}

fn properties(b: &Bundle, pkg: &str, sink: &mut Sink) {
    let subj = Subject::bundle(pkg, &b.name);
    let file = &b.src.file;
    let mut csv_meta = 0;
    for p in &b.properties {
        match &p.typed {
            Typed::CsvMetadata | Typed::Broken if p.type_ == property::CSV_METADATA => {
                csv_meta += 1;
                if csv_meta == 2 {
                    sink.push(
                        &DUPLICATE_CSV_METADATA,
                        "expected at most 1 property of type \"olm.csv.metadata\"",
                        file,
                        p.pos,
                        subj.clone(),
                    )
                    .help = Some("`opm serve` refuses catalogs with this; keep one".into());
                }
            }
            Typed::MaxOpenShiftVersion => {
                let ok = matches!(&p.value.value, Value::Str(s) if crate::fbc::property::is_major_minor(s));
                if !ok {
                    let shown = p.value.to_json();
                    let f = sink.push(
                        &MAX_OCP_VERSION,
                        format!("olm.maxOpenShiftVersion {shown} is not a \"major.minor\" string"),
                        file,
                        p.value.pos,
                        subj.clone(),
                    );
                    if matches!(p.value.value, Value::Number(_)) {
                        f.help = Some("quote it: YAML reads 4.10 as the number 4.1".into());
                    }
                }
            }
            Typed::PackageRequired {
                package_name,
                version_range,
            } => {
                if let Err(e) = crate::range::Range::parse(version_range) {
                    sink.push(&PACKAGE_REQUIRED_RANGE, format!("olm.package.required for \"{package_name}\": invalid versionRange \"{version_range}\": {e}"), file, p.value.pos, subj.clone());
                }
            }
            Typed::Gvk(g) | Typed::GvkRequired(g) if g.kind.is_empty() || g.version.is_empty() => {
                sink.push(
                    &EMPTY_GVK,
                    format!("{} property has an empty kind or version", p.type_),
                    file,
                    p.value.pos,
                    subj.clone(),
                );
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::property::is_major_minor;

    #[test]
    fn releases() {
        assert_eq!(release_error("1"), None);
        assert_eq!(release_error("alpha.2-x"), None);
        assert!(
            release_error("!!!")
                .unwrap()
                .contains("segment 0: Invalid character(s) found in prerelease \"!!!\"")
        );
        assert!(release_error("a..b").is_some());
        assert!(release_error("01").is_some());
        assert!(release_error(&"a".repeat(21)).is_some());
    }

    #[test]
    fn major_minor() {
        assert!(is_major_minor("4.10"));
        assert!(!is_major_minor("4"));
        assert!(!is_major_minor("4.10.1"));
        assert!(!is_major_minor("v4.1"));
    }
}
