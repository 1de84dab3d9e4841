//! Checks with stable codes. Every code has a default severity and a one-line summary;
//! `olmctl explain CODE` prints it and `olmctl codes` lists them all.

/// Declares diagnostic codes: one `static` per code and a `CODES` table of the group.
macro_rules! codes {
    ($($name:ident = $code:literal, $sev:expr, $summary:literal;)*) => {
        $(
            #[doc = $summary]
            pub static $name: $crate::checks::Code = $crate::checks::Code {
                code: $code,
                severity: $sev,
                summary: $summary,
            };
        )*
        /// Every code of this group.
        pub static CODES: &[&$crate::checks::Code] = &[$(&$name),*];
    };
}

pub mod bundle;
pub mod fbc;
pub mod graph;
pub mod safety;
pub mod upgrades;

use crate::diag::Severity;

/// A diagnostic code.
#[derive(Debug, PartialEq, Eq)]
pub struct Code {
    /// Stable identifier such as `FBC001`.
    pub code: &'static str,
    /// Default severity.
    pub severity: Severity,
    /// One line: what the check looks for.
    pub summary: &'static str,
}

/// Every code olmctl can report, sorted by code.
pub fn all_codes() -> Vec<&'static Code> {
    let mut v: Vec<&'static Code> = fbc::CODES.to_vec();
    v.extend(bundle::codes());
    v.extend(graph::CODES.iter().copied());
    v.extend(upgrades::CODES.iter().copied());
    v.extend(safety::codes());
    v.extend(crate::gate::decide::CODES.iter().copied());
    v.sort_by_key(|c| c.code);
    v
}

/// Looks a code up (case-insensitively).
pub fn find(code: &str) -> Option<&'static Code> {
    all_codes()
        .into_iter()
        .find(|c| c.code.eq_ignore_ascii_case(code))
}
