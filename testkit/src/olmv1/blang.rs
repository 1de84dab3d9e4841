//! The double's own reading of a `skipRange`, as operator-controller reads one
//! (`catalogmetadata/filter/successors.go :: legacySuccessor`: `bsemver.ParseRange`, a range
//! that does not parse matches nothing), written from github.com/blang/semver/v4 `range.go ::
//! ParseRange, splitAndTrim, expandWildcardVersion, parseComparator`: `||` between
//! alternatives, space-separated comparisons all holding, operators `<`, `<=`, `>`, `>=`, `=`,
//! `==`, `!`, `!=` or none (equal), `x` wildcards expanded, versions strict (`Parse`), compared
//! without build metadata.

use std::cmp::Ordering;

use semver::Version;

/// `splitAndTrim`: the fields of an alternative, an operator standing alone joined to the
/// version after it (`> 1.0.0`).
fn fields(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut pending = String::new();
    for f in s.split_whitespace() {
        if f.chars().all(|c| "<>=!".contains(c)) {
            pending.push_str(f);
            continue;
        }
        out.push(format!("{pending}{f}"));
        pending.clear();
    }
    if !pending.is_empty() {
        out.push(pending);
    }
    out
}

/// `splitComparatorVersion`.
fn split_op(s: &str) -> (&str, &str) {
    let i = s.find(|c: char| !"<>=!".contains(c)).unwrap_or(s.len());
    (&s[..i], &s[i..])
}

/// `expandWildcardVersion` of one comparison: `>= 1.2.x` is `>= 1.2.0`, `<= 1.x` is `< 2.0.0`,
/// `1.2.x` is `>= 1.2.0 < 1.3.0`, and so on.
fn expand(f: &str) -> Option<Vec<String>> {
    if !f.contains('x') {
        return Some(vec![f.to_string()]);
    }
    let (op, v) = split_op(f);
    let parts: Vec<&str> = v.split('.').collect();
    // The wildcard's place: the minor (`1.x`) or the patch (`1.2.x`).
    let (flat, bumped) = match parts.as_slice() {
        [maj, "x"] | [maj, "x", "x"] => {
            let m: u64 = maj.parse().ok()?;
            (format!("{m}.0.0"), format!("{}.0.0", m + 1))
        }
        [maj, min, "x"] => {
            let (m, n): (u64, u64) = (maj.parse().ok()?, min.parse().ok()?);
            (format!("{m}.{n}.0"), format!("{m}.{}.0", n + 1))
        }
        _ => return None,
    };
    Some(match op {
        ">" => vec![format!(">={bumped}")],
        ">=" => vec![format!(">={flat}")],
        "<" => vec![format!("<{flat}")],
        "<=" => vec![format!("<{bumped}")],
        "" | "=" | "==" => vec![format!(">={flat}"), format!("<{bumped}")],
        "!=" | "!" => vec![format!("<{flat}"), format!(">={bumped}")],
        _ => return None,
    })
}

/// One comparison, `parseComparator` then `Parse`.
fn comparison(f: &str) -> Option<(String, Version)> {
    let (op, v) = split_op(f);
    let op = match op {
        "" | "=" | "==" => "=",
        "!" | "!=" => "!=",
        "<" | "<=" | ">" | ">=" => op,
        _ => return None,
    };
    Some((op.to_string(), Version::parse(v).ok()?))
}

/// A parsed range: alternatives of comparisons.
pub struct Range(Vec<Vec<(String, Version)>>);

impl Range {
    /// `ParseRange`; `None` where it returns an error.
    pub fn parse(s: &str) -> Option<Range> {
        let mut alts = Vec::new();
        for alt in s.split("||") {
            let mut all = Vec::new();
            let fs = fields(alt);
            if fs.is_empty() {
                return None;
            }
            for f in fs {
                for e in expand(&f)? {
                    all.push(comparison(&e)?);
                }
            }
            alts.push(all);
        }
        Some(Range(alts))
    }

    /// Whether `v` is in the range.
    pub fn contains(&self, v: &Version) -> bool {
        self.0.iter().any(|all| {
            all.iter().all(|(op, w)| {
                let c = v.cmp_precedence(w);
                match op.as_str() {
                    "=" => c == Ordering::Equal,
                    "!=" => c != Ordering::Equal,
                    "<" => c == Ordering::Less,
                    "<=" => c != Ordering::Greater,
                    ">" => c == Ordering::Greater,
                    _ => c != Ordering::Less,
                }
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Version {
        Version::parse(s).expect("version")
    }

    /// The cases of blang's range_test.go `TestParseRange` and `TestExpandWildcardVersion`.
    #[test]
    fn ranges_read_as_blang_reads_them() {
        let yes = |r: &str, x: &str| Range::parse(r).expect(r).contains(&v(x));
        assert!(yes(">=1.0.0 <2.0.0", "1.5.0"));
        assert!(!yes(">=1.0.0 <2.0.0", "2.0.0"));
        assert!(yes("> 1.0.0", "1.0.1"));
        assert!(yes("<1.0.0 || >=2.0.0", "2.1.0"));
        assert!(!yes("<1.0.0 || >=2.0.0", "1.1.0"));
        assert!(yes("1.2.3", "1.2.3"));
        assert!(yes("!1.2.3", "1.2.4"));
        assert!(yes(">=1.2.x", "1.2.0"));
        assert!(yes("<=1.x", "1.9.9") && !yes("<=1.x", "2.0.0"));
        assert!(yes(">1.x", "2.0.0") && !yes(">1.x", "1.9.0"));
        assert!(yes("1.2.x", "1.2.9") && !yes("1.2.x", "1.3.0"));
        // Build metadata is not compared; a pre-release is below its release.
        assert!(yes("=1.2.3", "1.2.3+build"));
        assert!(yes("<1.2.3", "1.2.3-rc.1"));
        for bad in ["", ">=1.0", "v1.0.0", ">=a", "~1.2.3", ">=1.0.0 <"] {
            assert!(Range::parse(bad).is_none(), "{bad:?}");
        }
    }
}
