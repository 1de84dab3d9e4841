//! OLM v0's dependency resolution (issue 41): what OLM installs for a namespace, decided as
//! operator-lifecycle-manager's `pkg/controller/registry/resolver` decides it.
//!
//! [`solver`] is the port of OLM's solver package; [`entry`], [`predicate`],
//! [`requirement`] and [`cel`] the catalog entries and what a requirement admits;
//! [`source`] reads catalogs and installed CSVs as OLM's sources do; [`resolver`] is the
//! model (`resolver.go`); [`steps`] what OLM then does with the answer (`step_resolver.go`);
//! [`explain`] says why in words a person can act on; [`passed`] when a new Subscription gets
//! less than its channel's head, and why.

pub mod cel;
pub mod entry;
pub mod explain;
pub mod lint;
pub mod passed;
pub mod predicate;
pub mod requirement;
pub mod resolver;
pub mod solver;
pub mod source;
pub mod state;
pub mod steps;

#[cfg(test)]
mod tests;
