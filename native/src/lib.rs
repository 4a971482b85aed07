//! The provider API that user code calls to hand a callback to a native CUDA
//! provider.
//!
//! Each function here is a *registration*: the compiler recognises calls to it
//! in MIR (see `frontend::registry`) and compiles the callback for the GPU.
//! On the host the bodies below run as they are, and are the CPU reference
//! that GPU results are compared against.
//!
//! Element types: the GPU providers take `i8 i16 i32 i64 u8 u16 u32 u64
//! f32 f64` (and `bool` as a predicate's or comparator's result), and
//! tuples and `#[derive(Clone, Copy)]` structs of them; the functions are
//! generic so that rustc accepts other types and the compiler's rejection
//! is its own diagnostic.
//!
//! [`gpu`] is the host API that runs the compiled callbacks on a device
//! (with the `gpu` feature). The frontend's bridge builds this crate as a
//! standalone rlib with plain `rustc` and no features: `lib.rs` and
//! `gpu.rs`, no dependencies.

#![no_std]

extern crate alloc;

pub mod gpu;
pub mod shard;

use alloc::vec;
use alloc::vec::Vec;

/// Folds `data` with `op`, starting from `init`, in order.
///
/// The GPU provider is a tree reduction, so `op` must be associative (and,
/// because blocks combine in a fixed order, results are deterministic but may
/// differ from this sequential fold for non-associative `op`).
///
/// `#[inline(never)]` keeps the call visible in optimised MIR, where the
/// frontend finds registrations.
///
/// Generic over `T` so that rustc accepts callbacks the compiler will reject
/// (an `i128` one, say) and the rejection is ours, with our diagnostic.
#[inline(never)]
pub fn reduce<T: Copy, F: Fn(T, T) -> T>(data: &[T], init: T, op: F) -> T {
    let mut acc = init;
    for &x in data {
        acc = op(acc, x);
    }
    acc
}

/// Like [`reduce`], but accepts an `FnMut` callback.
///
/// It exists so that user code with mutable callback state compiles on the
/// host; the compiler always rejects such callbacks for the GPU, since many
/// threads would race on the state.
#[inline(never)]
pub fn reduce_mut<T: Copy, F: FnMut(T, T) -> T>(data: &[T], init: T, mut op: F) -> T {
    let mut acc = init;
    for &x in data {
        acc = op(acc, x);
    }
    acc
}

/// Every prefix of `data` folded with `op`: `out[i] = op(...op(x0, x1)..., xi)`.
///
/// The GPU provider combines tiles of elements in a fixed tree, so `op`
/// must be associative for the results to equal these; it need not be
/// commutative (operands stay in index order). For a float sum the GPU's
/// results are the same bits on every run, and may differ from this fold.
#[inline(never)]
pub fn inclusive_scan<T: Copy, F: Fn(T, T) -> T>(data: &[T], op: F) -> Vec<T> {
    let mut out = Vec::with_capacity(data.len());
    let mut acc: Option<T> = None;
    for &x in data {
        let next = match acc {
            Some(a) => op(a, x),
            None => x,
        };
        out.push(next);
        acc = Some(next);
    }
    out
}

/// Every prefix before an element, from `init`: `out[0] = init`,
/// `out[i] = op(out[i-1], x(i-1))`. As [`inclusive_scan`], `op` must be
/// associative.
#[inline(never)]
pub fn exclusive_scan<T: Copy, F: Fn(T, T) -> T>(data: &[T], init: T, op: F) -> Vec<T> {
    let mut out = Vec::with_capacity(data.len());
    let mut acc = init;
    for &x in data {
        out.push(acc);
        acc = op(acc, x);
    }
    out
}

/// `op` of each element, in order.
#[inline(never)]
pub fn transform<T: Copy, U, F: Fn(T) -> U>(data: &[T], op: F) -> Vec<U> {
    data.iter().map(|&x| op(x)).collect()
}

/// `op` of each pair `(a[i], b[i])`.
///
/// # Panics
///
/// When `a` and `b` differ in length (the GPU call returns an error).
#[inline(never)]
pub fn transform2<T: Copy, U: Copy, V, F: Fn(T, U) -> V>(a: &[T], b: &[U], op: F) -> Vec<V> {
    assert_eq!(a.len(), b.len(), "transform2: the inputs differ in length");
    a.iter().zip(b).map(|(&x, &y)| op(x, y)).collect()
}

/// One fold per segment: segment `i` is `data[offsets[i]..offsets[i+1]]`,
/// folded from `init` as [`reduce`] folds (an empty one gives `init`);
/// `offsets.len() - 1` results (none for fewer than two offsets).
///
/// As for [`reduce`], the GPU folds each segment in a tree: `op` must be
/// associative and commutative for its results to equal these.
///
/// # Panics
///
/// When the offsets decrease or pass the end of `data` (the GPU call
/// returns an error).
#[inline(never)]
pub fn segmented_reduce<T: Copy, F: Fn(T, T) -> T>(
    data: &[T],
    offsets: &[usize],
    init: T,
    op: F,
) -> Vec<T> {
    offsets
        .windows(2)
        .map(|w| {
            let mut acc = init;
            for &x in &data[w[0]..w[1]] {
                acc = op(acc, x);
            }
            acc
        })
        .collect()
}

/// The elements for which `pred` holds, in order.
#[inline(never)]
pub fn select<T: Copy, P: Fn(T) -> bool>(data: &[T], pred: P) -> Vec<T> {
    data.iter().copied().filter(|&x| pred(x)).collect()
}

/// The elements with each run of consecutive ones that `same` finds the
/// same reduced to its first, in order, as [`Vec::dedup_by`] keeps them:
/// `same(a, b)` is asked of an element `a` and the one before it `b` (the
/// later one first), and `a` is dropped when it answers `true`:
/// `|a, b| a == b`, `|a, b| a / 10 == b / 10`, `|a, b| a.0 == b.0`.
///
/// `same` must be an equivalence (reflexive, symmetric, transitive, as
/// `==` is): `Vec::dedup_by` compares an element with the last one it
/// kept, the GPU with the one before it, which for an equivalence keep
/// the same elements.
#[inline(never)]
pub fn dedup_by<T: Copy, E: Fn(&T, &T) -> bool>(data: &[T], same: E) -> Vec<T> {
    let mut out = data.to_vec();
    out.dedup_by(|a, b| same(a, b));
    out
}

/// For each run of consecutive keys that `same` finds equal, its last key
/// and the `op`-fold of its values, in order: the runs are those
/// [`slice::chunk_by`] splits `keys` into (`same(a, b)` is asked of a key
/// `a` and the one after it `b`), each run's values folded from its first
/// as [`inclusive_scan`] folds. `|a, b| a == b` with `|x, y| x + y` sums
/// the values of each run of equal keys; `|a, b| a.0 == b.0` groups by a
/// field. (Of a run of keys that `same` finds equal but are not all `==`,
/// the last stands for the run, as CUB's reduce-by-key writes it: the key
/// before the next run's first, which its one pass has at hand.)
///
/// `same` must be an equivalence (as `==` is) and `op` associative: the
/// GPU folds a run in a tree whose shape depends on where the run lies,
/// in index order (commutativity is not needed).
///
/// # Panics
///
/// When `keys` and `values` differ in length (the GPU call returns an
/// error).
#[inline(never)]
pub fn reduce_by_key<K: Copy, V: Copy, E: Fn(&K, &K) -> bool, F: Fn(V, V) -> V>(
    keys: &[K],
    values: &[V],
    same: E,
    op: F,
) -> (Vec<K>, Vec<V>) {
    assert_eq!(
        keys.len(),
        values.len(),
        "reduce_by_key: the keys and the values differ in length"
    );
    let (mut out_keys, mut out_values) = (Vec::new(), Vec::new());
    let mut start = 0;
    for run in keys.chunk_by(|a, b| same(a, b)) {
        let vals = &values[start..start + run.len()];
        let mut acc = vals[0];
        for &v in &vals[1..] {
            acc = op(acc, v);
        }
        out_keys.push(run[run.len() - 1]);
        out_values.push(acc);
        start += run.len();
    }
    (out_keys, out_values)
}

/// The inclusive `op`-scan of `values`, restarting at each run of
/// consecutive keys that `same` finds equal (the runs of
/// [`reduce_by_key`]): each value folded with those of its run before it,
/// in order. `same` must be an equivalence and `op` associative, as for
/// [`reduce_by_key`].
///
/// # Panics
///
/// When `keys` and `values` differ in length (the GPU call returns an
/// error).
#[inline(never)]
pub fn scan_by_key<K: Copy, V: Copy, E: Fn(&K, &K) -> bool, F: Fn(V, V) -> V>(
    keys: &[K],
    values: &[V],
    same: E,
    op: F,
) -> Vec<V> {
    assert_eq!(
        keys.len(),
        values.len(),
        "scan_by_key: the keys and the values differ in length"
    );
    let mut out = Vec::with_capacity(values.len());
    let mut start = 0;
    for run in keys.chunk_by(|a, b| same(a, b)) {
        let mut acc = values[start];
        out.push(acc);
        for &v in &values[start + 1..start + run.len()] {
            acc = op(acc, v);
            out.push(acc);
        }
        start += run.len();
    }
    out
}

/// The elements for which `pred` holds and those for which it does not,
/// each in order, as [`Iterator::partition`] splits them: `|x| *x > 0`,
/// `|p| p.alive != 0`.
#[inline(never)]
pub fn partition<T: Copy, P: Fn(&T) -> bool>(data: &[T], pred: P) -> (Vec<T>, Vec<T>) {
    data.iter().partition(|x| pred(x))
}

/// For each query, the index of the first element of `sorted` for which
/// `pred(element, query)` fails, as [`slice::partition_point`] finds it:
/// `|x, q| x < q` (where each query would go in ascending data, before the
/// equal ones), `|x, q| x <= q` (after them), `|x, q| x.0 < *q` (by a
/// field). `sorted` must be partitioned by the predicate for every query
/// (all the elements for which it holds first); otherwise the index is
/// one the binary search finds, as `partition_point`'s.
#[inline(never)]
pub fn partition_point<T: Copy, Q: Copy, P: Fn(&T, &Q) -> bool>(
    sorted: &[T],
    queries: &[Q],
    pred: P,
) -> Vec<usize> {
    queries
        .iter()
        .map(|q| sorted.partition_point(|x| pred(x, q)))
        .collect()
}

/// `a` and `b`, each sorted by `compare`, merged into one sorted by it,
/// stably: of equal elements, `a`'s come first, then `b`'s, each in their
/// order. `|x, y| x.cmp(y)`, `|x, y| x.total_cmp(y)`, `|p, q|
/// p.at.cmp(&q.at)`. `compare` must be a total order (what `Ord::cmp`
/// gives), the one both inputs are sorted by.
#[inline(never)]
pub fn merge_by<T: Copy, C: Fn(&T, &T) -> core::cmp::Ordering>(
    a: &[T],
    b: &[T],
    compare: C,
) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        // `b`'s element goes first only when it is less: ties keep `a`'s.
        if compare(&b[j], &a[i]) == core::cmp::Ordering::Less {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// How many elements `bin` maps to each of `bins` bins: `|x| x as usize`
/// (bytes, 256 bins), `|x| (x >> 24) as usize`, `|p| (p.y * 16.0) as
/// usize`. An index at or past `bins` is not counted (a bin function may
/// answer `usize::MAX` for an element it leaves out).
#[inline(never)]
pub fn histogram<T: Copy, F: Fn(T) -> usize>(data: &[T], bins: usize, bin: F) -> Vec<u64> {
    let mut counts = vec![0u64; bins];
    for &x in data {
        if let Some(c) = counts.get_mut(bin(x)) {
            *c += 1;
        }
    }
    counts
}

/// The elements sorted by `compare`, stably (equal elements keep their
/// order), as [`slice::sort_by`]: `|a, b| a.cmp(b)`, `|a, b| b.cmp(a)`,
/// `|a, b| a.total_cmp(b)`, `|a, b| (a >> 4).cmp(&(b >> 4))`. `compare`
/// must be a total order (what `Ord::cmp` gives): for one, every stable
/// sort gives these results.
#[inline(never)]
pub fn sort_by<T: Copy, C: Fn(&T, &T) -> core::cmp::Ordering>(data: &[T], compare: C) -> Vec<T> {
    let mut out = data.to_vec();
    out.sort_by(compare);
    out
}

/// Each segment of the elements sorted by `compare`, stably, as
/// [`slice::sort_by`] sorts it: segment `i` is
/// `data[offsets[i]..offsets[i+1]]` (as [`segmented_reduce`]'s), and the
/// elements outside every segment (before the first offset, from the last
/// one on) stay where they are. `compare` is a total order, as
/// [`sort_by`]'s. Offsets that decrease or pass the end of the data panic
/// here (and are an error on the GPU).
#[inline(never)]
pub fn segmented_sort_by<T: Copy, C: Fn(&T, &T) -> core::cmp::Ordering>(
    data: &[T],
    offsets: &[usize],
    compare: C,
) -> Vec<T> {
    let mut out = data.to_vec();
    for w in offsets.windows(2) {
        out[w[0]..w[1]].sort_by(&compare);
    }
    out
}

/// The elements sorted by `key`, stably (equal keys keep their elements'
/// order), as [`slice::sort_by_key`]: `|x| x >> 4`, `|x| x.abs()`,
/// `|x| *x % 10 == 0`, `|x| (x >> 4, x & 15)`. The key is an integer, `bool`
/// or `char`, or a tuple of up to four of them.
#[inline(never)]
pub fn sort_by_key<T: Copy, K: Ord, F: Fn(&T) -> K>(data: &[T], key: F) -> Vec<T> {
    let mut out = data.to_vec();
    out.sort_by_key(key);
    out
}

/// The elements in ascending order, stably, as [`slice::sort`]: `T`'s own
/// order, `Ord::cmp`. On the GPU, `T` is an integer element type; the
/// kernel is `sort_by`'s with `|a, b| a.cmp(b)`.
#[inline(never)]
pub fn sort<T: Copy + Ord>(data: &[T]) -> Vec<T> {
    let mut out = data.to_vec();
    out.sort();
    out
}

/// The elements in ascending order, as [`slice::sort_unstable`]: equal
/// elements may come in any order, which for integers, equal only when
/// they are the same value, gives what [`sort`] gives.
#[inline(never)]
pub fn sort_unstable<T: Copy + Ord>(data: &[T]) -> Vec<T> {
    let mut out = data.to_vec();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn segmented_sort_by_sorts_each_segment_alone_and_stably() {
        // (key, position): segments 1..4 and 4..4 (empty) and 4..7; the
        // elements at 0 and 7 are in none.
        let data = [
            (9, 0),
            (5, 1),
            (2, 2),
            (5, 3),
            (1, 4),
            (0, 5),
            (1, 6),
            (3, 7),
        ];
        let sorted = segmented_sort_by(&data, &[1, 4, 4, 7], |x, y| x.0.cmp(&y.0));
        assert_eq!(
            sorted,
            vec![
                (9, 0),
                (2, 2),
                (5, 1),
                (5, 3),
                (0, 5),
                (1, 4),
                (1, 6),
                (3, 7)
            ]
        );
        // No segment: the data as it is.
        assert_eq!(
            segmented_sort_by(&data, &[3], |x, y| x.0.cmp(&y.0)),
            data.to_vec()
        );
        assert_eq!(
            segmented_sort_by(&data, &[], |x, y| x.0.cmp(&y.0)),
            data.to_vec()
        );
    }

    #[test]
    fn merge_by_keeps_the_first_inputs_equal_elements_first() {
        // (key, which input): sorted by key in each input.
        let a = [(1, 'a'), (3, 'a'), (3, 'a'), (7, 'a')];
        let b = [(0, 'b'), (3, 'b'), (8, 'b')];
        let merged = merge_by(&a, &b, |x, y| x.0.cmp(&y.0));
        assert_eq!(
            merged,
            vec![
                (0, 'b'),
                (1, 'a'),
                (3, 'a'),
                (3, 'a'),
                (3, 'b'),
                (7, 'a'),
                (8, 'b')
            ]
        );
        // What a stable sort of both, one after the other, gives.
        let mut both = a.to_vec();
        both.extend_from_slice(&b);
        both.sort_by_key(|x| x.0);
        assert_eq!(merged, both);
        assert_eq!(merge_by(&a, &[], |x, y| x.0.cmp(&y.0)), a.to_vec());
        assert_eq!(merge_by(&[], &b, |x, y| x.0.cmp(&y.0)), b.to_vec());
    }

    #[test]
    fn partition_point_answers_each_query_as_the_slice_method() {
        let sorted = [1, 2, 2, 5, 9];
        assert_eq!(
            partition_point(&sorted, &[0, 2, 3, 10], |x, q| x < q),
            vec![0, 1, 3, 5]
        );
        assert_eq!(partition_point(&sorted, &[2], |x, q| x <= q), vec![3]);
        assert_eq!(partition_point(&[] as &[i32], &[4], |x, q| x < q), vec![0]);
        assert!(partition_point(&sorted, &[] as &[i32], |x, q| x < q).is_empty());
    }

    #[test]
    fn histogram_leaves_out_indices_past_the_last_bin() {
        let data = [0u8, 1, 1, 3, 200, 255];
        assert_eq!(histogram(&data, 4, |x| x as usize), vec![1, 2, 0, 1]);
        assert_eq!(histogram(&data, 0, |x| x as usize), Vec::<u64>::new());
        assert_eq!(histogram(&data, 2, |_| usize::MAX), vec![0, 0]);
    }
}
