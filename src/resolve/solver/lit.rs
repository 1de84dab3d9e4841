//! Literals, as go-air/gini's `z` package numbers them (`z/lit.go`, `z/var.go`).
//!
//! Variable `v` has the positive literal `2v` and the negative literal `2v + 1`; variable 0
//! is no variable (`z.LitNull`), variable 1 is the constant of the circuit (`logic.C`'s
//! `T` = `2`, `F` = `3`).

/// One literal: a variable or its negation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Lit(pub(crate) u32);

impl Lit {
    /// `z.LitNull`.
    pub(crate) const NULL: Lit = Lit(0);
    /// The true constant (`logic.C.T`).
    pub(crate) const TRUE: Lit = Lit(2);
    /// The false constant (`logic.C.F`).
    pub(crate) const FALSE: Lit = Lit(3);

    /// `z.Var.Pos`: the positive literal of variable `var`.
    pub(crate) fn pos(var: usize) -> Lit {
        Lit((var as u32) << 1)
    }

    /// `z.Lit.Not`.
    #[allow(clippy::should_implement_trait)]
    pub(crate) fn not(self) -> Lit {
        Lit(self.0 ^ 1)
    }

    /// `z.Lit.Var`.
    pub(crate) fn var(self) -> usize {
        (self.0 >> 1) as usize
    }

    /// `z.Lit.IsPos`.
    pub(crate) fn is_pos(self) -> bool {
        self.0 & 1 == 0
    }
}
