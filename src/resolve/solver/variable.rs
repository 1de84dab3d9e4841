//! The problem's unit: a port of OLM's `pkg/controller/registry/resolver/solver/variable.go`.

use super::constraint::Constraint;
use super::identifier::Identifier;

/// `Variable`: something the solver may choose, with the constraints on choosing it. The
/// resolver's variables (bundles, Subscriptions, invariants) implement it.
pub trait Variable {
    /// `Identifier()`: unique in one solve's input.
    fn identifier(&self) -> &Identifier;
    /// `Constraints()`.
    fn constraints(&self) -> &[Constraint];
}

/// A variable that is only an identifier and constraints (the `TestVariable` of OLM's
/// `solve_test.go`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasicVariable {
    pub identifier: Identifier,
    pub constraints: Vec<Constraint>,
}

impl BasicVariable {
    pub fn new(identifier: impl Into<Identifier>, constraints: Vec<Constraint>) -> BasicVariable {
        BasicVariable {
            identifier: identifier.into(),
            constraints,
        }
    }
}

impl Variable for BasicVariable {
    fn identifier(&self) -> &Identifier {
        &self.identifier
    }
    fn constraints(&self) -> &[Constraint] {
        &self.constraints
    }
}

impl<V: Variable + ?Sized> Variable for &V {
    fn identifier(&self) -> &Identifier {
        (**self).identifier()
    }
    fn constraints(&self) -> &[Constraint] {
        (**self).constraints()
    }
}
