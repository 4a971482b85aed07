//! `par_iter` chains on the GPU against `std`'s iterators on the host:
//! every terminal, `enumerate` (arg-min and arg-max, indices collected),
//! stages that change the item type, ties of `min_by_key`
//! and `max_by_key` (the first and the last, as `Iterator`'s), empty
//! inputs, slices that start off a vector's alignment; and their timings
//! beside the same work unfused (`transform`, then `reduce` or `select`).
//! Every `reduce` operation is associative and commutative.

use crate::{best, data, Checks};
use native::gpu::{DeviceVec, Error, Gpu};

/// `n` integers, the same on every run.
fn ints(n: usize, seed: u64) -> Vec<u64> {
    let mut s = seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        })
        .collect()
}

pub fn check_chains(gpu: &Gpu, c: &mut Checks) -> Result<(), Error> {
    let (g, t) = (1.5f32, 0.25f32);
    let mask = 0b1011u64;
    for n in [0usize, 1, 7, 1000, (1 << 20) + 3, 1 << 22] {
        let host = data(n, 40 + n as u64);
        let d = gpu.upload(&host)?;
        // From the second element too: off the 16-byte alignment.
        let from = n.min(1);
        for (what, x, h) in [("whole", d.slice(..), &host[..]), ("from 1", d.slice(from..), &host[from..])] {
            let at = |name: &str| format!("chain {name}, {n} elements, {what}");
            let count = gpu.par_iter(&x).filter(move |v: &f32| *v > t).count()?;
            c.check(&at("filter count"), count == h.iter().filter(|v| **v > t).count());
            let count2 = gpu.par_iter(&x).map(move |v: f32| v * g + 1.0).filter(move |v: &f32| *v > t).count()?;
            let want = h.iter().map(|v| v * g + 1.0).filter(|v| *v > t).count();
            c.check(&at("map filter count"), count2 == want);
            // The values have 24 bits below 2^0: every partial sum of up to
            // 2^22 of them is exact in f64, in any order.
            let exact: f64 = gpu.par_iter(&x).map(|v: f32| v as f64).sum()?;
            let want: f64 = h.iter().map(|v| *v as f64).sum();
            c.check(&at("f64 sum"), exact.to_bits() == want.to_bits());
            let s: f32 = gpu.par_iter(&x).map(move |v: f32| v * g).filter(move |v: &f32| *v > t).sum()?;
            let want: f64 = h.iter().map(|v| v * g).filter(|v| *v > t).map(|v| v as f64).sum();
            let mass: f64 = h.iter().map(|v| (v * g).abs() as f64).sum();
            c.check(&at("f32 sum"), ((s as f64) - want).abs() <= 1e-5 * mass + 1e-6);
            let m = gpu.par_iter(&x).map(|v: f32| v.abs()).max_by(|a: &f32, b: &f32| a.total_cmp(b))?;
            let want = h.iter().map(|v| v.abs()).max_by(|a, b| a.total_cmp(b));
            c.check(&at("max_by"), m.map(f32::to_bits) == want.map(f32::to_bits));
            let lo = gpu.par_iter(&x).filter(move |v: &f32| *v < t).min_by(|a: &f32, b: &f32| a.total_cmp(b))?;
            let want = h.iter().copied().filter(|v| *v < t).min_by(|a, b| a.total_cmp(b));
            c.check(&at("filter min_by"), lo.map(f32::to_bits) == want.map(f32::to_bits));
            // Many equal keys: the first least, the last greatest.
            let q = gpu.par_iter(&x).min_by_key(|v: &f32| (v.to_bits() >> 28) as u8)?;
            let want = h.iter().copied().min_by_key(|v| (v.to_bits() >> 28) as u8);
            c.check(&at("min_by_key ties"), q.map(f32::to_bits) == want.map(f32::to_bits));
            let q = gpu.par_iter(&x).max_by_key(|v: &f32| (v.to_bits() >> 28) as u8)?;
            let want = h.iter().copied().max_by_key(|v| (v.to_bits() >> 28) as u8);
            c.check(&at("max_by_key ties"), q.map(f32::to_bits) == want.map(f32::to_bits));
            let any = gpu.par_iter(&x).any(move |v: f32| v > 0.999 * g)?;
            let all = gpu.par_iter(&x).map(|v: f32| v.abs()).all(|v: f32| v < 1.0)?;
            c.check(
                &at("any all"),
                any == h.iter().any(|v| *v > 0.999 * g) && all == h.iter().map(|v| v.abs()).all(|v| v < 1.0),
            );
            let z: DeviceVec<f32> = gpu
                .par_iter(&x)
                .map(move |v: f32| v * g)
                .filter(move |v: &f32| *v > t)
                .collect()?;
            let want: Vec<f32> = h.iter().map(|v| v * g).filter(|v| *v > t).collect();
            c.check(&at("map filter collect"), crate::same(&z.to_vec()?, &want));
            let wide: DeviceVec<f64> = gpu.par_iter(&x).map(|v: f32| v as f64 * 0.5).collect()?;
            let want: Vec<f64> = h.iter().map(|v| *v as f64 * 0.5).collect();
            let got = wide.to_vec()?;
            c.check(
                &at("map collect to f64"),
                got.len() == want.len() && got.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
            );
            let r = gpu.par_iter(&x).map(move |v: f32| v * g).reduce(f32::MIN, |a: f32, b: f32| a.max(b))?;
            let want = h.iter().map(|v| v * g).fold(f32::MIN, |a, b| a.max(b));
            c.check(&at("reduce max"), r.to_bits() == want.to_bits());
            // `enumerate`: each element's index in the input (this slice).
            // Arg-min and arg-max, ties of a coarse key (the first least,
            // the last greatest), a tuple key with the index in it.
            let bits = |p: Option<(usize, f32)>| p.map(|p| (p.0, p.1.to_bits()));
            let lo = gpu.par_iter(&x).enumerate().min_by(|a: &(usize, f32), b: &(usize, f32)| a.1.total_cmp(&b.1))?;
            let want = h.iter().copied().enumerate().min_by(|a, b| a.1.total_cmp(&b.1));
            c.check(&at("enumerate arg-min"), bits(lo) == bits(want));
            let hi = gpu.par_iter(&x).enumerate().max_by(|a: &(usize, f32), b: &(usize, f32)| a.1.total_cmp(&b.1))?;
            let want = h.iter().copied().enumerate().max_by(|a, b| a.1.total_cmp(&b.1));
            c.check(&at("enumerate arg-max"), bits(hi) == bits(want));
            let q = gpu.par_iter(&x).enumerate().min_by_key(|p: &(usize, f32)| (p.1.to_bits() >> 28) as u8)?;
            let want = h.iter().copied().enumerate().min_by_key(|p| (p.1.to_bits() >> 28) as u8);
            c.check(&at("enumerate min_by_key ties"), bits(q) == bits(want));
            let q = gpu.par_iter(&x).enumerate().max_by_key(|p: &(usize, f32)| (p.1.to_bits() >> 28) as u8)?;
            let want = h.iter().copied().enumerate().max_by_key(|p| (p.1.to_bits() >> 28) as u8);
            c.check(&at("enumerate max_by_key ties"), bits(q) == bits(want));
            let q = gpu
                .par_iter(&x)
                .enumerate()
                .max_by_key(|p: &(usize, f32)| ((p.1.to_bits() >> 28) as u8, usize::MAX - p.0))?;
            let want = h.iter().copied().enumerate().max_by_key(|p| ((p.1.to_bits() >> 28) as u8, usize::MAX - p.0));
            c.check(&at("enumerate tuple key"), bits(q) == bits(want));
            // Where the values pass a threshold (indices, wider than the
            // elements), and the pairs themselves; a map before the index.
            let hits: DeviceVec<usize> = gpu
                .par_iter(&x)
                .enumerate()
                .filter(move |p: &(usize, f32)| p.1 > t)
                .map(|p: (usize, f32)| p.0)
                .collect()?;
            let want: Vec<usize> = h.iter().enumerate().filter(|p| *p.1 > t).map(|p| p.0).collect();
            c.check(&at("enumerate filter indices collect"), hits.to_vec()? == want);
            let pairs: DeviceVec<(usize, f32)> =
                gpu.par_iter(&x).enumerate().filter(move |p: &(usize, f32)| p.1 < t).collect()?;
            let want: Vec<(usize, u32)> =
                h.iter().copied().enumerate().filter(|p| p.1 < t).map(|p| (p.0, p.1.to_bits())).collect();
            let got: Vec<(usize, u32)> = pairs.to_vec()?.iter().map(|p| (p.0, p.1.to_bits())).collect();
            c.check(&at("enumerate filter pairs collect"), got == want);
            let every = gpu
                .par_iter(&x)
                .map(move |v: f32| v * g)
                .enumerate()
                .filter(move |p: &(usize, f32)| p.0 % 3 == 0 && p.1 > t)
                .count()?;
            let want = h.iter().map(|v| v * g).enumerate().filter(|p| p.0 % 3 == 0 && p.1 > t).count();
            c.check(&at("map enumerate filter count"), every == want);
            let spots: usize = gpu.par_iter(&x).enumerate().map(|p: (usize, f32)| p.0).sum()?;
            c.check(&at("enumerate index sum"), spots == (0..h.len()).sum::<usize>());
        }

        let keys = ints(n, 90 + n as u64);
        let k = gpu.upload(&keys)?;
        let at = |name: &str| format!("chain {name}, {n} u64");
        let hits: u64 = gpu.par_iter(&k).map(move |v: u64| (v & mask == 0) as u64).sum()?;
        c.check(&at("mask sum"), hits == keys.iter().map(|v| (v & mask == 0) as u64).sum::<u64>());
        let z = n as u64 & 0;
        let r = gpu.par_iter(&k).reduce(7, move |a: u64, b: u64| a.wrapping_add(b).wrapping_add(z))?;
        c.check(&at("reduce wrapping"), r == keys.iter().fold(7u64, |a, b| a.wrapping_add(*b)));
        let (lo, hi) = (gpu.par_iter(&k).min()?, gpu.par_iter(&k).max()?);
        c.check(&at("min max"), lo == keys.iter().copied().min() && hi == keys.iter().copied().max());
        let q = gpu.par_iter(&k).min_by_key(|v: &u64| (v % 16) as u16)?;
        let p = gpu.par_iter(&k).max_by_key(|v: &u64| (v % 16) as u16)?;
        c.check(
            &at("by_key ties"),
            q == keys.iter().copied().min_by_key(|v| (v % 16) as u16)
                && p == keys.iter().copied().max_by_key(|v| (v % 16) as u16),
        );
        // Keys that hold the value whole beside other terms (a capture, a
        // call): their picks fold values alone; a key that drops the
        // lowest bit carries indices.
        let m = 7 + n as u64 % 3;
        let q = gpu.par_iter(&k).min_by_key(move |v: &u64| (v % m, *v))?;
        let p = gpu.par_iter(&k).max_by_key(|v: &u64| (v.count_ones(), *v))?;
        let h = gpu.par_iter(&k).min_by_key(|v: &u64| (v % 7, *v >> 1))?;
        c.check(
            &at("keys holding the value"),
            q == keys.iter().copied().min_by_key(|v| (v % m, *v))
                && p == keys.iter().copied().max_by_key(|v| (v.count_ones(), *v))
                && h == keys.iter().copied().min_by_key(|v| (v % 7, *v >> 1)),
        );
        let plain: u64 = gpu.par_iter(&k).map(|v: u64| v >> 40).sum()?;
        c.check(&at("sum"), plain == keys.iter().map(|v| v >> 40).sum::<u64>());
        // The item type changes along the chain; stages capture several
        // values of several types.
        let (lo8, hi8, shift, bias) = (20u8, 200u8, 3u32, 900i64);
        let bytes: Vec<u8> = keys.iter().map(|v| (v >> 56) as u8).collect();
        let b = gpu.upload(&bytes)?;
        let got = gpu
            .par_iter(&b)
            .filter(move |v: &u8| *v >= lo8)
            .map(move |v: u8| (v as u32) << shift)
            .filter(move |v: &u32| *v < (hi8 as u32) << shift)
            .map(move |v: u32| v as i64 - bias)
            .reduce(i64::MIN, |a: i64, b: i64| a.max(b))?;
        let want = bytes
            .iter()
            .filter(|v| **v >= lo8)
            .map(|v| (*v as u32) << shift)
            .filter(|v| *v < (hi8 as u32) << shift)
            .map(|v| v as i64 - bias)
            .fold(i64::MIN, |a, b| a.max(b));
        c.check(&at("four stages"), got == want);
        // `enumerate` over 8-byte elements (an index takes no more room
        // than one: the values are compacted), and over bytes (pairs of 16).
        let weighted = gpu
            .par_iter(&k)
            .enumerate()
            .map(|p: (usize, u64)| (p.0 as u64).wrapping_mul(p.1))
            .reduce(0, |a: u64, b: u64| a.wrapping_add(b))?;
        let want = keys.iter().enumerate().fold(0u64, |a, p| a.wrapping_add((p.0 as u64).wrapping_mul(*p.1)));
        c.check(&at("enumerate weighted sum"), weighted == want);
        let masked: DeviceVec<usize> = gpu
            .par_iter(&k)
            .enumerate()
            .filter(move |p: &(usize, u64)| p.1 & mask == 0)
            .map(|p: (usize, u64)| p.0)
            .collect()?;
        let want: Vec<usize> = keys.iter().enumerate().filter(|p| p.1 & mask == 0).map(|p| p.0).collect();
        c.check(&at("enumerate indices collect u64"), masked.to_vec()? == want);
        let odd_at: DeviceVec<(usize, u8)> = gpu.par_iter(&b).enumerate().filter(|p: &(usize, u8)| p.1 % 2 == 1).collect()?;
        let want: Vec<(usize, u8)> = bytes.iter().copied().enumerate().filter(|p| p.1 % 2 == 1).collect();
        c.check(&at("enumerate filter collect u8"), odd_at.to_vec()? == want);
        let odd: DeviceVec<u8> = gpu.par_iter(&b).filter(|v: &u8| v % 2 == 1).collect()?;
        let want: Vec<u8> = bytes.iter().copied().filter(|v| v % 2 == 1).collect();
        c.check(&at("filter collect u8"), odd.to_vec()? == want);
        let signs: Vec<i64> = keys.iter().map(|v| if v & 1 == 0 { 1 } else { -1 }).collect();
        let s = gpu.upload(&signs)?;
        let p: i64 = gpu.par_iter(&s).product()?;
        c.check(&at("product"), p == signs.iter().product::<i64>());
    }
    // The program of the issue, as a user writes it.
    let host = data(1 << 16, 5);
    let x: DeviceVec<f32> = gpu.upload(&host)?;
    let keys = gpu.upload(&ints(1 << 16, 6))?;
    let n: usize = gpu.par_iter(&x).filter(move |v: &f32| *v > t).count()?;
    let m: Option<f32> = gpu.par_iter(&x).map(|v: f32| v.abs()).max_by(|a: &f32, b: &f32| a.total_cmp(b))?;
    let z: DeviceVec<f32> = gpu.par_iter(&x).map(move |v: f32| v * g).filter(move |v: &f32| *v > t).collect()?;
    let hits: u64 = gpu.par_iter(&keys).map(move |v: u64| (v & mask == 0) as u64).sum()?;
    let hk = keys.to_vec()?;
    let want: Vec<f32> = host.iter().map(|v| v * g).filter(|v| *v > t).collect();
    c.check(
        "chain program of the issue",
        n == host.iter().filter(|v| **v > t).count()
            && m.map(f32::to_bits) == host.iter().map(|v| v.abs()).max_by(|a, b| a.total_cmp(b)).map(f32::to_bits)
            && hits == hk.iter().map(|v| (v & mask == 0) as u64).sum::<u64>()
            && crate::same(&z.to_vec()?, &want),
    );
    Ok(())
}

/// Fused chains beside the same work unfused, host wall time of the call
/// (its value back on the host), best of `reps`: `rust NAME SIZE US`.
pub fn bench_chains(gpu: &Gpu, reps: usize) -> Result<(), Error> {
    let (g, t) = (3.0f32, 1.25f32);
    for log in [24u32, 28] {
        let x = gpu.upload(&data(1 << log, 30))?;
        let us = best(reps, || gpu.par_iter(&x).map(move |v: f32| v * g + 1.0).sum().map(drop))?;
        println!("rust chain_map_sum {log} {us:.1}");
        let us = best(reps, || {
            let y = gpu.transform(&x, move |v: f32| v * g + 1.0)?;
            gpu.reduce(&y, 0.0, |a: f32, b: f32| a + b).map(drop)
        })?;
        println!("rust unfused_map_sum {log} {us:.1}");
        let us = best(reps, || {
            gpu.par_iter(&x)
                .map(move |v: f32| v * g + 1.0)
                .filter(move |v: &f32| *v > t)
                .count()
                .map(drop)
        })?;
        println!("rust chain_map_filter_count {log} {us:.1}");
        let us = best(reps, || {
            let y = gpu.transform(&x, move |v: f32| v * g + 1.0)?;
            gpu.select(&y, move |v: f32| v > t).map(|k| {
                std::hint::black_box(k.len());
            })
        })?;
        println!("rust unfused_map_filter_count {log} {us:.1}");
        let us = best(reps, || {
            gpu.par_iter(&x)
                .map(move |v: f32| v * g + 1.0)
                .filter(move |v: &f32| *v > t)
                .collect()
                .map(drop)
        })?;
        println!("rust chain_map_filter_collect {log} {us:.1}");
        let us = best(reps, || {
            let y = gpu.transform(&x, move |v: f32| v * g + 1.0)?;
            gpu.select(&y, move |v: f32| v > t).map(drop)
        })?;
        println!("rust unfused_map_filter_collect {log} {us:.1}");
        let us = best(reps, || {
            gpu.par_iter(&x)
                .map(|v: f32| v.abs())
                .max_by(|a: &f32, b: &f32| a.total_cmp(b))
                .map(drop)
        })?;
        println!("rust chain_map_max_by {log} {us:.1}");
        let us = best(reps, || {
            gpu.par_iter(&x)
                .enumerate()
                .min_by(|a: &(usize, f32), b: &(usize, f32)| a.1.total_cmp(&b.1))
                .map(drop)
        })?;
        println!("rust chain_enumerate_arg_min {log} {us:.1}");
    }
    Ok(())
}
