//! OLM v0's dependency resolution (issue 41).
//!
//! So far only the solver is here: [`solver`], a port of operator-lifecycle-manager's
//! `pkg/controller/registry/resolver/solver` package (the preference search and the
//! cardinality step over a small SAT solver of its own). The model that turns catalogs,
//! Subscriptions and installed CSVs into solver variables (`resolver/resolver.go`) is not
//! ported yet.

pub mod solver;
