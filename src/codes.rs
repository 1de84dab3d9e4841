//! Every diagnostic code olmctl has, assembled from the groups that the modules reporting
//! findings declare (the checks, the gate): `olmctl codes` lists them, `olmctl explain` and
//! SARIF's rules look them up. It sits above all of those modules, so that none of them reaches
//! up to the others for the list.

use std::path::Path;

use crate::checks::safety::Policy;
use crate::diag::{Code, Registry};

/// The registry of every code.
pub fn registry() -> Registry {
    Registry::new(
        crate::checks::codes()
            .into_iter()
            .chain(crate::gate::decide::CODES.iter().copied())
            .chain(crate::rbac::review::CODES.iter().copied())
            .chain(crate::resolve::lint::CODES.iter().copied()),
    )
}

/// Every code olmctl can report, sorted by code.
pub fn all_codes() -> Vec<&'static Code> {
    registry().all().to_vec()
}

/// Looks a code up (case-insensitively).
pub fn find(code: &str) -> Option<&'static Code> {
    registry().find(code)
}

/// Reads an upgrade-safety policy file. Its `severity` may name any code, so the policy is
/// read here, where every code is known.
pub fn load_policy(path: &Path) -> Result<Policy, String> {
    Policy::load_with(path, &find)
}

/// Parses upgrade-safety policy text with every code known; errors start with `line:column: `.
pub fn parse_policy(text: &str) -> Result<Policy, String> {
    Policy::parse_with(text, &find)
}

/// The codes a run leaves out (`--ignore CODE`, `--select '!CODE'`): each entry is a code or
/// the start of codes (`SCH012`, `SKW`), in any case, as ruff's selectors are.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ignore {
    prefixes: Vec<String>,
}

impl Ignore {
    /// Reads the entries (a leading `!` is dropped); one that starts no code is an error naming
    /// the nearest code.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<Self, String> {
        let all = all_codes();
        let mut prefixes = Vec::new();
        for e in entries {
            let raw = e.as_ref().trim();
            let p = raw.strip_prefix('!').unwrap_or(raw).to_ascii_uppercase();
            if p.is_empty() {
                continue;
            }
            if !all.iter().any(|c| c.code.starts_with(&p)) {
                let guess = crate::text::nearest(&p, all.iter().map(|c| c.code));
                return Err(format!(
                    "{raw}: no code is or starts with {p}{} (see `olmctl codes`)",
                    guess.map_or(String::new(), |g| format!("; did you mean {g}?"))
                ));
            }
            prefixes.push(p);
        }
        Ok(Ignore { prefixes })
    }

    /// Whether findings with `code` are kept.
    pub fn keeps(&self, code: &str) -> bool {
        !self.prefixes.iter().any(|p| code.starts_with(p.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_codes_and_prefixes() {
        let i = Ignore::parse(&["!sch012", "SKW", ""]).expect("known");
        assert!(!i.keeps("SCH012") && !i.keeps("SKW002"));
        assert!(i.keeps("SCH014") && i.keeps("UPG001"));
        let e = Ignore::parse(&["SCH0122"]).expect_err("unknown");
        assert!(e.contains("did you mean SCH012?"), "{e}");
    }

    #[test]
    fn every_gate_code_is_listed_with_its_summary() {
        let all = all_codes();
        for c in crate::gate::decide::CODES {
            assert!(all.iter().any(|a| a.code == c.code), "{}", c.code);
            assert!(c.summary.len() > 40);
        }
        assert_eq!(crate::gate::decide::CODES.len(), 22);
    }

    #[test]
    fn codes_are_sorted_unique_and_found_in_any_case() {
        let all = all_codes();
        assert!(all.windows(2).all(|w| w[0].code < w[1].code));
        assert_eq!(find("fbc001").map(|c| c.code), Some("FBC001"));
        assert_eq!(find("GATE001").map(|c| c.code), Some("GATE001"));
        assert_eq!(find("NOPE999"), None);
    }
}
