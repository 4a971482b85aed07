//! Runs the `sums` library's callbacks and its own on the GPU and checks
//! every result against the CPU reference (`native::reduce`).
//!
//! `app [check [--large] [--quick]]` checks; `app bench [REPS]` times `Gpu::reduce` over device-resident
//! data at 2^10 … 2^28 elements. Without a GPU it prints why and exits 1.

use native::gpu::{Error, Gpu};
use std::process::ExitCode;
use std::time::Instant;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn data(&mut self, n: usize) -> Vec<i32> {
        (0..n).map(|_| (self.next() >> 32) as i32).collect()
    }
}

/// A callback of the binary itself: the smallest element, at least `floor`.
fn floored_min(gpu: &Gpu, data: &[i32], floor: i32) -> Result<i32, Error> {
    gpu.reduce(data, i32::MAX, move |a, b| a.min(b).max(floor))
}

fn floored_min_cpu(data: &[i32], floor: i32) -> i32 {
    native::reduce(data, i32::MAX, move |a, b| a.min(b).max(floor))
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    fn check(&mut self, what: &str, gpu: Result<i32, Error>, cpu: i32) -> Result<(), Error> {
        let gpu = gpu?;
        if gpu == cpu {
            self.passed += 1;
        } else {
            self.failed += 1;
            if self.failed <= 20 {
                eprintln!("MISMATCH {what}: gpu {gpu}, cpu {cpu}");
            }
        }
        Ok(())
    }
}

fn check(gpu: &Gpu, large: bool, quick: bool) -> Result<Tally, Error> {
    let mut t = Tally::default();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // 1. Many capture values, one binary: 1,200 (k, m) pairs.
    let data = rng.data(100_003);
    for i in 0..if quick { 50 } else { 1200u32 } {
        let k = rng.next() as i32;
        let m = (i % 256) as u8;
        t.check(
            &format!("mix k={k} m={m}"),
            sums::keyed::mix(gpu, &data, k, m),
            sums::keyed::mix_cpu(&data, k, m),
        )?;
    }
    // 2. Reordered captures, random values.
    let small = rng.data(4099);
    for _ in 0..if quick { 20 } else { 200 } {
        let r = rng.next();
        let (a, b, c) = (r as u8, (r >> 8) as u16, (r >> 24) as u32);
        let (d, e, f, g) = (
            (rng.next() % 100_000) as f64 / 7.0,
            rng.next() as i8,
            rng.next() as i64,
            rng.next() as u16,
        );
        t.check(
            &format!("scrambled {a} {b} {c} {d} {e} {f} {g}"),
            sums::keyed::scrambled(gpu, &small, a, b, c, d, e, f, g),
            sums::keyed::scrambled_cpu(&small, a, b, c, d, e, f, g),
        )?;
        let k = rng.next() as i64;
        t.check(
            &format!("wide::mix {k}"),
            sums::keyed::wide::mix(gpu, &small, k),
            sums::keyed::wide::mix_cpu(&small, k),
        )?;
    }
    // 3. Sizes, and starts that are not 16-byte aligned.
    let mut sizes = vec![0usize, 1, 31, 32, 33, 1023, 1024, 1025, 1_000_003, 1 << 24];
    if large {
        sizes.push(1 << 28);
    }
    if quick {
        sizes.retain(|&n| n <= 1025);
    }
    let biggest = *sizes.iter().max().unwrap_or(&0) + 3;
    let all = rng.data(biggest);
    for &n in &sizes {
        for skew in 0..4 {
            let d = &all[skew..skew + n];
            t.check(
                &format!("mix n={n} skew={skew}"),
                sums::keyed::mix(gpu, d, 12345, 77),
                sums::keyed::mix_cpu(d, 12345, 77),
            )?;
        }
        let floor = rng.next() as i32 >> 1;
        t.check(
            &format!("floored_min n={n}"),
            floored_min(gpu, &all[..n], floor),
            floored_min_cpu(&all[..n], floor),
        )?;
    }
    // 4. Device-resident data, read without a copy, many captures.
    let resident = gpu.upload(&data)?;
    if resident.to_vec()? != data {
        t.failed += 1;
        eprintln!("MISMATCH upload/download round trip");
    }
    for _ in 0..if quick { 10 } else { 100 } {
        let lo = rng.next() as i32 >> 2;
        let hi = lo.saturating_add((rng.next() >> 34) as i32);
        t.check(
            &format!("clamped_max {lo} {hi}"),
            sums::resident::clamped_max(gpu, &resident, lo, hi),
            sums::resident::clamped_max_cpu(&data, lo, hi),
        )?;
        t.check(
            &format!("biased_sum {lo}"),
            sums::resident::biased_sum(gpu, &resident, lo),
            sums::resident::biased_sum_cpu(&data, lo),
        )?;
    }
    Ok(t)
}

fn bench(gpu: &Gpu, reps: usize) -> Result<(), Error> {
    println!(
        "# Gpu::reduce (sums::resident::biased_sum, bias 0), device-resident i32, best of {reps}"
    );
    println!(
        "{:>10} {:>12} {:>10} {:>14}",
        "n", "us", "GB/s", "host-slice us"
    );
    let mut rng = Rng(7);
    for log in [10u32, 16, 20, 24, 28] {
        let n = 1usize << log;
        let host = rng.data(n);
        let dev = gpu.upload(&host)?;
        let want = sums::resident::biased_sum_cpu(&host, 0);
        let mut best = f64::MAX;
        for _ in 0..reps {
            let t0 = Instant::now();
            let got = sums::resident::biased_sum(gpu, &dev, 0)?;
            best = best.min(t0.elapsed().as_secs_f64());
            if got != want {
                eprintln!("MISMATCH bench n={n}: gpu {got}, cpu {want}");
                std::process::exit(1);
            }
        }
        // The host-slice form: the same call on `&host` (copied to the
        // device's staging buffer each time, then reduced).
        let mut best_host = f64::MAX;
        for _ in 0..reps.min(20) {
            let t0 = Instant::now();
            let got = sums::resident::biased_sum_host(gpu, &host, 0)?;
            best_host = best_host.min(t0.elapsed().as_secs_f64());
            if got != want {
                eprintln!("MISMATCH host-slice bench n={n}: gpu {got}, cpu {want}");
                std::process::exit(1);
            }
        }
        println!(
            "{:>10} {:>12.2} {:>10.1} {:>14.2}",
            n,
            best * 1e6,
            (n * 4) as f64 / best / 1e9,
            best_host * 1e6
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: cannot use the GPU: {e}");
            return ExitCode::from(1);
        }
    };
    let outcome = match args.first().map(String::as_str) {
        Some("bench") => {
            let reps = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(50);
            bench(&gpu, reps).map(|_| true)
        }
        Some("check") | None => {
            let large = args.iter().any(|a| a == "--large");
            let quick = args.iter().any(|a| a == "--quick");
            check(&gpu, large, quick).map(|t| {
                println!("{}: {} passed, {} failed", gpu.name(), t.passed, t.failed);
                t.failed == 0 && t.passed > 0
            })
        }
        Some(other) => {
            eprintln!("usage: app [check [--large] [--quick] | bench [REPS]] (not `{other}`)");
            return ExitCode::from(2);
        }
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}
