//! OpenShift releases and the Kubernetes releases they ship, and the OpenShift range a bundle
//! declares in its `com.redhat.openshift.versions` annotation.
//!
//! The table ([`KUBERNETES`]) is OpenShift's: the "About this release" section of each
//! release's notes names the Kubernetes release it uses (4.15: "This release uses Kubernetes
//! 1.28 with CRI-O runtime",
//! <https://docs.redhat.com/en/documentation/openshift_container_platform/4.15/html/release_notes/ocp-4-15-release-notes>;
//! likewise `.../openshift_container_platform/4.Y/html/release_notes/ocp-4-Y-release-notes` for
//! each 4.Y; the same sentence is in the sources of those pages, openshift/openshift-docs
//! `release_notes/ocp-4-Y-release-notes.adoc`, e.g. 4.19: "This release uses Kubernetes 1.32",
//! and from 4.21 on in `modules/rn-ocp-about-this-release.adoc`), and Red Hat's knowledge base article "What version of the Kubernetes API is
//! included with each OpenShift 4.x release?" lists them. From 4.3 on, OpenShift 4.Y ships
//! Kubernetes 1.(Y+13).
//!
//! The annotation's syntax is Red Hat's ("Managing OpenShift Versions", Certified Operator
//! Build Guide,
//! <https://redhat-connect.gitbook.io/certified-operator-guide/ocp-deployment/operator-metadata/bundle-directory/managing-openshift-versions>):
//! `v4.12` is 4.12 and every later release, `=v4.14` exactly 4.14, `v4.12-v4.16` that range;
//! the letter `v` is required and spaces are not allowed; commas are refused except in the two
//! historical values `v4.5,v4.6` and `v4.6,v4.5`, which both mean `v4.5`.

use std::fmt;

/// The bundle annotation (and `bundle.Dockerfile` label) naming the OpenShift releases a
/// bundle is published for.
pub const VERSIONS_ANNOTATION: &str = "com.redhat.openshift.versions";

/// A release as `(major, minor)`.
pub type Release = (u64, u64);

/// OpenShift `(major, minor)` → the Kubernetes `(major, minor)` it ships, oldest first.
pub static KUBERNETES: &[(Release, Release)] = &[
    ((3, 11), (1, 11)),
    ((4, 1), (1, 13)),
    ((4, 2), (1, 14)),
    ((4, 3), (1, 16)),
    ((4, 4), (1, 17)),
    ((4, 5), (1, 18)),
    ((4, 6), (1, 19)),
    ((4, 7), (1, 20)),
    ((4, 8), (1, 21)),
    ((4, 9), (1, 22)),
    ((4, 10), (1, 23)),
    ((4, 11), (1, 24)),
    ((4, 12), (1, 25)),
    ((4, 13), (1, 26)),
    ((4, 14), (1, 27)),
    ((4, 15), (1, 28)),
    ((4, 16), (1, 29)),
    ((4, 17), (1, 30)),
    ((4, 18), (1, 31)),
    ((4, 19), (1, 32)),
    ((4, 20), (1, 33)),
    ((4, 21), (1, 34)),
];

/// An OpenShift version that cannot be read or is not in the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionError {
    /// Not `4.Y` (with an optional `v`, or `4.Y.Z`).
    Syntax(String),
    /// A release the table does not know.
    Unknown(String),
    /// An annotation value outside Red Hat's syntax.
    Annotation(String),
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (first, last) = (KUBERNETES[0].0, KUBERNETES[KUBERNETES.len() - 1].0);
        match self {
            VersionError::Syntax(s) => write!(
                f,
                "{s:?} is not an OpenShift version (expected e.g. 4.21, v4.21 or 4.16-4.21)"
            ),
            VersionError::Unknown(s) => write!(
                f,
                "OpenShift {s} is not in olmctl's table ({}.{} to {}.{}): give the Kubernetes version with --k8s-version",
                first.0, first.1, last.0, last.1
            ),
            VersionError::Annotation(s) => write!(
                f,
                "{VERSIONS_ANNOTATION} {s:?} is not a version (v4.12), an exact version (=v4.14) or a range (v4.12-v4.16)"
            ),
        }
    }
}

impl std::error::Error for VersionError {}

/// The Kubernetes release OpenShift `os` ships, when the table has it.
pub fn kubernetes_of(os: (u64, u64)) -> Option<(u64, u64)> {
    KUBERNETES.iter().find(|(o, _)| *o == os).map(|(_, k)| *k)
}

/// The Kubernetes release of an OpenShift release the table may not know: the table's, or for
/// a release after the table's last one, the last one's (a lower bound: a later OpenShift never
/// ships an older Kubernetes). `None` before the table's first release.
fn kubernetes_at_least(os: (u64, u64)) -> Option<(u64, u64)> {
    kubernetes_of(os).or_else(|| {
        let (last_os, last_k) = KUBERNETES[KUBERNETES.len() - 1];
        (os > last_os).then_some(last_k)
    })
}

/// Reads `4.21`, `v4.21` or `4.21.3` (the patch is ignored).
pub fn parse_version(s: &str) -> Result<(u64, u64), VersionError> {
    let t = s.trim();
    let t = t.strip_prefix(['v', 'V']).unwrap_or(t);
    let parts: Vec<&str> = t.split('.').collect();
    let num = |p: &str| {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u64>().ok())
            .flatten()
    };
    match parts.as_slice() {
        [a, b] | [a, b, _] if parts.iter().all(|p| num(p).is_some()) => {
            Ok((num(a).unwrap_or(0), num(b).unwrap_or(0)))
        }
        _ => Err(VersionError::Syntax(s.to_string())),
    }
}

/// `--openshift-version`: one release (`4.21`) or a range (`4.16-4.21`), as the Kubernetes
/// `(oldest, newest)` releases they ship; every release must be in the table.
pub fn kubernetes_range(s: &str) -> Result<(Release, Release), VersionError> {
    let known = |v: &str| {
        let os = parse_version(v)?;
        kubernetes_of(os).ok_or_else(|| VersionError::Unknown(format!("{}.{}", os.0, os.1)))
    };
    match s.trim().split_once('-') {
        Some((a, b)) => {
            let (lo, hi) = (known(a)?, known(b)?);
            if lo > hi {
                return Err(VersionError::Syntax(s.to_string()));
            }
            Ok((lo, hi))
        }
        None => {
            let k = known(s)?;
            Ok((k, k))
        }
    }
}

/// The OpenShift releases a bundle declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Declared {
    /// The oldest release.
    pub min: (u64, u64),
    /// The newest release; `None`: every later release too (`v4.12`).
    pub max: Option<(u64, u64)>,
}

impl Declared {
    /// Reads an annotation value as Red Hat's catalog pipeline does (see the module doc).
    pub fn parse(value: &str) -> Result<Declared, VersionError> {
        let bad = || VersionError::Annotation(value.to_string());
        // The letter `v` is required on each version.
        let v = |s: &str| {
            s.strip_prefix('v')
                .filter(|_| !s.contains(char::is_whitespace))
                .ok_or_else(bad)
                .and_then(|t| parse_version(t).map_err(|_| bad()))
        };
        let t = value.trim();
        if t == "v4.5,v4.6" || t == "v4.6,v4.5" {
            return Ok(Declared {
                min: (4, 5),
                max: None,
            });
        }
        if t.contains(',') {
            return Err(bad());
        }
        if let Some(exact) = t.strip_prefix('=') {
            let os = v(exact)?;
            return Ok(Declared {
                min: os,
                max: Some(os),
            });
        }
        match t.split_once('-') {
            Some((a, b)) => {
                let (min, max) = (v(a)?, v(b)?);
                if min > max {
                    return Err(bad());
                }
                Ok(Declared {
                    min,
                    max: Some(max),
                })
            }
            None => Ok(Declared {
                min: v(t)?,
                max: None,
            }),
        }
    }

    /// The Kubernetes releases of the declared range: the oldest's, and the newest's (`None`
    /// when open-ended). A release after the table counts as the table's last Kubernetes
    /// release, the least it can ship. `None` when the oldest is before the table.
    pub fn kubernetes(&self) -> Option<(Release, Option<Release>)> {
        let min = kubernetes_at_least(self.min)?;
        let max = match self.max {
            Some(m) => Some(kubernetes_at_least(m)?),
            None => None,
        };
        Some((min, max))
    }

    /// `4.12 and later`, `4.14`, `4.12-4.16`.
    pub fn display(&self) -> String {
        let (a, b) = self.min;
        match self.max {
            None => format!("{a}.{b} and later"),
            Some(m) if m == self.min => format!("{a}.{b}"),
            Some((c, d)) => format!("{a}.{b}-{c}.{d}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_maps_each_release_and_follows_y_plus_13_from_4_3() {
        let given = [
            ((4, 12), (1, 25)),
            ((4, 13), (1, 26)),
            ((4, 14), (1, 27)),
            ((4, 15), (1, 28)),
            ((4, 16), (1, 29)),
            ((4, 17), (1, 30)),
            ((4, 18), (1, 31)),
            ((4, 19), (1, 32)),
            ((4, 20), (1, 33)),
            ((4, 21), (1, 34)),
        ];
        for (os, k) in given {
            assert_eq!(kubernetes_of(os), Some(k), "{os:?}");
        }
        for ((om, on), (km, kn)) in KUBERNETES.iter().filter(|(o, _)| *o >= (4, 3)) {
            assert_eq!((*om, *km, *kn), (4, 1, on + 13));
        }
        assert!(KUBERNETES.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(kubernetes_of((4, 22)), None);
    }

    #[test]
    fn the_flag_takes_a_release_or_a_range_of_known_releases() {
        assert_eq!(kubernetes_range("4.21"), Ok(((1, 34), (1, 34))));
        assert_eq!(kubernetes_range("v4.21.3"), Ok(((1, 34), (1, 34))));
        assert_eq!(kubernetes_range("4.16-4.21"), Ok(((1, 29), (1, 34))));
        assert_eq!(
            kubernetes_range("4.22"),
            Err(VersionError::Unknown("4.22".into()))
        );
        for bad in ["4", "four", "4.21-", "4.21-4.16", "4.x", ""] {
            assert!(kubernetes_range(bad).is_err(), "{bad}");
        }
        assert!(
            kubernetes_range("4.22")
                .unwrap_err()
                .to_string()
                .contains("--k8s-version")
        );
    }

    #[test]
    fn the_annotation_syntax_is_red_hats() {
        let d = |s: &str| Declared::parse(s);
        assert_eq!(
            d("v4.12"),
            Ok(Declared {
                min: (4, 12),
                max: None
            })
        );
        assert_eq!(
            d("=v4.14"),
            Ok(Declared {
                min: (4, 14),
                max: Some((4, 14))
            })
        );
        assert_eq!(
            d("v4.12-v4.16"),
            Ok(Declared {
                min: (4, 12),
                max: Some((4, 16))
            })
        );
        assert_eq!(d("v4.6,v4.5"), d("v4.5"));
        for bad in [
            "4.12",
            "v4.6,v4.7",
            "v4.16-v4.12",
            "v4.12 - v4.16",
            "",
            "latest",
        ] {
            assert!(d(bad).is_err(), "{bad}");
        }
        assert_eq!(
            d("v4.12-v4.16").map(|x| x.display()),
            Ok("4.12-4.16".into())
        );
        assert_eq!(d("v4.12").map(|x| x.display()), Ok("4.12 and later".into()));
    }

    #[test]
    fn a_declared_range_is_its_kubernetes_releases() {
        let k = |s: &str| Declared::parse(s).expect("parses").kubernetes();
        assert_eq!(k("v4.12"), Some(((1, 25), None)));
        assert_eq!(k("=v4.14"), Some(((1, 27), Some((1, 27)))));
        assert_eq!(k("v4.16-v4.21"), Some(((1, 29), Some((1, 34)))));
        // After the table: at least the last Kubernetes release it knows.
        assert_eq!(k("v4.18-v4.22"), Some(((1, 31), Some((1, 34)))));
        assert_eq!(k("v4.0"), None);
    }
}
