//! Which bundle operator-controller installs for a new ClusterExtension
//! (`resolve/catalog.go :: CatalogResolver.Resolve` with nothing installed): the package's
//! bundles in the selected channels (every channel when none is), matching
//! `spec.source.catalog.version` (`catalogmetadata/compare/compare.go :: NewVersionRange`, a
//! Masterminds `semver/v3` constraint), not deprecated first, then the highest version
//! (`ByDeprecationFunc`, `ByVersionAndRelease`); its errors worded as `resolutionError.Error`.

use semver::Version;

use crate::fbc::decl::DeclarativeConfig;

/// The bundle chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The bundle's name.
    pub name: String,
    /// Its version.
    pub version: Version,
    /// Its image.
    pub image: String,
}

/// One comparison of a Masterminds constraint, versions completed with zeros.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    op: &'static str,
    version: Version,
}

fn go_quote(s: &str) -> String {
    let mut q = String::new();
    crate::gojson::write_string(&mut q, s);
    q
}

/// A version of a constraint: `1`, `1.2`, `1.2.3`, with `x`, `X` or `*` for a part; the parts
/// given (0 for a bare wildcard).
fn partial(s: &str) -> Result<(Version, usize), String> {
    let s = s.trim().trim_start_matches('v');
    if s.is_empty() || s == "*" || s == "x" || s == "X" {
        return Ok((Version::new(0, 0, 0), 0));
    }
    if let Ok(v) = Version::parse(s) {
        return Ok((v, 3));
    }
    let mut nums = Vec::new();
    for p in s.split('.') {
        if matches!(p, "x" | "X" | "*") {
            break;
        }
        nums.push(
            p.parse::<u64>()
                .map_err(|_| format!("improper constraint: {s}"))?,
        );
    }
    if nums.len() > 3 {
        return Err(format!("improper constraint: {s}"));
    }
    let n = nums.len();
    nums.resize(3, 0);
    Ok((Version::new(nums[0], nums[1], nums[2]), n))
}

fn bump(v: &Version, part: usize) -> Version {
    match part {
        0 => Version::new(v.major + 1, 0, 0),
        1 => Version::new(v.major, v.minor + 1, 0),
        _ => Version::new(v.major, v.minor, v.patch + 1),
    }
}

/// One term (`>=1.2`, `~1.2.3`, `^1`, `1.2.x`) as comparisons.
fn terms(t: &str) -> Result<Vec<Term>, String> {
    let t = t.trim();
    let ops = ["<=", ">=", "=<", "=>", "!=", "~>", "<", ">", "=", "~", "^"];
    let (op, rest) = ops
        .iter()
        .find_map(|op| t.strip_prefix(op).map(|r| (*op, r)))
        .unwrap_or(("", t));
    let (v, given) = partial(rest)?;
    let range = |lo: Version, hi: Option<Version>| {
        let mut out = vec![Term {
            op: ">=",
            version: lo,
        }];
        if let Some(hi) = hi {
            out.push(Term {
                op: "<",
                version: hi,
            });
        }
        out
    };
    Ok(match op {
        "~" | "~>" => range(v.clone(), Some(bump(&v, if given <= 1 { 0 } else { 1 }))),
        "^" => {
            let part = if v.major > 0 || given <= 1 {
                0
            } else if v.minor > 0 || given == 2 {
                1
            } else {
                2
            };
            range(v.clone(), Some(bump(&v, part)))
        }
        "" | "=" if given < 3 => {
            if given == 0 {
                Vec::new()
            } else {
                range(v.clone(), Some(bump(&v, given - 1)))
            }
        }
        "" | "=" => vec![Term {
            op: "=",
            version: v,
        }],
        "=<" => vec![Term {
            op: "<=",
            version: v,
        }],
        "=>" => vec![Term {
            op: ">=",
            version: v,
        }],
        ">" if given < 3 && given > 0 => vec![Term {
            op: ">=",
            version: bump(&v, given - 1),
        }],
        "<=" if given < 3 && given > 0 => vec![Term {
            op: "<",
            version: bump(&v, given - 1),
        }],
        op => vec![Term { op, version: v }],
    })
}

/// Whether `v` meets the Masterminds constraint `c`: `||` alternatives of `,`- or
/// space-separated terms; build metadata is ignored; a pre-release matches only a term
/// naming a pre-release of the same major.minor.patch.
pub fn constraint_matches(c: &str, v: &Version) -> Result<bool, String> {
    let mut plain = v.clone();
    plain.build = semver::BuildMetadata::EMPTY;
    let mut any = false;
    for alt in c.split("||") {
        // `>= 1.2` is one term: join an operator to the version after it.
        let mut words: Vec<String> = Vec::new();
        for w in alt.split([',', ' ']).filter(|w| !w.trim().is_empty()) {
            match words.last_mut() {
                Some(last) if last.chars().all(|ch| "<>=!~^".contains(ch)) => last.push_str(w),
                _ => words.push(w.to_string()),
            }
        }
        let mut all = true;
        let mut pre_ok = plain.pre.is_empty();
        for w in &words {
            for t in terms(w)? {
                if !t.version.pre.is_empty()
                    && (t.version.major, t.version.minor, t.version.patch)
                        == (plain.major, plain.minor, plain.patch)
                {
                    pre_ok = true;
                }
                let ok = match t.op {
                    "=" => plain == t.version,
                    "!=" => plain != t.version,
                    "<" => plain < t.version,
                    "<=" => plain <= t.version,
                    ">" => plain > t.version,
                    _ => plain >= t.version,
                };
                all &= ok;
            }
        }
        any |= all && pre_ok;
    }
    Ok(any)
}

/// The bundle a new ClusterExtension for `package` resolves to in `cfg`.
pub fn for_install(
    cfg: &DeclarativeConfig,
    package: &str,
    channels: &[String],
    version: Option<&str>,
) -> Result<Resolved, String> {
    // Sets built once: every bundle of the package is looked up in them.
    let deprecated: std::collections::HashSet<&str> = cfg
        .deprecations
        .iter()
        .filter(|d| d.package == package)
        .flat_map(|d| d.entries.iter())
        .filter(|e| e.reference.schema == "olm.bundle")
        .map(|e| e.reference.name.as_str())
        .collect();
    let entries: std::collections::HashSet<&str> = cfg
        .channels
        .iter()
        .filter(|c| c.package == package && (channels.is_empty() || channels.contains(&c.name)))
        .flat_map(|c| c.entries.iter().map(|e| e.name.as_str()))
        .collect();
    let in_channels = |name: &str| entries.contains(name);
    let mut found: Vec<(bool, Version, &crate::fbc::decl::Bundle)> = Vec::new();
    for b in cfg.bundles.iter().filter(|b| b.package == package) {
        let Some(v) = b
            .properties
            .iter()
            .find_map(|p| p.as_package())
            .and_then(|(_, v, _)| Version::parse(v).ok())
        else {
            continue;
        };
        if !in_channels(&b.name) {
            continue;
        }
        if let Some(c) = version.filter(|c| !c.is_empty())
            && !constraint_matches(c, &v)?
        {
            continue;
        }
        found.push((deprecated.contains(&b.name.as_str()), v, b));
    }
    found.sort_by(|a, b| (a.0, &b.1).cmp(&(b.0, &a.1)));
    match found.first() {
        Some((_, v, b)) => {
            // `CatalogResolver.Resolve` validates the bundle it resolved.
            super::dependencies::no_dependency(
                &b.name,
                b.properties.iter().map(|p| p.type_.as_str()),
            )
            .map_err(|e| super::dependencies::resolve_error(&b.name, &e))?;
            Ok(Resolved {
                name: b.name.clone(),
                version: v.clone(),
                image: b.image.clone(),
            })
        }
        None => {
            let mut m = format!("no bundles found for package {} ", go_quote(package));
            if let Some(v) = version.filter(|v| !v.is_empty()) {
                m.push_str(&format!("matching version {} ", go_quote(v)));
            }
            if !channels.is_empty() {
                m.push_str(&format!("in channels [{}] ", channels.join(" ")));
            }
            Err(m.trim_end().to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(c: &str, v: &str) -> bool {
        constraint_matches(c, &Version::parse(v).expect("version")).expect("constraint")
    }

    #[test]
    fn masterminds_constraints() {
        assert!(m("1.2.3", "1.2.3") && m("1.2.3", "1.2.3+2") && !m("1.2.3", "1.2.4"));
        assert!(m(">=1.0.0, <2.0.0", "1.9.9") && !m(">=1.0.0, <2.0.0", "2.0.0"));
        assert!(m(">= 1.0.0 < 2.0.0", "1.5.0"));
        assert!(m("1.2.x", "1.2.9") && !m("1.2.x", "1.3.0") && m("*", "9.0.0"));
        assert!(m("~1.2.3", "1.2.9") && !m("~1.2.3", "1.3.0"));
        assert!(
            m("^1.2.3", "1.9.0")
                && !m("^1.2.3", "2.0.0")
                && m("^0.2.3", "0.2.9")
                && !m("^0.2.3", "0.3.0")
        );
        assert!(m("<1.0.0 || >=2.0.0", "2.1.0") && !m("<1.0.0 || >=2.0.0", "1.1.0"));
        assert!(!m(">=1.0.0", "1.1.0-rc.1") && m(">=1.1.0-rc.0", "1.1.0-rc.1"));
        assert!(m("!=1.0.0", "1.0.1") && m("1.2", "1.2.7"));
        assert!(constraint_matches("banana", &Version::new(1, 0, 0)).is_err());
    }

    #[test]
    fn the_highest_matching_bundle_not_deprecated_first() {
        let dir = olmctl_testdata_free_catalog();
        let cfg = crate::fbc::load::load_catalog(&[dir.path().to_path_buf()])
            .expect("loads")
            .cfg;
        let r = for_install(&cfg, "p", &[], None).expect("resolves");
        assert_eq!(
            (r.name.as_str(), r.image.as_str()),
            ("p.v1.1.0", "example.com/p:1.1.0")
        );
        let r = for_install(&cfg, "p", &["stable".into()], None).expect("resolves");
        assert_eq!(r.name, "p.v1.0.0");
        let r = for_install(&cfg, "p", &[], Some("<1.1.0")).expect("resolves");
        assert_eq!(r.name, "p.v1.0.0");
        assert_eq!(
            for_install(&cfg, "p", &["stable".into()], Some("9.9.9")).unwrap_err(),
            "no bundles found for package \"p\" matching version \"9.9.9\" in channels [stable]"
        );
    }

    #[test]
    fn the_resolved_bundle_is_validated_and_one_with_a_dependency_refused() {
        let cfg = crate::fbc::load::from_blobs(&[
            serde_json::json!({"schema": "olm.package", "name": "q", "defaultChannel": "stable"}),
            serde_json::json!({"schema": "olm.channel", "package": "q", "name": "stable",
                "entries": [{"name": "q.v1.0.0"}, {"name": "q.v2.0.0", "replaces": "q.v1.0.0"}]}),
            serde_json::json!({"schema": "olm.bundle", "package": "q", "name": "q.v1.0.0",
                "image": "example.com/q:1", "properties": [
                    {"type": "olm.package", "value": {"packageName": "q", "version": "1.0.0"}}]}),
            serde_json::json!({"schema": "olm.bundle", "package": "q", "name": "q.v2.0.0",
                "image": "example.com/q:2", "properties": [
                    {"type": "olm.package", "value": {"packageName": "q", "version": "2.0.0"}},
                    {"type": "olm.gvk.required", "value": {"group": "g", "version": "v1", "kind": "K"}}]}),
        ]);
        // The highest is chosen, then refused: no fallback to 1.0.0 (as CatalogResolver.Resolve).
        assert_eq!(
            for_install(&cfg, "q", &[], None).unwrap_err(),
            "validating bundle \"q.v2.0.0\": bundle \"q.v2.0.0\" has a dependency declared via property \"olm.gvk.required\" which is currently not supported"
        );
        assert_eq!(
            for_install(&cfg, "q", &[], Some("<2.0.0"))
                .expect("1.0.0")
                .name,
            "q.v1.0.0"
        );
    }

    /// A catalog: p.v1.0.0 in stable and fast, p.v1.1.0 in fast, p.v1.2.0 in fast but
    /// deprecated.
    fn olmctl_testdata_free_catalog() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        let bundle = |v: &str| {
            format!(
                r#"{{"schema":"olm.bundle","package":"p","name":"p.v{v}","image":"example.com/p:{v}","properties":[{{"type":"olm.package","value":{{"packageName":"p","version":"{v}"}}}}]}}"#
            )
        };
        let text = [
            r#"{"schema":"olm.package","name":"p","defaultChannel":"stable"}"#.to_string(),
            r#"{"schema":"olm.channel","package":"p","name":"stable","entries":[{"name":"p.v1.0.0"}]}"#.to_string(),
            r#"{"schema":"olm.channel","package":"p","name":"fast","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"},{"name":"p.v1.2.0","replaces":"p.v1.1.0"}]}"#.to_string(),
            bundle("1.0.0"),
            bundle("1.1.0"),
            bundle("1.2.0"),
            r#"{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v1.2.0"},"message":"use 1.1"}]}"#.to_string(),
        ]
        .join("\n");
        std::fs::write(dir.path().join("catalog.json"), text).expect("write");
        dir
    }
}
