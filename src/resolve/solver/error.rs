//! The solver's errors: OLM's `NotSatisfiable` and `ErrIncomplete`-free rest of
//! `solve.go`, and `DuplicateIdentifier` / the inconsistencies of `lit_mapping.go`.

use std::fmt;

use super::constraint::AppliedConstraint;
use super::identifier::Identifier;

/// `NotSatisfiable`: constraints that cannot hold together, sorted by their text as
/// `litMapping.Conflicts` sorts them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NotSatisfiable(pub Vec<AppliedConstraint>);

impl fmt::Display for NotSatisfiable {
    /// `NotSatisfiable.Error`: `constraints not satisfiable: A, B`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("constraints not satisfiable")?;
        for (i, a) in self.0.iter().enumerate() {
            f.write_str(if i == 0 { ": " } else { ", " })?;
            write!(f, "{a}")?;
        }
        Ok(())
    }
}

impl std::error::Error for NotSatisfiable {}

/// Why a solve has no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SolveError {
    /// No solution: the constraints that conflict.
    NotSatisfiable(NotSatisfiable),
    /// `DuplicateIdentifier`: two variables of the input have this identifier.
    DuplicateIdentifier(Identifier),
    /// Constraints name variables that are not in the input (`litMapping.LitOf`'s
    /// `variable %q referenced but not provided`): (subject, missing), in input order.
    NotProvided(Vec<(Identifier, Identifier)>),
    /// The cardinality step found no model where the search had one (`unexpected internal
    /// error` in `solve.go`).
    Internal,
}

impl fmt::Display for SolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SolveError::NotSatisfiable(e) => e.fmt(f),
            SolveError::DuplicateIdentifier(id) => {
                write!(f, "duplicate identifier \"{id}\" in input")
            }
            SolveError::NotProvided(refs) => {
                write!(f, "{} errors encountered: ", refs.len())?;
                for (i, (_, missing)) in refs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "variable \"{missing}\" referenced but not provided")?;
                }
                Ok(())
            }
            SolveError::Internal => f.write_str("unexpected internal error"),
        }
    }
}

impl std::error::Error for SolveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SolveError::NotSatisfiable(e) => Some(e),
            _ => None,
        }
    }
}

impl From<NotSatisfiable> for SolveError {
    fn from(e: NotSatisfiable) -> SolveError {
        SolveError::NotSatisfiable(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::solver::Constraint;

    /// solve_test.go `TestNotSatisfiableError`.
    #[test]
    fn resolve_not_satisfiable_error() {
        let applied = |id: &str, c: Constraint| AppliedConstraint {
            index: 0,
            variable: id.into(),
            constraint: c,
        };
        assert_eq!(
            NotSatisfiable(vec![]).to_string(),
            "constraints not satisfiable",
            "empty"
        );
        assert_eq!(
            NotSatisfiable(vec![applied("a", Constraint::Mandatory)]).to_string(),
            "constraints not satisfiable: a is mandatory",
            "single failure"
        );
        assert_eq!(
            NotSatisfiable(vec![
                applied("a", Constraint::Mandatory),
                applied("b", Constraint::Prohibited)
            ])
            .to_string(),
            "constraints not satisfiable: a is mandatory, b is prohibited",
            "multiple failures"
        );
    }
}
