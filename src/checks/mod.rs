//! Checks with stable codes. Every code has a default severity and a one-line summary;
//! `olmctl explain CODE` prints it and `olmctl codes` lists them all.

pub mod bundle;
pub mod fbc;
pub mod graph;
pub mod safety;
pub mod upgrades;

use crate::diag::Code;

/// Every code the checks can report, group by group (unsorted; [`crate::diag::Registry`]
/// sorts the whole list).
pub fn codes() -> Vec<&'static Code> {
    let mut v: Vec<&'static Code> = fbc::CODES.to_vec();
    v.extend(bundle::codes());
    v.extend(graph::CODES.iter().copied());
    v.extend(upgrades::CODES.iter().copied());
    v.extend(safety::codes());
    v
}
