//! Between the input (variables, constraints) and the SAT problem: a port of OLM's
//! `pkg/controller/registry/resolver/solver/lit_mapping.go` (`newLitMapping`, `LitOf`,
//! `VariableOf`, `AnchorIdentifiers`, `AssumeConstraints`, `CardinalityConstrainer`,
//! `Conflicts`) and of the constraints' `apply` methods of `constraints.go`.

use std::collections::HashMap;

use super::circuit::{CardSort, Circuit};
use super::constraint::{AppliedConstraint, Constraint};
use super::error::SolveError;
use super::identifier::Identifier;
use super::lit::Lit;
use super::sat::{Oracle, Sat};
use super::variable::Variable;

/// `litMapping`.
pub(crate) struct LitMapping<'a, V> {
    pub(crate) inorder: &'a [V],
    lits: HashMap<&'a Identifier, Lit>,
    variables: HashMap<Lit, usize>,
    /// By literal, the constraint applied last that has this literal (OLM's map keeps the
    /// last one written); `keys` in the order the literals first appeared.
    constraints: HashMap<Lit, AppliedConstraint>,
    keys: Vec<Lit>,
    circuit: Circuit,
}

impl<'a, V: Variable> LitMapping<'a, V> {
    /// `newLitMapping`: a literal per variable, then each constraint's circuit.
    pub(crate) fn new(input: &'a [V]) -> Result<LitMapping<'a, V>, SolveError> {
        let mut d = LitMapping {
            inorder: input,
            lits: HashMap::with_capacity(input.len()),
            variables: HashMap::with_capacity(input.len()),
            constraints: HashMap::new(),
            keys: Vec::new(),
            circuit: Circuit::new(input.len()),
        };
        for (i, v) in input.iter().enumerate() {
            let m = d.circuit.lit();
            if d.lits.insert(v.identifier(), m).is_some() {
                return Err(SolveError::DuplicateIdentifier(v.identifier().clone()));
            }
            d.variables.insert(m, i);
        }
        let mut missing = Vec::new();
        for v in input {
            for c in v.constraints() {
                for id in referenced(c) {
                    if !d.lits.contains_key(id) {
                        missing.push((v.identifier().clone(), id.clone()));
                    }
                }
            }
        }
        if !missing.is_empty() {
            return Err(SolveError::NotProvided(missing));
        }
        for (index, v) in input.iter().enumerate() {
            for c in v.constraints() {
                let m = d.apply(c, v.identifier());
                let applied = AppliedConstraint {
                    index,
                    variable: v.identifier().clone(),
                    constraint: c.clone(),
                };
                if d.constraints.insert(m, applied).is_none() {
                    d.keys.push(m);
                }
            }
        }
        Ok(d)
    }

    /// `Constraint.apply`: the literal that is true when the constraint holds.
    fn apply(&mut self, c: &Constraint, subject: &Identifier) -> Lit {
        let s = self.lits[subject];
        match c {
            Constraint::Mandatory => s,
            Constraint::Prohibited => s.not(),
            Constraint::Dependency(ids) => {
                let mut m = s.not();
                for id in ids {
                    let d = self.lits[id];
                    m = self.circuit.or(m, d);
                }
                m
            }
            Constraint::Conflict(id) => {
                let o = self.lits[id];
                self.circuit.or(s.not(), o.not())
            }
            Constraint::AtMost { n, ids } => {
                let ms: Vec<Lit> = ids.iter().map(|id| self.lits[id]).collect();
                self.circuit.card_sort(&ms).leq(*n)
            }
            Constraint::Pretty(c, _) => self.apply(c, subject),
        }
    }

    /// `LitOf` (every identifier was checked in `new`).
    pub(crate) fn lit_of(&self, id: &Identifier) -> Lit {
        self.lits[id]
    }

    /// `VariableOf`: the input position of the variable of `m`.
    pub(crate) fn variable_of(&self, m: Lit) -> Option<usize> {
        self.variables.get(&m).copied()
    }

    /// `Lits`: every variable's literal, in input order.
    pub(crate) fn all_lits(&self) -> Vec<Lit> {
        self.inorder
            .iter()
            .map(|v| self.lit_of(v.identifier()))
            .collect()
    }

    /// `AddConstraints`: the circuit's clauses into the solver.
    pub(crate) fn add_constraints(&mut self, g: &mut Sat) {
        let mut clauses = Vec::new();
        self.circuit.cnf_since(&mut clauses);
        for c in &clauses {
            g.add_clause(c);
        }
    }

    /// `AssumeConstraints`: assume that every constraint holds (OLM iterates a Go map, in
    /// no fixed order; here in the order the literals first appeared).
    pub(crate) fn assume_constraints(&self, g: &mut impl Oracle) {
        g.assume(&self.keys);
    }

    /// `AnchorIdentifiers`: the literals of the variables with a mandatory constraint, in
    /// input order.
    pub(crate) fn anchors(&self) -> Vec<Lit> {
        self.inorder
            .iter()
            .filter(|v| v.constraints().iter().any(Constraint::anchor))
            .map(|v| self.lit_of(v.identifier()))
            .collect()
    }

    /// `CardinalityConstrainer`: a sorting network over `ms`, its clauses taught to `g`.
    pub(crate) fn cardinality_constrainer(&mut self, g: &mut Sat, ms: &[Lit]) -> CardSort {
        let cs = self.circuit.card_sort(ms);
        self.add_constraints(g);
        cs
    }

    /// The constraint literals (the assumptions a solve makes), in `assume_constraints`
    /// order.
    pub(crate) fn constraint_lits(&self) -> &[Lit] {
        &self.keys
    }

    /// `Conflicts`: the constraints of the literals `whys`, sorted by their text.
    pub(crate) fn conflicts(&self, whys: &[Lit]) -> Vec<AppliedConstraint> {
        let mut out: Vec<AppliedConstraint> = Vec::new();
        for m in whys {
            if let Some(a) = self.constraints.get(m)
                && !out.contains(a)
            {
                out.push(a.clone());
            }
        }
        out.sort_by_cached_key(|a| a.to_string());
        out
    }

    /// The text of a constraint literal's constraint (for ordering).
    pub(crate) fn message_of(&self, m: Lit) -> String {
        self.constraints
            .get(&m)
            .map(|a| a.to_string())
            .unwrap_or_default()
    }
}

fn referenced(c: &Constraint) -> &[Identifier] {
    match c {
        Constraint::Dependency(ids) | Constraint::AtMost { ids, .. } => ids,
        Constraint::Conflict(id) => std::slice::from_ref(id),
        Constraint::Mandatory | Constraint::Prohibited => &[],
        Constraint::Pretty(c, _) => referenced(c),
    }
}
