//! Line diffs in the unified format `diff -u` and `git diff` print (`--- old`, `+++ new`,
//! `@@ -l,s +l,s @@` hunks with 3 lines of context, `\ No newline at end of file`), computed
//! with Myers' O(ND) algorithm ("An O(ND) Difference Algorithm and Its Variations", 1986) after
//! the common head and tail are set aside. The search is bounded: past [`MAX_EDITS`] edits the
//! differing middle is shown as removed and added whole (still a correct diff, only not the
//! shortest), so two unrelated large files cost linear time, not quadratic.

/// The most edits the shortest-diff search explores before it shows the middle whole.
pub const MAX_EDITS: usize = 2000;

/// Lines of context around each change, as `diff -u`.
pub const CONTEXT: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// Old line i equals new line j.
    Eq(usize, usize),
    /// Old line i removed.
    Del(usize),
    /// New line j added.
    Ins(usize),
}

/// The shortest edit script from `a` to `b`, or `None` past `max_d` edits.
fn myers(a: &[&str], b: &[&str], max_d: usize) -> Option<Vec<Op>> {
    let (n, m) = (a.len() as isize, b.len() as isize);
    let lim = (a.len() + b.len()).min(max_d) as isize;
    let off = lim + 1;
    let mut v = vec![0isize; (2 * lim + 3) as usize];
    // trace[d]: v over k in [-(d+1), d+1] before step d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    for d in 0..=lim {
        trace.push(v[(off - d - 1) as usize..=(off + d + 1) as usize].to_vec());
        let mut k = -d;
        while k <= d {
            let i = (off + k) as usize;
            let mut x = if k == -d || (k != d && v[i - 1] < v[i + 1]) {
                v[i + 1]
            } else {
                v[i - 1] + 1
            };
            let mut y = x - k;
            while x < n && y < m && a[x as usize] == b[y as usize] {
                x += 1;
                y += 1;
            }
            v[i] = x;
            if x >= n && y >= m {
                return Some(backtrack(&trace, n, m));
            }
            k += 2;
        }
    }
    None
}

fn backtrack(trace: &[Vec<isize>], n: isize, m: isize) -> Vec<Op> {
    let (mut x, mut y) = (n, m);
    let mut ops = Vec::new();
    for (d, v) in trace.iter().enumerate().rev() {
        let d = d as isize;
        let at = |k: isize| v[(k + d + 1) as usize];
        let k = x - y;
        let prev_k = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let prev_x = at(prev_k);
        let prev_y = prev_x - prev_k;
        while x > prev_x && y > prev_y && x > 0 && y > 0 {
            ops.push(Op::Eq((x - 1) as usize, (y - 1) as usize));
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            if x == prev_x {
                ops.push(Op::Ins((y - 1) as usize));
            } else {
                ops.push(Op::Del((x - 1) as usize));
            }
        }
        x = prev_x;
        y = prev_y;
    }
    ops.reverse();
    ops
}

/// The edit script from `a` to `b`: common head and tail, then the middle by [`myers`] (or
/// removed and added whole past [`MAX_EDITS`]).
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let head = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let tail = a[head..]
        .iter()
        .rev()
        .zip(b[head..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[head..a.len() - tail], &b[head..b.len() - tail]);
    let mut ops: Vec<Op> = (0..head).map(|i| Op::Eq(i, i)).collect();
    let middle = myers(am, bm, MAX_EDITS).unwrap_or_else(|| {
        (0..am.len())
            .map(Op::Del)
            .chain((0..bm.len()).map(Op::Ins))
            .collect()
    });
    ops.extend(middle.into_iter().map(|op| match op {
        Op::Eq(i, j) => Op::Eq(i + head, j + head),
        Op::Del(i) => Op::Del(i + head),
        Op::Ins(j) => Op::Ins(j + head),
    }));
    let (a0, b0) = (a.len() - tail, b.len() - tail);
    ops.extend((0..tail).map(|t| Op::Eq(a0 + t, b0 + t)));
    ops
}

/// `l,s` of a hunk header: 1-based start (0 for an empty side, as diff prints it) and count.
fn range(start: usize, count: usize) -> String {
    let first = if count == 0 { start } else { start + 1 };
    if count == 1 {
        first.to_string()
    } else {
        format!("{first},{count}")
    }
}

fn push_line(out: &mut String, mark: char, line: &str) {
    out.push(mark);
    match line.strip_suffix('\n') {
        Some(l) => {
            out.push_str(l);
            out.push('\n');
        }
        None => {
            out.push_str(line);
            out.push_str("\n\\ No newline at end of file\n");
        }
    }
}

/// The unified diff from `old` (named `old_name`) to `new` (named `new_name`); empty when they
/// are equal.
pub fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = script(&a, &b);
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Eq(..)))
        .map(|(i, _)| i)
        .collect();
    let mut c = 0;
    while c < changed.len() {
        // One hunk: changes whose gaps are at most 2 * CONTEXT equal lines.
        let first = changed[c];
        let mut last = first;
        while c + 1 < changed.len() && changed[c + 1] - last <= 2 * CONTEXT + 1 {
            c += 1;
            last = changed[c];
        }
        c += 1;
        let from = first.saturating_sub(CONTEXT);
        let to = (last + CONTEXT + 1).min(ops.len());
        let hunk = &ops[from..to];
        // Where the hunk starts on each side: the first old and new line at or after `from`.
        let old_start = ops[..from]
            .iter()
            .filter(|o| !matches!(o, Op::Ins(_)))
            .count();
        let new_start = ops[..from]
            .iter()
            .filter(|o| !matches!(o, Op::Del(_)))
            .count();
        let old_count = hunk.iter().filter(|o| !matches!(o, Op::Ins(_))).count();
        let new_count = hunk.iter().filter(|o| !matches!(o, Op::Del(_))).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(old_start, old_count),
            range(new_start, new_count)
        ));
        for op in hunk {
            match *op {
                Op::Eq(i, _) => push_line(&mut out, ' ', a[i]),
                Op::Del(i) => push_line(&mut out, '-', a[i]),
                Op::Ins(j) => push_line(&mut out, '+', b[j]),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Applies a unified diff to `old` (the hunks in order), as `patch` would.
    fn apply(old: &str, diff: &str) -> String {
        let a: Vec<&str> = old.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0;
        let mut lines = diff.lines().skip(2).peekable();
        while let Some(h) = lines.next() {
            let old_range = h
                .trim_start_matches("@@ -")
                .split(' ')
                .next()
                .expect("range");
            let (start, count) = old_range.split_once(',').unwrap_or((old_range, "1"));
            let (start, count): (usize, usize) =
                (start.parse().expect("start"), count.parse().expect("count"));
            // An empty old side names the line the hunk goes after.
            let start = if count == 0 { start } else { start - 1 };
            out.extend(a[at..start].iter().copied());
            at = start;
            while let Some(l) = lines.next_if(|l| !l.starts_with("@@")) {
                let nl = lines.next_if(|l| l.starts_with('\\')).is_none();
                let text = format!("{}{}", &l[1..], if nl { "\n" } else { "" });
                match &l[..1] {
                    " " => {
                        out.push_str(&text);
                        at += 1;
                    }
                    "-" => at += 1,
                    _ => out.push_str(&text),
                }
            }
        }
        out.extend(a[at..].iter().copied());
        out
    }

    #[test]
    fn a_changed_line_in_the_middle_with_three_lines_of_context() {
        let old: String = (1..=10).map(|i| format!("{i}\n")).collect();
        let new = old.replace("5\n", "five\n");
        assert_eq!(
            unified(&old, &new, "a", "b"),
            "--- a\n+++ b\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn a_missing_file_and_no_newline_at_the_end() {
        assert_eq!(
            unified("", "x\ny", "/dev/null", "b"),
            "--- /dev/null\n+++ b\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n"
        );
        assert_eq!(unified("same\n", "same\n", "a", "b"), "");
    }

    #[test]
    fn distant_changes_make_two_hunks_and_close_ones_one() {
        let lines = |changed: &[usize]| -> String {
            (1..=30)
                .map(|i| {
                    if changed.contains(&i) {
                        format!("changed {i}\n")
                    } else {
                        format!("{i}\n")
                    }
                })
                .collect()
        };
        let old = lines(&[]);
        let d = unified(&old, &lines(&[3, 25]), "a", "b");
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        // Six equal lines between two changes: one hunk (diff -u joins gaps of 2 * 3).
        let d = unified(&old, &lines(&[10, 17]), "a", "b");
        assert_eq!(d.matches("@@ -").count(), 1, "{d}");
        assert!(d.starts_with("--- a\n+++ b\n@@ -7,14 +7,14 @@\n"), "{d}");
        // Seven: two.
        let d = unified(&old, &lines(&[10, 18]), "a", "b");
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
        let d = unified(&old, &lines(&[10, 16]), "a", "b");
        assert_eq!(d.matches("@@ -").count(), 1, "{d}");
    }

    #[test]
    fn every_diff_applies_back_to_the_new_text() {
        let texts = [
            "",
            "a\n",
            "a\nb\nc\n",
            "a\nx\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n",
            "b\nc\nd\n",
            "x\ny\nz",
            "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n",
            "m\nl\nk\nj\ni\nh\ng\nf\ne\nd\nc\nb\na\n",
        ];
        for old in texts {
            for new in texts {
                let d = unified(old, new, "a", "b");
                assert_eq!(apply(old, &d), new, "{old:?} -> {new:?}:\n{d}");
            }
        }
    }

    #[test]
    fn past_the_bound_the_middle_is_shown_whole() {
        let old: String = (0..MAX_EDITS).map(|i| format!("o{i}\n")).collect();
        let new: String = (0..MAX_EDITS).map(|i| format!("n{i}\n")).collect();
        let d = unified(&old, &new, "a", "b");
        assert_eq!(
            d.lines().filter(|l| l.starts_with('-')).count(),
            MAX_EDITS + 1
        );
        assert_eq!(apply(&old, &d), new);
    }
}
