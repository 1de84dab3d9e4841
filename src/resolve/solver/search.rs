//! The preference search: a port of OLM's
//! `pkg/controller/registry/resolver/solver/search.go` (`search.Do`, `PushGuess`,
//! `PopGuess` and the deque of choices).
//!
//! Starting from the mandatory variables, each guessed variable's dependencies become
//! choices (queued at the back); a choice guesses its candidates in preference order, is
//! skipped when a candidate is assumed already, and the search backtracks when a guess
//! makes the assumptions fail (under `Test`'s propagation, or the full `Solve` once no
//! choice is left).

use std::collections::{HashSet, VecDeque};

use super::lit::Lit;
use super::lit_mapping::LitMapping;
use super::sat::{Oracle, Outcome};
use super::variable::Variable;

/// `choice`: candidates, and the index of the next one to guess.
#[derive(Debug, Clone)]
struct Choice {
    index: usize,
    candidates: Vec<Lit>,
}

/// `guess`: `m` is `None` when the choice was satisfied by an assumption or had no
/// candidate left.
#[derive(Debug, Clone)]
struct Guess {
    m: Option<Lit>,
    index: usize,
    children: usize,
    candidates: Vec<Lit>,
}

/// `search`.
pub(crate) struct Search<'m, 'a, V, S> {
    s: &'m mut S,
    lits: &'m LitMapping<'a, V>,
    assumptions: HashSet<Lit>,
    guesses: Vec<Guess>,
    choices: VecDeque<Choice>,
    result: Outcome,
}

/// What `search.Do` returns: the outcome, the guessed literals in guess order, and their set.
pub(crate) struct Found {
    pub(crate) outcome: Outcome,
    pub(crate) lits: Vec<Lit>,
    pub(crate) set: HashSet<Lit>,
}

impl<'m, 'a, V: Variable, S: Oracle> Search<'m, 'a, V, S> {
    pub(crate) fn new(s: &'m mut S, lits: &'m LitMapping<'a, V>) -> Self {
        Search {
            s,
            lits,
            assumptions: HashSet::new(),
            guesses: Vec::new(),
            choices: VecDeque::new(),
            result: Outcome::Unknown,
        }
    }

    /// `PushGuess`.
    fn push_guess(&mut self) {
        let Some(c) = self.choices.pop_front() else {
            return;
        };
        let mut g = Guess {
            m: c.candidates.get(c.index).copied(),
            index: c.index,
            children: 0,
            candidates: c.candidates,
        };
        // Can an existing assumption satisfy this choice?
        if g.candidates.iter().any(|m| self.assumptions.contains(m)) {
            g.m = None;
        }
        let Some(m) = g.m else {
            self.guesses.push(g);
            return;
        };
        if let Some(i) = self.lits.variable_of(m) {
            for constraint in self.lits.inorder[i].constraints() {
                let ms: Vec<Lit> = constraint
                    .order()
                    .iter()
                    .map(|id| self.lits.lit_of(id))
                    .collect();
                if !ms.is_empty() {
                    g.children += 1;
                    self.choices.push_back(Choice {
                        index: 0,
                        candidates: ms,
                    });
                }
            }
        }
        self.guesses.push(g);
        self.assumptions.insert(m);
        self.s.assume(&[m]);
        self.result = self.s.test();
    }

    /// `PopGuess`.
    fn pop_guess(&mut self) {
        let Some(g) = self.guesses.pop() else {
            return;
        };
        if let Some(m) = g.m {
            self.assumptions.remove(&m);
            self.result = self.s.untest();
        }
        for _ in 0..g.children {
            self.choices.pop_back();
        }
        self.choices.push_front(Choice {
            index: g.index + usize::from(g.m.is_some()),
            candidates: g.candidates,
        });
    }

    /// `Do`: guesses from the anchors until every choice is made and the assumptions are
    /// satisfiable, or nothing is left to try; returns to the initial test scope.
    pub(crate) fn run(mut self, anchors: &[Lit]) -> Found {
        for &m in anchors {
            self.choices.push_back(Choice {
                index: 0,
                candidates: vec![m],
            });
        }
        loop {
            // A definitive result once all choices are made, to end or to backtrack.
            if self.choices.is_empty() && self.result == Outcome::Unknown {
                self.result = self.s.solve();
            }
            if self.result == Outcome::Unsat {
                if self.guesses.is_empty() {
                    break;
                }
                self.pop_guess();
                continue;
            }
            // Satisfiable and no decisions left.
            if self.choices.is_empty() {
                break;
            }
            self.push_guess();
        }
        let lits: Vec<Lit> = self.guesses.iter().filter_map(|g| g.m).collect();
        let set = lits.iter().copied().collect();
        let outcome = self.result;
        while !self.guesses.is_empty() {
            self.pop_guess();
        }
        Found { outcome, lits, set }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::solver::{BasicVariable, Constraint, Identifier};

    /// `FakeS` with `TestScopeCounter` (search_test.go): scripted answers, 0 (unknown)
    /// when not scripted, and the depth of test scopes.
    struct Fake {
        test_returns: Vec<Outcome>,
        untest_returns: Vec<Outcome>,
        tests: usize,
        untests: usize,
        depth: i32,
    }

    impl Oracle for Fake {
        fn assume(&mut self, _: &[Lit]) {}
        fn test(&mut self) -> Outcome {
            let r = self
                .test_returns
                .get(self.tests)
                .copied()
                .unwrap_or(Outcome::Unknown);
            self.tests += 1;
            self.depth += 1;
            r
        }
        fn untest(&mut self) -> Outcome {
            let r = self
                .untest_returns
                .get(self.untests)
                .copied()
                .unwrap_or(Outcome::Unknown);
            self.untests += 1;
            self.depth -= 1;
            r
        }
        fn solve(&mut self) -> Outcome {
            Outcome::Unknown
        }
    }

    fn run(
        variables: Vec<BasicVariable>,
        test_returns: Vec<Outcome>,
        untest_returns: Vec<Outcome>,
    ) -> (Outcome, Vec<Identifier>, i32) {
        let lits = LitMapping::new(&variables).unwrap();
        let mut s = Fake {
            test_returns,
            untest_returns,
            tests: 0,
            untests: 0,
            depth: 0,
        };
        let anchors = lits.anchors();
        let found = Search::new(&mut s, &lits).run(&anchors);
        let ids = found
            .lits
            .iter()
            .map(|&m| variables[lits.variable_of(m).unwrap()].identifier.clone())
            .collect();
        (found.outcome, ids, s.depth)
    }

    use Outcome::{Sat, Unknown, Unsat};

    /// search_test.go "children popped from back of deque when guess popped".
    #[test]
    fn resolve_search_children_popped_from_back_of_deque_when_guess_popped() {
        let v = vec![
            BasicVariable::new(
                "a",
                vec![Constraint::Mandatory, Constraint::dependency(["c"])],
            ),
            BasicVariable::new("b", vec![Constraint::Mandatory]),
            BasicVariable::new("c", vec![]),
        ];
        let (r, ids, depth) = run(v, vec![Unknown, Unsat], vec![Unsat, Unsat]);
        assert_eq!(r, Unsat);
        assert!(ids.is_empty());
        assert_eq!(depth, 0);
    }

    /// search_test.go "candidates exhausted".
    #[test]
    fn resolve_search_candidates_exhausted() {
        let v = vec![
            BasicVariable::new(
                "a",
                vec![Constraint::Mandatory, Constraint::dependency(["x"])],
            ),
            BasicVariable::new(
                "b",
                vec![Constraint::Mandatory, Constraint::dependency(["y"])],
            ),
            BasicVariable::new("x", vec![]),
            BasicVariable::new("y", vec![]),
        ];
        let (r, ids, depth) = run(v, vec![Unknown, Unknown, Unsat, Sat], vec![Unknown]);
        assert_eq!(r, Sat);
        let want: Vec<Identifier> = ["a", "b", "y"].into_iter().map(Identifier::from).collect();
        assert_eq!(ids, want);
        assert_eq!(depth, 0);
    }
}
