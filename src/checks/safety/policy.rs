//! The upgrade policy: a small YAML file (`--policy FILE`) that tunes the upgrade checks. Every
//! key is optional; an absent file means the defaults below.
//!
//! ```yaml
//! allowMajorUpgrades: false        # SKW002: a hop may cross a major version
//! allowReleaseToPrerelease: false  # SKW003: a release may be replaced by a pre-release
//! k8sVersion: "1.28-1.31"          # target Kubernetes range (--k8s-version wins)
//! crdify:
//!   conversion: Ignore             # Ignore: skip served-version checks under Webhook conversion
//!   enumAdditions: Allow           # Allow | Disallow adding enum values
//! preflight: olmv1                 # also report, as errors, what OLM v1's CRD preflight refuses
//! severity:                        # per code: error | warning | info | off
//!   SCH011: warning
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use crate::diag::{Finding, Severity};
use crate::fbc::node::{Node, Value};

/// A target Kubernetes version range (both ends inclusive, compared by major.minor).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct K8sRange {
    /// The oldest release the operator must run on.
    pub min: semver::Version,
    /// The newest release the operator must run on.
    pub max: semver::Version,
}

impl K8sRange {
    /// Parses `1.30` (one release) or `1.28-1.31` (a range). Versions may carry a `v` and a
    /// patch (`v1.28`, `1.28.3`); a full version may carry a pre-release (`1.22.0-0`). Anything
    /// else, such as `1.28-abc`, `1.28-` or `1.28-1.31-1.32`, is an error.
    pub fn parse(s: &str) -> Result<K8sRange, String> {
        use crate::checks::bundle::apis::parse_kube_version_strict as strict;
        let t = s.trim();
        let bad = || {
            format!("{s:?} is not a Kubernetes version or range (expected e.g. 1.30 or 1.28-1.31)")
        };
        // A range is exactly one `-` whose two sides are versions (`1.28.0-1.31` is a range,
        // `1.22.0-0` a version with a pre-release).
        let mut splits = t
            .match_indices('-')
            .filter_map(|(i, _)| Some((strict(&t[..i])?, strict(&t[i + 1..])?)));
        let (a, b) = match (splits.next(), splits.next()) {
            (Some(r), None) => r,
            (Some(_), Some(_)) => return Err(bad()),
            (None, _) => {
                let v = strict(t).ok_or_else(bad)?;
                (v.clone(), v)
            }
        };
        if (a.major, a.minor) > (b.major, b.minor) {
            return Err(format!("{s:?}: the range ends before it starts"));
        }
        Ok(K8sRange { min: a, max: b })
    }

    /// `1.30` or `1.28-1.31`.
    pub fn display(&self) -> String {
        let (a, b) = (&self.min, &self.max);
        if (a.major, a.minor) == (b.major, b.minor) {
            format!("{}.{}", a.major, a.minor)
        } else {
            format!("{}.{}-{}.{}", a.major, a.minor, b.major, b.minor)
        }
    }
}

/// What the policy file sets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    /// SKW002 is not reported.
    pub allow_major_upgrades: bool,
    /// SKW003 is not reported.
    pub allow_release_to_prerelease: bool,
    /// The target Kubernetes range, if the file sets one.
    pub k8s_version: Option<K8sRange>,
    /// Skip served-version schema checks when the new CRD converts with a webhook (OLM v1's
    /// `conversion: Ignore`).
    pub ignore_served_under_webhook: bool,
    /// Adding enum values is allowed.
    pub enum_additions_allowed: bool,
    /// Report what OLM v1's CRD preflight (crdify) refuses as errors (`preflight: olmv1`,
    /// `--preflight olmv1`): SCH014 becomes an error and crdify's parent reports are added.
    pub preflight_olmv1: bool,
    /// Per-code severity overrides; `None` turns the code off.
    pub severity: BTreeMap<String, Option<Severity>>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            allow_major_upgrades: false,
            allow_release_to_prerelease: false,
            k8s_version: None,
            ignore_served_under_webhook: true,
            enum_additions_allowed: true,
            preflight_olmv1: false,
            severity: BTreeMap::new(),
        }
    }
}

/// How a policy looks a code up (case-insensitively).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<&'static crate::diag::Code>;

impl Policy {
    /// Reads a policy file; `find` looks the codes of `severity` up (`codes::load_policy` passes
    /// every code olmctl has).
    pub fn load_with(path: &Path, find: Lookup) -> Result<Policy, String> {
        let text = crate::input::read_text(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Policy::parse_with(&text, find).map_err(|e| format!("{}:{e}", path.display()))
    }

    /// Parses policy text; errors start with `line:column: `. `find` looks the codes of
    /// `severity` up (`codes::parse_policy` passes every code olmctl has).
    pub fn parse_with(text: &str, find: Lookup) -> Result<Policy, String> {
        let mut docs = Vec::new();
        crate::fbc::yaml::parse_objects(text, |d| docs.push(d))
            .map_err(|e| format!("{}:{}: {}", e.line, e.column, e.message))?;
        let mut p = Policy::default();
        let Some(doc) = docs.first() else {
            return Ok(p);
        };
        let entries = match &doc.value {
            Value::Map(m) => m,
            Value::Null => return Ok(p),
            _ => return Err(at(doc, "the policy must be a mapping")),
        };
        for e in entries {
            let v = &e.value;
            match e.key.as_str() {
                "allowMajorUpgrades" => p.allow_major_upgrades = boolean(v)?,
                "allowReleaseToPrerelease" => p.allow_release_to_prerelease = boolean(v)?,
                "k8sVersion" => {
                    let s = string(v)?;
                    p.k8s_version = Some(K8sRange::parse(s).map_err(|m| at(v, &m))?);
                }
                "crdify" => crdify(v, &mut p)?,
                "preflight" => {
                    p.preflight_olmv1 = match string(v)? {
                        "olmv1" => true,
                        "none" => false,
                        _ => return Err(at(v, "preflight must be olmv1 or none")),
                    }
                }
                "severity" => severity(v, &mut p, find)?,
                other => {
                    return Err(at(
                        v,
                        &format!(
                            "unknown key {other:?} (known: allowMajorUpgrades, allowReleaseToPrerelease, k8sVersion, crdify, preflight, severity)"
                        ),
                    ));
                }
            }
        }
        Ok(p)
    }

    /// Applies the severity overrides: changes severities and drops codes turned off.
    pub fn apply(&self, findings: &mut Vec<Finding>) {
        if self.severity.is_empty() {
            return;
        }
        findings.retain_mut(|f| match self.severity.get(f.code) {
            Some(Some(s)) => {
                f.severity = *s;
                true
            }
            Some(None) => false,
            None => true,
        });
    }
}

fn at(n: &Node, msg: &str) -> String {
    format!("{}:{}: {msg}", n.pos.line, n.pos.col)
}

fn boolean(n: &Node) -> Result<bool, String> {
    match n.value {
        Value::Bool(b) => Ok(b),
        _ => Err(at(n, &format!("expected true or false, got {}", n.kind()))),
    }
}

fn string(n: &Node) -> Result<&str, String> {
    match &n.value {
        Value::Str(s) => Ok(s),
        Value::Number(_) => Err(at(n, "quote the version (1.30 would be read as a number)")),
        _ => Err(at(n, &format!("expected a string, got {}", n.kind()))),
    }
}

fn crdify(n: &Node, p: &mut Policy) -> Result<(), String> {
    let Value::Map(m) = &n.value else {
        return Err(at(n, "crdify must be a mapping"));
    };
    for e in m {
        let s = string(&e.value)?;
        match (e.key.as_str(), s) {
            ("conversion", "Ignore") => p.ignore_served_under_webhook = true,
            ("conversion", "None") => p.ignore_served_under_webhook = false,
            ("enumAdditions", "Allow") => p.enum_additions_allowed = true,
            ("enumAdditions", "Disallow") => p.enum_additions_allowed = false,
            ("conversion", _) => return Err(at(&e.value, "conversion must be Ignore or None")),
            ("enumAdditions", _) => {
                return Err(at(&e.value, "enumAdditions must be Allow or Disallow"));
            }
            (k, _) => {
                return Err(at(
                    &e.value,
                    &format!("unknown crdify key {k:?} (known: conversion, enumAdditions)"),
                ));
            }
        }
    }
    Ok(())
}

fn severity(n: &Node, p: &mut Policy, find: Lookup) -> Result<(), String> {
    let Value::Map(m) = &n.value else {
        return Err(at(n, "severity must be a mapping of code to level"));
    };
    for e in m {
        let Some(code) = find(&e.key) else {
            return Err(at(
                &e.value,
                &format!("unknown code {:?} (run `olmctl codes` for the list)", e.key),
            ));
        };
        // `off` unquoted is the boolean false in YAML 1.1 readers (ours follows go-yaml).
        if matches!(e.value.value, Value::Bool(false)) {
            p.severity.insert(code.code.to_string(), None);
            continue;
        }
        let level = match string(&e.value)? {
            "error" => Some(Severity::Error),
            "warning" => Some(Severity::Warning),
            "info" => Some(Severity::Info),
            "off" => None,
            other => {
                return Err(at(
                    &e.value,
                    &format!("{other:?} is not a level: use error, warning, info or off"),
                ));
            }
        };
        p.severity.insert(code.code.to_string(), level);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Policy text read with the checks' own codes (`codes::parse_policy`, with every code, is
    /// defined above the checks).
    fn parse(text: &str) -> Result<Policy, String> {
        let codes = crate::diag::Registry::new(crate::checks::codes());
        Policy::parse_with(text, &|c| codes.find(c))
    }

    #[test]
    fn defaults_and_overrides() {
        assert_eq!(parse("").unwrap(), Policy::default());
        let p = parse("allowMajorUpgrades: true\nk8sVersion: \"1.28-1.31\"\ncrdify:\n  conversion: None\n  enumAdditions: Disallow\nseverity:\n  sch011: warning\n  SKW003: off\n").unwrap();
        assert!(p.allow_major_upgrades && !p.enum_additions_allowed);
        assert!(!p.ignore_served_under_webhook);
        assert_eq!(
            p.k8s_version.as_ref().map(K8sRange::display).as_deref(),
            Some("1.28-1.31")
        );
        assert_eq!(p.severity.get("SCH011"), Some(&Some(Severity::Warning)));
        assert_eq!(p.severity.get("SKW003"), Some(&None));
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("severity:\n  NOPE1: error\n").unwrap_err();
        assert!(e.starts_with("2:") && e.contains("NOPE1"), "{e}");
        let e = parse("k8sVersion: 1.30\n").unwrap_err();
        assert!(e.contains("quote"), "{e}");
        let e = parse("allowMajorUpgrade: true\n").unwrap_err();
        assert!(e.contains("unknown key"), "{e}");
    }

    #[test]
    fn ranges() {
        let r = K8sRange::parse("v1.28 - 1.31").unwrap();
        assert_eq!((r.min.minor, r.max.minor), (28, 31));
        let one = K8sRange::parse("1.22.0-0").unwrap();
        assert_eq!((one.min.minor, one.max.minor), (22, 22));
        assert!(K8sRange::parse("1.31-1.28").is_err());
        assert!(K8sRange::parse("latest").is_err());
        // Nothing is dropped: a bad upper bound is an error, not a single version.
        for bad in [
            "1.28-abc",
            "1.28-",
            "1.28-1.31-1.32",
            "-1.28",
            "1.28.x",
            "1.28-1.31.",
            "",
        ] {
            assert!(K8sRange::parse(bad).is_err(), "{bad}");
        }
        let r = K8sRange::parse("1.28.0-1.31").unwrap();
        assert_eq!(r.display(), "1.28-1.31");
        assert_eq!(K8sRange::parse("v1.29.3").unwrap().display(), "1.29");
    }
}
