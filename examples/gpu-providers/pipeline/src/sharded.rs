//! `GpuSet` over sharded data against the CPU: a set of one shard (which
//! must equal the single `Gpu`'s result bit for bit), three shards on one
//! device (the carries of the scans, the reduce's combination and the
//! sample sort's exchange, by copies), uneven layouts with empty shards,
//! and every device of the machine where it has several (the exchange
//! through NCCL; with `RMIR_EXCHANGE=nccl`, within one device too). Every reduce and scan operation is associative; the
//! floats' ones (max) give the same bits in any order.

use crate::{data, Checks};
use native::gpu::{Error, ErrorKind, Gpu, GpuSet};

fn ints(n: usize, seed: u64) -> Vec<u32> {
    data(n, seed).iter().map(|v| (v.to_bits() >> 3) ^ 0x9e37).collect()
}

/// Segment boundaries of lengths 0 to 40, from 0 to `n`.
fn segments(n: usize) -> Vec<usize> {
    let mut offsets = vec![0];
    let mut at = 0;
    for (i, w) in ints(n / 8 + 2, 77).iter().enumerate() {
        at = (at + (w % 41) as usize * usize::from(i % 5 != 3)).min(n);
        offsets.push(at);
    }
    offsets.push(n);
    offsets
}

/// One set's checks, on layouts `lengths` of each size's data (empty:
/// even shards).
fn check_set(gpus: &GpuSet, name: &str, n: usize, lengths: &[usize], c: &mut Checks) -> Result<(), Error> {
    let (g, t) = (1.5f32, 0.25f32);
    let host = data(n, 31 + n as u64);
    let keys = ints(n, 5 + n as u64);
    let layout = if lengths.is_empty() {
        String::from("even")
    } else {
        format!("{lengths:?}")
    };
    let at = format!("{name} n={n} {layout}");
    let (x, k) = if lengths.is_empty() {
        (gpus.scatter(&host)?, gpus.scatter(&keys)?)
    } else {
        (gpus.scatter_by(&host, lengths)?, gpus.scatter_by(&keys, lengths)?)
    };
    c.check(&format!("gather {at}"), x.gather()? == host && x.len() == n);

    let y = gpus.transform(&x, move |v: f32| v * g + 1.0)?;
    let want: Vec<f32> = host.iter().map(|&v| v * g + 1.0).collect();
    c.check(&format!("transform {at}"), crate::same(&y.gather()?, &want));

    let z = gpus.transform2(&x, &k, |a: f32, b: u32| a * (b & 7) as f32)?;
    let want: Vec<f32> = host.iter().zip(&keys).map(|(&a, &b)| a * (b & 7) as f32).collect();
    c.check(&format!("transform2 {at}"), crate::same(&z.gather()?, &want));

    let kept = gpus.select(&x, move |v: f32| v > t)?;
    let want: Vec<f32> = host.iter().copied().filter(|&v| v > t).collect();
    c.check(&format!("select {at}"), crate::same(&kept.gather()?, &want));

    let m = gpus.reduce(&x, f32::MIN, |a: f32, b: f32| a.max(b))?;
    let want = host.iter().fold(f32::MIN, |a, &b| a.max(b));
    c.check(&format!("reduce max {at}"), m.to_bits() == want.to_bits());
    let s = gpus.reduce(&k, 3, |a: u32, b: u32| a.wrapping_add(b))?;
    let want = keys.iter().fold(3u32, |a, &b| a.wrapping_add(b));
    c.check(&format!("reduce sum {at}"), s == want);

    let scanned = gpus.inclusive_scan(&k, |a: u32, b: u32| a.wrapping_add(b))?;
    let want: Vec<u32> = keys
        .iter()
        .scan(0u32, |acc, &v| {
            *acc = acc.wrapping_add(v);
            Some(*acc)
        })
        .collect();
    c.check(&format!("inclusive_scan {at}"), scanned.gather()? == want);
    let peaks = gpus.inclusive_scan(&x, |a: f32, b: f32| a.max(b))?;
    let want: Vec<f32> = host
        .iter()
        .scan(f32::MIN, |acc, &v| {
            *acc = acc.max(v);
            Some(*acc)
        })
        .collect();
    c.check(&format!("inclusive_scan max {at}"), crate::same(&peaks.gather()?, &want));

    let before = gpus.exclusive_scan(&k, 11, |a: u32, b: u32| a.wrapping_add(b))?;
    let want: Vec<u32> = keys
        .iter()
        .scan(11u32, |acc, &v| {
            let out = *acc;
            *acc = acc.wrapping_add(v);
            Some(out)
        })
        .collect();
    c.check(&format!("exclusive_scan {at}"), before.gather()? == want);

    let (yes, no) = gpus.partition(&k, |v: &u32| v % 3 == 0)?;
    let (want_yes, want_no): (Vec<u32>, Vec<u32>) = keys.iter().partition(|&&v| v % 3 == 0);
    c.check(&format!("partition {at}"), yes.gather()? == want_yes && no.gather()? == want_no);
    // Runs of equal values, some across shard boundaries.
    let runs: Vec<u32> = keys.iter().map(|v| v % 4).collect();
    let r = if lengths.is_empty() {
        gpus.scatter(&runs)?
    } else {
        gpus.scatter_by(&runs, lengths)?
    };
    let firsts = gpus.dedup_by(&r, |a: &u32, b: &u32| a == b)?;
    let mut want = runs.clone();
    want.dedup();
    c.check(&format!("dedup_by {at}"), firsts.gather()? == want);
    let counts = gpus.histogram(&k, 10, |v: u32| (v % 13) as usize)?;
    let mut want = vec![0u64; 10];
    for v in &keys {
        if let Some(n) = want.get_mut((v % 13) as usize) {
            *n += 1;
        }
    }
    c.check(&format!("histogram {at}"), counts.to_vec()? == want);
    let ordered = gpus.sort(&k)?;
    let mut want = keys.clone();
    want.sort();
    c.check(&format!("sort {at}"), ordered.gather()? == want);

    // Sorts: stable, so equal keys keep their input order (the index).
    let sorted = gpus.sort_by(&x, |a: &f32, b: &f32| b.total_cmp(a))?;
    let mut want = host.clone();
    want.sort_by(|a, b| b.total_cmp(a));
    c.check(&format!("sort_by {at}"), crate::same(&sorted.gather()?, &want));
    let pairs: Vec<(u32, u32)> = keys.iter().enumerate().map(|(i, &v)| (v % 97, i as u32)).collect();
    let p = if lengths.is_empty() {
        gpus.scatter(&pairs)?
    } else {
        gpus.scatter_by(&pairs, lengths)?
    };
    let by_key = gpus.sort_by_key(&p, |q: &(u32, u32)| q.0 >> 2)?;
    let mut want = pairs.clone();
    want.sort_by_key(|q| q.0 >> 2);
    c.check(&format!("sort_by_key {at}"), by_key.gather()? == want);
    if n >= 1000 && gpus.len() > 1 {
        // The sample sort's buckets come out near even.
        let even = n / gpus.len();
        c.check(
            &format!("sort_by buckets near even {at}: {:?}", sorted.lengths()),
            sorted.lengths().iter().all(|&l| l * 10 <= even * 13),
        );
    }
    Ok(())
}

/// Segmented folds over a layout that keeps segments whole, and the error
/// for one that does not.
fn check_segments(gpus: &GpuSet, name: &str, n: usize, c: &mut Checks) -> Result<(), Error> {
    let keys = ints(n, 9 + n as u64);
    let offsets = segments(n);
    let k = gpus.scatter_segments(&keys, &offsets)?;
    let sums = gpus.segmented_reduce(&k, &offsets, 1, |a: u32, b: u32| a ^ b)?;
    let want: Vec<u32> = offsets
        .windows(2)
        .map(|w| keys[w[0]..w[1]].iter().fold(1u32, |a, &b| a ^ b))
        .collect();
    c.check(&format!("segmented_reduce {name} n={n}"), sums.gather()? == want);
    if gpus.len() > 1 && n >= 16 {
        let even = gpus.scatter(&keys)?;
        let across = [0, n / 2 + 1, n];
        let crossing = gpus.segmented_reduce(&even, &across, 1, |a: u32, b: u32| a ^ b);
        c.check(
            &format!("a segment across shards is a Mismatch error {name} n={n}"),
            matches!(&crossing, Err(e) if e.kind() == ErrorKind::Mismatch && e.to_string().contains("crosses")),
        );
    }
    Ok(())
}

pub fn check_sharded(gpu: &Gpu, c: &mut Checks) -> Result<(), Error> {
    let sizes = [0usize, 1, 2, 3, 1000, 100_003, 1 << 22];
    // One shard: every form equals the single Gpu's result.
    let one = GpuSet::open(&[0])?;
    for &n in &sizes {
        check_set(&one, "one", n, &[], c)?;
        check_segments(&one, "one", n, c)?;
    }
    let host = data(1 << 20, 3);
    let sum_one = one.reduce(&one.scatter(&host)?, 0.0, |a: f32, b: f32| a + b)?;
    let sum_gpu = gpu.reduce(&host, 0.0, |a: f32, b: f32| a + b)?;
    c.check("a GpuSet of one sums as the Gpu, bit for bit", sum_one.to_bits() == sum_gpu.to_bits());

    // Three shards on one device: the carries and the exchange.
    let three = GpuSet::open(&[0, 0, 0])?;
    for &n in &sizes {
        check_set(&three, "three", n, &[], c)?;
        check_segments(&three, "three", n, c)?;
    }
    for lengths in [[0, 0, 5], [5, 0, 0], [0, 4, 0], [1, 0, 1000], [70_000, 1, 29_999]] {
        let n = lengths.iter().sum();
        check_set(&three, "three", n, &lengths, c)?;
    }
    c.check(
        "data of three shards for a set of one is a Mismatch error",
        matches!(one.transform(&three.scatter(&host)?, |v: f32| v), Err(e) if e.kind() == ErrorKind::Mismatch),
    );

    // Every device, where there are several: the exchange through NCCL.
    let all = GpuSet::open_all()?;
    if all.len() > 1 {
        for &n in &sizes {
            check_set(&all, "all", n, &[], c)?;
            check_segments(&all, "all", n, c)?;
        }
    } else {
        println!("sharded: one device, so no exchange between devices was checked");
    }
    Ok(())
}
