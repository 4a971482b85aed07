//! The host's part of a call over shards ([`crate::gpu::GpuSet`]): how data
//! is split, how the shards' partial results combine, and the sample sort's
//! splitters, bucket bounds and exchange. Pure functions of lengths, values
//! and the user's own closures, so that every one is tested here on the CPU
//! with simulated shards of every size; the GPU side only runs them.
//!
//! Orders and combinations are fixed by the shard layout, never by timing:
//! a call over a given layout gives the same bits on every run.

use alloc::vec;
use alloc::vec::Vec;
use core::cmp::Ordering;

/// `n` elements split over `parts` shards as evenly as they go: the first
/// `n % parts` shards one longer. No shard for no parts.
pub fn even_lengths(n: usize, parts: usize) -> Vec<usize> {
    if parts == 0 {
        return Vec::new();
    }
    (0..parts)
        .map(|i| n / parts + usize::from(i < n % parts))
        .collect()
}

/// Where each shard starts: the running sum of `lengths`, one more entry
/// than shards (the last is the total).
pub fn starts(lengths: &[usize]) -> Vec<usize> {
    let mut at = Vec::with_capacity(lengths.len() + 1);
    let mut sum = 0usize;
    at.push(0);
    for &l in lengths {
        sum += l;
        at.push(sum);
    }
    at
}

/// Segments (`offsets`, `segments + 1` ascending boundaries from 0 to the
/// data's length) kept whole over `parts` shards: each shard's element
/// count as close to an even share as whole segments allow (a shard ends
/// at the first segment boundary at or past its even end). Returns each
/// shard's element and segment counts. `None` where `offsets` is not
/// ascending from 0.
pub fn segment_lengths(offsets: &[usize], parts: usize) -> Option<(Vec<usize>, Vec<usize>)> {
    if parts == 0 || offsets.first().is_some_and(|&o| o != 0) {
        return None;
    }
    if offsets.windows(2).any(|w| w[0] > w[1]) {
        return None;
    }
    let n = offsets.last().copied().unwrap_or(0);
    let segments = offsets.len().saturating_sub(1);
    let even = starts(&even_lengths(n, parts));
    let (mut elements, mut counts) = (Vec::with_capacity(parts), Vec::with_capacity(parts));
    let mut segment = 0usize;
    for k in 0..parts {
        let first = segment;
        // The last shard takes what is left; the others end at the first
        // boundary at or past their even end.
        if k + 1 == parts {
            segment = segments;
        } else {
            while segment < segments && offsets[segment + 1] <= even[k + 1] {
                segment += 1;
            }
        }
        let from = offsets.get(first).copied().unwrap_or(0);
        let to = offsets.get(segment).copied().unwrap_or(0);
        elements.push(to - from);
        counts.push(segment - first);
    }
    Some((elements, counts))
}

/// Each segment of `offsets` (global boundaries) whole in one shard of
/// `lengths`: the shard each segment lies in, or the first segment that
/// crosses a shard boundary, with the shard it starts in. An empty
/// segment at a boundary belongs to the later shard (the last shard, at
/// the end).
pub fn segment_shards(offsets: &[usize], lengths: &[usize]) -> Result<Vec<usize>, (usize, usize)> {
    let at = starts(lengths);
    let mut shard = 0usize;
    let mut owner = Vec::with_capacity(offsets.len().saturating_sub(1));
    for (i, w) in offsets.windows(2).enumerate() {
        let (from, to) = (w[0], w[1]);
        while shard + 1 < lengths.len() && from >= at[shard + 1] {
            shard += 1;
        }
        if to > at[shard + 1] {
            return Err((i, shard));
        }
        owner.push(shard);
    }
    Ok(owner)
}

/// An inclusive scan's carry into each shard: `None` where nothing comes
/// before it (the first shard, or only empty ones), else the user's `op`
/// folded over the earlier shards' totals from the left, in shard order
/// (an exclusive scan of the totals). `totals[k]` is shard `k`'s last
/// scanned value, `None` for an empty shard, which passes the carry on.
pub fn carries<T: Copy>(totals: &[Option<T>], op: impl Fn(T, T) -> T) -> Vec<Option<T>> {
    let mut carry: Option<T> = None;
    totals
        .iter()
        .map(|t| {
            let into = carry;
            if let Some(t) = *t {
                carry = Some(match carry {
                    Some(c) => op(c, t),
                    None => t,
                });
            }
            into
        })
        .collect()
}

/// An exclusive scan's seed for each shard: `init` for the first, then
/// each earlier shard's total folded on from the left with `op`
/// (`seed[k + 1] = op(seed[k], total[k])`; an empty shard, `None`, passes
/// its seed on).
pub fn seeds<T: Copy>(init: T, totals: &[Option<T>], op: impl Fn(T, T) -> T) -> Vec<T> {
    let mut seed = init;
    totals
        .iter()
        .map(|t| {
            let into = seed;
            if let Some(t) = *t {
                seed = op(seed, t);
            }
            into
        })
        .collect()
}

/// A reduce over shards: `partials[k]` is shard `k`'s fold (`None` for an
/// empty shard), the first non-empty one from `init`, the others from
/// their own first element. Combined from the left in shard order, so the
/// bits depend on the shard layout alone. `init` when every shard is
/// empty.
pub fn combine<T: Copy>(init: T, partials: &[Option<T>], op: impl Fn(T, T) -> T) -> T {
    let mut value: Option<T> = None;
    for p in partials.iter().flatten() {
        value = Some(match value {
            Some(v) => op(v, *p),
            None => *p,
        });
    }
    value.unwrap_or(init)
}

/// An element's place in the sample sort's order: its shard, then its
/// index in that shard after the local (stable) sort. Among equal
/// elements it is their order in the input, which keeps the sort stable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub shard: usize,
    pub index: usize,
}

/// How many samples each shard gives the splitters: enough that each
/// bucket's size is within a few percent of even for data of any order
/// (regular sampling of sorted shards bounds a bucket by about twice the
/// even share plus one sample interval for each shard).
pub fn samples_per_shard(parts: usize) -> usize {
    if parts <= 1 {
        0
    } else {
        16 * parts
    }
}

/// The indices of `count` regular samples of a sorted shard of `len`
/// elements: evenly spaced, none past the end; fewer where the shard is
/// shorter.
pub fn sample_indices(len: usize, count: usize) -> Vec<usize> {
    let count = count.min(len);
    (0..count).map(|i| (i * len + len / 2) / count).collect()
}

/// Compares `(a, pa)` with `(b, pb)` in the sample sort's total order:
/// `cmp` on the elements, then their places.
fn order<T>(
    cmp: &impl Fn(&T, &T) -> Ordering,
    (a, pa): (&T, Place),
    (b, pb): (&T, Place),
) -> Ordering {
    cmp(a, b).then(pa.cmp(&pb))
}

/// `parts - 1` splitters from every shard's samples, in the sample sort's
/// order: the samples sorted by `cmp` then place, taken at even ranks.
/// Fewer where there are fewer samples than buckets (the rest of the
/// buckets then stay empty).
pub fn splitters<T: Copy>(
    mut samples: Vec<(T, Place)>,
    parts: usize,
    cmp: impl Fn(&T, &T) -> Ordering,
) -> Vec<(T, Place)> {
    samples.sort_by(|(a, pa), (b, pb)| order(&cmp, (a, *pa), (b, *pb)));
    if parts <= 1 || samples.is_empty() {
        return Vec::new();
    }
    let m = samples.len();
    let mut out: Vec<(T, Place)> = (1..parts)
        .map(|j| samples[(j * m / parts).min(m - 1)])
        .collect();
    out.dedup_by(|a, b| a.1 == b.1);
    out
}

/// Where each splitter cuts a sorted shard: for each splitter, the number
/// of the shard's elements before it in the sample sort's order (a lower
/// bound), all searched together, one round of reads for each halving:
/// `read` gets the indices the unfinished searches look at, in splitter
/// order, and returns those elements. Returns `[0, cut_1, …, len]`, one
/// bucket range for each splitter and one more.
pub fn cuts<T, E>(
    len: usize,
    shard: usize,
    splitters: &[(T, Place)],
    mut read: impl FnMut(&[usize]) -> Result<Vec<T>, E>,
    cmp: impl Fn(&T, &T) -> Ordering,
) -> Result<Vec<usize>, E> {
    // Half-open search ranges [lo, hi): the answer lies in lo..=hi.
    let mut lo = vec![0usize; splitters.len()];
    let mut hi = vec![len; splitters.len()];
    loop {
        let active: Vec<usize> = (0..splitters.len()).filter(|&j| lo[j] < hi[j]).collect();
        if active.is_empty() {
            break;
        }
        let mids: Vec<usize> = active
            .iter()
            .map(|&j| lo[j] + (hi[j] - lo[j]) / 2)
            .collect();
        let values = read(&mids)?;
        for ((&j, &mid), v) in active.iter().zip(&mids).zip(&values) {
            let (s, ps) = &splitters[j];
            let place = Place { shard, index: mid };
            if order(&cmp, (v, place), (s, *ps)) == Ordering::Less {
                lo[j] = mid + 1;
            } else {
                hi[j] = mid;
            }
        }
    }
    let mut out = Vec::with_capacity(splitters.len() + 2);
    out.push(0);
    out.extend(lo);
    out.push(len);
    Ok(out)
}

/// One copy of the sample sort's exchange: `len` elements from shard
/// `from` at `from_start` to bucket (destination shard) `to` at
/// `to_start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    pub from: usize,
    pub from_start: usize,
    pub to: usize,
    pub to_start: usize,
    pub len: usize,
}

/// The exchange for every shard's cuts (as [`cuts`] returns them, one
/// bucket for each destination): each destination's length, and the
/// copies that fill it, the shards' runs in shard order (so a stable sort
/// of a destination keeps equal elements in input order). Empty copies
/// are left out.
pub fn exchange(cuts: &[Vec<usize>]) -> (Vec<usize>, Vec<Transfer>) {
    let buckets = cuts.first().map_or(0, |c| c.len().saturating_sub(1));
    let mut lengths = vec![0usize; buckets];
    let mut transfers = Vec::new();
    for (from, c) in cuts.iter().enumerate() {
        for (to, w) in c.windows(2).enumerate() {
            let len = w[1] - w[0];
            if len > 0 {
                transfers.push(Transfer {
                    from,
                    from_start: w[0],
                    to,
                    to_start: lengths[to],
                    len,
                });
            }
            lengths[to] += len;
        }
    }
    (lengths, transfers)
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    /// Every way to split `n` elements over `parts` shards, empty ones too.
    fn layouts(n: usize, parts: usize) -> Vec<Vec<usize>> {
        if parts == 1 {
            return vec![vec![n]];
        }
        (0..=n)
            .flat_map(|first| {
                layouts(n - first, parts - 1)
                    .into_iter()
                    .map(move |mut rest| {
                        rest.insert(0, first);
                        rest
                    })
            })
            .collect()
    }

    fn split<T: Copy>(data: &[T], lengths: &[usize]) -> Vec<Vec<T>> {
        let at = starts(lengths);
        at.windows(2).map(|w| data[w[0]..w[1]].to_vec()).collect()
    }

    /// An associative operation that is not commutative: composing affine
    /// maps `x -> a x + b` of u32 (first the left, then the right), so a
    /// wrong combination order shows.
    fn affine(l: (u32, u32), r: (u32, u32)) -> (u32, u32) {
        (
            l.0.wrapping_mul(r.0),
            l.1.wrapping_mul(r.0).wrapping_add(r.1),
        )
    }

    fn data(n: usize, seed: u32) -> Vec<(u32, u32)> {
        let mut x = seed.wrapping_mul(2654435761).wrapping_add(1);
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                (x | 1, x >> 7)
            })
            .collect()
    }

    /// A scan from `seed` (`None`: from the first element), as a seeded
    /// GPU scan computes it.
    fn scan_from(seed: Option<(u32, u32)>, xs: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut acc = seed;
        xs.iter()
            .map(|&x| {
                let y = acc.map_or(x, |a| affine(a, x));
                acc = Some(y);
                y
            })
            .collect()
    }

    fn exclusive_from(seed: (u32, u32), xs: &[(u32, u32)]) -> Vec<(u32, u32)> {
        let mut acc = seed;
        xs.iter()
            .map(|&x| {
                let before = acc;
                acc = affine(acc, x);
                before
            })
            .collect()
    }

    #[test]
    fn even_lengths_differ_by_at_most_one_and_sum_to_the_length() {
        assert!(even_lengths(5, 0).is_empty());
        for n in 0..40 {
            for parts in 1..9 {
                let l = even_lengths(n, parts);
                assert_eq!(l.len(), parts);
                assert_eq!(l.iter().sum::<usize>(), n);
                assert!(
                    l.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1),
                    "{l:?}"
                );
            }
        }
    }

    #[test]
    fn scans_over_shards_of_every_size_equal_the_whole_scan() {
        for n in 0..=9 {
            let xs = data(n, n as u32);
            let whole = scan_from(None, &xs);
            let init = (3, 5);
            let whole_ex = exclusive_from(init, &xs);
            for parts in 1..=4 {
                for lengths in layouts(n, parts) {
                    let shards = split(&xs, &lengths);
                    // Inclusive: each shard scanned alone, its last value
                    // its total, then rescanned from its carry.
                    let totals: Vec<_> = shards
                        .iter()
                        .map(|s| scan_from(None, s).last().copied())
                        .collect();
                    let carry = carries(&totals, affine);
                    let got: Vec<_> = shards
                        .iter()
                        .zip(&carry)
                        .flat_map(|(s, &c)| scan_from(c, s))
                        .collect();
                    assert_eq!(got, whole, "inclusive over {lengths:?}");
                    // Exclusive: seeded from the earlier shards' totals.
                    let seed = seeds(init, &totals, affine);
                    let got: Vec<_> = shards
                        .iter()
                        .zip(&seed)
                        .flat_map(|(s, &c)| exclusive_from(c, s))
                        .collect();
                    assert_eq!(got, whole_ex, "exclusive over {lengths:?}");
                    // Reduce: the first non-empty shard from init, the rest
                    // from their first element.
                    let mut first = true;
                    let partials: Vec<_> = shards
                        .iter()
                        .map(|s| {
                            let (&x0, rest) = s.split_first()?;
                            let from = if first { affine(init, x0) } else { x0 };
                            first = false;
                            Some(rest.iter().fold(from, |a, &x| affine(a, x)))
                        })
                        .collect();
                    let folded = xs.iter().fold(init, |a, &x| affine(a, x));
                    assert_eq!(
                        combine(init, &partials, affine),
                        folded,
                        "reduce over {lengths:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn segments_stay_whole_in_their_shards() {
        assert_eq!(segment_lengths(&[1, 2], 2), None);
        assert_eq!(segment_lengths(&[0, 3, 2], 2), None);
        assert_eq!(
            segment_lengths(&[0], 3),
            Some((vec![0, 0, 0], vec![0, 0, 0]))
        );
        for seed in 0..200u32 {
            let sizes = data(1 + seed as usize % 12, seed);
            let mut offsets = vec![0usize];
            for (a, _) in &sizes {
                offsets.push(offsets.last().unwrap() + (a % 7) as usize);
            }
            for parts in 1..=5 {
                let (elements, counts) = segment_lengths(&offsets, parts).unwrap();
                assert_eq!(counts.iter().sum::<usize>(), offsets.len() - 1);
                assert_eq!(elements.iter().sum::<usize>(), *offsets.last().unwrap());
                let owner = segment_shards(&offsets, &elements).unwrap();
                let mut expect = Vec::new();
                for (k, &c) in counts.iter().enumerate() {
                    expect.extend(std::iter::repeat_n(k, c));
                }
                // Empty segments at a boundary may go either way; the
                // elements of every segment lie in the shard it names.
                let at = starts(&elements);
                for (i, &k) in owner.iter().enumerate() {
                    assert!(at[k] <= offsets[i] && offsets[i + 1] <= at[k + 1]);
                }
            }
        }
        // A segment across a boundary is named, with the shard it starts in.
        assert_eq!(segment_shards(&[0, 2, 6], &[3, 3]), Err((1, 0)));
        assert_eq!(segment_shards(&[0, 3, 3, 6], &[3, 3]), Ok(vec![0, 1, 1]));
    }

    /// The sample sort on the CPU: shards sorted alone, splitters from
    /// their samples, cuts by searching each shard, the exchange, and a
    /// stable sort of each destination; equal to one stable sort.
    fn sample_sort(shards: &[Vec<(u32, u32)>]) -> (Vec<Vec<(u32, u32)>>, usize) {
        let by_key = |a: &(u32, u32), b: &(u32, u32)| a.0.cmp(&b.0);
        let parts = shards.len();
        let sorted: Vec<Vec<_>> = shards
            .iter()
            .map(|s| {
                let mut s = s.clone();
                s.sort_by(by_key);
                s
            })
            .collect();
        let mut samples = Vec::new();
        for (k, s) in sorted.iter().enumerate() {
            for i in sample_indices(s.len(), samples_per_shard(parts)) {
                samples.push((s[i], Place { shard: k, index: i }));
            }
        }
        let split = splitters(samples, parts, by_key);
        assert!(split.len() < parts.max(1));
        let mut rounds = 0;
        let cut: Vec<Vec<usize>> = sorted
            .iter()
            .enumerate()
            .map(|(k, s)| {
                let c = cuts(
                    s.len(),
                    k,
                    &split,
                    |mids| {
                        rounds += 1;
                        Ok::<_, ()>(mids.iter().map(|&i| s[i]).collect())
                    },
                    by_key,
                )
                .unwrap();
                assert!(c.windows(2).all(|w| w[0] <= w[1]), "{c:?}");
                c
            })
            .collect();
        let (lengths, transfers) = exchange(&cut);
        let mut out: Vec<Vec<(u32, u32)>> = lengths.iter().map(|&l| vec![(0, 0); l]).collect();
        for t in &transfers {
            out[t.to][t.to_start..t.to_start + t.len]
                .copy_from_slice(&sorted[t.from][t.from_start..t.from_start + t.len]);
        }
        for o in &mut out {
            o.sort_by(by_key);
        }
        (out, rounds)
    }

    #[test]
    fn the_sample_sort_over_shards_of_every_size_is_one_stable_sort() {
        for n in 0..=8 {
            // Few distinct keys, each element's input position its payload:
            // the stability shows.
            let xs: Vec<(u32, u32)> = data(n, 7 + n as u32)
                .iter()
                .enumerate()
                .map(|(i, &(a, _))| (a % 3, i as u32))
                .collect();
            let mut expect = xs.clone();
            expect.sort_by_key(|a| a.0);
            for parts in 1..=4 {
                for lengths in layouts(n, parts) {
                    let (out, _) = sample_sort(&split(&xs, &lengths));
                    let got: Vec<_> = out.concat();
                    assert_eq!(got, expect, "over {lengths:?}");
                }
            }
        }
    }

    #[test]
    fn the_sample_sort_balances_its_buckets_and_searches_in_few_rounds() {
        let n = 100_000;
        let xs: Vec<(u32, u32)> = data(n, 11).iter().map(|&(a, b)| (a >> 8, b)).collect();
        let mut expect = xs.clone();
        expect.sort_by_key(|a| a.0);
        for parts in [2, 3, 4, 8] {
            let (out, rounds) = sample_sort(&split(&xs, &even_lengths(n, parts)));
            assert_eq!(out.concat(), expect);
            let even = n / parts;
            let largest = out.iter().map(Vec::len).max().unwrap();
            assert!(
                largest * 10 <= even * 11,
                "{parts} parts: a bucket of {largest} for {even}"
            );
            // One round of reads for each halving of a shard, in each shard.
            assert!(rounds <= parts * (usize::BITS - (n / parts).leading_zeros() + 1) as usize);
        }
        // Sorted and reversed input, and all equal keys: still balanced.
        for xs in [
            (0..n as u32).map(|i| (i, i)).collect::<Vec<_>>(),
            (0..n as u32).rev().map(|i| (i, i)).collect(),
            (0..n as u32).map(|i| (7, i)).collect(),
        ] {
            let (out, _) = sample_sort(&split(&xs, &even_lengths(n, 4)));
            let largest = out.iter().map(Vec::len).max().unwrap();
            assert!(largest * 10 <= n / 4 * 11, "a bucket of {largest}");
            let mut expect = xs.clone();
            expect.sort_by_key(|a| a.0);
            assert_eq!(out.concat(), expect);
        }
    }
}
