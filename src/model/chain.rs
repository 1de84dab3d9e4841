//! Channel heads and the replaces chain, as operator-registry's `alpha/model` defines them
//! (tightened in operator-framework/operator-registry#1750):
//! - the head is the entry no other entry's `replaces` or `skips` names (`skipRange` and
//!   versions play no part);
//! - from the head, `replaces` is followed until it leaves the channel or reaches a skipped
//!   entry (OLM v0 drops skipped bundles from the chain, so edges from them are never followed);
//! - entries neither on the chain nor skipped are stranded; revisiting an entry is a cycle.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::fbc::decl::{Channel, ChannelEntry};

/// The outcome of the head rule for one channel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head<'a> {
    /// Exactly one head.
    One(&'a str),
    /// No entry qualifies (every entry is replaced or skipped: a cycle covers them all).
    None,
    /// Several heads, sorted by name.
    Many(Vec<&'a str>),
}

/// Analysis of one channel's entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainReport<'a> {
    /// The head rule's outcome.
    pub head: Head<'a>,
    /// The replaces chain from the head (head first); empty without a single head.
    pub chain: Vec<&'a str>,
    /// A cycle met on the walk: the path from the first repeated entry back to itself.
    pub cycle: Option<Vec<&'a str>>,
    /// Entries neither on the chain nor skipped, sorted; empty without a single head.
    pub stranded: Vec<&'a str>,
}

/// The heads of `entries` by opm's rule, sorted.
pub fn heads<'a>(entries: &'a [ChannelEntry]) -> Head<'a> {
    let mut incoming: HashSet<&str> = HashSet::new();
    for e in entries {
        if !e.replaces.is_empty() {
            incoming.insert(&e.replaces);
        }
        for s in &e.skips {
            incoming.insert(s);
        }
    }
    let mut hs: Vec<&str> = entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| !incoming.contains(n))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    match hs.len() {
        0 => Head::None,
        1 => Head::One(hs.remove(0)),
        _ => Head::Many(hs),
    }
}

/// Runs the head rule and walks the replaces chain of `channel`.
pub fn analyze(channel: &Channel) -> ChainReport<'_> {
    analyze_entries(&channel.entries)
}

/// [`analyze`] over a bare entry list.
pub fn analyze_entries(entries: &[ChannelEntry]) -> ChainReport<'_> {
    let head = heads(entries);
    let Head::One(h) = head else {
        return ChainReport {
            head,
            chain: Vec::new(),
            cycle: None,
            stranded: Vec::new(),
        };
    };
    let by_name: HashMap<&str, &ChannelEntry> =
        entries.iter().map(|e| (e.name.as_str(), e)).collect();
    let skipped: HashSet<&str> = entries
        .iter()
        .flat_map(|e| e.skips.iter().map(String::as_str))
        .collect();
    let mut chain = vec![h];
    let mut on_chain: HashMap<&str, usize> = HashMap::from([(h, 0)]);
    let mut cycle = None;
    let mut cur = h;
    loop {
        let next = by_name[cur].replaces.as_str();
        if next.is_empty() || !by_name.contains_key(next) || skipped.contains(next) {
            break;
        }
        if let Some(&at) = on_chain.get(next) {
            let mut c: Vec<&str> = chain[at..].to_vec();
            c.push(next);
            cycle = Some(c);
            break;
        }
        on_chain.insert(next, chain.len());
        chain.push(next);
        cur = next;
    }
    let stranded: Vec<&str> = entries
        .iter()
        .map(|e| e.name.as_str())
        .filter(|n| !on_chain.contains_key(n) && !skipped.contains(n))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    ChainReport {
        head,
        chain,
        cycle,
        stranded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fbc::node::Pos;

    fn e(name: &str, replaces: &str, skips: &[&str]) -> ChannelEntry {
        ChannelEntry {
            name: name.into(),
            replaces: replaces.into(),
            skips: skips.iter().map(|s| s.to_string()).collect(),
            skip_range: String::new(),
            pos: Pos::default(),
            skip_range_pos: Pos::default(),
        }
    }

    #[test]
    fn linear_chain_with_dangling_tail() {
        let es = [e("v1", "v0", &[]), e("v2", "v1", &[]), e("v3", "v2", &[])];
        let r = analyze_entries(&es);
        assert_eq!(r.head, Head::One("v3"));
        assert_eq!(r.chain, vec!["v3", "v2", "v1"]);
        assert!(r.stranded.is_empty() && r.cycle.is_none());
    }

    #[test]
    fn skipped_entry_stops_the_walk_and_strands_below() {
        // TestValidReplacesChain "Stranded": v3 skips v2; v2 replaces v1 => v1 stranded.
        let es = [e("v1", "", &[]), e("v2", "v1", &[]), e("v3", "", &["v2"])];
        assert_eq!(analyze_entries(&es).stranded, vec!["v1"]);
        // "SkippedReplacesStranded": v3 replaces and skips v2; v2 replaces v1 => v1 stranded.
        let es = [e("v1", "", &[]), e("v2", "v1", &[]), e("v3", "v2", &["v2"])];
        let r = analyze_entries(&es);
        assert_eq!(r.chain, vec!["v3"]);
        assert_eq!(r.stranded, vec!["v1"]);
    }

    #[test]
    fn heads_none_and_many() {
        let es = [e("a", "b", &[]), e("b", "a", &[])];
        assert_eq!(analyze_entries(&es).head, Head::None);
        let es = [e("a", "", &[]), e("c", "", &[]), e("b", "", &[])];
        assert_eq!(heads(&es), Head::Many(vec!["a", "b", "c"]));
    }

    #[test]
    fn cycle_below_the_head() {
        let es = [e("h", "a", &[]), e("a", "b", &[]), e("b", "a", &[])];
        let r = analyze_entries(&es);
        assert_eq!(r.cycle, Some(vec!["a", "b", "a"]));
    }

    #[test]
    fn self_replace_is_a_cycle_or_no_head() {
        let es = [e("a", "a", &[])];
        assert_eq!(analyze_entries(&es).head, Head::None);
        let es = [e("h", "a", &[]), e("a", "a", &[])];
        assert_eq!(analyze_entries(&es).cycle, Some(vec!["a", "a"]));
    }
}
