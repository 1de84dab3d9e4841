//! Go's `sort.Slice`, step for step, for the places where opm's output order depends on it.
//!
//! `sort.Slice` is not stable: elements that compare equal end up in whatever order Go's
//! pattern-defeating quicksort (`sort/zsortfunc.go`, Go 1.19 and later) leaves them. That order
//! is deterministic for a given input, so reproducing opm's output exactly means running the
//! same algorithm: insertion sort up to 12 elements (stable), then pdqsort with Go's pivot
//! choice, partitioning, pattern breaking (an xorshift seeded with the length) and heapsort
//! fallback. `relatedImages` of a rendered bundle are the case that needs it: opm sorts them by
//! image only, and a CSV may list one image under several names.

/// Sorts `v` exactly as Go's `sort.Slice(v, less)` does.
pub fn slice<T>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let n = v.len() as isize;
    let limit = (usize::BITS - v.len().leading_zeros()) as isize;
    let mut d = Data { v, less };
    pdqsort(&mut d, 0, n, limit);
}

struct Data<'a, T, F> {
    v: &'a mut [T],
    less: F,
}

impl<T, F: Fn(&T, &T) -> bool> Data<'_, T, F> {
    fn less(&self, i: isize, j: isize) -> bool {
        (self.less)(&self.v[i as usize], &self.v[j as usize])
    }

    fn swap(&mut self, i: isize, j: isize) {
        self.v.swap(i as usize, j as usize);
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Hint {
    Unknown,
    Increasing,
    Decreasing,
}

/// Go's `xorshift.Next` (the 13/7/17 triple of package sort).
fn xorshift(r: &mut u64) -> u64 {
    *r ^= *r << 13;
    *r ^= *r >> 7;
    *r ^= *r << 17;
    *r
}

fn insertion_sort<T, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: isize, b: isize) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && d.less(j, j - 1) {
            d.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sift_down<T, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, lo: isize, hi: isize, first: isize) {
    let mut root = lo;
    loop {
        let mut child = 2 * root + 1;
        if child >= hi {
            break;
        }
        if child + 1 < hi && d.less(first + child, first + child + 1) {
            child += 1;
        }
        if !d.less(first + root, first + child) {
            return;
        }
        d.swap(first + root, first + child);
        root = child;
    }
}

fn heap_sort<T, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: isize, b: isize) {
    let (first, lo, hi) = (a, 0, b - a);
    let mut i = (hi - 1) / 2;
    while i >= 0 {
        sift_down(d, i, hi, first);
        i -= 1;
    }
    let mut i = hi - 1;
    while i >= 0 {
        d.swap(first, first + i);
        sift_down(d, lo, i, first);
        i -= 1;
    }
}

fn pdqsort<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<'_, T, F>,
    mut a: isize,
    mut b: isize,
    mut limit: isize,
) {
    const MAX_INSERTION: isize = 12;
    let (mut was_balanced, mut was_partitioned) = (true, true);
    loop {
        let length = b - a;
        if length <= MAX_INSERTION {
            insertion_sort(d, a, b);
            return;
        }
        if limit == 0 {
            heap_sort(d, a, b);
            return;
        }
        if !was_balanced {
            break_patterns(d, a, b);
            limit -= 1;
        }
        let (mut pivot, mut hint) = choose_pivot(d, a, b);
        if hint == Hint::Decreasing {
            reverse_range(d, a, b);
            pivot = (b - 1) - (pivot - a);
            hint = Hint::Increasing;
        }
        if was_balanced
            && was_partitioned
            && hint == Hint::Increasing
            && partial_insertion_sort(d, a, b)
        {
            return;
        }
        if a > 0 && !d.less(a - 1, pivot) {
            a = partition_equal(d, a, b, pivot);
            continue;
        }
        let (mid, already) = partition(d, a, b, pivot);
        was_partitioned = already;
        let (left, right) = (mid - a, b - mid);
        let balance_threshold = length / 8;
        if left < right {
            was_balanced = left >= balance_threshold;
            pdqsort(d, a, mid, limit);
            a = mid + 1;
        } else {
            was_balanced = right >= balance_threshold;
            pdqsort(d, mid + 1, b, limit);
            b = mid;
        }
    }
}

fn partition<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<'_, T, F>,
    a: isize,
    b: isize,
    pivot: isize,
) -> (isize, bool) {
    d.swap(a, pivot);
    let (mut i, mut j) = (a + 1, b - 1);
    while i <= j && d.less(i, a) {
        i += 1;
    }
    while i <= j && !d.less(j, a) {
        j -= 1;
    }
    if i > j {
        d.swap(j, a);
        return (j, true);
    }
    d.swap(i, j);
    i += 1;
    j -= 1;
    loop {
        while i <= j && d.less(i, a) {
            i += 1;
        }
        while i <= j && !d.less(j, a) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
    d.swap(j, a);
    (j, false)
}

fn partition_equal<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<'_, T, F>,
    a: isize,
    b: isize,
    pivot: isize,
) -> isize {
    d.swap(a, pivot);
    let (mut i, mut j) = (a + 1, b - 1);
    loop {
        while i <= j && !d.less(a, i) {
            i += 1;
        }
        while i <= j && d.less(a, j) {
            j -= 1;
        }
        if i > j {
            break;
        }
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
    i
}

fn partial_insertion_sort<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<'_, T, F>,
    a: isize,
    b: isize,
) -> bool {
    const MAX_STEPS: usize = 5;
    const SHORTEST_SHIFTING: isize = 50;
    let mut i = a + 1;
    for _ in 0..MAX_STEPS {
        while i < b && !d.less(i, i - 1) {
            i += 1;
        }
        if i == b {
            return true;
        }
        if b - a < SHORTEST_SHIFTING {
            return false;
        }
        d.swap(i, i - 1);
        // Shift the smaller one to the left (Go stops at index 1, not at a + 1).
        if i - a >= 2 {
            let mut j = i - 1;
            while j >= 1 {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
                j -= 1;
            }
        }
        // Shift the greater one to the right.
        if b - i >= 2 {
            let mut j = i + 1;
            while j < b {
                if !d.less(j, j - 1) {
                    break;
                }
                d.swap(j, j - 1);
                j += 1;
            }
        }
    }
    false
}

fn break_patterns<T, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: isize, b: isize) {
    let length = b - a;
    if length >= 8 {
        let mut random = length as u64;
        let modulus = 1u64 << (u64::BITS - (length as u64).leading_zeros());
        let mut idx = a + (length / 4) * 2 - 1;
        while idx <= a + (length / 4) * 2 + 1 {
            let mut other = (xorshift(&mut random) & (modulus - 1)) as isize;
            if other >= length {
                other -= length;
            }
            d.swap(idx, a + other);
            idx += 1;
        }
    }
}

fn choose_pivot<T, F: Fn(&T, &T) -> bool>(
    d: &mut Data<'_, T, F>,
    a: isize,
    b: isize,
) -> (isize, Hint) {
    const SHORTEST_NINTHER: isize = 50;
    const MAX_SWAPS: usize = 4 * 3;
    let l = b - a;
    let mut swaps = 0;
    let (mut i, mut j, mut k) = (a + l / 4, a + l / 4 * 2, a + l / 4 * 3);
    if l >= 8 {
        if l >= SHORTEST_NINTHER {
            i = median_adjacent(d, i, &mut swaps);
            j = median_adjacent(d, j, &mut swaps);
            k = median_adjacent(d, k, &mut swaps);
        }
        j = median(d, i, j, k, &mut swaps);
    }
    match swaps {
        0 => (j, Hint::Increasing),
        MAX_SWAPS => (j, Hint::Decreasing),
        _ => (j, Hint::Unknown),
    }
}

fn order2<T, F: Fn(&T, &T) -> bool>(
    d: &Data<'_, T, F>,
    a: isize,
    b: isize,
    swaps: &mut usize,
) -> (isize, isize) {
    if d.less(b, a) {
        *swaps += 1;
        (b, a)
    } else {
        (a, b)
    }
}

fn median<T, F: Fn(&T, &T) -> bool>(
    d: &Data<'_, T, F>,
    a: isize,
    b: isize,
    c: isize,
    swaps: &mut usize,
) -> isize {
    let (a, b) = order2(d, a, b, swaps);
    let (b, _c) = order2(d, b, c, swaps);
    let (_a, b) = order2(d, a, b, swaps);
    b
}

fn median_adjacent<T, F: Fn(&T, &T) -> bool>(
    d: &Data<'_, T, F>,
    a: isize,
    swaps: &mut usize,
) -> isize {
    median(d, a - 1, a, a + 1, swaps)
}

fn reverse_range<T, F: Fn(&T, &T) -> bool>(d: &mut Data<'_, T, F>, a: isize, b: isize) {
    let (mut i, mut j) = (a, b - 1);
    while i < j {
        d.swap(i, j);
        i += 1;
        j -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the input, the result is sorted and a permutation of it; up to 12 elements
        /// it is the stable order (Go's insertion sort).
        #[test]
        fn sorts_like_a_sort(v in proptest::collection::vec((0u8..6, any::<u16>()), 0..300)) {
            let mut got = v.clone();
            slice(&mut got, |a, b| a.0 < b.0);
            prop_assert!(got.windows(2).all(|w| w[0].0 <= w[1].0));
            let (mut x, mut y) = (got.clone(), v.clone());
            x.sort();
            y.sort();
            prop_assert_eq!(x, y);
            if v.len() <= 12 {
                let mut stable = v.clone();
                stable.sort_by_key(|e| e.0);
                prop_assert_eq!(got, stable);
            }
        }
    }

    /// Inputs long enough to reach heapsort, pattern breaking and the pre-sorted shortcuts.
    #[test]
    fn adversarial_shapes_sort() {
        for n in [13, 49, 50, 51, 100, 1000, 5000] {
            let shapes: Vec<Vec<u32>> = vec![
                (0..n).collect(),
                (0..n).rev().collect(),
                (0..n).map(|i| i % 7).collect(),
                (0..n).map(|i| if i % 2 == 0 { i } else { n - i }).collect(),
                vec![3; n as usize],
            ];
            for mut s in shapes {
                slice(&mut s, |a, b| a < b);
                assert!(s.windows(2).all(|w| w[0] <= w[1]), "{n}");
            }
        }
    }
}
