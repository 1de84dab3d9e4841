//! A small CDCL SAT solver with gini's incremental interface, as OLM's solver uses it
//! (go-air/gini `inter/s.go` and `internal/xo/s.go`): `Assume`, `Test` and `Untest`
//! (scoped assumptions under unit propagation), `Solve` (which consumes the assumptions
//! not under a test scope), `Value` and `Why` (the failed assumptions).
//!
//! The search is MiniSat's: each assumption is a decision level of its own, conflicts are
//! learned at the first unique implication point, and a conflict that reaches the
//! assumptions ends with the assumptions it follows from. Decisions take the lowest
//! unassigned variable, false first. It differs from gini (restarts, activities, phases),
//! so the models it finds and the failed assumptions it names may differ; OLM's answers do
//! not depend on either (see `solve.rs`).

use super::lit::Lit;

/// What `Test`, `Untest` and `Solve` found (gini's 1, 0 and -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Sat,
    Unknown,
    Unsat,
}

/// The calls OLM's search makes on gini (`inter.S`); a trait so the search's tests can
/// script the answers, as `search_test.go` does with its fake.
pub(crate) trait Oracle {
    /// `Assume`: assumptions for the next `Test` or `Solve`.
    fn assume(&mut self, lits: &[Lit]);
    /// `Test`: the assumptions made since the last test, kept until `Untest`, under unit
    /// propagation: `Unsat` on a conflict, `Sat` when every variable is assigned.
    fn test(&mut self) -> Outcome;
    /// `Untest`: drops the last test's assumptions; `Unsat` if the remaining ones conflict.
    fn untest(&mut self) -> Outcome;
    /// `Solve`: the tested and pending assumptions together; forgets the pending ones.
    fn solve(&mut self) -> Outcome;
}

const NO_REASON: usize = usize::MAX;

/// The solver's state.
pub(crate) struct Sat {
    clauses: Vec<Vec<Lit>>,
    /// By literal: the clauses watching it (among their first two literals).
    watches: Vec<Vec<usize>>,
    /// By variable: 1 true, -1 false, 0 unassigned.
    vals: Vec<i8>,
    levels: Vec<usize>,
    reasons: Vec<usize>,
    trail: Vec<Lit>,
    trail_lim: Vec<usize>,
    qhead: usize,
    seen: Vec<bool>,
    /// The assumptions under test scopes, in order: assumption `i` is decision level `i + 1`.
    tested: Vec<Lit>,
    /// `tested.len()` at each `Test`.
    scopes: Vec<usize>,
    pending: Vec<Lit>,
    why: Vec<Lit>,
    /// The clauses alone are unsatisfiable.
    bottom: bool,
}

impl Sat {
    pub(crate) fn new() -> Sat {
        let mut s = Sat {
            clauses: Vec::new(),
            watches: Vec::new(),
            vals: Vec::new(),
            levels: Vec::new(),
            reasons: Vec::new(),
            trail: Vec::new(),
            trail_lim: Vec::new(),
            qhead: 0,
            seen: Vec::new(),
            tested: Vec::new(),
            scopes: Vec::new(),
            pending: Vec::new(),
            why: Vec::new(),
            bottom: false,
        };
        s.ensure(1);
        s
    }

    fn ensure(&mut self, var: usize) {
        if var >= self.vals.len() {
            let n = var + 1;
            self.vals.resize(n, 0);
            self.levels.resize(n, 0);
            self.reasons.resize(n, NO_REASON);
            self.seen.resize(n, false);
            self.watches.resize(2 * n, Vec::new());
        }
    }

    /// `Value`: whether `m` is true in the current assignment (the model after a satisfiable
    /// `Solve`, the propagated assumptions after `Test` or `Untest`).
    pub(crate) fn value(&self, m: Lit) -> bool {
        self.lit_value(m) == 1
    }

    /// `Why`: the failed assumptions of the last unsatisfiable `Test`, `Untest` or `Solve`.
    pub(crate) fn why(&self) -> Vec<Lit> {
        self.why.clone()
    }

    fn lit_value(&self, m: Lit) -> i8 {
        let v = self.vals.get(m.var()).copied().unwrap_or(0);
        if m.is_pos() { v } else { -v }
    }

    fn level(&self) -> usize {
        self.trail_lim.len()
    }

    /// `Add` of one clause. Called outside test scopes (gini's `Add` undoes them).
    pub(crate) fn add_clause(&mut self, lits: &[Lit]) {
        self.reset();
        self.backtrack(0);
        let mut c: Vec<Lit> = Vec::with_capacity(lits.len());
        for &m in lits {
            self.ensure(m.var());
            if c.contains(&m.not()) || self.lit_value(m) == 1 {
                return; // a tautology, or true already
            }
            if !c.contains(&m) && self.lit_value(m) == 0 {
                c.push(m);
            }
        }
        match c.len() {
            0 => self.bottom = true,
            1 => {
                self.clauses.push(c.clone());
                self.assign(c[0], self.clauses.len() - 1);
                if self.propagate().is_some() {
                    self.bottom = true;
                }
            }
            _ => {
                self.watches[c[0].0 as usize].push(self.clauses.len());
                self.watches[c[1].0 as usize].push(self.clauses.len());
                self.clauses.push(c);
            }
        }
    }

    fn assign(&mut self, m: Lit, reason: usize) {
        let v = m.var();
        self.vals[v] = if m.is_pos() { 1 } else { -1 };
        self.levels[v] = self.level();
        self.reasons[v] = reason;
        self.trail.push(m);
    }

    fn new_level(&mut self) {
        self.trail_lim.push(self.trail.len());
    }

    fn backtrack(&mut self, level: usize) {
        if self.level() <= level {
            return;
        }
        let start = self.trail_lim[level];
        for i in start..self.trail.len() {
            let v = self.trail[i].var();
            self.vals[v] = 0;
            self.reasons[v] = NO_REASON;
        }
        self.trail.truncate(start);
        self.trail_lim.truncate(level);
        self.qhead = self.qhead.min(start);
    }

    /// Unit propagation with two watched literals; the conflicting clause if any. A clause's
    /// implied literal is its first.
    fn propagate(&mut self) -> Option<usize> {
        while self.qhead < self.trail.len() {
            let falsified = self.trail[self.qhead].not();
            self.qhead += 1;
            let mut ws = std::mem::take(&mut self.watches[falsified.0 as usize]);
            let (mut i, mut j) = (0, 0);
            let mut conflict = None;
            while i < ws.len() {
                let ci = ws[i];
                i += 1;
                if self.clauses[ci][0] == falsified {
                    self.clauses[ci].swap(0, 1);
                }
                let first = self.clauses[ci][0];
                if self.lit_value(first) == 1 {
                    ws[j] = ci;
                    j += 1;
                    continue;
                }
                let mut moved = false;
                for k in 2..self.clauses[ci].len() {
                    let m = self.clauses[ci][k];
                    if self.lit_value(m) != -1 {
                        self.clauses[ci].swap(1, k);
                        self.watches[m.0 as usize].push(ci);
                        moved = true;
                        break;
                    }
                }
                if moved {
                    continue;
                }
                ws[j] = ci;
                j += 1;
                if self.lit_value(first) == -1 {
                    conflict = Some(ci);
                    while i < ws.len() {
                        ws[j] = ws[i];
                        j += 1;
                        i += 1;
                    }
                } else {
                    self.assign(first, ci);
                }
            }
            ws.truncate(j);
            self.watches[falsified.0 as usize] = ws;
            if conflict.is_some() {
                self.qhead = self.trail.len();
                return conflict;
            }
        }
        None
    }

    /// First-UIP conflict analysis: the learned clause (asserting literal first) and the
    /// level to go back to.
    fn analyze(&mut self, mut conflict: usize) -> (Vec<Lit>, usize) {
        let mut learnt = vec![Lit::NULL];
        let mut counter = 0;
        let mut p = Lit::NULL;
        let mut idx = self.trail.len();
        loop {
            let skip = usize::from(p != Lit::NULL);
            for k in skip..self.clauses[conflict].len() {
                let q = self.clauses[conflict][k];
                let v = q.var();
                if !self.seen[v] && self.levels[v] > 0 {
                    self.seen[v] = true;
                    if self.levels[v] == self.level() {
                        counter += 1;
                    } else {
                        learnt.push(q);
                    }
                }
            }
            loop {
                idx -= 1;
                if self.seen[self.trail[idx].var()] {
                    break;
                }
            }
            p = self.trail[idx];
            self.seen[p.var()] = false;
            counter -= 1;
            if counter == 0 {
                break;
            }
            conflict = self.reasons[p.var()];
        }
        learnt[0] = p.not();
        for m in &learnt[1..] {
            self.seen[m.var()] = false;
        }
        let mut back = 0;
        if learnt.len() > 1 {
            let mut at = 1;
            for (k, m) in learnt.iter().enumerate().skip(1) {
                if self.levels[m.var()] > self.levels[learnt[at].var()] {
                    at = k;
                }
            }
            learnt.swap(1, at);
            back = self.levels[learnt[1].var()];
        }
        (learnt, back)
    }

    /// The assumptions that imply the negation of every literal in `falsified` (all false),
    /// following the reasons back to decisions (`finalRec`).
    fn core_of(&mut self, falsified: &[Lit]) -> Vec<Lit> {
        let mut out = Vec::new();
        for m in falsified {
            if self.levels[m.var()] > 0 {
                self.seen[m.var()] = true;
            }
        }
        let start = self.trail_lim.first().copied().unwrap_or(self.trail.len());
        for i in (start..self.trail.len()).rev() {
            let m = self.trail[i];
            let v = m.var();
            if !self.seen[v] {
                continue;
            }
            self.seen[v] = false;
            let r = self.reasons[v];
            if r == NO_REASON {
                out.push(m);
            } else {
                for k in 1..self.clauses[r].len() {
                    let q = self.clauses[r][k];
                    if self.levels[q.var()] > 0 {
                        self.seen[q.var()] = true;
                    }
                }
            }
        }
        out
    }

    /// Decides `assumptions[level..]`, each on a level of its own, with propagation; on a
    /// conflict the failed assumptions are in `why`.
    fn decide(&mut self, assumptions: &[Lit]) -> bool {
        loop {
            if let Some(c) = self.propagate() {
                let lits = self.clauses[c].clone();
                self.why = self.core_of(&lits);
                if self.level() == 0 {
                    self.bottom = true;
                }
                return false;
            }
            let Some(&p) = assumptions.get(self.level()) else {
                return true;
            };
            if !self.decide_one(p) {
                return false;
            }
        }
    }

    /// Decides the assumption `p` on a new level; false (the failed assumptions in `why`)
    /// when `p` is false already.
    fn decide_one(&mut self, p: Lit) -> bool {
        self.ensure(p.var());
        if self.lit_value(p) == -1 {
            let mut why = vec![p];
            why.extend(self.core_of(&[p]));
            self.why = why;
            return false;
        }
        self.new_level();
        if self.lit_value(p) == 0 {
            self.assign(p, NO_REASON);
        }
        true
    }

    /// Back to the tested assumptions (dropping a model or a deeper conflict).
    fn restore(&mut self) -> bool {
        if self.bottom {
            self.why.clear();
            return false;
        }
        self.backtrack(self.tested.len());
        let tested = std::mem::take(&mut self.tested);
        let ok = self.decide(&tested);
        self.tested = tested;
        ok
    }

    /// Drops every test scope and pending assumption.
    pub(crate) fn reset(&mut self) {
        while !self.scopes.is_empty() {
            self.untest();
        }
        self.pending.clear();
    }

    fn first_unassigned(&self) -> Option<usize> {
        (2..self.vals.len()).find(|&v| self.vals[v] == 0)
    }
}

impl Oracle for Sat {
    fn assume(&mut self, lits: &[Lit]) {
        for m in lits {
            self.ensure(m.var());
        }
        self.pending.extend_from_slice(lits);
    }

    fn test(&mut self) -> Outcome {
        let ok = self.restore();
        self.scopes.push(self.tested.len());
        self.tested.append(&mut self.pending);
        if !ok {
            return Outcome::Unsat;
        }
        let tested = std::mem::take(&mut self.tested);
        let ok = self.decide(&tested);
        self.tested = tested;
        if !ok {
            Outcome::Unsat
        } else if self.trail.len() == self.vals.len() - 1 {
            Outcome::Sat
        } else {
            Outcome::Unknown
        }
    }

    fn untest(&mut self) -> Outcome {
        let mark = self.scopes.pop().unwrap_or(0);
        self.tested.truncate(mark);
        if self.restore() {
            Outcome::Unknown
        } else {
            Outcome::Unsat
        }
    }

    fn solve(&mut self) -> Outcome {
        let mut assumptions = self.tested.clone();
        assumptions.append(&mut self.pending);
        if self.bottom {
            self.why.clear();
            return Outcome::Unsat;
        }
        self.backtrack(self.tested.len());
        loop {
            if let Some(c) = self.propagate() {
                if self.level() == 0 {
                    self.bottom = true;
                    self.why.clear();
                    return Outcome::Unsat;
                }
                let (learnt, back) = self.analyze(c);
                self.backtrack(back);
                let ci = self.clauses.len();
                if learnt.len() > 1 {
                    self.watches[learnt[0].0 as usize].push(ci);
                    self.watches[learnt[1].0 as usize].push(ci);
                }
                let unit = learnt[0];
                self.clauses.push(learnt);
                self.assign(unit, ci);
                continue;
            }
            if let Some(&p) = assumptions.get(self.level()) {
                if !self.decide_one(p) {
                    return Outcome::Unsat;
                }
                continue;
            }
            match self.first_unassigned() {
                None => return Outcome::Sat,
                Some(v) => {
                    self.new_level();
                    self.assign(Lit::pos(v).not(), NO_REASON);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(v: usize, pos: bool) -> Lit {
        if pos { Lit::pos(v) } else { Lit::pos(v).not() }
    }

    /// Every assignment of `n` variables (2..n+2) against the clauses.
    fn brute(n: usize, clauses: &[Vec<Lit>], assumed: &[Lit]) -> bool {
        (0..1u32 << n).any(|bits| {
            let val = |m: Lit| ((bits >> (m.var() - 2)) & 1 == 1) == m.is_pos();
            clauses.iter().all(|c| c.iter().any(|&m| val(m))) && assumed.iter().all(|&m| val(m))
        })
    }

    proptest::proptest! {
        /// Satisfiable answers come with a model; unsatisfiable ones with failed assumptions
        /// that are unsatisfiable themselves.
        #[test]
        fn resolve_sat_agrees_with_brute_force(
            clauses in proptest::collection::vec(
                proptest::collection::vec((0usize..6, proptest::bool::ANY), 1..4), 0..24),
            assumed in proptest::collection::vec((0usize..6, proptest::bool::ANY), 0..5),
            tested in proptest::collection::vec((0usize..6, proptest::bool::ANY), 0..3),
        ) {
            let clauses: Vec<Vec<Lit>> = clauses.iter()
                .map(|c| c.iter().map(|&(v, p)| l(v + 2, p)).collect()).collect();
            let assumed: Vec<Lit> = assumed.iter().map(|&(v, p)| l(v + 2, p)).collect();
            let tested: Vec<Lit> = tested.iter().map(|&(v, p)| l(v + 2, p)).collect();
            let mut s = Sat::new();
            s.add_clause(&[Lit::TRUE]);
            for c in &clauses {
                s.add_clause(c);
            }
            s.assume(&tested);
            let t = s.test();
            let all: Vec<Lit> = tested.iter().chain(&assumed).copied().collect();
            if t == Outcome::Unsat {
                proptest::prop_assert!(!brute(6, &clauses, &tested));
                let why = s.why();
                proptest::prop_assert!(why.iter().all(|m| tested.contains(m)));
                proptest::prop_assert!(!brute(6, &clauses, &why));
            } else {
                s.assume(&assumed);
                let r = s.solve();
                proptest::prop_assert_eq!(r == Outcome::Sat, brute(6, &clauses, &all));
                if r == Outcome::Sat {
                    for c in &clauses {
                        proptest::prop_assert!(c.iter().any(|&m| s.value(m)));
                    }
                    for m in &all {
                        proptest::prop_assert!(s.value(*m));
                    }
                } else {
                    let why = s.why();
                    proptest::prop_assert!(why.iter().all(|m| all.contains(m)));
                    proptest::prop_assert!(!brute(6, &clauses, &why));
                }
                // Solve forgot the pending assumptions but kept the tested ones.
                proptest::prop_assert_eq!(s.solve() == Outcome::Sat, brute(6, &clauses, &tested));
                // gini's Untest (inter/s.go): -1 when the problem left is known UNSAT (a
                // clause learned without assumptions proves it), else 0, unknown.
                match s.untest() {
                    Outcome::Unsat => proptest::prop_assert!(!brute(6, &clauses, &[])),
                    u => proptest::prop_assert_eq!(u, Outcome::Unknown),
                }
                proptest::prop_assert_eq!(s.solve() == Outcome::Sat, brute(6, &clauses, &[]));
            }
        }
    }
}
