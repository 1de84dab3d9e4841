//! `maxVersionJump` of an `UpgradePolicy`: how far an upgrade moves from the installed CSV's
//! version to the target's, whatever edges OLM takes to get there.
//!
//! The jump is the highest component that differs: the major version, else the minor, else
//! anything below (patch, pre-release); pre-releases count with the version they precede
//! (`1.2.5` to `1.3.0-rc.1` is a minor jump). A target that is not higher (by semver precedence,
//! build metadata ignored) is no upgrade at all.

use std::cmp::Ordering;

use semver::Version;

/// How far an upgrade jumps, ordered: patch < minor < major.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Jump {
    /// Same major and minor.
    Patch,
    /// Same major.
    Minor,
    /// Another major.
    Major,
}

impl Jump {
    /// Parses the policy's `patch`, `minor` or `major`.
    pub fn parse(s: &str) -> Result<Jump, String> {
        match s {
            "patch" => Ok(Jump::Patch),
            "minor" => Ok(Jump::Minor),
            "major" => Ok(Jump::Major),
            _ => Err(format!(
                "invalid maxVersionJump {s:?}: use patch, minor or major"
            )),
        }
    }

    /// The word the policy uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Jump::Patch => "patch",
            Jump::Minor => "minor",
            Jump::Major => "major",
        }
    }
}

/// The jump from `from` to `to`, or `None` when `to` is not higher.
pub fn classify(from: &Version, to: &Version) -> Option<Jump> {
    if to.cmp_precedence(from) != Ordering::Greater {
        return None;
    }
    Some(if to.major != from.major {
        Jump::Major
    } else if to.minor != from.minor {
        Jump::Minor
    } else {
        Jump::Patch
    })
}

/// Whether an upgrade from `from` to `to` stays within `max`; `None` when it is no upgrade.
pub fn allowed(from: &Version, to: &Version, max: Jump) -> Option<bool> {
    classify(from, to).map(|j| j <= max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(s: &str) -> Version {
        Version::parse(s).expect("version")
    }

    #[test]
    fn jumps() {
        assert_eq!(classify(&v("1.2.3"), &v("1.2.4")), Some(Jump::Patch));
        assert_eq!(classify(&v("1.2.3"), &v("1.3.0")), Some(Jump::Minor));
        assert_eq!(classify(&v("1.2.3"), &v("2.0.0")), Some(Jump::Major));
        assert_eq!(classify(&v("0.9.9"), &v("1.0.0")), Some(Jump::Major));
        // Pre-releases count with the version they precede.
        assert_eq!(classify(&v("1.2.5"), &v("1.3.0-rc.1")), Some(Jump::Minor));
        assert_eq!(classify(&v("1.3.0-rc.1"), &v("1.3.0")), Some(Jump::Patch));
        assert_eq!(
            classify(&v("1.3.0-rc.1"), &v("1.3.0-rc.2")),
            Some(Jump::Patch)
        );
        assert_eq!(classify(&v("1.9.0"), &v("2.0.0-alpha")), Some(Jump::Major));
        // Not upgrades: same, lower, build metadata only.
        assert_eq!(classify(&v("1.2.3"), &v("1.2.3")), None);
        assert_eq!(classify(&v("1.2.3"), &v("1.2.2")), None);
        assert_eq!(classify(&v("1.2.3"), &v("1.2.3+build.7")), None);
        assert_eq!(classify(&v("1.3.0"), &v("1.3.0-rc.1")), None);
        assert_eq!(allowed(&v("1.2.3"), &v("1.3.0"), Jump::Minor), Some(true));
        assert_eq!(allowed(&v("1.2.3"), &v("2.0.0"), Jump::Minor), Some(false));
        assert_eq!(allowed(&v("1.2.3"), &v("1.2.4"), Jump::Patch), Some(true));
        assert_eq!(allowed(&v("1.2.3"), &v("1.3.0"), Jump::Patch), Some(false));
        assert_eq!(Jump::parse("minor"), Ok(Jump::Minor));
        assert!(Jump::parse("Minor").is_err());
        assert_eq!(Jump::Major.as_str(), "major");
    }

    proptest! {
        /// A jump exists exactly for upgrades, and it is the highest differing component.
        #[test]
        fn jump_is_the_highest_differing_component(
            a in (0u64..3, 0u64..3, 0u64..3), b in (0u64..3, 0u64..3, 0u64..3), pre in 0usize..3,
        ) {
            let pres = ["", "-rc.1", "-alpha"];
            let from = v(&format!("{}.{}.{}", a.0, a.1, a.2));
            let to = v(&format!("{}.{}.{}{}", b.0, b.1, b.2, pres[pre]));
            let j = classify(&from, &to);
            prop_assert_eq!(j.is_some(), to.cmp_precedence(&from) == Ordering::Greater);
            if let Some(j) = j {
                let expect = if a.0 != b.0 { Jump::Major } else if a.1 != b.1 { Jump::Minor } else { Jump::Patch };
                prop_assert_eq!(j, expect);
            }
        }
    }
}
