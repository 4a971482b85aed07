//! Tuples and structs as elements on the GPU against the CPU reference: an
//! arg-min over `(f32, u32)` pairs whose values repeat (ties go to the
//! least index), a field-wise fold of a struct, a nested tuple that rustc
//! reorders and pads, maps from a struct to a scalar and from a scalar to a
//! tuple with a capture, a zip of a struct and a scalar, segmented folds
//! of structs, records sorted by a comparator and by a key (stable, as
//! `slice::sort_by` and `sort_by_key`), the elements a predicate keeps,
//! the first of each run (`dedup_by`), both halves of a `partition`,
//! where queries go in sorted records (`partition_point`), counts by a
//! field (`histogram`), two sorted runs merged (`merge_by`), segments of
//! records sorted with elements outside them (`segmented_sort_by`), each run's
//! fold and running fold by key (`reduce_by_key`, `scan_by_key`),
//! running folds and `par_iter` chains (pairs, structs, nested tuples), at
//! sizes from 0 to 2^22, whole and
//! off alignment; and their timings beside CUB's with the same operations
//! as C++ functors (benches/cub/pipeline.cu). Every reduce operation is
//! associative and commutative, and every result is compared bit for bit.

use crate::{best, data, Checks};
use native::gpu::{device_element, Error, Gpu};

/// Three 4-byte fields, as CUB's `Point` in benches/cub/pipeline.cu.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub w: u32,
}

device_element!(Point { x: f32, y: f32, w: u32 });

/// Records wide enough (24 and 32 bytes) that a radix sort ranks (key,
/// index) pairs and gathers them once (`vocab::RADIX_GATHER_BYTES`); the
/// 32-byte one has a padding byte.
#[derive(Clone, Copy, Debug)]
pub struct Wide {
    pub id: u64,
    pub x: f32,
    pub y: f32,
    pub w: u32,
    pub tag: i32,
}

device_element!(Wide { id: u64, x: f32, y: f32, w: u32, tag: i32 });

#[derive(Clone, Copy, Debug)]
pub struct Wider {
    pub id: u64,
    pub a: f64,
    pub b: u64,
    pub w: u32,
    pub tag: i16,
    pub k: u8,
}

device_element!(Wider { id: u64, a: f64, b: u64, w: u32, tag: i16, k: u8 });

/// Each record's fields' bits, to compare bit for bit (never the padding).
fn wide_bits(r: &Wide) -> (u64, u32, u32, u32, i32) {
    (r.id, r.x.to_bits(), r.y.to_bits(), r.w, r.tag)
}

fn wider_bits(r: &Wider) -> (u64, u64, u64, u32, i16, u8) {
    (r.id, r.a.to_bits(), r.b, r.w, r.tag, r.k)
}

fn wides(values: &[f32]) -> Vec<Wide> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Wide {
            id: i as u64,
            x: (v * 64.0).floor(),
            y: *v,
            w: (i as u32).wrapping_mul(2_654_435_761),
            tag: (i % 7) as i32 - 3,
        })
        .collect()
}

fn widers(values: &[f32]) -> Vec<Wider> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Wider {
            id: i as u64,
            a: f64::from((v * 16.0).floor()),
            b: (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            w: (i as u32).wrapping_mul(2_654_435_761),
            tag: (i % 5) as i16 - 2,
            k: (i % 3) as u8,
        })
        .collect()
}

/// Wide records sorted stably on the device, bit for bit against std's
/// stable sorts: on one field, on two packed (one descending), on a
/// one-byte field (a single pass), and on a computed key.
fn check_wide_sorts(gpu: &Gpu, c: &mut Checks, n: usize, values: &[f32]) -> Result<(), Error> {
    let (hw, hv) = (wides(values), widers(values));
    let (dw, dv) = (gpu.upload(&hw)?, gpu.upload(&hv)?);
    for (what, lo) in [("whole", 0), ("from 1", n.min(1))] {
        let at = |name: &str| format!("wide {name}, {n} elements, {what}");
        let sorted = gpu.sort_by(&dw.slice(lo..), |a: &Wide, b: &Wide| a.x.total_cmp(&b.x))?.to_vec()?;
        let mut want = hw[lo..].to_vec();
        want.sort_by(|a, b| a.x.total_cmp(&b.x));
        c.check(&at("sort_by 24 bytes on a float"), sorted.iter().map(wide_bits).eq(want.iter().map(wide_bits)));
        let sorted = gpu.sort_by_key(&dw.slice(lo..), |r: &Wide| r.tag)?.to_vec()?;
        let mut want = hw[lo..].to_vec();
        want.sort_by_key(|r| r.tag);
        c.check(&at("sort_by_key 24 bytes on a field"), sorted.iter().map(wide_bits).eq(want.iter().map(wide_bits)));
        let sorted = gpu.sort_by_key(&dw.slice(lo..), |r: &Wide| r.w >> 29)?.to_vec()?;
        let mut want = hw[lo..].to_vec();
        want.sort_by_key(|r| r.w >> 29);
        c.check(&at("sort_by_key 24 bytes computed"), sorted.iter().map(wide_bits).eq(want.iter().map(wide_bits)));
        let by_k_then_a = |a: &Wider, b: &Wider| a.k.cmp(&b.k).then(b.a.total_cmp(&a.a));
        let sorted = gpu.sort_by(&dv.slice(lo..), by_k_then_a)?.to_vec()?;
        let mut want = hv[lo..].to_vec();
        want.sort_by(by_k_then_a);
        c.check(&at("sort_by 32 bytes on two fields"), sorted.iter().map(wider_bits).eq(want.iter().map(wider_bits)));
        let sorted = gpu.sort_by_key(&dv.slice(lo..), |r: &Wider| r.k)?.to_vec()?;
        let mut want = hv[lo..].to_vec();
        want.sort_by_key(|r| r.k);
        c.check(&at("sort_by_key 32 bytes on a byte"), sorted.iter().map(wider_bits).eq(want.iter().map(wider_bits)));
        let sorted = gpu.sort_by_key(&dv.slice(lo..), |r: &Wider| r.w)?.to_vec()?;
        let mut want = hv[lo..].to_vec();
        want.sort_by_key(|r| r.w);
        c.check(&at("sort_by_key 32 bytes on a word"), sorted.iter().map(wider_bits).eq(want.iter().map(wider_bits)));
    }
    Ok(())
}

fn points(values: &[f32]) -> Vec<Point> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| Point {
            x: *v,
            y: -*v,
            w: (i as u32).wrapping_mul(2_654_435_761),
        })
        .collect()
}

/// Values with few distinct ones, so that the arg-min meets ties.
fn pairs(values: &[f32]) -> Vec<(f32, u32)> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| ((v * 8.0).floor(), i as u32))
        .collect()
}

type Nested = (u8, (u16, i64), i8);

fn nested(values: &[f32]) -> Vec<Nested> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u8, ((i >> 3) as u16, (v * 1e9) as i64), (i as i8) | 0x41))
        .collect()
}

fn bits(p: &Point) -> (u32, u32, u32) {
    (p.x.to_bits(), p.y.to_bits(), p.w)
}

pub fn check_composites(gpu: &Gpu, c: &mut Checks) -> Result<(), Error> {
    let k = 0x5au8;
    for n in [0usize, 1, 31, 32, 33, 1023, 1025, 1_000_003, 1 << 22] {
        let values = data(n, 70 + n as u64);
        check_wide_sorts(gpu, c, n, &values)?;
        let (hp, hq, hn) = (pairs(&values), points(&values), nested(&values));
        let (dp, dq, dn) = (gpu.upload(&hp)?, gpu.upload(&hq)?, gpu.upload(&hn)?);
        let du = gpu.upload(&hq.iter().map(|p| p.w).collect::<Vec<u32>>())?;
        let from = n.min(1);
        for (what, lo) in [("whole", 0), ("from 1", from)] {
            let at = |name: &str| format!("composite {name}, {n} elements, {what}");
            let got = gpu.reduce(&dp.slice(lo..), (f32::INFINITY, u32::MAX), |a: (f32, u32), b: (f32, u32)| {
                if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) {
                    b
                } else {
                    a
                }
            })?;
            let want = hp[lo..]
                .iter()
                .copied()
                .fold((f32::INFINITY, u32::MAX), |a, b| if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a });
            c.check(&at("arg_min"), got.0.to_bits() == want.0.to_bits() && got.1 == want.1);
            let empty = Point { x: f32::NEG_INFINITY, y: f32::INFINITY, w: 0 };
            let got = gpu.reduce(&dq.slice(lo..), empty, |a: Point, b: Point| Point {
                x: a.x.max(b.x),
                y: a.y.min(b.y),
                w: a.w.wrapping_add(b.w),
            })?;
            let want = hq[lo..].iter().fold(empty, |a, b| Point {
                x: a.x.max(b.x),
                y: a.y.min(b.y),
                w: a.w.wrapping_add(b.w),
            });
            c.check(&at("extent"), bits(&got) == bits(&want));
            let zero: Nested = (0, (0, i64::MIN), -1);
            let got = gpu.reduce(&dn.slice(lo..), zero, |a: Nested, b: Nested| {
                (a.0 ^ b.0, (a.1 .0 | b.1 .0, a.1 .1.max(b.1 .1)), a.2 & b.2)
            })?;
            let want = hn[lo..]
                .iter()
                .fold(zero, |a, b| (a.0 ^ b.0, (a.1 .0 | b.1 .0, a.1 .1.max(b.1 .1)), a.2 & b.2));
            c.check(&at("nested"), got == want);
            let norms = gpu.transform(&dq.slice(lo..), |p: Point| p.x * p.x + p.y * p.y)?.to_vec()?;
            let want: Vec<f32> = hq[lo..].iter().map(|p| p.x * p.x + p.y * p.y).collect();
            c.check(&at("norms"), crate::same(&norms, &want));
            let tagged = gpu.transform(&du.slice(lo..), move |v: u32| ((v as u8) ^ k, v.wrapping_mul(3)))?.to_vec()?;
            let want: Vec<(u8, u32)> = hq[lo..].iter().map(|p| ((p.w as u8) ^ k, p.w.wrapping_mul(3))).collect();
            c.check(&at("pair_up"), tagged == want);
            let moved = gpu.transform(&dp.slice(lo..), |p: (f32, u32)| Point { x: p.0, y: p.0 * 0.5, w: p.1 })?.to_vec()?;
            let want: Vec<Point> = hp[lo..].iter().map(|p| Point { x: p.0, y: p.0 * 0.5, w: p.1 }).collect();
            c.check(
                &at("pair to point"),
                moved.len() == want.len() && moved.iter().zip(&want).all(|(a, b)| bits(a) == bits(b)),
            );
            let weights = gpu.upload(&values[lo..].iter().map(|v| *v as f64 * 0.25).collect::<Vec<f64>>())?;
            let weighed = gpu.transform2(&dq.slice(lo..), &weights, |p: Point, w: f64| (p.x as f64 * w, p.w))?.to_vec()?;
            let want: Vec<(f64, u32)> =
                hq[lo..].iter().zip(&values[lo..]).map(|(p, v)| (p.x as f64 * (*v as f64 * 0.25), p.w)).collect();
            c.check(
                &at("weigh"),
                weighed.len() == want.len() && weighed.iter().zip(&want).all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1),
            );
            // Segments of 0 to 40 elements, then one of the rest.
            let len = n - lo;
            let mut offsets = vec![0usize];
            while *offsets.last().unwrap() < len {
                let step = (offsets.len() * 7) % 41;
                offsets.push((offsets.last().unwrap() + step).min(len));
            }
            let ends = gpu.segmented_reduce(&dq.slice(lo..), &offsets, empty, |a: Point, b: Point| Point {
                x: a.x.max(b.x),
                y: a.y.min(b.y),
                w: a.w ^ b.w,
            })?.to_vec()?;
            let want: Vec<Point> = offsets
                .windows(2)
                .map(|w| {
                    hq[lo..][w[0]..w[1]].iter().fold(empty, |a, b| Point { x: a.x.max(b.x), y: a.y.min(b.y), w: a.w ^ b.w })
                })
                .collect();
            c.check(
                &at("segmented extents"),
                ends.len() == want.len() && ends.iter().zip(&want).all(|(a, b)| bits(a) == bits(b)),
            );
            // Records sorted, stably: by a float field with total_cmp
            // (the values repeat), by an integer key, by a tuple's field.
            let sorted = gpu.sort_by(&dq.slice(lo..), |a: &Point, b: &Point| a.x.total_cmp(&b.x))?.to_vec()?;
            let mut want = hq[lo..].to_vec();
            want.sort_by(|a, b| a.x.total_cmp(&b.x));
            c.check(&at("sort_by struct"), sorted.iter().map(bits).eq(want.iter().map(bits)));
            let sorted = gpu.sort_by_key(&dq.slice(lo..), |p: &Point| p.w >> 24)?.to_vec()?;
            let mut want = hq[lo..].to_vec();
            want.sort_by_key(|p| p.w >> 24);
            c.check(&at("sort_by_key struct"), sorted.iter().map(bits).eq(want.iter().map(bits)));
            // A computed tuple key with a capture, a signed field below
            // zero and a bool: the radix sort of the keys the key function
            // computes from 2^19 elements (each carrying its point).
            let off = 20i8;
            let key = move |p: &Point| (((p.w >> 26) as i8) - off, p.x < 0.0);
            let sorted = gpu.sort_by_key(&dq.slice(lo..), key)?.to_vec()?;
            let mut want = hq[lo..].to_vec();
            want.sort_by_key(key);
            c.check(&at("sort_by_key computed tuple key"), sorted.iter().map(bits).eq(want.iter().map(bits)));
            let sorted = gpu.sort_by(&dp.slice(lo..), |a: &(f32, u32), b: &(f32, u32)| b.0.total_cmp(&a.0))?.to_vec()?;
            let mut want = hp[lo..].to_vec();
            want.sort_by(|a, b| b.0.total_cmp(&a.0));
            c.check(
                &at("sort_by tuple, descending"),
                sorted.iter().map(|p| (p.0.to_bits(), p.1)).eq(want.iter().map(|p| (p.0.to_bits(), p.1))),
            );
            // The elements a predicate keeps, whole and in order: a pair,
            // a struct (12 bytes: no whole 16-byte vectors a tile when the
            // tile is odd), a nested tuple rustc reorders and pads.
            let t = 0.25f32;
            let kept = gpu.select(&dp.slice(lo..), |p: (f32, u32)| p.0 < 0.0 && p.1 % 2 == 0)?.to_vec()?;
            let want: Vec<(f32, u32)> = hp[lo..].iter().copied().filter(|p| p.0 < 0.0 && p.1 % 2 == 0).collect();
            c.check(
                &at("select tuple"),
                kept.iter().map(|p| (p.0.to_bits(), p.1)).eq(want.iter().map(|p| (p.0.to_bits(), p.1))),
            );
            let kept = gpu.select(&dq.slice(lo..), move |p: Point| p.x * p.x + p.y * p.y < t)?.to_vec()?;
            let want: Vec<Point> = hq[lo..].iter().copied().filter(|p| p.x * p.x + p.y * p.y < t).collect();
            c.check(&at("select struct"), kept.iter().map(bits).eq(want.iter().map(bits)));
            let kept = gpu.select(&dn.slice(lo..), move |e: Nested| e.0 ^ k < 0x80 && (e.1).1 > 0)?.to_vec()?;
            let want: Vec<Nested> = hn[lo..].iter().copied().filter(|e| e.0 ^ k < 0x80 && (e.1).1 > 0).collect();
            c.check(&at("select nested"), kept == want);
            // The first of each run, as Vec::dedup_by keeps it: of the
            // pairs sorted on the device by value (every distinct value
            // once, its first pair), and of points by a class of their
            // weight (a neighbour in four is the same).
            let by_value = gpu.sort_by(&dp.slice(lo..), |a: &(f32, u32), b: &(f32, u32)| a.0.total_cmp(&b.0))?;
            let firsts = gpu.dedup_by(&by_value, |a: &(f32, u32), b: &(f32, u32)| a.0 == b.0)?.to_vec()?;
            let mut want = hp[lo..].to_vec();
            want.sort_by(|a, b| a.0.total_cmp(&b.0));
            want.dedup_by(|a, b| a.0 == b.0);
            c.check(
                &at("dedup_by sorted tuple"),
                firsts.iter().map(|p| (p.0.to_bits(), p.1)).eq(want.iter().map(|p| (p.0.to_bits(), p.1))),
            );
            let firsts = gpu.dedup_by(&dq.slice(lo..), |a: &Point, b: &Point| a.w >> 30 == b.w >> 30)?.to_vec()?;
            let mut want = hq[lo..].to_vec();
            want.dedup_by(|a, b| a.w >> 30 == b.w >> 30);
            c.check(&at("dedup_by struct"), firsts.iter().map(bits).eq(want.iter().map(bits)));
            // Both halves of a partition, each in order, as
            // Iterator::partition splits them: points inside the circle
            // and the others.
            let (inside, outside) = gpu.partition(&dq.slice(lo..), move |p: &Point| p.x * p.x + p.y * p.y < t)?;
            let (want_in, want_out): (Vec<Point>, Vec<Point>) =
                hq[lo..].iter().partition(|p| p.x * p.x + p.y * p.y < t);
            c.check(
                &at("partition struct"),
                inside.to_vec()?.iter().map(bits).eq(want_in.iter().map(bits))
                    && outside.to_vec()?.iter().map(bits).eq(want_out.iter().map(bits)),
            );
            // Where each point's x goes among the pairs sorted by value
            // (partition_point of a struct query in tuples), and the points
            // counted by the top bits of their weight (a histogram of
            // structs).
            let places = gpu
                .partition_point(&by_value, &dq.slice(lo..), |a: &(f32, u32), p: &Point| a.0 < p.x)?
                .to_vec()?;
            let mut sorted = hp[lo..].to_vec();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
            let want: Vec<usize> = hq[lo..].iter().map(|p| sorted.partition_point(|a| a.0 < p.x)).collect();
            c.check(&at("partition_point tuple by struct"), places == want);
            let counts = gpu.histogram(&dq.slice(lo..), 48, |p: Point| (p.w >> 26) as usize)?.to_vec()?;
            let mut want = vec![0u64; 48];
            for p in &hq[lo..] {
                if let Some(c) = want.get_mut((p.w >> 26) as usize) {
                    *c += 1;
                }
            }
            c.check(&at("histogram struct"), counts == want);
            // Two runs of points, each sorted by x on the device, merged
            // by x (ties: the first run's first, as a stable sort of both
            // runs one after the other gives them).
            let half = (n - lo) / 2;
            let by_x = |a: &Point, b: &Point| a.x.total_cmp(&b.x);
            let first = gpu.sort_by(&dq.slice(lo..lo + half), by_x)?;
            let second = gpu.sort_by(&dq.slice(lo + half..), by_x)?;
            let merged = gpu.merge_by(&first, &second, |a: &Point, b: &Point| a.x.total_cmp(&b.x))?.to_vec()?;
            let mut want = hq[lo..lo + half].to_vec();
            want.sort_by(by_x);
            let mut rest = hq[lo + half..].to_vec();
            rest.sort_by(by_x);
            want.extend(rest);
            want.sort_by(by_x);
            c.check(&at("merge_by struct"), merged.iter().map(bits).eq(want.iter().map(bits)));
            // Each segment sorted, stably, by weight class descending then
            // by x: the extents' segments but the first and the last (the
            // points of those are in no segment and stay), short enough
            // for a block each (the pack sort); and two long ones (from a
            // few thousand points: the tagged merge sort of the whole
            // input), points before and after them.
            let inner = &offsets[1..offsets.len().saturating_sub(1).max(1)];
            let len = n - lo;
            let long = [len / 7, len / 2, len - len / 9];
            let by_class = |a: &Point, b: &Point| (b.w >> 28).cmp(&(a.w >> 28)).then(a.x.total_cmp(&b.x));
            for (segments, length) in [(inner, "short"), (&long[..], "long")] {
                let by_segment = gpu
                    .segmented_sort_by(&dq.slice(lo..), segments, |a: &Point, b: &Point| {
                        (b.w >> 28).cmp(&(a.w >> 28)).then(a.x.total_cmp(&b.x))
                    })?
                    .to_vec()?;
                let mut want_by_segment = hq[lo..].to_vec();
                for w in segments.windows(2) {
                    want_by_segment[w[0]..w[1]].sort_by(by_class);
                }
                c.check(
                    &at(&format!("segmented_sort_by struct, {length} segments")),
                    by_segment.iter().map(bits).eq(want_by_segment.iter().map(bits)),
                );
            }
            // Keys in runs and their values: the pairs sorted by value
            // (runs of one value) as keys of the points, each run's
            // extent (tuple keys, struct values); the points' weight
            // classes as keys of the pairs, a running arg-max restarting
            // at each run (struct keys, tuple values).
            let extent = |a: Point, b: Point| Point { x: a.x.max(b.x), y: a.y.min(b.y), w: a.w.wrapping_add(b.w) };
            let (run_keys, run_extents) = gpu.reduce_by_key(
                &by_value,
                &dq.slice(lo..),
                |a: &(f32, u32), b: &(f32, u32)| a.0 == b.0,
                extent,
            )?;
            let (run_keys, run_extents) = (run_keys.to_vec()?, run_extents.to_vec()?);
            let (mut want_keys, mut want_extents) = (Vec::new(), Vec::new());
            let mut at_value = 0;
            for run in sorted.chunk_by(|a, b| a.0 == b.0) {
                want_keys.push(run[run.len() - 1]);
                let values = &hq[lo..][at_value..at_value + run.len()];
                want_extents.push(values[1..].iter().fold(values[0], |a, b| extent(a, *b)));
                at_value += run.len();
            }
            c.check(
                &at("reduce_by_key tuple keys, struct values"),
                run_keys.iter().map(|p| (p.0.to_bits(), p.1)).eq(want_keys.iter().map(|p| (p.0.to_bits(), p.1)))
                    && run_extents.iter().map(bits).eq(want_extents.iter().map(bits)),
            );
            let arg_max_of = |a: (f32, u32), b: (f32, u32)| if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a };
            let running = gpu
                .scan_by_key(&dq.slice(lo..), &dp.slice(lo..), |a: &Point, b: &Point| a.w >> 30 == b.w >> 30, arg_max_of)?
                .to_vec()?;
            let mut want = Vec::with_capacity(n - lo);
            let mut at_pair = 0;
            for run in hq[lo..].chunk_by(|a, b| a.w >> 30 == b.w >> 30) {
                let mut acc = hp[lo + at_pair];
                want.push(acc);
                for p in &hp[lo + at_pair + 1..lo + at_pair + run.len()] {
                    acc = arg_max_of(acc, *p);
                    want.push(acc);
                }
                at_pair += run.len();
            }
            // A nested tuple's values (rustc reorders and pads them) by the
            // pairs' keys in runs of equal values: each run's wrapping
            // totals, and the running ones.
            let totals = |a: Nested, b: Nested| (a.0.wrapping_add(b.0), (a.1 .0 ^ b.1 .0, a.1 .1.wrapping_add(b.1 .1)), a.2 & b.2);
            let (_, nested_totals) =
                gpu.reduce_by_key(&by_value, &dn.slice(lo..), |a: &(f32, u32), b: &(f32, u32)| a.0 == b.0, totals)?;
            let nested_running = gpu
                .scan_by_key(&by_value, &dn.slice(lo..), |a: &(f32, u32), b: &(f32, u32)| a.0 == b.0, totals)?
                .to_vec()?;
            let (mut want_totals, mut want_running) = (Vec::new(), Vec::new());
            let mut at_nested = 0;
            for run in sorted.chunk_by(|a, b| a.0 == b.0) {
                let values = &hn[lo..][at_nested..at_nested + run.len()];
                let mut acc = values[0];
                want_running.push(acc);
                for v in &values[1..] {
                    acc = totals(acc, *v);
                    want_running.push(acc);
                }
                want_totals.push(acc);
                at_nested += run.len();
            }
            c.check(
                &at("reduce_by_key and scan_by_key nested values"),
                nested_totals.to_vec()? == want_totals && nested_running == want_running,
            );
            c.check(
                &at("scan_by_key struct keys, tuple values"),
                running.iter().map(|p| (p.0.to_bits(), p.1)).eq(want.iter().map(|p| (p.0.to_bits(), p.1))),
            );
            // Running folds, each associative, so the sequential scan is
            // the GPU's to the bit: an arg-max of pairs (8-byte look-back
            // descriptors), extents of points before each (12 bytes: a
            // status, then the value's words), wrapping totals of a nested
            // tuple (16 bytes).
            let arg_max = |a: (f32, u32), b: (f32, u32)| if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a };
            let got = gpu.inclusive_scan(&dp.slice(lo..), arg_max)?.to_vec()?;
            let want: Vec<(f32, u32)> = hp[lo..]
                .iter()
                .scan(None, |acc: &mut Option<(f32, u32)>, p| {
                    let v = acc.map_or(*p, |a| arg_max(a, *p));
                    *acc = Some(v);
                    Some(v)
                })
                .collect();
            c.check(
                &at("inclusive_scan tuple"),
                got.iter().map(|p| (p.0.to_bits(), p.1)).eq(want.iter().map(|p| (p.0.to_bits(), p.1))),
            );
            let extent = |a: Point, b: Point| Point { x: a.x.max(b.x), y: a.y.min(b.y), w: a.w.wrapping_add(b.w) };
            let got = gpu.exclusive_scan(&dq.slice(lo..), empty, extent)?.to_vec()?;
            let want: Vec<Point> = hq[lo..]
                .iter()
                .scan(empty, |acc, p| {
                    let before = *acc;
                    *acc = extent(*acc, *p);
                    Some(before)
                })
                .collect();
            c.check(&at("exclusive_scan struct"), got.iter().map(bits).eq(want.iter().map(bits)));
            let total = |a: Nested, b: Nested| {
                (a.0.wrapping_add(b.0), ((a.1).0.wrapping_add((b.1).0), (a.1).1.wrapping_add((b.1).1)), a.2.wrapping_add(b.2))
            };
            let got = gpu.inclusive_scan(&dn.slice(lo..), total)?.to_vec()?;
            let want: Vec<Nested> = hn[lo..]
                .iter()
                .scan(None, |acc: &mut Option<Nested>, e| {
                    let v = acc.map_or(*e, |a| total(a, *e));
                    *acc = Some(v);
                    Some(v)
                })
                .collect();
            c.check(&at("inclusive_scan nested"), got == want);
            // `par_iter` chains over composites: a field summed (exact, as
            // u64), the items a predicate keeps counted, the first least
            // pair and the last greatest key (as `Iterator`'s), the kept
            // pairs whole, a struct mapped to a tuple, a fold of pairs.
            let total: u64 = gpu.par_iter(&dq.slice(lo..)).map(|p: Point| p.w as u64).sum()?;
            c.check(&at("chain sum of a field"), total == hq[lo..].iter().map(|p| p.w as u64).sum::<u64>());
            let near = gpu.par_iter(&dq.slice(lo..)).filter(move |p: &Point| p.x * p.x < t).count()?;
            c.check(&at("chain filter count"), near == hq[lo..].iter().filter(|p| p.x * p.x < t).count());
            let least = gpu.par_iter(&dp.slice(lo..)).min_by(|a: &(f32, u32), b: &(f32, u32)| a.0.total_cmp(&b.0))?;
            let want = hp[lo..].iter().copied().min_by(|a, b| a.0.total_cmp(&b.0));
            c.check(&at("chain min_by tuple"), least.map(|p| (p.0.to_bits(), p.1)) == want.map(|p| (p.0.to_bits(), p.1)));
            // An order on both fields: equal pairs are identical, and the
            // pick carries no index (vocab::Ties::Identical).
            let most = gpu
                .par_iter(&dp.slice(lo..))
                .max_by(|a: &(f32, u32), b: &(f32, u32)| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)))?;
            let want = hp[lo..].iter().copied().max_by(|a, b| a.1.cmp(&b.1).then(a.0.total_cmp(&b.0)));
            c.check(&at("chain max_by tuple on both fields"), most.map(|p| (p.0.to_bits(), p.1)) == want.map(|p| (p.0.to_bits(), p.1)));
            let last = gpu.par_iter(&dq.slice(lo..)).max_by_key(|p: &Point| p.w >> 28)?;
            let want = hq[lo..].iter().copied().max_by_key(|p| p.w >> 28);
            c.check(&at("chain max_by_key struct"), last.map(|p| bits(&p)) == want.map(|p| bits(&p)));
            let odd = gpu.par_iter(&dp.slice(lo..)).filter(|p: &(f32, u32)| p.1 % 2 == 1).collect()?.to_vec()?;
            let want: Vec<(f32, u32)> = hp[lo..].iter().copied().filter(|p| p.1 % 2 == 1).collect();
            c.check(
                &at("chain collect tuple"),
                odd.iter().map(|p| (p.0.to_bits(), p.1)).eq(want.iter().map(|p| (p.0.to_bits(), p.1))),
            );
            let swapped = gpu.par_iter(&dq.slice(lo..)).map(|p: Point| (p.w, p.y)).collect()?.to_vec()?;
            let want: Vec<(u32, f32)> = hq[lo..].iter().map(|p| (p.w, p.y)).collect();
            c.check(
                &at("chain map struct to tuple"),
                swapped.iter().map(|p| (p.0, p.1.to_bits())).eq(want.iter().map(|p| (p.0, p.1.to_bits()))),
            );
            let counted = gpu
                .par_iter(&dq.slice(lo..))
                .map(|p: Point| (1u32, p.w))
                .reduce((0, 0), |a: (u32, u32), b: (u32, u32)| (a.0.wrapping_add(b.0), a.1.max(b.1)))?;
            let want = hq[lo..].iter().fold((0u32, 0u32), |a, p| (a.0.wrapping_add(1), a.1.max(p.w)));
            c.check(&at("chain fold of pairs"), counted == want);
            // `enumerate` over a struct: where the heaviest point is (the
            // last of equal weights), and the indices of the near ones.
            let heaviest = gpu.par_iter(&dq.slice(lo..)).enumerate().max_by_key(|p: &(usize, Point)| p.1.w >> 28)?;
            let want = hq[lo..].iter().copied().enumerate().max_by_key(|p| p.1.w >> 28);
            c.check(
                &at("chain enumerate max_by_key struct"),
                heaviest.map(|p| (p.0, bits(&p.1))) == want.map(|p| (p.0, bits(&p.1))),
            );
            let near: Vec<usize> = gpu
                .par_iter(&dq.slice(lo..))
                .enumerate()
                .filter(move |p: &(usize, Point)| p.1.x * p.1.x < t)
                .map(|p: (usize, Point)| p.0)
                .collect()?
                .to_vec()?;
            let want: Vec<usize> = hq[lo..].iter().enumerate().filter(|p| p.1.x * p.1.x < t).map(|p| p.0).collect();
            c.check(&at("chain enumerate filter indices struct"), near == want);
        }
    }
    Ok(())
}

/// `sort_by_key` on computed keys from 2^16 to 2^26 elements, for the size
/// where its radix sort pays (run once with `RMIR_SORT=radix`, once with
/// `merge`): u32 values by `v >> 4`, 12-byte points by `p.w >> 8` and by
/// the field `p.w` itself, 24-byte records by a field (the gathering radix
/// sort).
/// `only`: that log2 size alone (for a profiler).
pub fn bench_sort_sizes(gpu: &Gpu, reps: usize, only: Option<u32>) -> Result<(), Error> {
    let sizes = [16u32, 18, 19, 20, 21, 22, 24, 26];
    for log in sizes.into_iter().filter(|l| only.is_none_or(|o| o == *l)) {
        let points = points(&data(1 << log, 37));
        let du = gpu.upload(&points.iter().map(|p| p.w).collect::<Vec<u32>>())?;
        let dq = gpu.upload(&points)?;
        let us = best(reps, || {
            gpu.sort_by_key(&du, |v: &u32| v >> 4)?;
            gpu.synchronize()
        })?;
        println!("rust computed_sort_u32 {log} {us:.1}");
        let us = best(reps, || {
            gpu.sort_by_key(&dq, |p: &Point| p.w >> 8)?;
            gpu.synchronize()
        })?;
        println!("rust computed_sort_point {log} {us:.1}");
        let us = best(reps, || {
            gpu.sort_by_key(&dq, |p: &Point| p.w)?;
            gpu.synchronize()
        })?;
        println!("rust field_sort_point {log} {us:.1}");
        drop(dq);
        let dw = gpu.upload(&wides(&data(1 << log, 37)))?;
        let us = best(reps, || {
            gpu.sort_by_key(&dw, |r: &Wide| r.w)?;
            gpu.synchronize()
        })?;
        println!("rust wide24_sort_by_key {log} {us:.1}");
    }
    Ok(())
}

pub fn bench_composites(gpu: &Gpu, reps: usize) -> Result<(), Error> {
    for log in [24u32, 28] {
        let values = data(1 << log, 31);
        // As CUB's: the value and its index, unrounded.
        let hp: Vec<(f32, u32)> = values.iter().enumerate().map(|(i, v)| (*v, i as u32)).collect();
        let dp = gpu.upload(&hp)?;
        drop(hp);
        let dq = gpu.upload(&points(&values))?;
        drop(values);
        let us = best(reps, || {
            gpu.reduce(&dp, (f32::INFINITY, u32::MAX), |a: (f32, u32), b: (f32, u32)| {
                if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) {
                    b
                } else {
                    a
                }
            })
            .map(drop)
        })?;
        println!("rust composite_arg_min {log} {us:.1}");
        let empty = Point { x: f32::NEG_INFINITY, y: f32::INFINITY, w: 0 };
        let us = best(reps, || {
            gpu.reduce(&dq, empty, |a: Point, b: Point| Point {
                x: a.x.max(b.x),
                y: a.y.min(b.y),
                w: a.w.wrapping_add(b.w),
            })
            .map(drop)
        })?;
        println!("rust composite_extent {log} {us:.1}");
        let mut out = gpu.alloc::<f32>(1 << log)?;
        let us = best(reps, || {
            gpu.transform_into(&dq, &mut out, |p: Point| p.x * p.x + p.y * p.y)?;
            gpu.synchronize()
        })?;
        println!("rust composite_norms {log} {us:.1}");
        // As CUB's DeviceSelect::If with the same predicate, the count
        // back on the host.
        let us = best(reps, || {
            gpu.select(&dq, |p: Point| p.x * p.x + p.y * p.y < 0.25).map(|k| {
                std::hint::black_box(k.len());
            })
        })?;
        println!("rust composite_select {log} {us:.1}");
        // As CUB's DeviceScan::InclusiveScan with Extent, into a new
        // buffer.
        let us = best(reps, || {
            gpu.inclusive_scan(&dq, |a: Point, b: Point| Point {
                x: a.x.max(b.x),
                y: a.y.min(b.y),
                w: a.w.wrapping_add(b.w),
            })?;
            gpu.synchronize()
        })?;
        println!("rust composite_scan {log} {us:.1}");
        if log == 24 {
            let us = best(reps, || {
                gpu.sort_by(&dq, |a: &Point, b: &Point| a.x.total_cmp(&b.x))?;
                gpu.synchronize()
            })?;
            println!("rust composite_sort_by {log} {us:.1}");
        }
        // sort_by_key on a field: the radix sort moves each 12-byte point
        // whole, ranked by its `w` (CUB: SortPairs of the keys and the
        // other 8 bytes, in two arrays).
        let us = best(reps, || {
            gpu.sort_by_key(&dq, |p: &Point| p.w)?;
            gpu.synchronize()
        })?;
        println!("rust composite_sort_by_key {log} {us:.1}");
        // sort_by_key on a computed key: the key of each point computed
        // once, then the radix sort of (key, point) pairs (CUB: a
        // DeviceTransform of the keys, then SortPairs of keys and points).
        let us = best(reps, || {
            gpu.sort_by_key(&dq, |p: &Point| p.w >> 8)?;
            gpu.synchronize()
        })?;
        println!("rust computed_sort_by_key {log} {us:.1}");
        drop(dq);
        // Wide records by a 4-byte field: (key, index) pairs sorted, the
        // records gathered (CUB: the same, or SortKeys with a decomposer,
        // docs/gpu-runs/*-sort-records/records-words-cub.cu).
        if log == 24 {
            let values = data(1 << log, 33);
            let dw = gpu.upload(&wides(&values))?;
            let us = best(reps, || {
                gpu.sort_by_key(&dw, |r: &Wide| r.w)?;
                gpu.synchronize()
            })?;
            println!("rust wide24_sort_by_key {log} {us:.1}");
            drop(dw);
            let dv = gpu.upload(&widers(&values))?;
            let us = best(reps, || {
                gpu.sort_by_key(&dv, |r: &Wider| r.w)?;
                gpu.synchronize()
            })?;
            println!("rust wide32_sort_by_key {log} {us:.1}");
        }
    }
    Ok(())
}
