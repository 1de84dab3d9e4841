//! Semver skew policy (SKW codes): what the versions of two bundles joined by an upgrade edge,
//! and the version fields of one bundle, must satisfy.

use semver::Version;

use super::facts::Facts;
use super::policy::{K8sRange, Policy};
use crate::diag::Code;
use crate::diag::Finding;
use crate::diag::Severity::{Error, Warning};
use crate::fbc::node::{Pos, Value};
use crate::range::Range;

codes! {
    NOT_UPWARDS = "SKW001", Error, "An upgrade edge does not go up in version: the new bundle's version is not above the old one's.";
    MAJOR_HOP = "SKW002", Error, "An upgrade edge crosses a major version, which the policy does not allow (allowMajorUpgrades).";
    RELEASE_TO_PRERELEASE = "SKW003", Warning, "An upgrade edge moves users of a release onto a pre-release (allowReleaseToPrerelease).";
    SKIPRANGE_ABOVE = "SKW004", Error, "The bundle's olm.skipRange admits released versions above the bundle's own: users of newer bundles would be offered this older one.";
    MIN_KUBE_PARSE = "SKW005", Error, "spec.minKubeVersion is not a semantic version (X.Y.Z): OLM fails the CSV requirement check and validators reject it.";
    MIN_KUBE_RISES = "SKW006", Error, "spec.minKubeVersion rises within a patch release: users on clusters the old bundle supported get a CSV stuck in Pending (RequirementsNotMet).";
    MAX_OCP = "SKW007", Error, "olm.maxOpenShiftVersion is not a `major.minor` version, or is defined more than once: OpenShift then blocks cluster upgrades (a warning for an unquoted YAML number, which turns 4.10 into 4.1).";
    NAME_VERSION = "SKW008", Error, "The CSV name carries a version different from spec.version.";
    K8S_RANGE = "SKW009", Error, "The bundle's declared Kubernetes support (spec.minKubeVersion) does not cover the target --k8s-version range.";
}

fn finding(code: &'static Code, f: &Facts<'_>, pos: Pos, msg: String) -> Finding {
    Finding::new(code, msg)
        .at(Some(f.csv_loc(pos)))
        .about(f.subject())
}

/// Checks the edge `old -> new` (users running `old` are moved to `new`).
pub fn edge(old: &Facts<'_>, new: &Facts<'_>, policy: &Policy, out: &mut Vec<Finding>) {
    let (Some(ov), Some(nv)) = (&old.version, &new.version) else {
        return;
    };
    let pos = new.version_text.map_or(Pos::default(), |(_, p)| p);
    if nv.cmp_precedence(ov).is_le() {
        out.push(
            finding(&NOT_UPWARDS, new, pos, format!("the version does not go up: {ov} -> {nv}"))
                .help("an upgrade must go to a higher version; fix the edge (replaces, skips, skipRange) or the version"),
        );
    } else if nv.major > ov.major
        && !policy.allow_major_upgrades
        && !(is_calver(ov) && is_calver(nv))
    {
        // The old version is left out of the message: one new bundle reached over many
        // edges (a skipRange fan-in) is then one finding naming every old bundle.
        out.push(
            finding(&MAJOR_HOP, new, pos, format!("crosses major version {} -> {} (to {nv})", ov.major, nv.major))
                .help("a major version may break users; if this edge is intended, set allowMajorUpgrades: true in the policy file"),
        );
    }
    if ov.pre.is_empty() && !nv.pre.is_empty() && !policy.allow_release_to_prerelease {
        out.push(
            finding(&RELEASE_TO_PRERELEASE, new, pos, format!("users of release {ov} are moved to pre-release {nv}"))
                .help("publish pre-releases in their own channel, or set allowReleaseToPrerelease: true in the policy file"),
        );
    }
    if (ov.major, ov.minor) == (nv.major, nv.minor)
        && let (Some((ot, _)), Some((nt, npos))) = (old.min_kube, new.min_kube)
        && let (Some(a), Some(b)) = (kube_version(ot), kube_version(nt))
        && b > a
    {
        out.push(
            finding(&MIN_KUBE_RISES, new, npos, format!("spec.minKubeVersion rises from {ot} to {nt} within the {}.{} patch series", nv.major, nv.minor))
                .help("OLM v0 does not consider minKubeVersion when it resolves: users on clusters older than the new minimum are upgraded into a CSV that stays Pending; raise it in a minor or major release"),
        );
    }
}

/// Whether `v` is a calendar version: its major is a year (`2024.1`, or `24.11` and `25.3.0` with
/// a month-like minor, 1 to 12), as portworx, stackable and airlock number their releases. A
/// new year is no breaking-change signal there, so crossing one is not a major hop (SKW002);
/// the other skew rules apply as to any version.
pub fn is_calver(v: &Version) -> bool {
    (2000..=2099).contains(&v.major)
        || ((20..=99).contains(&v.major) && (1..=12).contains(&v.minor))
}

/// `minKubeVersion` as OLM reads it: an optional `v`, then a semantic version.
fn kube_version(s: &str) -> Option<Version> {
    let t = s.trim();
    Version::parse(t.strip_prefix('v').unwrap_or(t)).ok()
}

/// Checks the version fields of one bundle.
pub fn bundle(f: &Facts<'_>, target: Option<&K8sRange>, out: &mut Vec<Finding>) {
    skip_range(f, out);
    if let Some((t, pos)) = f.min_kube
        && !t.trim().is_empty()
    {
        match kube_version(t) {
            None => out.push(
                finding(
                    &MIN_KUBE_PARSE,
                    f,
                    pos,
                    format!("spec.minKubeVersion {t:?} is not a semantic version"),
                )
                .help("write it as X.Y.Z, e.g. 1.28.0"),
            ),
            Some(min) => {
                // OLM compares the whole server version (patch included).
                if let Some(r) = target
                    && (r.min.major, r.min.minor, r.min.patch) < (min.major, min.minor, min.patch)
                {
                    out.push(
                        finding(&K8S_RANGE, f, pos, format!("spec.minKubeVersion is {t}, but the target range {} starts at {}", r.display(), r.min))
                            .help("on the older clusters of the range the CSV would stay Pending (RequirementsNotMet): lower minKubeVersion or narrow --k8s-version"),
                    );
                }
            }
        }
    }
    max_ocp(f, out);
    name_version(f, out);
}

fn skip_range(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let (Some((text, pos)), Some(v)) = (f.skip_range, &f.version) else {
        return;
    };
    // An unparsable range is CSV017's business.
    let Ok(r) = Range::parse(text) else { return };
    let above = admits_above(&r, v);
    if let Some(what) = above {
        out.push(
            finding(&SKIPRANGE_ABOVE, f, pos, format!("olm.skipRange {text:?} {what}, above the bundle's version {v}"))
                .help(format!("bound the range by the bundle's own version, e.g. \">=X.Y.Z <{v}\"; otherwise users of newer bundles may be offered this one")),
        );
    }
}

/// What of `r` lies above `v` among released versions, if anything: `<1.2.1` on 1.2.0 admits
/// only pre-releases of 1.2.1, the usual way to write "everything before me", and is fine.
fn admits_above(r: &Range, v: &Version) -> Option<String> {
    // The lowest release above the bundle.
    let next = if v.pre.is_empty() {
        Version::new(v.major, v.minor, v.patch.checked_add(1)?)
    } else {
        Version::new(v.major, v.minor, v.patch)
    };
    match r.upper_bound() {
        None => Some("has no upper bound".to_string()),
        Some((b, inclusive)) => {
            let admits = if inclusive {
                b.cmp_precedence(&next).is_ge()
            } else {
                b.cmp_precedence(&next).is_gt()
            };
            admits.then(|| {
                format!(
                    "admits versions up to {b}{}",
                    if inclusive { "" } else { " (exclusive)" }
                )
            })
        }
    }
}

fn max_ocp(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let loc = |file: &std::sync::Arc<std::path::Path>, pos: Pos| {
        crate::diag::Location::new(file.clone(), pos.line, pos.col)
    };
    for (i, (file, pos, v, from_yaml)) in f.max_ocp.iter().enumerate() {
        if i == 1 {
            out.push(
                Finding::new(
                    &MAX_OCP,
                    "defining more than one \"olm.maxOpenShiftVersion\" property is not allowed",
                )
                .at(Some(loc(file, *pos)))
                .about(f.subject())
                .help(
                    "OpenShift treats this as incompatible and blocks cluster upgrades: keep one",
                ),
            );
        }
        // OLM reads the raw JSON value, trims quotes, parses it tolerantly (`v` prefix,
        // missing parts padded with 0) and accepts only a patch of 0 and no pre-release.
        let text = match &v.value {
            Value::Str(s) => s.trim().trim_matches('"').trim().to_string(),
            Value::Number(_) => v.to_json(),
            _ => String::new(),
        };
        if !max_ocp_ok(&text) {
            let shown = v.to_json();
            out.push(
                Finding::new(
                    &MAX_OCP,
                    format!("olm.maxOpenShiftVersion must specify only <major>.<minor> version, got invalid value {shown}"),
                )
                .at(Some(loc(file, *pos)))
                .about(f.subject())
                .help("OpenShift counts an invalid value as incompatible and blocks the next cluster upgrade: write e.g. \"4.18\""),
            );
        } else if *from_yaml && matches!(v.value, Value::Number(_)) {
            let mut fi = Finding::new(
                &MAX_OCP,
                format!("olm.maxOpenShiftVersion is the YAML number {shown}, not a string", shown = v.to_json()),
            )
            .at(Some(loc(file, *pos)))
            .about(f.subject())
            .help("quote it: YAML reads 4.10 as the number 4.1, and OpenShift then blocks cluster upgrades past 4.1");
            fi.severity = Warning;
            out.push(fi);
        }
    }
}

/// Whether OLM accepts `text` (quotes already trimmed) as `olm.maxOpenShiftVersion`: a tolerant
/// semantic version with patch 0 and no pre-release or build.
fn max_ocp_ok(text: &str) -> bool {
    crate::checks::bundle::apis::parse_kube_version(text).is_some_and(|x| x.patch == 0)
        && !text.contains(['-', '+'])
}

/// The version embedded in a CSV name: the text after the first `.v`, `-v` or `.` that starts
/// a semantic version (`foo.v1.2.3`, `foo-operator.1.2.3`, `foo.v1.2.3-rc.1`).
fn name_version(f: &Facts<'_>, out: &mut Vec<Finding>) {
    let (Some(v), Some((vtext, _))) = (&f.version, f.version_text) else {
        return;
    };
    let Some((_, d)) = f.csv else { return };
    let name_pos = crate::bundle::load::pos_at(d, &["metadata", "name"]);
    let name = f.name.as_str();
    let embedded = name.char_indices().find_map(|(i, c)| {
        if c != '.' && c != '-' {
            return None;
        }
        let rest = name[i + 1..].strip_prefix('v').unwrap_or(&name[i + 1..]);
        Version::parse(rest).ok()
    });
    if let Some(e) = embedded
        && e.cmp_precedence(v).is_ne()
    {
        out.push(
            finding(&NAME_VERSION, f, name_pos, format!("CSV name {name:?} says {e}, but spec.version is {vtext}"))
                .help("replaces and skips name CSVs, and users read versions from names: make the name end in the same version"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::{admits_above, max_ocp_ok};
    use crate::range::Range;
    use semver::Version;

    #[test]
    fn skip_range_above_the_bundle() {
        let above = |r: &str, v: &str| {
            admits_above(&Range::parse(r).unwrap(), &Version::parse(v).unwrap()).is_some()
        };
        assert!(!above(">=1.0.0 <1.1.0", "1.1.0"));
        assert!(
            !above(">=1.0.0 <1.1.1", "1.1.0"),
            "only pre-releases of 1.1.1"
        );
        assert!(
            !above(">=0.9.0 <=1.1.1-0", "1.1.0"),
            "only pre-releases, inclusive"
        );
        assert!(above(">=1.0.0 <=1.1.1", "1.1.0"));
        assert!(above(">=1.0.0 <1.1.2", "1.1.0"));
        assert!(above(">=1.0.0", "1.1.0"), "unbounded");
        assert!(above(">=1.0.0 <1.3.0 || <2.0.0", "1.2.0"));
        // A pre-release bundle: its own release is above it.
        assert!(!above("<1.2.0-rc.2", "1.2.0-rc.1"));
        assert!(above("<=1.2.0", "1.2.0-rc.1"));
        // No overflow at the largest patch.
        assert!(!above("<1.0.0", "1.1.18446744073709551615"));
    }

    #[test]
    fn max_openshift_version_as_olm_reads_it() {
        for ok in ["4.18", "v4.12", "4.12.0", "4", "4.10"] {
            assert!(max_ocp_ok(ok), "{ok}");
        }
        for bad in ["", "4.12.1", "4.12-rc.1", "4.x", "four", "4.12.0+b"] {
            assert!(!max_ocp_ok(bad), "{bad}");
        }
    }
}
