//! Version ranges in the grammar of `github.com/blang/semver/v4` `ParseRange` (v4.0.0), which
//! OLM uses for the `olm.skipRange` of bundles in File-Based Catalogs.
//!
//! The grammar, in short:
//!
//! * a comparator is an operator followed by a strict semver version: `<`, `<=`, `>`, `>=`,
//!   `=`/`==`/no operator (equal), `!`/`!=` (not equal);
//! * comparators separated by spaces are ANDed, `||` ORs those AND-lists (no brackets);
//! * a lowercase `x` as the last minor or patch component is a wildcard (`1.x`, `1.2.x`) that
//!   is rewritten into plain comparators before parsing (`>1.x` becomes `>=2.0.0`, `1.2.x`
//!   becomes `>=1.2.0 <1.3.0`, ...).
//!
//! This is a re-implementation of blang's parser step for step, quirks included, because a
//! linter must accept and reject exactly what OLM does:
//!
//! * the text is split on ASCII spaces, except that a space after `>`, `<` or `=` does not
//!   split (so `>= 1.0.0` is one comparator); tokens of a single byte are silently dropped
//!   (so `! 1.0.0` means `1.0.0`, and `*` or `x` alone leaves nothing, which blang reports as
//!   `Last element in range is '||'`);
//! * any token containing an `x` anywhere goes through the wildcard rewriting, so a
//!   pre-release such as `1.0.0-x` or `>1.0.0-fox` is rejected (blang issue #75), an unknown
//!   operator in front of a wildcard is dropped (`^1.2.x` means `=1.2.0`), `1.x.x` is taken as
//!   a patch wildcard (`>=1.0.0 <1.1.0`) and `!=1.x` ANDs `<1.0.0 >=2.0.0`, which nothing
//!   satisfies;
//! * versions are compared by semver precedence, ignoring build metadata.
//!
//! Error messages reproduce blang's (`Could not parse Range ">v0.1.0": Could not parse
//! comparator ">v" in ">v0.1.0"`), with Go's `%q` quoting. One deliberate difference: an empty
//! alternative between two `||` (`1.0.0 || || 2.0.0`) is accepted by blang v4.0.0 but makes the
//! resulting range call a nil function (a panic in OLM) for every version not matched by an
//! earlier alternative; it is rejected here with blang's later message `empty range`.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use semver::{BuildMetadata, Prerelease, Version};

/// A parsed blang/semver range: an OR of AND-lists of comparators, remembering its source text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Range {
    /// The text the range was parsed from, unchanged.
    text: String,
    /// The alternatives (ORed); each is a non-empty list of comparators (ANDed), with
    /// wildcards already expanded.
    branches: Vec<Vec<Comparator>>,
}

/// Why a range could not be parsed, worded as blang/semver words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RangeError {
    /// The message, e.g. `Could not parse Range ">v0.1.0": Could not parse comparator ">v" in
    /// ">v0.1.0"`.
    pub message: String,
}

impl RangeError {
    fn new(message: impl Into<String>) -> RangeError {
        RangeError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RangeError {}

/// A comparison operator, as blang's `parseComparator` accepts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    /// blang `parseComparator`: the exact operator strings, anything else is invalid.
    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "" | "=" | "==" => Op::Eq,
            "!" | "!=" => Op::Ne,
            ">" => Op::Gt,
            ">=" => Op::Ge,
            "<" => Op::Lt,
            "<=" => Op::Le,
            _ => return None,
        })
    }

    /// Whether a version whose precedence compares `ord` to the comparator's version passes.
    fn admits(self, ord: Ordering) -> bool {
        match self {
            Op::Eq => ord == Ordering::Equal,
            Op::Ne => ord != Ordering::Equal,
            Op::Gt => ord == Ordering::Greater,
            Op::Ge => ord != Ordering::Less,
            Op::Lt => ord == Ordering::Less,
            Op::Le => ord != Ordering::Greater,
        }
    }
}

/// One operator applied to one version.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Comparator {
    op: Op,
    version: Version,
}

impl Comparator {
    fn admits(&self, v: &Version) -> bool {
        self.op.admits(v.cmp_precedence(&self.version))
    }
}

impl Range {
    /// Parses `s` exactly as blang/semver v4 `ParseRange` does (see the module documentation
    /// for the grammar and its quirks).
    ///
    /// # Errors
    ///
    /// Whatever blang rejects, with blang's message: a misplaced `||`, a piece without a
    /// digit, an unknown operator, a version that is not strict semver. Also an empty
    /// alternative (`a || || b`), which blang accepts but cannot evaluate.
    pub fn parse(s: &str) -> Result<Range, RangeError> {
        let parts = split_and_trim(s);
        let or_parts = split_or_parts(parts)?;
        let expanded = expand_wildcard_version(or_parts)?;
        let mut branches = Vec::with_capacity(expanded.len());
        for and_parts in expanded {
            let mut comparators = Vec::with_capacity(and_parts.len());
            for ap in &and_parts {
                let (op, version) = split_comparator_version(ap)?;
                let comparator = build_version_range(&op, &version).map_err(|e| {
                    RangeError::new(format!("Could not parse Range {}: {}", go_quote(ap), e))
                })?;
                comparators.push(comparator);
            }
            if comparators.is_empty() {
                // blang v4.0.0 accepts this and panics when matching; see the module docs.
                return Err(RangeError::new("empty range"));
            }
            branches.push(comparators);
        }
        Ok(Range {
            text: s.to_owned(),
            branches,
        })
    }

    /// Whether `v` satisfies the range: some alternative has all of its comparators satisfied,
    /// comparing by semver precedence (build metadata ignored, pre-releases ordered by the
    /// spec).
    pub fn contains(&self, v: &Version) -> bool {
        self.branches
            .iter()
            .any(|branch| branch.iter().all(|c| c.admits(v)))
    }

    /// The versions of `sorted` (ascending by precedence) that the range contains, as sorted,
    /// disjoint, non-adjacent runs of indices: what [`Range::contains`] says of every element,
    /// in `O(comparators · log n)` instead of `O(n)`.
    ///
    /// Each alternative is an interval in precedence order (`>`, `>=`, `<`, `<=`, `=` bound it)
    /// with holes (`!=`), found by binary search; the alternatives' runs are merged. Upgrade
    /// graphs use this so that a universal `skipRange` costs a run, not an edge per entry.
    pub fn runs(&self, sorted: &[&Version]) -> Vec<std::ops::Range<usize>> {
        let below = |c: &Version| sorted.partition_point(|v| v.cmp_precedence(c).is_lt());
        let upto = |c: &Version| sorted.partition_point(|v| v.cmp_precedence(c).is_le());
        let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
        for branch in &self.branches {
            let (mut lo, mut hi) = (0, sorted.len());
            let mut holes = Vec::new();
            for c in branch {
                let v = &c.version;
                match c.op {
                    Op::Gt => lo = lo.max(upto(v)),
                    Op::Ge => lo = lo.max(below(v)),
                    Op::Lt => hi = hi.min(below(v)),
                    Op::Le => hi = hi.min(upto(v)),
                    Op::Eq => (lo, hi) = (lo.max(below(v)), hi.min(upto(v))),
                    Op::Ne => holes.push(below(v)..upto(v)),
                }
            }
            holes.sort_by_key(|h| h.start);
            let mut start = lo;
            for h in holes {
                if h.start > start {
                    runs.push(start..h.start.min(hi));
                }
                start = start.max(h.end);
            }
            runs.push(start..hi);
        }
        runs.retain(|r| r.start < r.end);
        runs.sort_by_key(|r| r.start);
        let mut merged: Vec<std::ops::Range<usize>> = Vec::with_capacity(runs.len());
        for r in runs {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        merged
    }

    /// The greatest version the range admits from above, if it is bounded, as
    /// `(version, inclusive)`.
    ///
    /// Each alternative's bound is its tightest `<`, `<=` or `=` comparator (after wildcard
    /// expansion); an alternative without one is unbounded and makes the whole range unbounded
    /// (`None`). The result is the loosest of the alternatives' bounds; at equal versions an
    /// inclusive bound is looser than an exclusive one. This does not check that alternatives
    /// are satisfiable (`<1.0.0 >=2.0.0` is reported as bounded by `1.0.0`, exclusive).
    pub fn upper_bound(&self) -> Option<(Version, bool)> {
        let mut loosest: Option<(&Version, bool)> = None;
        for branch in &self.branches {
            let mut tightest: Option<(&Version, bool)> = None;
            for c in branch {
                let bound = match c.op {
                    Op::Lt => (&c.version, false),
                    Op::Le | Op::Eq => (&c.version, true),
                    Op::Gt | Op::Ge | Op::Ne => continue,
                };
                tightest = Some(match tightest {
                    Some(t) if cmp_bound(bound, t) != Ordering::Less => t,
                    _ => bound,
                });
            }
            let bound = tightest?;
            loosest = Some(match loosest {
                Some(l) if cmp_bound(bound, l) != Ordering::Greater => l,
                _ => bound,
            });
        }
        loosest.map(|(v, inclusive)| (v.clone(), inclusive))
    }
}

/// Orders upper bounds from tightest to loosest: by version precedence, then exclusive before
/// inclusive.
fn cmp_bound(a: (&Version, bool), b: (&Version, bool)) -> Ordering {
    a.0.cmp_precedence(b.0).then(a.1.cmp(&b.1))
}

impl FromStr for Range {
    type Err = RangeError;

    fn from_str(s: &str) -> Result<Range, RangeError> {
        Range::parse(s)
    }
}

impl fmt::Display for Range {
    /// Writes the original text the range was parsed from.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

// ---------------------------------------------------------------------------------------------
// The steps of blang's ParseRange (v4/range.go), in order.
// ---------------------------------------------------------------------------------------------

/// blang `splitAndTrim`: splits on ASCII spaces unless the last non-space byte was `>`, `<` or
/// `=`, keeps only pieces of at least two bytes, then deletes the spaces inside each piece.
fn split_and_trim(s: &str) -> Vec<String> {
    let bytes = s.as_bytes();
    let mut pieces = Vec::new();
    let mut last = 0usize;
    let mut last_char = 0u8;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b' ' && !matches!(last_char, b'>' | b'<' | b'=') {
            // Go: `if last < i-1`, i.e. the piece is at least two bytes long.
            if last + 1 < i {
                pieces.push(&s[last..i]);
            }
            last = i + 1;
        } else if b != b' ' {
            last_char = b;
        }
    }
    if last + 1 < bytes.len() {
        pieces.push(&s[last..]);
    }
    pieces.into_iter().map(|p| p.replace(' ', "")).collect()
}

/// blang `splitORParts`: splits the pieces at each `||`, rejecting a leading or trailing one
/// (and an empty input).
fn split_or_parts(parts: Vec<String>) -> Result<Vec<Vec<String>>, RangeError> {
    let mut or_parts = Vec::new();
    let mut current = Vec::new();
    for (i, p) in parts.into_iter().enumerate() {
        if p == "||" {
            if i == 0 {
                return Err(RangeError::new("First element in range is '||'"));
            }
            or_parts.push(std::mem::take(&mut current));
        } else {
            current.push(p);
        }
    }
    if current.is_empty() {
        return Err(RangeError::new("Last element in range is '||'"));
    }
    or_parts.push(current);
    Ok(or_parts)
}

/// blang `splitComparatorVersion`: the operator is everything before the first Unicode decimal
/// digit (trimmed of white space), the version everything from it.
fn split_comparator_version(s: &str) -> Result<(String, String), RangeError> {
    match s.char_indices().find(|&(_, c)| go_is_digit(c)) {
        Some((i, _)) => Ok((s[..i].trim().to_owned(), s[i..].to_owned())),
        None => Err(RangeError::new(format!(
            "Could not get version from string: {}",
            go_quote(s)
        ))),
    }
}

/// The kind of wildcard a version string ends with (blang `getWildcardType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wildcard {
    None,
    Major,
    Minor,
    Patch,
}

/// blang `getWildcardType`: the last dot-separated component is `x`, and the count of
/// components says which kind.
fn wildcard_type(v: &str) -> Wildcard {
    let parts: Vec<&str> = v.split('.').collect();
    if parts.last() != Some(&"x") {
        return Wildcard::None;
    }
    match parts.len() {
        1 => Wildcard::Major,
        2 => Wildcard::Minor,
        3 => Wildcard::Patch,
        _ => Wildcard::None,
    }
}

/// blang `createVersionFromWildcard`: the first `.x.x` becomes `.x`, the first `.x` becomes
/// `.0`, and a two-component result gets `.0` appended.
fn create_version_from_wildcard(v: &str) -> String {
    let flat = v.replacen(".x.x", ".x", 1).replacen(".x", ".0", 1);
    if flat.split('.').count() == 2 {
        flat + ".0"
    } else {
        flat
    }
}

/// blang `incrementMajorVersion` (`index` 0) and `incrementMinorVersion` (`index` 1): adds one
/// to that dot-separated component as Go's `strconv.Atoi` reads it (optional sign, leading
/// zeros allowed, 64-bit, wrapping like Go's `i + 1`). blang ignores the error and uses an
/// empty string, so that is what a non-number gives.
fn increment_component(v: &str, index: usize) -> String {
    let mut parts: Vec<String> = v.split('.').map(str::to_owned).collect();
    let Some(n) = parts.get(index).and_then(|p| p.parse::<i64>().ok()) else {
        return String::new();
    };
    parts[index] = n.wrapping_add(1).to_string();
    parts.join(".")
}

/// blang `expandWildcardVersion` (v4.0.0): every piece containing an `x` anywhere is rewritten
/// from its wildcard form into plain comparators.
fn expand_wildcard_version(parts: Vec<Vec<String>>) -> Result<Vec<Vec<String>>, RangeError> {
    let mut expanded = Vec::with_capacity(parts.len());
    for and_parts in parts {
        let mut new_parts = Vec::with_capacity(and_parts.len());
        for ap in and_parts {
            if !ap.contains('x') {
                new_parts.push(ap);
                continue;
            }
            let (op, v) = split_comparator_version(&ap)?;
            let wildcard = wildcard_type(&v);
            let flat = create_version_from_wildcard(&v);
            let (result_op, increment) = match op.as_str() {
                ">" => (">=", true),
                ">=" => (">=", false),
                "<" => ("<", false),
                "<=" => ("<", true),
                "" | "=" | "==" => {
                    new_parts.push(format!(">={flat}"));
                    ("<", true)
                }
                "!=" | "!" => {
                    new_parts.push(format!("<{flat}"));
                    (">=", true)
                }
                // Go's switch has no default: the operator is dropped.
                _ => ("", false),
            };
            let result_version = if increment {
                match wildcard {
                    Wildcard::Patch => increment_component(&flat, 1),
                    Wildcard::Minor => increment_component(&flat, 0),
                    Wildcard::Major | Wildcard::None => String::new(),
                }
            } else {
                flat
            };
            new_parts.push(format!("{result_op}{result_version}"));
        }
        expanded.push(new_parts);
    }
    Ok(expanded)
}

/// blang `buildVersionRange`: an operator and a version into a comparator, or the inner part of
/// the error message.
fn build_version_range(op: &str, v: &str) -> Result<Comparator, String> {
    let joined = format!("{op}{v}");
    let Some(op) = Op::parse(op) else {
        return Err(format!(
            "Could not parse comparator {} in {}",
            go_quote(op),
            go_quote(&joined)
        ));
    };
    let version = parse_version(v).map_err(|e| {
        format!(
            "Could not parse version {} in {}: {}",
            go_quote(v),
            go_quote(&joined),
            e
        )
    })?;
    Ok(Comparator { op, version })
}

// ---------------------------------------------------------------------------------------------
// blang's strict version parser (v4/semver.go `Parse`), for its acceptance and its messages.
// ---------------------------------------------------------------------------------------------

fn contains_only_numbers(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

fn contains_only_alphanum(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn has_leading_zeroes(s: &str) -> bool {
    s.len() > 1 && s.starts_with('0')
}

/// Go `strconv.ParseUint(s, 10, 64)` on a string already known to hold only ASCII digits.
fn go_parse_uint(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    s.parse::<u64>().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            go_quote(s)
        )
    })
}

/// Parses a major or minor number the way blang does, `what` naming it in messages.
fn parse_number(s: &str, what: &str) -> Result<u64, String> {
    if !contains_only_numbers(s) {
        return Err(format!(
            "Invalid character(s) found in {what} number {}",
            go_quote(s)
        ));
    }
    if has_leading_zeroes(s) {
        let capitalised = match what {
            "major" => "Major",
            "minor" => "Minor",
            _ => "Patch",
        };
        return Err(format!(
            "{capitalised} number must not contain leading zeroes {}",
            go_quote(s)
        ));
    }
    go_parse_uint(s)
}

/// blang `Parse`: a strict `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, checked in blang's order so that
/// the first problem reported is the one blang reports.
fn parse_version(s: &str) -> Result<Version, String> {
    if s.is_empty() {
        return Err("Version string empty".to_owned());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    if parts.len() != 3 {
        return Err("No Major.Minor.Patch elements found".to_owned());
    }
    let major = parse_number(parts[0], "major")?;
    let minor = parse_number(parts[1], "minor")?;

    let mut patch_str = parts[2];
    let mut build_str = None;
    if let Some(i) = patch_str.find('+') {
        build_str = Some(&patch_str[i + 1..]);
        patch_str = &patch_str[..i];
    }
    let mut pre_str = None;
    if let Some(i) = patch_str.find('-') {
        pre_str = Some(&patch_str[i + 1..]);
        patch_str = &patch_str[..i];
    }
    let patch = parse_number(patch_str, "patch")?;

    for id in pre_str.into_iter().flat_map(|p| p.split('.')) {
        if id.is_empty() {
            return Err("Prerelease is empty".to_owned());
        }
        if contains_only_numbers(id) {
            if has_leading_zeroes(id) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    go_quote(id)
                ));
            }
            go_parse_uint(id)?;
        } else if !contains_only_alphanum(id) {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                go_quote(id)
            ));
        }
    }
    for id in build_str.into_iter().flat_map(|b| b.split('.')) {
        if id.is_empty() {
            return Err("Build meta data is empty".to_owned());
        }
        if !contains_only_alphanum(id) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                go_quote(id)
            ));
        }
    }

    // What blang accepts is a subset of what the semver crate accepts, so these only fail on a
    // bug here; report it rather than panic.
    let pre = match pre_str {
        Some(p) => Prerelease::new(p).map_err(|e| e.to_string())?,
        None => Prerelease::EMPTY,
    };
    let build = match build_str {
        Some(b) => BuildMetadata::new(b).map_err(|e| e.to_string())?,
        None => BuildMetadata::EMPTY,
    };
    Ok(Version {
        major,
        minor,
        patch,
        pre,
        build,
    })
}

// ---------------------------------------------------------------------------------------------
// Go library behaviour the messages and the split depend on.
// ---------------------------------------------------------------------------------------------

/// Unicode 15.0 general category Nd (Go's `unicode.IsDigit`), as inclusive ranges.
const DECIMAL_DIGITS: &[(u32, u32)] = &[
    (0x30, 0x39),
    (0x660, 0x669),
    (0x6F0, 0x6F9),
    (0x7C0, 0x7C9),
    (0x966, 0x96F),
    (0x9E6, 0x9EF),
    (0xA66, 0xA6F),
    (0xAE6, 0xAEF),
    (0xB66, 0xB6F),
    (0xBE6, 0xBEF),
    (0xC66, 0xC6F),
    (0xCE6, 0xCEF),
    (0xD66, 0xD6F),
    (0xDE6, 0xDEF),
    (0xE50, 0xE59),
    (0xED0, 0xED9),
    (0xF20, 0xF29),
    (0x1040, 0x1049),
    (0x1090, 0x1099),
    (0x17E0, 0x17E9),
    (0x1810, 0x1819),
    (0x1946, 0x194F),
    (0x19D0, 0x19D9),
    (0x1A80, 0x1A89),
    (0x1A90, 0x1A99),
    (0x1B50, 0x1B59),
    (0x1BB0, 0x1BB9),
    (0x1C40, 0x1C49),
    (0x1C50, 0x1C59),
    (0xA620, 0xA629),
    (0xA8D0, 0xA8D9),
    (0xA900, 0xA909),
    (0xA9D0, 0xA9D9),
    (0xA9F0, 0xA9F9),
    (0xAA50, 0xAA59),
    (0xABF0, 0xABF9),
    (0xFF10, 0xFF19),
    (0x104A0, 0x104A9),
    (0x10D30, 0x10D39),
    (0x11066, 0x1106F),
    (0x110F0, 0x110F9),
    (0x11136, 0x1113F),
    (0x111D0, 0x111D9),
    (0x112F0, 0x112F9),
    (0x11450, 0x11459),
    (0x114D0, 0x114D9),
    (0x11650, 0x11659),
    (0x116C0, 0x116C9),
    (0x11730, 0x11739),
    (0x118E0, 0x118E9),
    (0x11950, 0x11959),
    (0x11C50, 0x11C59),
    (0x11D50, 0x11D59),
    (0x11DA0, 0x11DA9),
    (0x11F50, 0x11F59),
    (0x16A60, 0x16A69),
    (0x16AC0, 0x16AC9),
    (0x16B50, 0x16B59),
    (0x1D7CE, 0x1D7FF),
    (0x1E140, 0x1E149),
    (0x1E2F0, 0x1E2F9),
    (0x1E4F0, 0x1E4F9),
    (0x1E950, 0x1E959),
    (0x1FBF0, 0x1FBF9),
];

/// Unicode 15.0 general category Cf (format characters), as inclusive ranges.
const FORMAT_CHARS: &[(u32, u32)] = &[
    (0xAD, 0xAD),
    (0x600, 0x605),
    (0x61C, 0x61C),
    (0x6DD, 0x6DD),
    (0x70F, 0x70F),
    (0x890, 0x891),
    (0x8E2, 0x8E2),
    (0x180E, 0x180E),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x2064),
    (0x2066, 0x206F),
    (0xFEFF, 0xFEFF),
    (0xFFF9, 0xFFFB),
    (0x110BD, 0x110BD),
    (0x110CD, 0x110CD),
    (0x13430, 0x1343F),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0001, 0xE0001),
    (0xE0020, 0xE007F),
];

fn in_ranges(c: char, ranges: &[(u32, u32)]) -> bool {
    let c = c as u32;
    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi)
}

/// Go `unicode.IsDigit`.
fn go_is_digit(c: char) -> bool {
    c.is_ascii_digit() || (!c.is_ascii() && in_ranges(c, DECIMAL_DIGITS))
}

/// Go `strconv.IsPrint`, closely: letters, marks, numbers, punctuation, symbols and the ASCII
/// space. Controls, other spaces, format characters, private use and noncharacters are not
/// printable; unassigned code points are (Go says they are not), for want of the tables.
fn go_is_print(c: char) -> bool {
    let n = c as u32;
    let private_use = (0xE000..=0xF8FF).contains(&n) || n >= 0xF0000;
    let noncharacter = (0xFDD0..=0xFDEF).contains(&n) || (n & 0xFFFE) == 0xFFFE;
    c == ' '
        || !(c.is_control()
            || c.is_whitespace()
            || private_use
            || noncharacter
            || in_ranges(c, FORMAT_CHARS))
}

/// Go `strconv.Quote` (the `%q` verb on a string).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if go_is_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn v(s: &str) -> Version {
        Version::parse(s).unwrap()
    }

    fn range(s: &str) -> Range {
        Range::parse(s).unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
    }

    fn err(s: &str) -> String {
        match Range::parse(s) {
            Ok(r) => panic!("{s:?} should not parse, got {r:?}"),
            Err(e) => e.message,
        }
    }

    /// Asserts `r` contains exactly the versions marked true.
    fn check(r: &str, cases: &[(&str, bool)]) {
        let parsed = range(r);
        for &(version, expected) in cases {
            assert_eq!(
                parsed.contains(&v(version)),
                expected,
                "{r:?} contains {version}"
            );
        }
    }

    fn expand(parts: &[&[&str]]) -> Result<Vec<Vec<String>>, RangeError> {
        expand_wildcard_version(
            parts
                .iter()
                .map(|p| p.iter().map(|s| s.to_string()).collect())
                .collect(),
        )
    }

    // ---- blang range_test.go: the helper functions -----------------------------------------

    #[test]
    fn blang_parse_comparator() {
        let cases = [
            (">", Some(Op::Gt)),
            (">=", Some(Op::Ge)),
            ("<", Some(Op::Lt)),
            ("<=", Some(Op::Le)),
            ("", Some(Op::Eq)),
            ("=", Some(Op::Eq)),
            ("==", Some(Op::Eq)),
            ("!=", Some(Op::Ne)),
            ("!", Some(Op::Ne)),
            ("-", None),
            ("<==", None),
            ("<<", None),
            (">>", None),
        ];
        for (input, expected) in cases {
            assert_eq!(Op::parse(input), expected, "{input:?}");
        }
    }

    #[test]
    fn blang_split_and_trim() {
        let cases: [(&str, &[&str]); 5] = [
            ("1.2.3 1.2.3", &["1.2.3", "1.2.3"]),
            ("     1.2.3     1.2.3     ", &["1.2.3", "1.2.3"]),
            ("  >=   1.2.3   <=  1.2.3   ", &[">=1.2.3", "<=1.2.3"]),
            (
                "1.2.3 || >=1.2.3 <1.2.3",
                &["1.2.3", "||", ">=1.2.3", "<1.2.3"],
            ),
            (
                "      1.2.3      ||     >=1.2.3     <1.2.3    ",
                &["1.2.3", "||", ">=1.2.3", "<1.2.3"],
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(split_and_trim(input), expected, "{input:?}");
        }
    }

    #[test]
    fn split_and_trim_drops_single_byte_pieces() {
        assert_eq!(split_and_trim("1.0.0 >"), ["1.0.0"]);
        assert_eq!(split_and_trim("! 1.0.0"), ["1.0.0"]);
        assert_eq!(split_and_trim("1.0.0 > "), ["1.0.0", ">"]);
        assert!(split_and_trim("x").is_empty());
        assert!(split_and_trim("").is_empty());
        assert!(split_and_trim("   ").is_empty());
    }

    #[test]
    fn blang_split_comparator_version() {
        let cases = [
            (">1.2.3", ">", "1.2.3"),
            (">=1.2.3", ">=", "1.2.3"),
            ("<1.2.3", "<", "1.2.3"),
            ("<=1.2.3", "<=", "1.2.3"),
            ("1.2.3", "", "1.2.3"),
            ("=1.2.3", "=", "1.2.3"),
            ("==1.2.3", "==", "1.2.3"),
            ("!=1.2.3", "!=", "1.2.3"),
            ("!1.2.3", "!", "1.2.3"),
        ];
        for (input, op, version) in cases {
            assert_eq!(
                split_comparator_version(input).unwrap(),
                (op.to_owned(), version.to_owned()),
                "{input:?}"
            );
        }
        assert_eq!(
            split_comparator_version("error").unwrap_err().message,
            r#"Could not get version from string: "error""#
        );
    }

    #[test]
    fn blang_build_version_range() {
        let ok = [
            (">", Op::Gt),
            (">=", Op::Ge),
            ("<", Op::Lt),
            ("<=", Op::Le),
            ("", Op::Eq),
            ("=", Op::Eq),
            ("==", Op::Eq),
            ("!=", Op::Ne),
            ("!", Op::Ne),
        ];
        for (op, expected) in ok {
            let c = build_version_range(op, "1.2.3").unwrap();
            assert_eq!(c.op, expected, "{op:?}");
            assert_eq!(c.version, v("1.2.3"));
        }
        assert_eq!(
            build_version_range(">>", "1.2.3").unwrap_err(),
            r#"Could not parse comparator ">>" in ">>1.2.3""#
        );
        assert_eq!(
            build_version_range("=", "invalid").unwrap_err(),
            r#"Could not parse version "invalid" in "=invalid": No Major.Minor.Patch elements found"#
        );
    }

    #[test]
    fn blang_split_or_parts() {
        let s = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            split_or_parts(s(&[">1.2.3", "||", "<1.2.3", "||", "=1.2.3"])).unwrap(),
            vec![s(&[">1.2.3"]), s(&["<1.2.3"]), s(&["=1.2.3"])]
        );
        assert_eq!(
            split_or_parts(s(&[">1.2.3", "<1.2.3", "||", "=1.2.3"])).unwrap(),
            vec![s(&[">1.2.3", "<1.2.3"]), s(&["=1.2.3"])]
        );
        assert_eq!(
            split_or_parts(s(&[">1.2.3", "||"])).unwrap_err().message,
            "Last element in range is '||'"
        );
        assert_eq!(
            split_or_parts(s(&["||", ">1.2.3"])).unwrap_err().message,
            "First element in range is '||'"
        );
    }

    #[test]
    fn blang_wildcard_helpers() {
        assert_eq!(wildcard_type("x"), Wildcard::Major);
        assert_eq!(wildcard_type("1.x"), Wildcard::Minor);
        assert_eq!(wildcard_type("1.2.x"), Wildcard::Patch);
        assert_eq!(wildcard_type("fo.o.b.ar"), Wildcard::None);
        assert_eq!(wildcard_type("1.2.x.x"), Wildcard::None);

        assert_eq!(create_version_from_wildcard("1.2.x"), "1.2.0");
        assert_eq!(create_version_from_wildcard("1.x"), "1.0.0");
        assert_eq!(create_version_from_wildcard("1.x.x"), "1.0.0");

        assert_eq!(increment_component("1.2.3", 0), "2.2.3");
        assert_eq!(increment_component("1.2", 0), "2.2");
        assert_eq!(increment_component("foo.bar", 0), "");
        assert_eq!(increment_component("1.2.3", 1), "1.3.3");
        assert_eq!(increment_component("1.2", 1), "1.3");
        assert_eq!(increment_component("foo.bar", 1), "");
        // Go's Atoi: signs and leading zeros, 64-bit wrap-around.
        assert_eq!(increment_component("01.0.0", 0), "2.0.0");
        assert_eq!(increment_component("1.+2.0", 1), "1.3.0");
        assert_eq!(
            increment_component("9223372036854775807.0.0", 0),
            "-9223372036854775808.0.0"
        );
        assert_eq!(increment_component("1", 1), "");
    }

    #[test]
    fn blang_expand_wildcard_version() {
        assert!(expand(&[&["foox"]]).is_err());
        let cases: [(&str, &[&str]); 12] = [
            (">=1.2.x", &[">=1.2.0"]),
            ("<=1.2.x", &["<1.3.0"]),
            (">1.2.x", &[">=1.3.0"]),
            ("<1.2.x", &["<1.2.0"]),
            ("!=1.2.x", &["<1.2.0", ">=1.3.0"]),
            (">=1.x", &[">=1.0.0"]),
            ("<=1.x", &["<2.0.0"]),
            (">1.x", &[">=2.0.0"]),
            ("<1.x", &["<1.0.0"]),
            ("!=1.x", &["<1.0.0", ">=2.0.0"]),
            ("1.2.x", &[">=1.2.0", "<1.3.0"]),
            ("1.x", &[">=1.0.0", "<2.0.0"]),
        ];
        for (input, expected) in cases {
            assert_eq!(
                expand(&[&[input]]).unwrap(),
                vec![expected.to_vec()],
                "{input:?}"
            );
        }
        // Pieces without an `x` pass through untouched, branch structure is kept.
        assert_eq!(
            expand(&[&[">1.0.0", "1.x"], &["<=2.0.0"]]).unwrap(),
            vec![vec![">1.0.0", ">=1.0.0", "<2.0.0"], vec!["<=2.0.0"]]
        );
        // Quirks of v4.0.0.
        assert_eq!(
            expand(&[&["0.1.0-x"]]).unwrap(),
            vec![vec![">=0.1.0-x", "<"]]
        );
        assert_eq!(expand(&[&[">>1.x"]]).unwrap(), vec![vec!["1.0.0"]]);
        assert_eq!(
            expand(&[&["x.x"]]).unwrap_err().message,
            r#"Could not get version from string: "x.x""#
        );
    }

    // ---- blang range_test.go: TestParseRange ------------------------------------------------

    #[test]
    fn blang_simple_expressions() {
        let three = |a, b, c| [("1.2.2", a), ("1.2.3", b), ("1.2.4", c)];
        check(">1.2.3", &three(false, false, true));
        check(">=1.2.3", &three(false, true, true));
        check("<1.2.3", &three(true, false, false));
        check("<=1.2.3", &three(true, true, false));
        check("1.2.3", &three(false, true, false));
        check("=1.2.3", &three(false, true, false));
        check("==1.2.3", &three(false, true, false));
        check("!=1.2.3", &three(true, false, true));
        check("!1.2.3", &three(true, false, true));
    }

    #[test]
    fn blang_simple_expression_errors() {
        for input in [">>1.2.3", "1.0", "string", "", "fo.ob.ar.x"] {
            assert!(Range::parse(input).is_err(), "{input:?}");
        }
    }

    #[test]
    fn blang_and_expressions() {
        check(
            ">1.2.2 <1.2.4",
            &[("1.2.2", false), ("1.2.3", true), ("1.2.4", false)],
        );
        check(
            "<1.2.2 <1.2.4",
            &[
                ("1.2.1", true),
                ("1.2.2", false),
                ("1.2.3", false),
                ("1.2.4", false),
            ],
        );
        for r in [">1.2.2 <1.2.5 !=1.2.4", ">1.2.2 <1.2.5 !1.2.4"] {
            check(
                r,
                &[
                    ("1.2.2", false),
                    ("1.2.3", true),
                    ("1.2.4", false),
                    ("1.2.5", false),
                ],
            );
        }
    }

    #[test]
    fn blang_or_expressions() {
        check(
            ">1.2.2 || <1.2.4",
            &[("1.2.2", true), ("1.2.3", true), ("1.2.4", true)],
        );
        check(
            "<1.2.2 || >1.2.4",
            &[("1.2.2", false), ("1.2.3", false), ("1.2.4", false)],
        );
    }

    #[test]
    fn blang_wildcard_expressions() {
        check(
            ">1.x",
            &[
                ("0.1.9", false),
                ("1.2.6", false),
                ("1.9.0", false),
                ("2.0.0", true),
            ],
        );
        check(
            ">1.2.x",
            &[("1.1.9", false), ("1.2.6", false), ("1.3.0", true)],
        );
    }

    #[test]
    fn blang_combined_expressions() {
        check(
            ">1.2.2 <1.2.4 || >=2.0.0",
            &[
                ("1.2.2", false),
                ("1.2.3", true),
                ("1.2.4", false),
                ("2.0.0", true),
                ("2.0.1", true),
            ],
        );
        check(
            "1.x || >=2.0.x <2.2.x",
            &[
                ("0.9.2", false),
                ("1.2.2", true),
                ("2.0.0", true),
                ("2.1.8", true),
                ("2.2.0", false),
            ],
        );
        check(
            ">1.2.2 <1.2.4 || >=2.0.0 <3.0.0",
            &[
                ("1.2.2", false),
                ("1.2.3", true),
                ("1.2.4", false),
                ("2.0.0", true),
                ("2.0.1", true),
                ("2.9.9", true),
                ("3.0.0", false),
            ],
        );
        // The doc comment's example on ParseRange.
        check(
            ">1.0.0 <2.0.0 || >3.0.0 !4.2.1",
            &[
                ("1.2.3", true),
                ("1.9.9", true),
                ("3.1.1", true),
                ("4.2.1", false),
                ("2.1.1", false),
            ],
        );
    }

    // ---- OLM examples ------------------------------------------------------------------------

    #[test]
    fn olm_examples() {
        check(
            ">=0.9.0 <1.1.0",
            &[
                ("0.8.9", false),
                ("0.9.0", true),
                ("1.0.5", true),
                ("1.1.0-rc.1", true),
                ("1.1.0", false),
            ],
        );
        check(
            ">=4.1.0 <4.2.3",
            &[
                ("4.1.0", true),
                ("4.2.2", true),
                ("4.2.3", false),
                ("4.1.0-0", false),
            ],
        );
        check(
            ">=0.2.0-0 <0.3.1-0",
            &[
                ("0.1.9", false),
                ("0.2.0-0", true),
                ("0.2.0-alpha", true),
                ("0.2.0", true),
                ("0.3.0", true),
                ("0.3.1-0", false),
                ("0.3.1-rc.1", false),
                ("0.3.1", false),
            ],
        );
        check(
            "<1.0.0 || >=2.0.0",
            &[
                ("0.9.9", true),
                ("1.0.0", false),
                ("1.9.9", false),
                ("2.0.0", true),
                ("10.0.0", true),
            ],
        );
    }

    #[test]
    fn build_metadata_is_ignored() {
        check(
            "1.0.0+build.1",
            &[("1.0.0", true), ("1.0.0+other", true), ("1.0.1", false)],
        );
        check(">1.0.0", &[("1.0.0+build", false), ("1.0.1+build", true)]);
    }

    #[test]
    fn spaces_between_operator_and_version() {
        check(
            ">=  1.0.0   <   2.0.0",
            &[("1.0.0", true), ("1.5.0", true), ("2.0.0", false)],
        );
        check("!= 1.0.0", &[("1.0.0", false), ("1.0.1", true)]);
        // `!` is not kept with the version, and a lone byte is dropped.
        check("! 1.0.0", &[("1.0.0", true), ("1.0.1", false)]);
        check("1.0.0 >", &[("1.0.0", true), ("1.0.1", false)]);
        // Go's TrimSpace on the operator removes other white space before it.
        check("\t>=1.0.0", &[("1.0.0", true), ("0.9.0", false)]);
        assert_eq!(range("  >= 1.0.0 ").to_string(), "  >= 1.0.0 ");
    }

    #[test]
    fn wildcard_quirks_of_v4_0_0() {
        check(
            "1.x.x",
            &[("0.9.0", false), ("1.0.5", true), ("1.1.0", false)],
        );
        // ANDs `<1.0.0 >=2.0.0`: nothing at all.
        check(
            "!=1.x",
            &[("0.9.0", false), ("1.5.0", false), ("2.0.0", false)],
        );
        check(
            "!=1.2.x",
            &[("1.1.0", false), ("1.2.5", false), ("1.3.0", false)],
        );
        // Unknown operators before a wildcard are dropped.
        check("^1.2.x", &[("1.2.0", true), ("1.2.1", false)]);
        check(">>1.x", &[("1.0.0", true), ("2.0.0", false)]);
        check(">=1.x <1.5.0", &[("1.0.0", true), ("1.5.0", false)]);
        // `x` in a pre-release is fine when the operator needs no increment...
        check(
            ">=1.0.0-fox",
            &[("1.0.0-fox", true), ("1.0.0-alpha", false)],
        );
        // ...and fatal otherwise (blang issue #75).
        assert_eq!(err("0.1.0-x"), r#"Could not get version from string: "<""#);
        assert_eq!(
            err("1.1.0-fox"),
            r#"Could not get version from string: "<""#
        );
        assert_eq!(
            err(">1.0.0-x"),
            r#"Could not get version from string: ">=""#
        );
        assert_eq!(
            err("<=1.0.0+linux"),
            r#"Could not get version from string: "<""#
        );
        // The expanded `>=1.2.3.0` comes before the empty `<` and fails first.
        assert_eq!(
            err("1.2.3.x"),
            r#"Could not parse Range ">=1.2.3.0": Could not parse version "1.2.3.0" in ">=1.2.3.0": Invalid character(s) found in patch number "3.0""#
        );
        assert_eq!(
            err("1.x.y"),
            r#"Could not parse Range ">=1.0.y": Could not parse version "1.0.y" in ">=1.0.y": Invalid character(s) found in patch number "y""#
        );
    }

    #[test]
    fn invalid_ranges_and_messages() {
        let cases = [
            (
                ">v0.1.0",
                r#"Could not parse Range ">v0.1.0": Could not parse comparator ">v" in ">v0.1.0""#,
            ),
            (
                "v0.1.0",
                r#"Could not parse Range "v0.1.0": Could not parse comparator "v" in "v0.1.0""#,
            ),
            (
                ">1.00.1",
                r#"Could not parse Range ">1.00.1": Could not parse version "1.00.1" in ">1.00.1": Minor number must not contain leading zeroes "00""#,
            ),
            (
                "01.0.0",
                r#"Could not parse Range "01.0.0": Could not parse version "01.0.0" in "01.0.0": Major number must not contain leading zeroes "01""#,
            ),
            (
                "1.0.00",
                r#"Could not parse Range "1.0.00": Could not parse version "1.0.00" in "1.0.00": Patch number must not contain leading zeroes "00""#,
            ),
            (
                "^1.0.0",
                r#"Could not parse Range "^1.0.0": Could not parse comparator "^" in "^1.0.0""#,
            ),
            (
                "~1.0.0",
                r#"Could not parse Range "~1.0.0": Could not parse comparator "~" in "~1.0.0""#,
            ),
            (
                "1.X",
                r#"Could not parse Range "1.X": Could not parse version "1.X" in "1.X": No Major.Minor.Patch elements found"#,
            ),
            (
                "1.2.*",
                r#"Could not parse Range "1.2.*": Could not parse version "1.2.*" in "1.2.*": Invalid character(s) found in patch number "*""#,
            ),
            ("*", "Last element in range is '||'"),
            ("x", "Last element in range is '||'"),
            ("", "Last element in range is '||'"),
            ("   ", "Last element in range is '||'"),
            (">=1.0.0 ||", "Last element in range is '||'"),
            ("|| >=1.0.0", "First element in range is '||'"),
            ("1.0.0 || || 2.0.0", "empty range"),
            ("**", r#"Could not get version from string: "**""#),
            (">=", r#"Could not get version from string: ">=""#),
            (
                ">=1.0.0\t<2.0.0",
                r#"Could not parse Range ">=1.0.0\t<2.0.0": Could not parse version "1.0.0\t<2.0.0" in ">=1.0.0\t<2.0.0": Invalid character(s) found in patch number "0\t<2.0.0""#,
            ),
            (
                ">=1.0.0-",
                r#"Could not parse Range ">=1.0.0-": Could not parse version "1.0.0-" in ">=1.0.0-": Prerelease is empty"#,
            ),
            (
                ">=1.0.0-01",
                r#"Could not parse Range ">=1.0.0-01": Could not parse version "1.0.0-01" in ">=1.0.0-01": Numeric PreRelease version must not contain leading zeroes "01""#,
            ),
            (
                ">=1.0.0-a_b",
                r#"Could not parse Range ">=1.0.0-a_b": Could not parse version "1.0.0-a_b" in ">=1.0.0-a_b": Invalid character(s) found in prerelease "a_b""#,
            ),
            (
                ">=1.0.0+",
                r#"Could not parse Range ">=1.0.0+": Could not parse version "1.0.0+" in ">=1.0.0+": Build meta data is empty"#,
            ),
            (
                ">=1.0.0+a..b",
                r#"Could not parse Range ">=1.0.0+a..b": Could not parse version "1.0.0+a..b" in ">=1.0.0+a..b": Build meta data is empty"#,
            ),
            (
                ">=1..0",
                r#"Could not parse Range ">=1..0": Could not parse version "1..0" in ">=1..0": strconv.ParseUint: parsing "": invalid syntax"#,
            ),
            (
                ">=18446744073709551616.0.0",
                r#"Could not parse Range ">=18446744073709551616.0.0": Could not parse version "18446744073709551616.0.0" in ">=18446744073709551616.0.0": strconv.ParseUint: parsing "18446744073709551616": value out of range"#,
            ),
            (
                ">=1.0.0-18446744073709551616",
                r#"Could not parse Range ">=1.0.0-18446744073709551616": Could not parse version "1.0.0-18446744073709551616" in ">=1.0.0-18446744073709551616": strconv.ParseUint: parsing "18446744073709551616": value out of range"#,
            ),
            (
                "1.2.3.4",
                r#"Could not parse Range "1.2.3.4": Could not parse version "1.2.3.4" in "1.2.3.4": Invalid character(s) found in patch number "3.4""#,
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(err(input), expected, "{input:?}");
        }
        // An Arabic-Indic digit starts the version for Go's unicode.IsDigit.
        assert_eq!(
            err(">=\u{661}.0.0"),
            "Could not parse Range \">=\u{661}.0.0\": Could not parse version \"\u{661}.0.0\" in \">=\u{661}.0.0\": Invalid character(s) found in major number \"\u{661}\""
        );
        // The first bad comparator in the text is the one reported.
        assert_eq!(
            err(">=1.0.0 <2.0 || >v3"),
            r#"Could not parse Range "<2.0": Could not parse version "2.0" in "<2.0": No Major.Minor.Patch elements found"#
        );
        // Wildcard expansion errors come before comparator errors, as in blang.
        assert_eq!(
            err(">v1.0.0 || <=fox"),
            r#"Could not get version from string: "<=fox""#
        );
    }

    #[test]
    fn error_type_behaviour() {
        let e: RangeError = "^1.0.0".parse::<Range>().unwrap_err();
        assert_eq!(e.to_string(), e.message);
        let boxed: Box<dyn std::error::Error> = Box::new(e.clone());
        assert_eq!(boxed.to_string(), e.message);
    }

    #[test]
    fn go_quote_matches_strconv_quote() {
        assert_eq!(go_quote("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(
            go_quote("\u{7}\u{8}\u{c}\n\r\t\u{b}"),
            r#""\a\b\f\n\r\t\v""#
        );
        assert_eq!(go_quote("\u{0}\u{1f}\u{7f}"), r#""\x00\x1f\x7f""#);
        assert_eq!(
            go_quote("\u{a0}\u{200b}\u{feff}"),
            r#""\u00a0\u200b\ufeff""#
        );
        assert_eq!(go_quote("\u{e0001}"), r#""\U000e0001""#);
        assert_eq!(go_quote("é日本 ok"), "\"é日本 ok\"");
    }

    #[test]
    fn display_and_from_str() {
        let text = ">=1.0.0  <2.0.0 ||  3.x";
        let r: Range = text.parse().unwrap();
        assert_eq!(r.to_string(), text);
        assert_eq!(r, range(text));
        assert_ne!(r, range(">=1.0.0 <2.0.0 || 3.x"));
    }

    #[test]
    fn upper_bounds() {
        let bound = |s: &str| range(s).upper_bound();
        assert_eq!(bound(">=0.9.0 <1.1.0"), Some((v("1.1.0"), false)));
        assert_eq!(bound(">=0.9.0 <=1.1.0"), Some((v("1.1.0"), true)));
        assert_eq!(bound("1.2.3"), Some((v("1.2.3"), true)));
        assert_eq!(bound("<2.0.0 <=1.5.0 <1.5.0"), Some((v("1.5.0"), false)));
        assert_eq!(bound("<=1.5.0 <1.5.0"), Some((v("1.5.0"), false)));
        assert_eq!(bound("<1.0.0 || <=1.0.0"), Some((v("1.0.0"), true)));
        assert_eq!(bound("<=1.0.0 || <1.0.0"), Some((v("1.0.0"), true)));
        assert_eq!(bound("<1.0.0 || >=2.0.0 <3.0.0"), Some((v("3.0.0"), false)));
        assert_eq!(bound(">=0.2.0-0 <0.3.1-0"), Some((v("0.3.1-0"), false)));
        assert_eq!(bound("1.2.x"), Some((v("1.3.0"), false)));
        assert_eq!(bound("<=1.x"), Some((v("2.0.0"), false)));
        assert_eq!(bound(">=1.0.0"), None);
        assert_eq!(bound("!=1.0.0"), None);
        assert_eq!(bound("<1.0.0 || >=2.0.0"), None);
        assert_eq!(bound(">1.x"), None);
    }

    // ---- property tests ----------------------------------------------------------------------

    fn version_strategy() -> impl Strategy<Value = Version> {
        let pre = prop_oneof![
            Just(""),
            Just("0"),
            Just("1"),
            Just("alpha"),
            Just("alpha.1"),
            Just("beta"),
            Just("rc.1"),
            Just("rc.10"),
            Just("rc.2"),
        ];
        let build = prop_oneof![Just(""), Just("build.5"), Just("001")];
        (0u64..4, 0u64..4, 0u64..4, pre, build).prop_map(|(ma, mi, pa, pre, build)| Version {
            major: ma,
            minor: mi,
            patch: pa,
            pre: Prerelease::new(pre).unwrap(),
            build: BuildMetadata::new(build).unwrap(),
        })
    }

    fn op_strategy() -> impl Strategy<Value = &'static str> {
        prop_oneof![
            Just("<"),
            Just("<="),
            Just(">"),
            Just(">="),
            Just(""),
            Just("="),
            Just("=="),
            Just("!"),
            Just("!="),
        ]
    }

    /// A range text without wildcards and the comparators it means, as (op, version) pairs.
    fn and_list_strategy() -> impl Strategy<Value = Vec<(&'static str, Version)>> {
        proptest::collection::vec((op_strategy(), version_strategy()), 1..4)
    }

    fn and_list_text(list: &[(&str, Version)]) -> String {
        list.iter()
            .map(|(op, v)| format!("{op}{v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn reference_admits(op: &str, bound: &Version, v: &Version) -> bool {
        let ord = v.cmp_precedence(bound);
        match op {
            "<" => ord.is_lt(),
            "<=" => ord.is_le(),
            ">" => ord.is_gt(),
            ">=" => ord.is_ge(),
            "" | "=" | "==" => ord.is_eq(),
            _ => ord.is_ne(),
        }
    }

    proptest! {
        #[test]
        fn parse_never_panics(s in any::<String>(), probe in version_strategy()) {
            match Range::parse(&s) {
                Ok(r) => {
                    prop_assert_eq!(r.to_string(), s);
                    let _ = r.contains(&probe);
                    let _ = r.upper_bound();
                }
                Err(e) => prop_assert!(!e.message.is_empty()),
            }
        }

        #[test]
        fn parse_never_panics_near_the_grammar(
            s in "[<>=!| x0-9.+a-cX*\\-\t]{0,40}",
            probe in version_strategy(),
        ) {
            match Range::parse(&s) {
                Ok(r) => {
                    prop_assert_eq!(r.to_string(), s.clone());
                    let _ = r.contains(&probe);
                    let _ = r.upper_bound();
                }
                Err(e) => prop_assert!(!e.message.is_empty()),
            }
        }

        #[test]
        fn half_open_interval(a in version_strategy(), b in version_strategy(), v in version_strategy()) {
            let r = Range::parse(&format!(">={a} <{b}")).unwrap();
            let expected = a.cmp_precedence(&v).is_le() && v.cmp_precedence(&b).is_lt();
            prop_assert_eq!(r.contains(&v), expected);
            prop_assert_eq!(r.upper_bound(), Some((b.clone(), false)));
        }

        #[test]
        fn and_list_is_conjunction(list in and_list_strategy(), v in version_strategy()) {
            let r = Range::parse(&and_list_text(&list)).unwrap();
            let expected = list.iter().all(|(op, bound)| reference_admits(op, bound, &v));
            prop_assert_eq!(r.contains(&v), expected);
        }

        /// `runs` says of every element of a sorted list what `contains` says, as maximal runs.
        #[test]
        fn runs_agree_with_contains(
            alts in proptest::collection::vec(and_list_strategy(), 1..4),
            mut versions in proptest::collection::vec(version_strategy(), 0..40),
        ) {
            let text = alts.iter().map(|a| and_list_text(a)).collect::<Vec<_>>().join(" || ");
            let r = Range::parse(&text).unwrap();
            versions.sort_by(|a, b| a.cmp_precedence(b));
            let sorted: Vec<&Version> = versions.iter().collect();
            let runs = r.runs(&sorted);
            let mut covered = vec![false; sorted.len()];
            for w in runs.windows(2) {
                prop_assert!(w[0].end < w[1].start, "{text}: runs overlap or touch: {runs:?}");
            }
            for run in &runs {
                prop_assert!(run.start < run.end);
                covered[run.clone()].iter_mut().for_each(|c| *c = true);
            }
            let expected: Vec<bool> = sorted.iter().map(|v| r.contains(v)).collect();
            prop_assert_eq!(covered, expected, "{}", text);
        }

        #[test]
        fn or_is_disjunction(a in and_list_strategy(), b in and_list_strategy(), v in version_strategy()) {
            let (ta, tb) = (and_list_text(&a), and_list_text(&b));
            let ra = Range::parse(&ta).unwrap();
            let rb = Range::parse(&tb).unwrap();
            let both = Range::parse(&format!("{ta} || {tb}")).unwrap();
            prop_assert_eq!(both.contains(&v), ra.contains(&v) || rb.contains(&v));
        }

        #[test]
        fn upper_bound_is_an_upper_bound(a in and_list_strategy(), b in and_list_strategy(), v in version_strategy()) {
            let r = Range::parse(&format!("{} || {}", and_list_text(&a), and_list_text(&b))).unwrap();
            if let (Some((bound, inclusive)), true) = (r.upper_bound(), r.contains(&v)) {
                let ord = v.cmp_precedence(&bound);
                prop_assert!(ord.is_lt() || (inclusive && ord.is_eq()), "{} admits {} above {:?}", r, v, (bound, inclusive));
            }
        }

        #[test]
        fn accepted_versions_agree_with_semver_crate(s in "[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}(-[0-9a-z.\\-]{0,8})?(\\+[0-9a-z.\\-]{0,8})?") {
            if let Ok(parsed) = parse_version(&s) {
                prop_assert_eq!(Version::parse(&s).ok(), Some(parsed));
            }
        }
    }
}
