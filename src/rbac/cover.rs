//! Whether rules cover a rule, decided on the rules' lists rather than on their breakdown.
//! Kubernetes asks it by breaking the rule down (`policy_comparator.go :: Covers`,
//! `BreakdownRule`): one rule per group, resource, verb and name, which for a rule of 100 of
//! each and 10 verbs is ten million rules, from a 4 KB CSV.
//!
//! A broken-down rule holds one value of each list, and `ruleCovers` accepts it when each of
//! its values passes the owner's test for that list. So the values of a list fall into classes
//! (the values the same owners accept), and the rule is covered exactly when every combination
//! of one class per list leaves some owner that accepts all of them: a walk over the classes
//! that carries the owners still possible and stops at the first combination without one. The
//! walk is bounded ([`MAX_STEPS`]); `rule::covers` (the breakdown, as Kubernetes does it) is the
//! reference the property test holds this to.

use std::collections::{BTreeSet, HashSet};

use super::rule::Rule;

/// Work one question may do, a step per combination of classes visited and a step per 64
/// owners it carries (what the walk remembers): far above what real rules need (a rule's lists
/// against the owners that touch it make a handful of classes each), and a bound on a crafted
/// set of owners that would make the classes multiply, in time and in the memory of the walk
/// (at most this many remembered sets: about 30 MB).
pub const MAX_STEPS: u64 = 1 << 19;

/// The walk over the classes went past [`MAX_STEPS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooManySteps;

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

fn verb_ok(o: &Rule, v: &str) -> bool {
    has(&o.verbs, "*") || has(&o.verbs, v)
}

fn group_ok(o: &Rule, g: &str) -> bool {
    has(&o.api_groups, "*") || has(&o.api_groups, g)
}

/// `resourceCoversAll` for one resource: `*`, the resource, or `*/<subresource>`.
fn resource_ok(o: &Rule, r: &str) -> bool {
    has(&o.resources, "*")
        || has(&o.resources, r)
        || r.split_once('/').is_some_and(|(_, sub)| {
            o.resources
                .iter()
                .any(|x| x.strip_prefix("*/") == Some(sub))
        })
}

/// `ruleCovers`' names: a broken-down rule without a name is covered only by an owner without
/// names; with one, by an owner without names or with that name.
fn name_ok(o: &Rule, n: Option<&str>) -> bool {
    o.resource_names.is_empty() || n.is_some_and(|n| has(&o.resource_names, n))
}

/// `nonResourceURLCovers` for one URL.
fn url_ok(o: &Rule, u: &str) -> bool {
    o.non_resource_urls
        .iter()
        .any(|x| x == u || (x.ends_with('*') && u.starts_with(x.trim_end_matches('*'))))
}

/// Whether `owner` covers at least one rule of `sub`'s breakdown.
pub fn touches(owner: &Rule, sub: &Rule) -> bool {
    let any_verb = sub.verbs.iter().any(|v| verb_ok(owner, v));
    if !any_verb {
        return false;
    }
    let names = if sub.resource_names.is_empty() {
        owner.resource_names.is_empty()
    } else {
        sub.resource_names.iter().any(|n| name_ok(owner, Some(n)))
    };
    let resource_part = names
        && sub.api_groups.iter().any(|g| group_ok(owner, g))
        && sub.resources.iter().any(|r| resource_ok(owner, r));
    resource_part
        || (owner.resource_names.is_empty()
            && sub.non_resource_urls.iter().any(|u| url_ok(owner, u)))
}

/// Whether `owner` alone covers every rule of `sub`'s breakdown: each value of each of `sub`'s
/// lists passes `owner`'s test for that list (a broken-down rule is one value of each).
pub fn covers_whole(owner: &Rule, sub: &Rule) -> bool {
    // Without verbs (or without groups or resources, and URLs) there is nothing to cover.
    let verbs = sub.verbs.iter().all(|v| verb_ok(owner, v));
    let resource_part = sub.api_groups.is_empty()
        || sub.resources.is_empty()
        || sub.verbs.is_empty()
        || (verbs
            && sub.api_groups.iter().all(|g| group_ok(owner, g))
            && sub.resources.iter().all(|r| resource_ok(owner, r))
            && if sub.resource_names.is_empty() {
                name_ok(owner, None)
            } else {
                sub.resource_names.iter().all(|n| name_ok(owner, Some(n)))
            });
    let url_part = sub.non_resource_urls.is_empty()
        || sub.verbs.is_empty()
        || (verbs
            && owner.resource_names.is_empty()
            && sub.non_resource_urls.iter().all(|u| url_ok(owner, u)));
    resource_part && url_part
}

/// A set of owners, one bit each.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>);

impl Bits {
    fn of(owners: &[&Rule], test: impl Fn(&Rule) -> bool) -> Bits {
        let mut b = vec![0u64; owners.len().div_ceil(64)];
        for (i, o) in owners.iter().enumerate() {
            if test(o) {
                b[i / 64] |= 1 << (i % 64);
            }
        }
        Bits(b)
    }

    fn full(n: usize) -> Bits {
        let mut b = vec![u64::MAX; n / 64];
        if !n.is_multiple_of(64) {
            b.push((1 << (n % 64)) - 1);
        }
        Bits(b)
    }

    fn and(&self, other: &Bits) -> Bits {
        Bits(self.0.iter().zip(&other.0).map(|(a, b)| a & b).collect())
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

/// The distinct owner sets of `values` under `test`: one class each.
fn classes<'v>(
    values: impl IntoIterator<Item = &'v str>,
    owners: &[&Rule],
    test: impl Fn(&Rule, &str) -> bool,
) -> Vec<Bits> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for v in values {
        if seen.insert(v) {
            let b = Bits::of(owners, |o| test(o, v));
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    out
}

/// Whether every combination of one class per list leaves an owner (`dims` in order, the
/// owners still possible in `alive`).
fn every_combination(
    dims: &[Vec<Bits>],
    level: usize,
    alive: &Bits,
    seen: &mut HashSet<(usize, Bits)>,
    steps: &mut u64,
) -> Result<bool, TooManySteps> {
    if level == dims.len() {
        return Ok(!alive.is_empty());
    }
    if !seen.insert((level, alive.clone())) {
        // Walked from here before, and it held (a failure ends the walk).
        return Ok(true);
    }
    for class in &dims[level] {
        *steps += 1 + alive.0.len() as u64;
        if *steps > MAX_STEPS {
            return Err(TooManySteps);
        }
        let next = alive.and(class);
        if next.is_empty() || !every_combination(dims, level + 1, &next, seen, steps)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn walk(mut dims: Vec<Vec<Bits>>, n: usize) -> Result<bool, TooManySteps> {
    // An empty list breaks down into nothing: nothing to cover.
    if dims.iter().any(Vec::is_empty) {
        return Ok(true);
    }
    // Fewest classes first: more of the walk is shared.
    dims.sort_by_key(Vec::len);
    every_combination(&dims, 0, &Bits::full(n), &mut HashSet::new(), &mut 0)
}

/// Whether `owners` together cover every rule of `sub`'s breakdown (`Covers(owners, [sub])`),
/// without making the breakdown.
pub fn covered(owners: &[&Rule], sub: &Rule) -> Result<bool, TooManySteps> {
    // Only owners that cover some of it can help.
    let owners: Vec<&Rule> = owners.iter().copied().filter(|o| touches(o, sub)).collect();
    let verbs = |owners: &[&Rule]| classes(sub.verbs.iter().map(String::as_str), owners, verb_ok);
    let resource_part = if sub.api_groups.is_empty() || sub.resources.is_empty() {
        true
    } else {
        let names = if sub.resource_names.is_empty() {
            vec![Bits::of(&owners, |o| name_ok(o, None))]
        } else {
            classes(
                sub.resource_names.iter().map(String::as_str),
                &owners,
                |o, n| name_ok(o, Some(n)),
            )
        };
        let dims = vec![
            classes(sub.api_groups.iter().map(String::as_str), &owners, group_ok),
            classes(
                sub.resources.iter().map(String::as_str),
                &owners,
                resource_ok,
            ),
            verbs(&owners),
            names,
        ];
        walk(dims, owners.len())?
    };
    if !resource_part {
        return Ok(false);
    }
    if sub.non_resource_urls.is_empty() {
        return Ok(true);
    }
    // A broken-down URL rule has no names: only owners without names cover it.
    let owners: Vec<&Rule> = owners
        .into_iter()
        .filter(|o| o.resource_names.is_empty())
        .collect();
    let dims = vec![
        classes(
            sub.non_resource_urls.iter().map(String::as_str),
            &owners,
            url_ok,
        ),
        verbs(&owners),
    ];
    walk(dims, owners.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rbac::rule::{breakdown, covers, rule_covers};
    use proptest::prelude::*;

    fn list(pool: &'static [&'static str]) -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(prop::sample::select(pool), 0..4)
            .prop_map(|v| v.into_iter().map(str::to_string).collect())
    }

    fn rule() -> impl Strategy<Value = Rule> {
        (
            list(&["", "apps", "*", "x.io"]),
            list(&["pods", "pods/log", "*/log", "*", "deployments", "pods/*"]),
            list(&["a", "b", "c"]),
            prop_oneof![3 => Just(Vec::new()), 1 => list(&["/api", "/api/*", "*", "/healthz"])],
            list(&["get", "list", "*", "bind"]),
        )
            .prop_map(
                |(api_groups, resources, resource_names, non_resource_urls, verbs)| Rule {
                    api_groups,
                    resources,
                    resource_names,
                    non_resource_urls,
                    verbs,
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

        /// The same answers as Kubernetes' breakdown, on small rules whose lists overlap.
        #[test]
        fn covered_is_covers_on_the_breakdown(owners in prop::collection::vec(rule(), 0..5), sub in rule()) {
            let refs: Vec<&Rule> = owners.iter().collect();
            prop_assert_eq!(covered(&refs, &sub).unwrap(), covers(&owners, std::slice::from_ref(&sub)).0);
            for o in &owners {
                prop_assert_eq!(touches(o, &sub), breakdown(&sub).iter().any(|a| rule_covers(o, a)));
                prop_assert_eq!(covers_whole(o, &sub), breakdown(&sub).iter().all(|a| rule_covers(o, a)));
            }
        }
    }

    #[test]
    fn a_huge_rule_is_answered_from_its_lists() {
        let n = 100;
        let l = |p: &str| (0..n).map(|i| format!("{p}{i}")).collect::<Vec<_>>();
        let sub = Rule {
            api_groups: l("g"),
            resources: l("r"),
            resource_names: l("n"),
            verbs: l("v")[..10].to_vec(),
            ..Rule::default()
        };
        // Ten million broken-down rules; itself, a wildcard, and half of it.
        assert!(covered(&[&sub], &sub).unwrap());
        let star = Rule::resource(&["*"], &["*"], &["*"]);
        assert!(covered(&[&star], &sub).unwrap());
        let mut half = sub.clone();
        half.resource_names.truncate(50);
        assert!(!covered(&[&half], &sub).unwrap());
        let mut other = sub.clone();
        other.resource_names = l("n")[50..].to_vec();
        assert!(covered(&[&half, &other], &sub).unwrap());
        assert!(touches(&half, &sub));
    }
}
