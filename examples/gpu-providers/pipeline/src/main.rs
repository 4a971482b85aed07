//! Data that stays on the GPU, as a user's program keeps it there: results
//! of one call feed the next, `_into` calls write into buffers of the
//! caller's, further streams order their work against each other, and
//! host copies reuse their buffers or use page-locked ones.
//!
//!     pipeline check [--sanitizer]
//!                             every form, `par_iter` chains
//!                             (chains.rs), composites (composites.rs)
//!                             and `GpuSet`s over sharded data
//!                             (sharded.rs), against the CPU (exit 1 on a
//!                             failure); --sanitizer leaves out the
//!                             allocation past the device's memory, a
//!                             failed driver call compute-sanitizer counts
//!     pipeline trap           a callback that panics on the GPU: the error
//!                             names its call site (exit 0 when it does)
//!     pipeline soak SECONDS THREADS
//!                             calls from THREADS threads sharing one Gpu;
//!                             exit 1 on an error, or when host or device
//!                             memory grew after the first tenth of the time
//!     pipeline overlap        chunks up, through a transform and down
//!                             on three streams against one, timed by
//!                             the GPU's marks: exit 1 unless the results
//!                             are right and the three stages overlap
//!     pipeline bench [REPS]   host wall times, one line each:
//!                             `rust NAME SIZE MICROSECONDS`
//!     pipeline launches [REPS]
//!                             bench's launch rows alone: 1,000 calls on
//!                             2^10 elements, and on none (the host's part)
//!     pipeline sort-sizes [REPS [LOG2]]
//!                             sort_by_key on computed keys and fields, 2^16 to
//!                             2^26 elements (LOG2: 2^LOG2 alone), as `bench`
//!                             prints (with RMIR_SORT=radix, then merge:
//!                             where the radix sort pays)
//!
//! Built with `driver cargo build --release --manifest-path
//! examples/gpu-providers/Cargo.toml`; run on the GPU machine by
//! scripts/gpu/pipeline-run.sh, beside benches/cub/pipeline.cu (the same
//! calls with CUB and cudaMemcpy).

mod chains;
mod composites;
mod sharded;

use native::gpu::{DeviceVec, Error, ErrorKind, Gpu, HostBuffer, Mark};
use std::process::ExitCode;
use std::time::Instant;

/// `n` values in [-1, 1), the same on every run.
fn data(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        })
        .collect()
}

/// The pipeline of the issue on data that stays on the device: upload,
/// transform, running maximum, the values above `t`, their maximum, and
/// the selection back on the host.
fn pipeline(gpu: &Gpu, host: &[f32], g: f32, t: f32) -> Result<(Vec<f32>, f32), Error> {
    let x: DeviceVec<f32> = gpu.upload(host)?;
    let y: DeviceVec<f32> = gpu.transform(&x, move |v: f32| v * g + 1.0)?;
    let c: DeviceVec<f32> = gpu.inclusive_scan(&y, |a: f32, b: f32| a.max(b))?;
    let k: DeviceVec<f32> = gpu.select(&c, move |v: f32| v > t)?;
    let s: f32 = gpu.reduce(&k, f32::MIN, |a: f32, b: f32| a.max(b))?;
    Ok((k.to_vec()?, s))
}

fn pipeline_cpu(host: &[f32], g: f32, t: f32) -> (Vec<f32>, f32) {
    let y = native::transform(host, move |v: f32| v * g + 1.0);
    let c = native::inclusive_scan(&y, |a: f32, b: f32| a.max(b));
    let k = native::select(&c, move |v: f32| v > t);
    let s = native::reduce(&k, f32::MIN, |a: f32, b: f32| a.max(b));
    (k, s)
}

struct Checks {
    passed: usize,
    failed: Vec<String>,
}

impl Checks {
    fn check(&mut self, name: &str, ok: bool) {
        if ok {
            self.passed += 1;
        } else {
            println!("FAIL {name}");
            self.failed.push(name.to_string());
        }
    }
}

fn same(a: &[f32], b: &[f32]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

fn check(gpu: &Gpu, sanitizer: bool) -> Result<Checks, Error> {
    let mut c = Checks {
        passed: 0,
        failed: Vec::new(),
    };
    let (g, t) = (1.5f32, 1.25f32);
    for n in [0usize, 1, 1000, (1 << 20) + 3, 1 << 24] {
        let host = data(n, n as u64);
        let (k, s) = pipeline(gpu, &host, g, t)?;
        let (hk, hs) = pipeline_cpu(&host, g, t);
        c.check(&format!("pipeline, {n} elements"), same(&k, &hk) && s.to_bits() == hs.to_bits());
    }

    // Floats sorted by `total_cmp`, proved a radix order: -0 before +0,
    // NaNs by sign and payload, infinities, subnormals, each bit for bit
    // as the host sorts them, ascending, descending and negated, by the
    // merge sort (1000 elements) and the radix sort (2^20 + 7: past
    // where radix pays).
    for n in [1000usize, (1 << 20) + 7] {
        let special = [
            0.0f32,
            -0.0,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7fc0_1234),
            f32::from_bits(0xffa0_0001),
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE / 4.0,
            -f32::MIN_POSITIVE / 4.0,
            f32::MAX,
            f32::MIN,
        ];
        let host: Vec<f32> = data(n, 11)
            .iter()
            .enumerate()
            .map(|(i, &v)| if i % 3 == 0 { special[(i / 3) % special.len()] } else { v })
            .collect();
        let x = gpu.upload(&host)?;
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<u32>>();
        let mut want = host.clone();
        want.sort_by(|a, b| a.total_cmp(b));
        let up = gpu.sort_by(&x, |a: &f32, b: &f32| a.total_cmp(b))?.to_vec()?;
        c.check(&format!("total_cmp sort of special floats, {n}"), bits(&up) == bits(&want));
        want.sort_by(|a, b| b.total_cmp(a));
        let down = gpu.sort_by(&x, |a: &f32, b: &f32| b.total_cmp(a))?.to_vec()?;
        c.check(&format!("total_cmp sort of special floats descending, {n}"), bits(&down) == bits(&want));
        // Negated: without NaNs, whose sign and payload PTX's `neg.f32`
        // does not keep (the merge sort's thunk computes `-a`; the radix
        // sort ranks the bits the proof names and computes nothing).
        let numbers: Vec<f32> = host.iter().map(|&v| if v.is_nan() { 1.5 } else { v }).collect();
        let y = gpu.upload(&numbers)?;
        let mut want = numbers.clone();
        want.sort_by(|a, b| (-a).total_cmp(&-b));
        let negated = gpu.sort_by(&y, |a: &f32, b: &f32| (-a).total_cmp(&-b))?.to_vec()?;
        c.check(&format!("negated total_cmp sort of special floats, {n}"), bits(&negated) == bits(&want));
    }

    // Radix passes in which every key has the same digit are skipped, the
    // others ping-ponging between the output and the buffer: keys whose
    // middle bytes are constant (two passes run), one middle byte varying
    // (one pass), every key equal (none: the last pass copies), u64 keys
    // below 2^16 (two of eight), a computed key of one varying byte, and
    // floats of one binade (their top byte constant). Sizes past where
    // radix pays (2^20 + 5), stable order checked through the payload.
    for n in [(1usize << 20) + 5, 3 << 20] {
        let raw: Vec<u32> = (0..n as u64).map(|i| (i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32).collect();
        for (what, mask) in [("two live passes", 0xff00_00ffu32), ("one live middle pass", 0x00ff_0000), ("no live pass", 0)] {
            let host: Vec<u32> = raw.iter().map(|v| v & mask).collect();
            let d = gpu.upload(&host)?;
            let mut want = host.clone();
            want.sort();
            c.check(&format!("sort with skipped passes ({what}), {n}"), gpu.sort(&d)?.to_vec()? == want);
        }
        let small: Vec<u64> = raw.iter().map(|&v| u64::from(v & 0xffff)).collect();
        let d = gpu.upload(&small)?;
        let mut want = small.clone();
        want.sort_by(|a, b| b.cmp(a));
        let down = gpu.sort_by(&d, |a: &u64, b: &u64| b.cmp(a))?.to_vec()?;
        c.check(&format!("descending sort of u64 below 2^16 (six passes skipped), {n}"), down == want);
        let pairs: Vec<(u32, u32)> = raw.iter().enumerate().map(|(i, &v)| (v, i as u32)).collect();
        let d = gpu.upload(&pairs)?;
        let mut want = pairs.clone();
        want.sort_by_key(|p| (p.0 >> 8) & 0xff);
        let by_key = gpu.sort_by_key(&d, |p: &(u32, u32)| (p.0 >> 8) & 0xff)?.to_vec()?;
        c.check(&format!("sort_by_key on one computed byte, stable, {n}"), by_key == want);
        let binade: Vec<f32> = raw.iter().map(|&v| 1.0 + (v >> 9) as f32 / (1u32 << 23) as f32).collect();
        let d = gpu.upload(&binade)?;
        let mut want = binade.clone();
        want.sort_by(|a, b| a.total_cmp(b));
        let up = gpu.sort_by(&d, |a: &f32, b: &f32| a.total_cmp(b))?.to_vec()?;
        c.check(&format!("total_cmp sort of floats in [1, 2), {n}"), same(&up, &want));
    }
    // CUB's histogram counts the keys that pad its last tile (to 2048) in
    // the highest digit: with 2^20 + 1024 keys, all but the first 1024 of
    // them with the top byte 0xff, that bin counts as many as there are
    // keys, and the top pass is not one to skip.
    let n = (1usize << 20) + 1024;
    let host: Vec<u32> = (0..n as u32).map(|i| if i < 1024 { i } else { 0xff00_0000 | (i.wrapping_mul(2_654_435_761) >> 8) }).rev().collect();
    let d = gpu.upload(&host)?;
    let mut want = host.clone();
    want.sort();
    c.check(&format!("sort whose top bin the histogram's padding fills, {n}"), gpu.sort(&d)?.to_vec()? == want);

    let n = 100_003;
    let host = data(n, 7);
    // Host slices as inputs: each call copies them to a staging buffer of
    // its own, freed after it in stream order.
    let from_host = gpu.reduce(&host[..], f32::MIN, |a: f32, b: f32| a.max(b))?;
    let scanned = gpu.inclusive_scan(&host[1..], |a: f32, b: f32| a.max(b))?;
    c.check(
        "calls on host slices",
        from_host.to_bits() == native::reduce(&host, f32::MIN, |a: f32, b: f32| a.max(b)).to_bits()
            && same(&scanned.to_vec()?, &native::inclusive_scan(&host[1..], |a: f32, b: f32| a.max(b))),
    );
    let x = gpu.upload(&host)?;
    let g = 3.0f32;
    // `_into` a whole buffer, and into a range of one.
    let mut out: DeviceVec<f32> = gpu.alloc(n)?;
    gpu.transform_into(&x, &mut out, move |v: f32| v * g)?;
    let want: Vec<f32> = host.iter().map(|&v| v * g).collect();
    c.check("transform_into", same(&out.to_vec()?, &want));
    let mut wide: DeviceVec<f32> = gpu.alloc(2 * n)?;
    gpu.transform_into(&x.slice(..), &mut wide.slice_mut(n..), move |v: f32| v * g)?;
    let back = wide.to_vec()?;
    c.check("transform_into a range", same(&back[n..], &want) && back[..n].iter().all(|&v| v == 0.0));
    gpu.inclusive_scan_into(&x, &mut out, |a: f32, b: f32| a.max(b))?;
    c.check(
        "inclusive_scan_into",
        same(&out.to_vec()?, &native::inclusive_scan(&host, |a: f32, b: f32| a.max(b))),
    );
    // A length that does not fit is an error before any launch, and the
    // output keeps what it held.
    let before = out.to_vec()?;
    let mut short: DeviceVec<f32> = gpu.alloc(n - 1)?;
    let e = gpu.transform_into(&x, &mut short, move |v: f32| v * g);
    c.check(
        "transform_into a shorter buffer is a Mismatch error",
        matches!(&e, Err(e) if e.kind() == ErrorKind::Mismatch),
    );
    c.check("the shorter buffer is unchanged", short.to_vec()?.iter().all(|&v| v == 0.0));
    let e = gpu.transform2_into(&x, &x.slice(1..), &mut out, |a: f32, b: f32| a + b);
    c.check(
        "transform2_into of inputs of two lengths is a Mismatch error",
        matches!(&e, Err(e) if e.kind() == ErrorKind::Mismatch),
    );
    c.check("its output is unchanged", same(&out.to_vec()?, &before));

    // Another stream: its result read on the default stream, the input
    // dropped while the stream may still read it.
    let side = gpu.stream()?;
    let moved = {
        let y = gpu.upload(&host)?;
        side.transform(&y, move |v: f32| v * g + 2.0)?
    };
    let again = gpu.transform(&moved, |v: f32| v - 2.0)?;
    let want2: Vec<f32> = host.iter().map(|&v| (v * g + 2.0) - 2.0).collect();
    c.check("a result of another stream read on this one", same(&again.to_vec()?, &want2));
    side.synchronize()?;
    drop(side);
    let reused = gpu.stream()?;
    let r = reused.reduce(&moved, f32::MIN, |a: f32, b: f32| a.max(b))?;
    let hr = native::reduce(&native::transform(&host, move |v: f32| v * g + 2.0), f32::MIN, |a: f32, b: f32| a.max(b));
    c.check("a reused stream", r.to_bits() == hr.to_bits());

    // Host buffers: a reused Vec, a page-locked buffer both ways, a copy
    // into an existing device buffer, a device-side copy.
    let mut v = Vec::with_capacity(3);
    x.to_vec_into(&mut v)?;
    c.check("to_vec_into", same(&v, &host));
    let mut pinned = gpu.alloc_host::<f32>(n)?;
    pinned.as_mut_slice()?.copy_from_slice(&host);
    let from_pinned = gpu.upload(pinned.as_slice()?)?;
    let mut back = gpu.alloc_host::<f32>(n)?;
    from_pinned.copy_to(back.as_mut_slice()?)?;
    c.check("page-locked upload and copy_to", same(back.as_slice()?, &host));
    // Copies that run while the program goes on: up, a call, down; and
    // the same with the download on another stream.
    let up = gpu.upload_async(&pinned)?;
    let y = gpu.transform(&up, move |v: f32| v * g)?;
    let mut down = gpu.alloc_host::<f32>(n)?;
    gpu.download_async(&y, &mut down)?;
    drop((up, y));
    c.check("upload_async, a call, download_async", same(down.as_slice()?, &want));
    let other = gpu.stream()?;
    let y = gpu.transform(&from_pinned, move |v: f32| v * g)?;
    other.download_async(&y, &mut back)?;
    c.check("download_async on another stream", same(back.as_slice()?, &want));
    let kept = gpu.select(&x, |v: f32| v > 0.0)?;
    let mut hk = gpu.alloc_host::<f32>(kept.len())?;
    gpu.download_async(&kept, &mut hk)?;
    let want_kept: Vec<f32> = host.iter().copied().filter(|&v| v > 0.0).collect();
    c.check("download_async of a select's result", same(hk.as_slice()?, &want_kept));
    c.check(
        "download_async into a buffer of another length is a Mismatch error",
        matches!(gpu.download_async(&y, &mut gpu.alloc_host::<f32>(1)?), Err(e) if e.kind() == ErrorKind::Mismatch),
    );
    let mut d = gpu.alloc::<f32>(n)?;
    d.copy_from(&want)?;
    c.check("copy_from", same(&d.to_vec()?, &want));
    let copied = gpu.copy(&x.slice(5..))?;
    c.check("copy of a range", same(&copied.to_vec()?, &host[5..]));
    c.check(
        "copy_to a slice of another length is a Mismatch error",
        matches!(x.copy_to(&mut [0.0; 3]), Err(e) if e.kind() == ErrorKind::Mismatch),
    );

    // An allocation that cannot fit names the bytes.
    chains::check_chains(gpu, &mut c)?;
    composites::check_composites(gpu, &mut c)?;
    sharded::check_sharded(gpu, &mut c)?;
    if sanitizer {
        gpu.synchronize()?;
        return Ok(c);
    }
    let e = gpu.alloc::<u8>(1 << 50);
    c.check(
        "an allocation past the device's memory is OutOfMemory, naming the bytes",
        matches!(&e, Err(e) if e.kind() == ErrorKind::OutOfMemory && e.to_string().contains("1125899906842624 bytes")),
    );
    if let Err(e) = e {
        println!("  ({e})");
    }
    gpu.synchronize()?;
    Ok(c)
}

/// A callback that panics on the GPU (a division by a captured zero):
/// the call returns, and the error surfaces at the next wait, naming the
/// call's site.
fn trap(gpu: &Gpu) -> Result<bool, Error> {
    let x = gpu.upload(&[1i32, 2, 3, 4])?;
    let zero = std::hint::black_box(0i32);
    let line = line!() + 1;
    let y = gpu.transform(&x, move |v: i32| v / zero)?;
    let e = y.to_vec().err();
    println!("{e:?}");
    Ok(matches!(&e, Some(e) if e.kind() == ErrorKind::Device && e.to_string().contains(&format!("main.rs:{line}:"))))
}

/// The process's resident memory in bytes (Linux).
fn resident() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).unwrap_or(0);
    pages * 4096
}

/// Calls from `threads` threads sharing `gpu` for `seconds`: a transform
/// into a buffer, a reduce, a select and its copy back, each checked.
fn soak(gpu: &Gpu, seconds: u64, threads: usize) -> Result<bool, Error> {
    let start = Instant::now();
    let settle = std::time::Duration::from_secs(seconds.div_ceil(10));
    let end = std::time::Duration::from_secs(seconds);
    let results: Vec<Result<(u64, bool), Error>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || -> Result<(u64, bool), Error> {
                    let n = 1000 + 977 * t;
                    let host = data(n, t as u64);
                    let x = gpu.upload(&host)?;
                    let mut out: DeviceVec<f32> = gpu.alloc(n)?;
                    let mut back = Vec::new();
                    let g = t as f32;
                    let want_max = native::reduce(&host, f32::MIN, |a: f32, b: f32| a.max(b));
                    let want_kept = host.iter().filter(|&&v| v > 0.0).count();
                    let (mut calls, mut ok) = (0u64, true);
                    while start.elapsed() < end {
                        gpu.transform_into(&x, &mut out, move |v: f32| v * g)?;
                        let m = gpu.reduce(&x, f32::MIN, |a: f32, b: f32| a.max(b))?;
                        let k = gpu.select(&x, |v: f32| v > 0.0)?;
                        k.to_vec_into(&mut back)?;
                        ok &= m.to_bits() == want_max.to_bits() && back.len() == want_kept;
                        calls += 4;
                    }
                    Ok((calls, ok))
                })
            })
            .collect();
        // The memory after the first tenth, against the end's.
        std::thread::sleep(settle);
        let early = (resident(), gpu.memory().map(|m| m.0).unwrap_or(0));
        let r = workers.into_iter().map(|w| w.join().expect("a soak thread panicked")).collect();
        let late = (resident(), gpu.memory().map(|m| m.0).unwrap_or(0));
        println!(
            "host resident {} -> {} bytes, device free {} -> {} bytes",
            early.0, late.0, early.1, late.1
        );
        MEMORY.with(|m| m.set((early, late)));
        r
    });
    let (early, late) = MEMORY.with(|m| m.get());
    let mut calls = 0;
    let mut ok = true;
    for r in results {
        let (c, good) = r?;
        calls += c;
        ok &= good;
    }
    // Growth: host memory by more than 16 MiB, device memory by any byte.
    let grew = late.0 > early.0 + (16 << 20) || late.1 < early.1;
    println!("{calls} calls from {threads} threads in {seconds} s: results {}, memory {}", if ok { "right" } else { "WRONG" }, if grew { "GREW" } else { "flat" });
    Ok(ok && !grew && calls > 0)
}

thread_local! {
    static MEMORY: std::cell::Cell<((usize, usize), (usize, usize))> = const { std::cell::Cell::new(((0, 0), (0, 0))) };
}

/// The GPU's timeline of one chunk: marks before its copy up, before its
/// kernel, before its copy down, and after it.
type Stages = [Mark; 4];

/// `chunks` page-locked chunks up, through a transform heavy enough to
/// last about as long as a copy, and down, spread over `streams` streams.
/// Returns each chunk's marks, and the first mark (every other is after
/// it in the host's order, so on the GPU's clock).
fn run_chunks(
    gpu: &Gpu,
    streams: usize,
    inputs: &[HostBuffer<f32>],
    outputs: &mut [HostBuffer<f32>],
    rounds: u32,
) -> Result<(Mark, Vec<Stages>), Error> {
    let lanes: Vec<Gpu> = (0..streams).map(|_| gpu.stream()).collect::<Result<_, _>>()?;
    let start = lanes[0].mark()?;
    let mut timeline = Vec::new();
    let mut live = Vec::new();
    for (c, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
        let s = &lanes[c % streams];
        let up = s.mark()?;
        let x = s.upload_async(input)?;
        let run = s.mark()?;
        let y = s.transform(&x, move |v: f32| {
            let mut a = v;
            for _ in 0..rounds {
                a = a * 0.999 + 0.001;
            }
            a
        })?;
        let down = s.mark()?;
        s.download_async(&y, output)?;
        let end = s.mark()?;
        timeline.push([up, run, down, end]);
        live.push((x, y));
    }
    Ok((start, timeline))
}

/// Microseconds of GPU time from `start` to each mark of each chunk.
fn micros(start: &Mark, timeline: &[Stages]) -> Result<Vec<[f64; 4]>, Error> {
    timeline
        .iter()
        .map(|marks| {
            let mut t = [0.0; 4];
            for (i, m) in marks.iter().enumerate() {
                t[i] = start.elapsed(m)?.as_secs_f64() * 1e6;
            }
            Ok(t)
        })
        .collect()
}

/// The time during which a copy up, a kernel and a copy down (of any
/// chunks) all run, in microseconds: a sweep over the stages' intervals.
fn three_way(times: &[[f64; 4]]) -> f64 {
    let mut events: Vec<(f64, usize, i32)> = Vec::new();
    for t in times {
        for stage in 0..3 {
            events.push((t[stage], stage, 1));
            events.push((t[stage + 1], stage, -1));
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
    let (mut active, mut total, mut last) = ([0i32; 3], 0.0, 0.0);
    for (at, stage, delta) in events {
        if active.iter().all(|&n| n > 0) {
            total += at - last;
        }
        active[stage] += delta;
        last = at;
    }
    total
}

/// Chunks through three streams against one: the GPU's marks show the
/// copies up, the kernels and the copies down overlapping.
fn overlap(gpu: &Gpu) -> Result<bool, Error> {
    // A kernel about as long as a copy of its chunk (on the H200, 16 MiB
    // up or down in about 310 us): a stream's next copy up waits for its
    // copy down, so a much longer kernel would leave the copies in phases
    // of their own, overlapping the kernels but never each other.
    let (chunks, len, rounds) = (12usize, 1usize << 22, 1000u32);
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for c in 0..chunks {
        let mut h = gpu.alloc_host::<f32>(len)?;
        h.as_mut_slice()?.copy_from_slice(&data(len, c as u64));
        inputs.push(h);
        outputs.push(gpu.alloc_host::<f32>(len)?);
    }
    // The kernel's module loads on the first call, outside the timings.
    run_chunks(gpu, 1, &inputs[..1], &mut outputs[..1], rounds)?;
    let mut spans = Vec::new();
    let mut right = true;
    for streams in [1usize, 3] {
        let (start, timeline) = run_chunks(gpu, streams, &inputs, &mut outputs, rounds)?;
        let times = micros(&start, &timeline)?;
        let first = times.iter().map(|t| t[0]).fold(f64::MAX, f64::min);
        let last = times.iter().map(|t| t[3]).fold(0.0, f64::max);
        let stage = |i: usize| times.iter().map(|t| t[i + 1] - t[i]).sum::<f64>() / chunks as f64;
        let all = three_way(&times);
        println!(
            "{streams} stream(s): {chunks} chunks of {len} f32 in {:.0} us of GPU time; a chunk's copy up {:.0} us, kernel {:.0} us, copy down {:.0} us; all three at once for {:.0} us",
            last - first,
            stage(0),
            stage(1),
            stage(2),
            all
        );
        if streams > 1 {
            for (c, t) in times.iter().enumerate() {
                println!(
                    "  chunk {c:2} on stream {}: up {:7.0}-{:7.0}, kernel -{:7.0}, down -{:7.0} us",
                    c % streams,
                    t[0],
                    t[1],
                    t[2],
                    t[3]
                );
            }
        }
        spans.push((last - first, all));
        // Every 1021st element against the host's (all of them would take
        // the host a minute).
        for (c, out) in outputs.iter().enumerate() {
            let host = data(len, c as u64);
            let got = out.as_slice()?;
            right &= (0..len).step_by(1021).all(|i| {
                let mut a = host[i];
                for _ in 0..rounds {
                    a = a * 0.999 + 0.001;
                }
                got[i].to_bits() == a.to_bits()
            });
        }
    }
    let (one, three) = (spans[0], spans[1]);
    println!(
        "three streams take {:.2}x the GPU time of one; results {}",
        three.0 / one.0,
        if right { "right" } else { "WRONG" }
    );
    // Overlap: the three stages ran at once for a tenth of the time at
    // least, and the pipeline is shorter than one stream's by a third.
    Ok(right && three.1 >= 0.1 * three.0 && three.0 <= 0.67 * one.0 && one.1 == 0.0)
}

/// The best of `reps` runs of `f`, in microseconds.
fn best(reps: usize, mut f: impl FnMut() -> Result<(), Error>) -> Result<f64, Error> {
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(best)
}

/// Launch overhead: 1,000 calls on 2^10 device-resident elements, then
/// one wait (into one buffer; into a new buffer each), and 1,000 calls on
/// an empty input, which launch nothing: the host's own part of a call.
fn launches(gpu: &Gpu, reps: usize) -> Result<(), Error> {
    let x = gpu.upload(&data(1 << 10, 4))?;
    let g = 3.0f32;
    let mut out: DeviceVec<f32> = gpu.alloc(1 << 10)?;
    let us = best(reps, || {
        for _ in 0..1000 {
            gpu.transform_into(&x, &mut out, move |v: f32| v * g + 1.0)?;
        }
        gpu.synchronize()
    })?;
    println!("rust launch_1000 10 {us:.1}");
    let us = best(reps, || {
        for _ in 0..1000 {
            drop(gpu.transform(&x, move |v: f32| v * g + 1.0)?);
        }
        gpu.synchronize()
    })?;
    println!("rust launch_1000_fresh 10 {us:.1}");
    let empty = gpu.upload::<f32>(&[])?;
    let mut none: DeviceVec<f32> = gpu.alloc(0)?;
    let us = best(reps, || {
        for _ in 0..1000 {
            gpu.transform_into(&empty, &mut none, move |v: f32| v * g + 1.0)?;
        }
        gpu.synchronize()
    })?;
    println!("rust launch_1000_empty 0 {us:.1}");
    Ok(())
}

fn bench(gpu: &Gpu, reps: usize) -> Result<(), Error> {
    chains::bench_chains(gpu, reps)?;
    composites::bench_composites(gpu, reps)?;
    // Transfers of 2^20, 2^24 and 2^28 bytes.
    for log in [20u32, 24, 28] {
        let n = (1usize << log) / 4;
        let host = data(n, 1);
        let d = gpu.upload(&host)?;
        let us = best(reps, || gpu.upload(&host).map(drop))?;
        println!("rust upload_pageable {log} {us:.1}");
        let us = best(reps, || d.to_vec().map(drop))?;
        println!("rust to_vec {log} {us:.1}");
        let mut v = Vec::new();
        let us = best(reps, || d.to_vec_into(&mut v))?;
        println!("rust to_vec_into {log} {us:.1}");
        let mut pinned = gpu.alloc_host::<f32>(n)?;
        pinned.as_mut_slice()?.copy_from_slice(&host);
        let us = best(reps, || gpu.upload(pinned.as_slice()?).map(drop))?;
        println!("rust upload_pinned {log} {us:.1}");
        let us = best(reps, || d.copy_to(pinned.as_mut_slice()?))?;
        println!("rust download_pinned {log} {us:.1}");
    }
    // The pipeline, from the host and back.
    for log in [24u32, 28] {
        let host = data(1 << log, 2);
        let us = best(reps, || pipeline(gpu, &host, 1.5, 1.25).map(drop))?;
        println!("rust pipeline {log} {us:.1}");
    }
    // One call on device-resident data: enqueued, and waited for.
    for log in [20u32, 24, 28] {
        let x = gpu.upload(&data(1 << log, 3))?;
        let g = 3.0f32;
        let mut out: DeviceVec<f32> = gpu.alloc(1 << log)?;
        let us = best(reps, || {
            gpu.transform_into(&x, &mut out, move |v: f32| v * g + 1.0)?;
            gpu.synchronize()
        })?;
        println!("rust transform_into_wait {log} {us:.1}");
        let us = best(reps, || {
            let y = gpu.transform(&x, move |v: f32| v * g + 1.0)?;
            gpu.synchronize()?;
            drop(y);
            Ok(())
        })?;
        println!("rust transform_wait {log} {us:.1}");
    }
    launches(gpu, reps)?;
    let g = 3.0f32;
    // Chunks up, through a call and down, from and to page-locked memory:
    // on one stream the copies and the calls take turns; on two, one
    // chunk's upload runs beside another's download and call.
    let chunks = 16;
    let len = 1 << 22;
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for i in 0..chunks {
        let mut h = gpu.alloc_host::<f32>(len)?;
        h.as_mut_slice()?.copy_from_slice(&data(len, 10 + i as u64));
        inputs.push(h);
        outputs.push(gpu.alloc_host::<f32>(len)?);
    }
    let one = [gpu.stream()?];
    let two = [gpu.stream()?, gpu.stream()?];
    for (name, streams) in [("overlap_1stream", &one[..]), ("overlap_2streams", &two[..])] {
        let us = best(reps, || {
            for (i, (input, output)) in inputs.iter().zip(outputs.iter_mut()).enumerate() {
                let s = &streams[i % streams.len()];
                let d = s.upload_async(input)?;
                let y = s.transform(&d, move |v: f32| v * g + 1.0)?;
                s.download_async(&y, output)?;
            }
            streams.iter().try_for_each(Gpu::synchronize)
        })?;
        println!("rust {name} 26 {us:.1}");
    }
    let want: Vec<f32> = data(len, 10 + chunks as u64 - 1).iter().map(|&v| v * g + 1.0).collect();
    if !same(outputs[chunks - 1].as_slice()?, &want) {
        println!("FAIL overlap: the last chunk differs from the CPU's");
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("pipeline: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match args.first().map(String::as_str) {
        Some("check") => check(&gpu, args.get(1).is_some_and(|a| a == "--sanitizer")).map(|c| {
            println!("{} passed, {} failed", c.passed, c.failed.len());
            c.failed.is_empty() && c.passed > 0
        }),
        Some("trap") => trap(&gpu),
        Some("overlap") => overlap(&gpu),
        Some("soak") => {
            let seconds = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(60);
            let threads = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(8);
            soak(&gpu, seconds, threads)
        }
        Some("bench") => {
            let reps = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(10);
            bench(&gpu, reps).map(|()| true)
        }
        Some("launches") => {
            let reps = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(10);
            launches(&gpu, reps).map(|()| true)
        }
        Some("sort-sizes") => {
            let reps = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(10);
            let only = args.get(2).and_then(|l| l.parse().ok());
            composites::bench_sort_sizes(&gpu, reps, only).map(|()| true)
        }
        _ => {
            eprintln!(
                "usage: pipeline check [--sanitizer] | trap | overlap | soak SECONDS THREADS | bench [REPS] | launches [REPS] | sort-sizes [REPS [LOG2]]"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("pipeline: {e}");
            ExitCode::FAILURE
        }
    }
}
