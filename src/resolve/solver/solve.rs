//! The solve: a port of OLM's `pkg/controller/registry/resolver/solver/solve.go`
//! (`solver.Solve`).
//!
//! 1. Every constraint's circuit goes to the SAT solver; the constraints and the mandatory
//!    variables are assumed and tested (the baseline scope).
//! 2. Unless that test decides, the preference search (`search.rs`) guesses from the
//!    mandatory variables, dependencies in preference order.
//! 3. The cardinality step: the variables true in the baseline scope but not guessed
//!    ("extras") are counted by a sorting network, every other variable not guessed is
//!    assumed false, and the smallest count `w` (0, 1, ...) with a model gives the answer.
//!
//! What this gives, and why it does not depend on gini's choices: a guess is kept exactly
//! when the assumptions with it are satisfiable (a failing guess's subtree has no model, and
//! an unfailing one reaches a model through its choices' last, empty branches), so the
//! search takes, choice by choice in queue order, the first candidate that can still be
//! part of a solution. Setting the guessed variables true and every other false satisfies
//! every constraint (dependencies of guessed variables are guessed; prohibitions, conflicts
//! and at-most limits hold because the guesses are satisfiable together), so no variable
//! outside the guesses is forced true: the extras are empty and the answer is the guessed
//! variables, in input order. The property tests check this against a brute-force greedy.
//!
//! When nothing satisfies the constraints, OLM reports gini's failed assumptions (`Why`),
//! which depend on gini's propagation order and on Go's map order (they vary between runs).
//! Here the failed assumptions are shrunk to a minimal set (each removal proven by a solve),
//! trying removals in the order of the constraints' text: every constraint named is needed,
//! as `NotSatisfiable`'s doc promises; on OLM's tests it is the set OLM names.

use std::collections::HashSet;

use super::error::{NotSatisfiable, SolveError};
use super::lit::Lit;
use super::lit_mapping::LitMapping;
use super::sat::{Oracle, Outcome, Sat};
use super::search::Search;
use super::variable::Variable;

/// `Solve`: the variables OLM's solver installs, in input order, or why there are none.
pub fn solve<V: Variable>(input: &[V]) -> Result<Vec<&V>, SolveError> {
    let mut lm = LitMapping::new(input)?;
    let mut g = Sat::new();
    // Teach all constraints to the solver.
    lm.add_constraints(&mut g);
    // The mandatory variables' literals, assumed as a baseline.
    let anchors = lm.anchors();
    lm.assume_constraints(&mut g);
    g.assume(&anchors);
    // A test scope with the baseline, so that the search does not clear it.
    let mut outcome = g.test();
    let mut assumptions = anchors.clone();
    let mut aset = HashSet::new();
    if outcome == Outcome::Unknown {
        let found = Search::new(&mut g, &lm).run(&anchors);
        outcome = found.outcome;
        assumptions = found.lits;
        aset = found.set;
    }
    match outcome {
        Outcome::Sat => {
            let (mut extras, mut excluded) = (Vec::new(), Vec::new());
            for m in lm.all_lits() {
                if aset.contains(&m) {
                    continue;
                }
                if g.value(m) {
                    extras.push(m);
                } else {
                    excluded.push(m.not());
                }
            }
            g.untest();
            let cs = lm.cardinality_constrainer(&mut g, &extras);
            g.assume(&assumptions);
            g.assume(&excluded);
            lm.assume_constraints(&mut g);
            g.test();
            for w in 0..=cs.n() {
                g.assume(&[cs.leq(w)]);
                if g.solve() == Outcome::Sat {
                    return Ok(input
                        .iter()
                        .filter(|v| g.value(lm.lit_of(v.identifier())))
                        .collect());
                }
            }
            // No model after the cardinality step although the search had one.
            Err(SolveError::Internal)
        }
        Outcome::Unsat => {
            let why = g.why();
            let core = minimal_core(&mut g, &lm, &why);
            Err(NotSatisfiable(lm.conflicts(&core)).into())
        }
        // `ErrIncomplete` in OLM: only a cancelled solve ends undecided, and this one is not
        // cancellable; `Solve` always decides.
        Outcome::Unknown => Err(SolveError::Internal),
    }
}

/// The failed assumptions `why`, shrunk until removing any one of them gives a model.
fn minimal_core<V: Variable>(g: &mut Sat, lm: &LitMapping<'_, V>, why: &[Lit]) -> Vec<Lit> {
    g.reset();
    let known: HashSet<Lit> = lm.constraint_lits().iter().copied().collect();
    let mut core: Vec<Lit> = Vec::new();
    for &m in why {
        if known.contains(&m) && !core.contains(&m) {
            core.push(m);
        }
    }
    if core.is_empty() {
        core = lm.constraint_lits().to_vec();
    }
    core.sort_by_cached_key(|&m| (lm.message_of(m), m));
    let mut i = 0;
    while i < core.len() {
        let trial: Vec<Lit> = core
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != i)
            .map(|(_, &m)| m)
            .collect();
        g.assume(&trial);
        if g.solve() == Outcome::Unsat {
            let why: HashSet<Lit> = g.why().into_iter().collect();
            core = trial.into_iter().filter(|m| why.contains(m)).collect();
        } else {
            i += 1;
        }
    }
    core
}
