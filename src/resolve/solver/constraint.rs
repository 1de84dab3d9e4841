//! The constraints a variable can carry: a port of OLM's
//! `pkg/controller/registry/resolver/solver/constraints.go` (the types, their `String`,
//! `order` and `anchor`; their `apply`, the circuit they stand for, is in `lit_mapping.rs`).

use std::fmt;

use super::identifier::Identifier;

/// `Constraint`: limits when the variable it is attached to (its subject) can be chosen.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Constraint {
    /// `Mandatory()`: only solutions that contain the subject.
    Mandatory,
    /// `Prohibited()`: only solutions that do not contain the subject.
    Prohibited,
    /// `Dependency(ids...)`: the subject only with at least one of `ids`; earlier ids are
    /// preferred to later ones. Without ids, the subject can never be chosen.
    Dependency(Vec<Identifier>),
    /// `Conflict(id)`: not the subject and `id` both.
    Conflict(Identifier),
    /// `AtMost(n, ids...)` (`leq`): at most `n` of `ids` (counted with repetition).
    AtMost { n: usize, ids: Vec<Identifier> },
    /// `PrettyConstraint(c, msg)` (the resolver's `variable_types.go`): `c`, shown as `msg`.
    Pretty(Box<Constraint>, String),
}

impl Constraint {
    /// `Dependency(ids...)`.
    pub fn dependency<I: Into<Identifier>>(ids: impl IntoIterator<Item = I>) -> Constraint {
        Constraint::Dependency(ids.into_iter().map(Into::into).collect())
    }

    /// `Conflict(id)`.
    pub fn conflict(id: impl Into<Identifier>) -> Constraint {
        Constraint::Conflict(id.into())
    }

    /// `AtMost(n, ids...)`.
    pub fn at_most<I: Into<Identifier>>(n: usize, ids: impl IntoIterator<Item = I>) -> Constraint {
        Constraint::AtMost {
            n,
            ids: ids.into_iter().map(Into::into).collect(),
        }
    }

    /// `PrettyConstraint(c, msg)`.
    pub fn pretty(c: Constraint, msg: impl Into<String>) -> Constraint {
        Constraint::Pretty(Box::new(c), msg.into())
    }

    /// The constraint itself, under any `Pretty` wrapping.
    pub fn inner(&self) -> &Constraint {
        match self {
            Constraint::Pretty(c, _) => c.inner(),
            c => c,
        }
    }

    /// `String(subject)`: the text OLM shows for the constraint on `subject` (in
    /// `constraints not satisfiable: ...`).
    pub fn message(&self, subject: &Identifier) -> String {
        let join = |ids: &[Identifier]| {
            ids.iter()
                .map(Identifier::as_str)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Constraint::Mandatory => format!("{subject} is mandatory"),
            Constraint::Prohibited => format!("{subject} is prohibited"),
            Constraint::Dependency(ids) if ids.is_empty() => {
                format!("{subject} has a dependency without any candidates to satisfy it")
            }
            Constraint::Dependency(ids) => {
                format!("{subject} requires at least one of {}", join(ids))
            }
            Constraint::Conflict(id) => format!("{subject} conflicts with {id}"),
            Constraint::AtMost { n, ids } => {
                format!("{subject} permits at most {n} of {}", join(ids))
            }
            Constraint::Pretty(_, msg) => msg.clone(),
        }
    }

    /// `order()`: the candidates the search guesses, in preference order (a dependency's).
    pub fn order(&self) -> &[Identifier] {
        match self.inner() {
            Constraint::Dependency(ids) => ids,
            _ => &[],
        }
    }

    /// `anchor()`: whether the subject is where the search starts (mandatory).
    pub fn anchor(&self) -> bool {
        matches!(self.inner(), Constraint::Mandatory)
    }
}

/// `AppliedConstraint`: a constraint with the variable it applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppliedConstraint {
    /// The subject's position in the solver's input.
    pub index: usize,
    /// The subject.
    pub variable: Identifier,
    pub constraint: Constraint,
}

impl fmt::Display for AppliedConstraint {
    /// `AppliedConstraint.String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.constraint.message(&self.variable))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// constraints_test.go `TestOrder`.
    #[test]
    fn resolve_order() {
        let none: &[Identifier] = &[];
        assert_eq!(Constraint::Mandatory.order(), none, "mandatory");
        assert_eq!(Constraint::Prohibited.order(), none, "prohibited");
        let abc: Vec<Identifier> = ["a", "b", "c"].into_iter().map(Identifier::from).collect();
        assert_eq!(
            Constraint::dependency(["a", "b", "c"]).order(),
            abc,
            "dependency"
        );
        assert_eq!(Constraint::conflict("a").order(), none, "conflict");
    }

    #[test]
    fn resolve_constraint_messages() {
        let s = Identifier::from("s");
        let cases = [
            (Constraint::Mandatory, "s is mandatory"),
            (Constraint::Prohibited, "s is prohibited"),
            (
                Constraint::dependency::<&str>([]),
                "s has a dependency without any candidates to satisfy it",
            ),
            (
                Constraint::dependency(["a", "b"]),
                "s requires at least one of a, b",
            ),
            (Constraint::conflict("a"), "s conflicts with a"),
            (
                Constraint::pretty(Constraint::Mandatory, "subscription s exists"),
                "subscription s exists",
            ),
            (
                Constraint::at_most(1, ["a", "b"]),
                "s permits at most 1 of a, b",
            ),
        ];
        for (c, want) in cases {
            assert_eq!(c.message(&s), want);
        }
    }
}
