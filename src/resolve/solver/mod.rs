//! OLM v0's solver: a port of operator-lifecycle-manager's
//! `pkg/controller/registry/resolver/solver` (over go-air/gini there, over the small SAT
//! solver of `sat.rs` here).
//!
//! The input is a list of [`Variable`]s, each with an [`Identifier`] and [`Constraint`]s;
//! [`solve`] returns the variables OLM installs: from the mandatory ones, each dependency
//! satisfied by its most preferred candidate that still allows a solution, in the order OLM's
//! search makes the choices. When no solution exists the error is OLM's
//! `constraints not satisfiable: ...` with the constraints that conflict.
//!
//! Files: `identifier.rs`, `variable.rs`, `constraint.rs` (the model), `error.rs`, `lit.rs` and `circuit.rs`
//! (gini's literals and `logic.C`), `sat.rs` (the SAT solver), `lit_mapping.rs`,
//! `search.rs` and `solve.rs` (OLM's files of the same names).

mod circuit;
mod constraint;
mod error;
mod identifier;
mod lit;
mod lit_mapping;
mod sat;
mod search;
mod solve;
mod variable;

#[cfg(test)]
mod tests;

pub use constraint::{AppliedConstraint, Constraint};
pub use error::{NotSatisfiable, SolveError};
pub use identifier::Identifier;
pub use solve::solve;
pub use variable::{BasicVariable, Variable};
