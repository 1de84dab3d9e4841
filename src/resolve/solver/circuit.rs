//! The And-inverter circuit the constraints are written in: a port of the parts of
//! go-air/gini's `logic/c.go` (`C.Lit`, `C.And` with its structural hashing, `C.Or`,
//! `C.ToCnf`/`C.CnfSince`) and `logic/card.go` (`CardSort`, the odd-even merge sorting
//! network behind `AtMost` and the cardinality step) that OLM's solver uses.
//!
//! The circuit decides which constraints share a literal (gini returns the same node for the
//! same gate, so two constraints that build the same gate are one assumption, and OLM's
//! `litMapping.constraints` keeps the later one), and gives the clauses of the SAT solver.

use std::collections::HashMap;

use super::lit::Lit;

/// `logic.C`: node `i` is variable `i`; an input has no fan-ins, a gate is the And of two
/// literals. Node 0 is unused and node 1 is the constant.
pub(crate) struct Circuit {
    nodes: Vec<(Lit, Lit)>,
    strash: HashMap<(Lit, Lit), usize>,
    /// Nodes already written as clauses (`CnfSince`'s marks).
    emitted: usize,
}

impl Circuit {
    /// `logic.NewCCap`.
    pub(crate) fn new(capacity: usize) -> Circuit {
        let mut nodes = Vec::with_capacity(capacity + 2);
        nodes.push((Lit::NULL, Lit::NULL));
        nodes.push((Lit::NULL, Lit::NULL));
        Circuit {
            nodes,
            strash: HashMap::new(),
            emitted: 0,
        }
    }

    /// `C.Lit`: a fresh input.
    pub(crate) fn lit(&mut self) -> Lit {
        self.nodes.push((Lit::NULL, Lit::NULL));
        Lit::pos(self.nodes.len() - 1)
    }

    /// `C.And`, with gini's simplifications (`a ∧ a`, `a ∧ ¬a`, constants) and the same
    /// node for the same ordered pair of fan-ins.
    pub(crate) fn and(&mut self, a: Lit, b: Lit) -> Lit {
        if a == b {
            return a;
        }
        if a == b.not() {
            return Lit::FALSE;
        }
        let (a, b) = if a > b { (b, a) } else { (a, b) };
        if a == Lit::FALSE {
            return Lit::FALSE;
        }
        if a == Lit::TRUE {
            return b;
        }
        if let Some(&node) = self.strash.get(&(a, b)) {
            return Lit::pos(node);
        }
        self.nodes.push((a, b));
        let node = self.nodes.len() - 1;
        self.strash.insert((a, b), node);
        Lit::pos(node)
    }

    /// `C.Or`: `¬(¬a ∧ ¬b)`.
    pub(crate) fn or(&mut self, a: Lit, b: Lit) -> Lit {
        self.and(a.not(), b.not()).not()
    }

    /// `C.CardSort`: a sorting network over `ms` (`logic.NewCardSort`).
    pub(crate) fn card_sort(&mut self, ms: &[Lit]) -> CardSort {
        let mut p = 0u32;
        while (1usize << p) < ms.len() {
            p += 1;
        }
        let mut sorted = vec![Lit::TRUE; 1 << p];
        sorted[..ms.len()].copy_from_slice(ms);
        let mut cs = CardSort {
            n: ms.len(),
            ms: sorted,
        };
        let len = cs.ms.len();
        cs.sort(self, 0, len);
        cs
    }

    /// `C.ToCnf` then `C.CnfSince`: the clauses of the nodes not written yet (the constant's
    /// unit clause first). Gini's `CnfSince` writes only the nodes its roots reach; writing
    /// every new gate adds definitions nothing assumes, which changes no answer.
    pub(crate) fn cnf_since(&mut self, out: &mut Vec<Vec<Lit>>) {
        if self.emitted == 0 {
            out.push(vec![Lit::TRUE]);
            self.emitted = 2;
        }
        for i in self.emitted..self.nodes.len() {
            let (a, b) = self.nodes[i];
            if a == Lit::NULL {
                continue;
            }
            // `addAnd`: g → a, g → b, a ∧ b → g.
            let g = Lit::pos(i);
            out.push(vec![g.not(), a]);
            out.push(vec![g.not(), b]);
            out.push(vec![g, a.not(), b.not()]);
        }
        self.emitted = self.nodes.len();
    }
}

/// `logic.CardSort`: the inputs sorted (false first), padded with true to a power of two.
pub(crate) struct CardSort {
    n: usize,
    ms: Vec<Lit>,
}

impl CardSort {
    /// `CardSort.N`: the number of literals counted.
    pub(crate) fn n(&self) -> usize {
        self.n
    }

    /// `CardSort.Leq`: true iff at most `b` of the literals are true. (Gini's `Leq` also
    /// takes a negative `b`, giving false; OLM never asks for one and `AtMost` takes a
    /// `usize` here.)
    pub(crate) fn leq(&self, b: usize) -> Lit {
        if b >= self.n {
            return Lit::TRUE;
        }
        self.ms[(self.n - 1) - b].not()
    }

    fn sort(&mut self, c: &mut Circuit, l: usize, h: usize) {
        if h - l <= 1 {
            return;
        }
        let m = l + (h - l) / 2;
        self.sort(c, l, m);
        self.sort(c, m, h);
        self.merge(c, l, h, 1);
    }

    /// Odd-even merge (`CardSort.merge`).
    fn merge(&mut self, c: &mut Circuit, l: usize, h: usize, s: usize) {
        if h <= l + s {
            return;
        }
        let ss = 2 * s;
        if ss >= h - l {
            self.cas(c, l, l + s);
            return;
        }
        self.merge(c, l, h, ss);
        self.merge(c, l + s, h, ss);
        let mut i = l + s;
        while i < h - s {
            self.cas(c, i, i + s);
            i += ss;
        }
    }

    /// Compare and swap: the And low, the Or high (`CardSort.cas`).
    fn cas(&mut self, c: &mut Circuit, i: usize, j: usize) {
        let (mi, mj) = (self.ms[i], self.ms[j]);
        self.ms[i] = c.and(mi, mj);
        self.ms[j] = c.or(mi, mj);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evaluates `m` under an assignment of the inputs (by variable).
    fn eval(c: &Circuit, m: Lit, inputs: &HashMap<usize, bool>) -> bool {
        let v = m.var();
        let value = if v == 1 {
            true
        } else {
            let (a, b) = c.nodes[v];
            if a == Lit::NULL {
                inputs[&v]
            } else {
                eval(c, a, inputs) && eval(c, b, inputs)
            }
        };
        value == m.is_pos()
    }

    #[test]
    fn resolve_circuit_same_gate_same_literal() {
        let mut c = Circuit::new(4);
        let (a, b) = (c.lit(), c.lit());
        assert_eq!(c.or(a.not(), b.not()), c.or(b.not(), a.not()));
        assert_eq!(c.or(a, a.not()), Lit::TRUE);
        assert_eq!(c.or(a, a), a);
        assert_eq!(c.and(Lit::TRUE, a), a);
    }

    #[test]
    fn resolve_circuit_card_sort_counts() {
        for n in 0..6usize {
            let mut c = Circuit::new(8);
            let ms: Vec<Lit> = (0..n).map(|_| c.lit()).collect();
            let cs = c.card_sort(&ms);
            for bits in 0..(1u32 << n) {
                let inputs: HashMap<usize, bool> = ms
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (m.var(), bits & (1 << i) != 0))
                    .collect();
                let ones = bits.count_ones() as usize;
                for b in 0..=n {
                    assert_eq!(
                        eval(&c, cs.leq(b), &inputs),
                        ones <= b,
                        "n={n} bits={bits:b} b={b}"
                    );
                }
            }
        }
    }
}
