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
            .chain(crate::rbac::review::CODES.iter().copied()),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_gate_code_is_listed_with_its_summary() {
        let all = all_codes();
        for c in crate::gate::decide::CODES {
            assert!(all.iter().any(|a| a.code == c.code), "{}", c.code);
            assert!(c.summary.len() > 40);
        }
        assert_eq!(crate::gate::decide::CODES.len(), 20);
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
