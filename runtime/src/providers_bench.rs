//! The providers benchmark: each compiled registration of a build
//! (benches/providers.rs: CUB's operations as Rust closures) against CUB's
//! own algorithm with the same operation, in one process, on the same
//! device buffers, timed by the same loop with the same events.
//!
//! CUB comes from a shared library built by nvcc on the GPU machine
//! (benches/cub/providers.cu) and loaded at run time. For every provider,
//! element type and size: `warmup` launches, then `repeats` launches each
//! between two events, over inputs rotated among four buffers; the median
//! per pass, the best of `passes` passes, ours and CUB's passes interleaved.
//! After timing, both outputs of one more launch are compared (integers
//! exactly; float sums and CUB's fused `3x + 1` within a relative bound).

use crate::build::{Build, Loaded, ResolvedKernel};
use crate::dispatch::{self, Job, Scratch, SortPick};
use crate::gpu::{DeviceBuffer, Gpu, Stream};
use crate::RuntimeError;
use manifest::provider::result_record;
use manifest::{GridPolicy, Provider, Scalar, Signature};
use std::ffi::{c_char, c_int, CString};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug)]
pub struct Options {
    pub device: usize,
    pub cub: PathBuf,
    /// log2 of the sizes.
    pub sizes: Vec<u32>,
    pub warmup: u32,
    pub repeats: u32,
    pub passes: u32,
    /// Only this provider.
    pub only: Option<String>,
    /// Also time the grid-stride providers under other grid policies (at
    /// 2^24 and up), to choose their tuning.
    pub sweep: bool,
    /// Builds of the same file with other tunings (`RMIR_TUNING`), each
    /// timed beside the first on the same buffers.
    pub variants: Vec<PathBuf>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            device: 0,
            cub: PathBuf::from("libcubbench.so"),
            sizes: vec![10, 16, 20, 24, 28],
            warmup: 5,
            repeats: 30,
            passes: 2,
            only: None,
            sweep: false,
            variants: Vec::new(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Row {
    pub provider: Provider,
    /// The grid policy when a sweep replaced the kernel's, or the build
    /// (`--variant`) the row times.
    pub policy: Option<String>,
    pub element: Scalar,
    pub n: u64,
    /// Median µs per launch, best pass.
    pub ours_us: f64,
    pub cub_us: f64,
    /// Bytes an ideal implementation moves (inputs read once, outputs
    /// written once); none for the sort.
    pub bytes: Option<u64>,
    pub registers: i32,
    pub resident_blocks_per_sm: u32,
    pub launches: usize,
    pub check: String,
}

pub struct Report {
    pub device: String,
    /// Device-to-device copy, GB/s (read + write bytes).
    pub copy_gbps: f64,
    pub rows: Vec<Row>,
}

impl Report {
    pub fn all_checks_ok(&self) -> bool {
        !self.rows.is_empty() && self.rows.iter().all(|r| r.check == "ok")
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "device {}; device-to-device copy {:.0} GB/s (read + write)",
            self.device, self.copy_gbps
        );
        let _ = writeln!(
            out,
            "{:<17} {:>4} {:>6} {:>10} {:>10} {:>8} {:>8} {:>7} {:>5} {:>4} {:>3}  check",
            "provider",
            "type",
            "n",
            "ours us",
            "CUB us",
            "vs CUB",
            "GB/s",
            "of copy",
            "regs",
            "bl/SM",
            "ln"
        );
        for r in &self.rows {
            let gbps = r.bytes.map(|b| b as f64 / (r.ours_us * 1e-6) / 1e9);
            let _ =
                writeln!(
                out,
                "{:<17} {:>4} {:>6} {:>10.2} {:>10.2} {:>8.3} {:>8} {:>7} {:>5} {:>4} {:>3}  {}",
                match &r.policy {
                    Some(p) => format!("{} @{p}", r.provider.name()),
                    None => r.provider.name().to_string(),
                },
                r.element.name(),
                format!("2^{}", r.n.trailing_zeros()),
                r.ours_us,
                r.cub_us,
                r.cub_us / r.ours_us,
                gbps.map_or("-".into(), |g| format!("{g:.0}")),
                gbps.map_or("-".into(), |g| format!("{:.1}%", 100.0 * g / self.copy_gbps)),
                r.registers,
                r.resident_blocks_per_sm,
                r.launches,
                r.check
            );
        }
        let _ = writeln!(
            out,
            "vs CUB = CUB's time over ours (> 1: faster than CUB); GB/s from the ideal bytes \
             (inputs read once, outputs written once); bl/SM = resident blocks per multiprocessor; \
             ln = launches per call"
        );
        out
    }

    /// Tab-separated, one row a line, with a header.
    pub fn tsv(&self) -> String {
        let mut out = String::from(
            "provider\tpolicy\ttype\tn\tours_us\tcub_us\tbytes\tregisters\tblocks_per_sm\tlaunches\tcheck\n",
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{}\t{}\t{}\t{}\t{:.3}\t{:.3}\t{}\t{}\t{}\t{}\t{}",
                r.provider.name(),
                r.policy.as_deref().unwrap_or("-"),
                r.element.name(),
                r.n,
                r.ours_us,
                r.cub_us,
                r.bytes.map_or("-".into(), |b| b.to_string()),
                r.registers,
                r.resident_blocks_per_sm,
                r.launches,
                r.check
            );
        }
        out
    }
}

type TempBytes = unsafe extern "C" fn(*const c_char, *const c_char, u64, *mut usize) -> c_int;
type RunFn = unsafe extern "C" fn(
    *const c_char,
    *const c_char,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    usize,
) -> c_int;

/// The CUB library's two functions for one algorithm.
struct Cub {
    temp_bytes: TempBytes,
    run: RunFn,
}

/// The algorithm order of benches/cub/providers.cu (its symbols' suffixes).
/// The CUB algorithm of each provider, by its index in
/// benches/cub/providers.cu; a radix sort (index [`CUB_RADIX_SORT`]) is
/// the anchor of a proved sort run with `RMIR_SORT=radix`.
const CUB_ALGOS: [Provider; 15] = [
    Provider::Reduce,
    Provider::InclusiveScan,
    Provider::ExclusiveScan,
    Provider::Transform,
    Provider::Transform2,
    Provider::Select,
    Provider::SegmentedReduce,
    Provider::SortBy,
    Provider::DedupBy,
    Provider::Partition,
    Provider::PartitionPoint,
    Provider::Histogram,
    Provider::MergeBy,
    Provider::ReduceByKey,
    Provider::ScanByKey,
];

/// Bins of the histogram rows (CUB's HistogramEven with 257 levels).
const HISTOGRAM_BINS: u64 = 256;

/// `cub::DeviceRadixSort::SortKeys`'s index in benches/cub/providers.cu.
const CUB_RADIX_SORT: usize = 15;

/// `cub::DeviceSegmentedSort::StableSortKeys`'s index in
/// benches/cub/providers.cu, the segmented sort's anchor.
const CUB_SEGMENTED_SORT: usize = 16;

fn cub_for(
    lib: &libloading::Library,
    provider: Provider,
    radix: bool,
) -> Result<Cub, RuntimeError> {
    let index = match radix {
        true => CUB_RADIX_SORT,
        false if provider == Provider::SegmentedSortBy => CUB_SEGMENTED_SORT,
        false => CUB_ALGOS
            .iter()
            .position(|p| *p == provider)
            .ok_or_else(|| RuntimeError::Usage(format!("CUB has no {}", provider.name())))?,
    };
    let get = |name: String| -> Result<*const (), RuntimeError> {
        // SAFETY: looks a symbol up; its type is the library's C ABI above.
        unsafe {
            lib.get::<*const ()>(name.as_bytes())
                .map(|s| *s)
                .map_err(|e| RuntimeError::Usage(format!("the CUB library has no `{name}`: {e}")))
        }
    };
    let temp = get(format!("rcb_cub_temp_bytes_{index}"))?;
    let run = get(format!("rcb_cub_run_{index}"))?;
    // SAFETY: the symbols are the functions of benches/cub/providers.cu.
    Ok(unsafe {
        Cub {
            temp_bytes: std::mem::transmute::<*const (), TempBytes>(temp),
            run: std::mem::transmute::<*const (), RunFn>(run),
        }
    })
}

fn cub_error(what: &str, code: c_int) -> RuntimeError {
    RuntimeError::Usage(format!(
        "CUB {what} failed with {code} (1: no such algorithm or type; 100 + n: cudaError {})",
        code - 100
    ))
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `n` random elements' bytes: integers of the full range, floats in
/// [-1000, 1000].
fn random_bytes(element: Scalar, n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut out = Vec::with_capacity(n * element.size() as usize);
    for _ in 0..n {
        let x = r.next();
        let v = (x % 2_000_001) as f64 / 1000.0 - 1000.0;
        match element {
            Scalar::I32 => out.extend(((x >> 32) as i32).to_le_bytes()),
            Scalar::I64 => out.extend((x as i64).to_le_bytes()),
            Scalar::F32 => out.extend((v as f32).to_le_bytes()),
            _ => out.extend(v.to_le_bytes()),
        }
    }
    out
}

/// `n` keys of `element` in runs of 1 to 32 (16.5 on average, as random
/// as `seed`): run `r`'s key is `r` (modulo 2^20 for the floats, whose
/// consecutive runs still differ).
fn run_keys(element: Scalar, n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    let mut out = Vec::with_capacity(n * element.size() as usize);
    let (mut run, mut left) = (0u64, 0u64);
    for _ in 0..n {
        if left == 0 {
            run += 1;
            left = r.next() % 32 + 1;
        }
        left -= 1;
        match element {
            Scalar::I32 => out.extend((run as i32).to_le_bytes()),
            Scalar::I64 => out.extend((run as i64).to_le_bytes()),
            Scalar::F32 => out.extend(((run % (1 << 20)) as f32).to_le_bytes()),
            _ => out.extend(((run % (1 << 20)) as f64).to_le_bytes()),
        }
    }
    out
}

/// Sorts `n` elements' bytes in ascending order (floats by `total_cmp`:
/// [`random_bytes`] makes no NaN).
fn sort_bytes(element: Scalar, bytes: &mut [u8]) {
    macro_rules! sort_as {
        ($t:ty, $cmp:expr) => {{
            const W: usize = std::mem::size_of::<$t>();
            let mut v: Vec<$t> = bytes
                .chunks_exact(W)
                .map(|c| <$t>::from_le_bytes(c.try_into().expect("W bytes")))
                .collect();
            v.sort_unstable_by($cmp);
            for (c, x) in bytes.chunks_exact_mut(W).zip(v) {
                c.copy_from_slice(&x.to_le_bytes());
            }
        }};
    }
    match element {
        Scalar::I32 => sort_as!(i32, |a, b| a.cmp(b)),
        Scalar::I64 => sort_as!(i64, |a, b| a.cmp(b)),
        Scalar::F32 => sort_as!(f32, |a, b| a.total_cmp(b)),
        _ => sort_as!(f64, |a, b| a.total_cmp(b)),
    }
}

/// The median of one pass of `repeats` timed launches.
fn time_pass(
    gpu: &Gpu,
    warmup: u32,
    repeats: u32,
    mut launch: impl FnMut(usize) -> Result<(), RuntimeError>,
) -> Result<f64, RuntimeError> {
    for w in 0..warmup {
        launch(w as usize % 4)?;
    }
    gpu.synchronize()?;
    let (start, end) = (gpu.event()?, gpu.event()?);
    let mut times = Vec::with_capacity(repeats as usize);
    for r in 0..repeats {
        start.record()?;
        launch(r as usize % 4)?;
        end.record()?;
        end.synchronize()?;
        times.push(start.elapsed_ms(&end)? as f64 * 1e3);
    }
    gpu.synchronize()?;
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

pub fn run(dir: &Path, options: &Options) -> Result<Report, RuntimeError> {
    let sort_pick = SortPick::from_env()?;
    let build = Build::load(&dir.join("manifest.json"))?;
    let gpu = Gpu::open(options.device)?;
    let loaded = Loaded::load(&gpu, &build)?;
    let resolved = loaded.resolve(&build.manifest)?;
    let mut variant_builds = Vec::new();
    for v in &options.variants {
        let label = v
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| v.display().to_string());
        variant_builds.push((label, Build::load(&v.join("manifest.json"))?));
    }
    let variant_loaded = variant_builds
        .iter()
        .map(|(_, b)| Loaded::load(&gpu, b))
        .collect::<Result<Vec<_>, _>>()?;
    let variant_resolved = variant_builds
        .iter()
        .zip(&variant_loaded)
        .map(|((_, b), l)| l.resolve(&b.manifest))
        .collect::<Result<Vec<_>, _>>()?;
    let all_kernels = build.manifest.kernels.iter().chain(
        variant_builds
            .iter()
            .flat_map(|(_, b)| b.manifest.kernels.iter()),
    );
    // SAFETY: loading the CUB library runs its (cudart's) initialisers.
    let lib = unsafe { libloading::Library::new(&options.cub) }
        .map_err(|e| RuntimeError::Usage(format!("cannot load {}: {e}", options.cub.display())))?;
    let mut scratch = Scratch::new(&gpu, Stream::null(), all_kernels)?;
    let max_n = 1u64 << options.sizes.iter().copied().max().unwrap_or(10);
    let copy_gbps = copy_ceiling(&gpu, options)?;
    let mut rows = Vec::new();
    let mut inputs_of: Option<(Scalar, Vec<DeviceBuffer<'_>>)> = None;
    for callback in &build.manifest.callbacks {
        let provider = callback.provider;
        if options
            .only
            .as_deref()
            .is_some_and(|o| o != provider.name())
        {
            continue;
        }
        // A provider CUB has no algorithm for here (the chains) has no row.
        if !CUB_ALGOS.contains(&provider) && provider != Provider::SegmentedSortBy {
            eprintln!(
                "registration {} ({}): no CUB algorithm to compare with, skipped",
                callback.registration,
                provider.name()
            );
            continue;
        }
        let signature = &callback.signature;
        let Some(element) = signature.element().scalar() else {
            continue;
        };
        if !matches!(
            element,
            Scalar::I32 | Scalar::I64 | Scalar::F32 | Scalar::F64
        ) {
            continue;
        }
        let kernels: Vec<&ResolvedKernel<'_>> = build
            .manifest
            .kernels_of(callback.registration)
            .filter_map(|k| resolved.get(&k.name))
            .collect();
        // The same registration (provider and type) in each variant build.
        let variants: Vec<(&str, Vec<&ResolvedKernel<'_>>)> = variant_builds
            .iter()
            .zip(&variant_resolved)
            .filter_map(|((label, b), r)| {
                let c = b
                    .manifest
                    .callbacks
                    .iter()
                    .find(|c| c.provider == provider && c.signature == *signature)?;
                let ks: Vec<&ResolvedKernel<'_>> = b
                    .manifest
                    .kernels_of(c.registration)
                    .filter_map(|k| r.get(&k.name))
                    .collect();
                Some((label.as_str(), ks))
            })
            .collect();
        // With RMIR_SORT=radix a sort runs its proved radix sort against
        // CUB's (a sort whose order is not proved has none: skipped).
        let radix = provider == Provider::SortBy && sort_pick == SortPick::Radix;
        if radix
            && callback
                .sort
                .as_ref()
                .and_then(|s| s.radix_keys())
                .is_none()
        {
            continue;
        }
        let cub = cub_for(&lib, provider, radix)?;
        let size = element.size();
        let max_for = |n: u64| {
            if matches!(provider, Provider::SortBy | Provider::SegmentedSortBy) {
                n.min(1 << 26)
            } else {
                n
            }
        };
        let top = max_for(max_n);
        // Four input buffers of the largest size, kept while the element
        // type stays the same (the sort uses a prefix of them).
        if inputs_of.as_ref().is_none_or(|(e, _)| *e != element) {
            drop(inputs_of.take()); // free the last type's buffers first
            let host = random_bytes(element, max_n as usize, 0x5EED ^ size);
            let mut buffers = Vec::new();
            for _ in 0..4 {
                let b = gpu.alloc(host.len())?;
                b.upload(0, &host)?;
                buffers.push(b);
            }
            inputs_of = Some((element, buffers));
        }
        let inputs = &inputs_of.as_ref().expect("uploaded above").1;

        // Room for the outputs, and for CUB's select count after n
        // elements; partition's rejected elements after our n.
        let ours_out = gpu.alloc((2 * top * size + 16) as usize)?;
        // (partition_point's indices are 8 bytes whatever the element.)
        // (merge_by's output is both inputs'.)
        let cub_out = gpu.alloc((2 * top * size.max(8) + 16) as usize)?;
        let offsets_host: Vec<u64> = (0..=top.div_ceil(1024))
            .map(|i| (i * 1024).min(top))
            .collect();
        let offsets = gpu.alloc(offsets_host.len() * 8)?;
        offsets.upload(0, &offsets_host)?;
        for &log in &options.sizes {
            let n = 1u64 << log;
            if max_for(n) != n {
                continue;
            }
            let segments = n.div_ceil(1024);
            let name =
                CString::new(if radix { "radix_sort" } else { provider.name() }).expect("no NUL");
            let ty = CString::new(element.name()).expect("no NUL");
            let mut temp_bytes = 0usize;
            // SAFETY: the library's C ABI; out-pointer to a local.
            let code = unsafe { (cub.temp_bytes)(name.as_ptr(), ty.as_ptr(), n, &mut temp_bytes) };
            if code != 0 {
                return Err(cub_error("temp_bytes", code));
            }
            let temp = gpu.alloc(temp_bytes.max(1))?;
            // partition_point searches n random elements, sorted, for each
            // element of one of the four inputs (the same distribution);
            // merge_by merges them with n more, sorted too.
            let sorted_random = |seed: u64| -> Result<DeviceBuffer<'_>, RuntimeError> {
                let mut host = random_bytes(element, n as usize, seed ^ size);
                sort_bytes(element, &mut host);
                let b = gpu.alloc(host.len())?;
                b.upload(0, &host)?;
                Ok(b)
            };
            let sorted = match provider {
                Provider::PartitionPoint => Some((sorted_random(0xD00D)?, None)),
                Provider::MergeBy => Some((sorted_random(0xD00D)?, Some(sorted_random(0xFEED)?))),
                _ => None,
            };
            // The by-keys' keys, in runs; the values one of the inputs.
            let keys = match provider {
                Provider::ReduceByKey | Provider::ScanByKey => {
                    let host = run_keys(element, n as usize, 0x4B45 ^ size);
                    let b = gpu.alloc(host.len())?;
                    b.upload(0, &host)?;
                    Some(b)
                }
                _ => None,
            };
            let operands = |b: usize| match (&sorted, &keys) {
                (_, Some(keys)) => (keys.address(0), inputs[b].address(0)),
                (Some((sorted, Some(second))), _) => (sorted.address(0), second.address(0)),
                (Some((sorted, None)), _) => (sorted.address(0), inputs[b].address(0)),
                (None, None) => (inputs[b].address(0), inputs[(b + 1) % 4].address(0)),
            };
            let job = |b: usize, grid: Option<GridPolicy>| Job {
                input: operands(b).0,
                input2: operands(b).1,
                len: n,
                len2: n,
                bins: HISTOGRAM_BINS,
                offsets: offsets.address(0),
                segments,
                longest_segment: 1024,
                // (As the host API gives them: the segmented sort packs
                // them each call.)
                host_offsets: if provider == Provider::SegmentedSortBy {
                    offsets_host[..=segments as usize].to_vec()
                } else {
                    Vec::new()
                },
                init: if matches!(provider, Provider::Reduce) {
                    lowest(element)
                } else if provider == Provider::InclusiveScan {
                    // Unseeded, as CUB's.
                    Vec::new()
                } else {
                    vec![0u8; size as usize]
                },
                output: ours_out.address(0),
                rejected: ours_out.address((top * size) as usize),
                output2: ours_out.address((top * size) as usize),
                env: Vec::new(),
                grid,
                sort_bits: callback.sort.as_ref().map_or(0, |s| s.key_bits()),
                sort_key_size: callback
                    .sort
                    .as_ref()
                    .map_or(0, |s| s.sorted_key_bytes(callback.signature.element())),
                sort: sort_pick,
            };
            let mut launches = 0;
            let mut run_ours = |ks: &[&ResolvedKernel<'_>],
                                b: usize,
                                grid: Option<GridPolicy>|
             -> Result<(), RuntimeError> {
                // SAFETY: `job` addresses the benchmark's buffers, each
                // allocated for the largest size and live for the whole run.
                let l = unsafe { dispatch::run(&mut scratch, signature, ks, &job(b, grid))? };
                launches = l.launches().len();
                Ok(())
            };
            let cub_run = |b: usize, out: &DeviceBuffer<'_>| -> Result<(), RuntimeError> {
                // SAFETY: device addresses of live buffers of the sizes CUB
                // needs (inputs of n elements, output of n plus the count,
                // offsets of segments + 1, temp of temp_bytes).
                let code = unsafe {
                    (cub.run)(
                        name.as_ptr(),
                        ty.as_ptr(),
                        operands(b).0,
                        operands(b).1,
                        out.address(0),
                        n,
                        offsets.address(0),
                        segments,
                        temp.address(0),
                        temp_bytes,
                    )
                };
                if code == 0 {
                    Ok(())
                } else {
                    Err(cub_error("run", code))
                }
            };
            let mut best_ours = f64::INFINITY;
            let mut best_cub = f64::INFINITY;
            for _ in 0..options.passes.max(1) {
                best_ours = best_ours.min(time_pass(&gpu, options.warmup, options.repeats, |b| {
                    run_ours(&kernels, b, None)
                })?);
                best_cub = best_cub.min(time_pass(&gpu, options.warmup, options.repeats, |b| {
                    cub_run(b, &cub_out)
                })?);
            }
            // The variant builds, timed the same way.
            let main_resources = kernels.first().map_or((0, 0), |k| {
                (k.resources.registers, k.resident_blocks_per_sm)
            });
            let mut swept = Vec::new();
            for (label, ks) in &variants {
                let mut best = f64::INFINITY;
                for _ in 0..options.passes.max(1) {
                    best = best.min(time_pass(&gpu, options.warmup, options.repeats, |b| {
                        run_ours(ks, b, None)
                    })?);
                }
                let regs = ks.first().map_or((0, 0), |k| {
                    (k.resources.registers, k.resident_blocks_per_sm)
                });
                swept.push((label.to_string(), best, regs));
            }
            // Other grid policies, timed the same way (no CUB row).
            if options.sweep && log >= 24 {
                for policy in sweep_policies(provider) {
                    let mut best = f64::INFINITY;
                    for _ in 0..options.passes.max(1) {
                        best = best.min(time_pass(&gpu, options.warmup, options.repeats, |b| {
                            run_ours(&kernels, b, Some(policy))
                        })?);
                    }
                    swept.push((describe_policy(policy), best, main_resources));
                }
            }
            // One more launch of each on buffer 0, compared.
            run_ours(&kernels, 0, None)?;
            cub_run(0, &cub_out)?;
            gpu.synchronize()?;
            let ours_rejected = (top * size) as usize;
            let (check, kept) = compare(
                provider,
                element,
                (n, segments),
                &scratch,
                (&ours_out, ours_rejected),
                &cub_out,
            )?;
            let main = kernels.first().copied();
            let bytes = ideal_bytes(provider, size, n, segments, kept);
            for (label, us, (registers, resident)) in swept {
                rows.push(Row {
                    provider,
                    policy: Some(label),
                    element,
                    n,
                    ours_us: us,
                    cub_us: best_cub,
                    bytes,
                    registers,
                    resident_blocks_per_sm: resident,
                    launches,
                    check: "ok".into(),
                });
            }
            rows.push(Row {
                provider,
                policy: None,
                element,
                n,
                ours_us: best_ours,
                cub_us: best_cub,
                bytes,
                registers: main.map_or(0, |k| k.resources.registers),
                resident_blocks_per_sm: main.map_or(0, |k| k.resident_blocks_per_sm),
                launches,
                check,
            });
            eprintln!(
                "{} {} 2^{log}: ours {best_ours:.2} us, CUB {best_cub:.2} us",
                provider.name(),
                element.name()
            );
        }
    }
    Ok(Report {
        device: format!(
            "{} (sm_{}{}, {} SMs)",
            gpu.name, gpu.compute_capability.0, gpu.compute_capability.1, gpu.multiprocessors
        ),
        copy_gbps,
        rows,
    })
}

/// The policies a sweep tries besides the kernel's own (8 blocks/SM).
fn sweep_policies(provider: Provider) -> Vec<GridPolicy> {
    let capped = |b| GridPolicy::TilesCappedBySms { blocks_per_sm: b };
    match provider {
        Provider::Reduce | Provider::Histogram => vec![capped(2), capped(4), capped(6)],
        Provider::Transform | Provider::Transform2 | Provider::SegmentedReduce => {
            vec![capped(4), capped(6), GridPolicy::OneBlockPerTile]
        }
        // Fewer resident blocks, and a block per tile (each still draws
        // tickets: the old one-tile-per-block shape with the prefetch).
        Provider::InclusiveScan | Provider::ExclusiveScan => {
            vec![capped(2), GridPolicy::OneBlockPerTile]
        }
        _ => Vec::new(),
    }
}

fn describe_policy(p: GridPolicy) -> String {
    match p {
        GridPolicy::TilesCappedBySms { blocks_per_sm } => format!("{blocks_per_sm}/SM"),
        GridPolicy::OneBlockPerTile => "tiles".into(),
        GridPolicy::ThreadPerPartition => "partitions".into(),
        GridPolicy::ResidentTiles => "resident".into(),
    }
}

fn lowest(element: Scalar) -> Vec<u8> {
    match element {
        Scalar::I32 => i32::MIN.to_le_bytes().to_vec(),
        Scalar::I64 => i64::MIN.to_le_bytes().to_vec(),
        Scalar::F32 => f32::MIN.to_le_bytes().to_vec(),
        _ => f64::MIN.to_le_bytes().to_vec(),
    }
}

fn ideal_bytes(provider: Provider, size: u64, n: u64, segments: u64, kept: u64) -> Option<u64> {
    Some(match provider {
        Provider::Reduce | Provider::ChainReduce | Provider::ChainPick => n * size,
        Provider::InclusiveScan | Provider::ExclusiveScan | Provider::Transform => 2 * n * size,
        Provider::Transform2 => 3 * n * size,
        Provider::Select | Provider::DedupBy => n * size + kept * size,
        Provider::Partition => 2 * n * size,
        // The sorted input and the queries read once, an index written
        // for each query.
        Provider::PartitionPoint => 2 * n * size + 8 * n,
        // Two inputs of n read once, 2n elements written.
        Provider::MergeBy => 4 * n * size,
        // Keys and values read once; a key and a value a run written.
        Provider::ReduceByKey => 2 * n * size + 2 * kept * size,
        Provider::ScanByKey => 3 * n * size,
        Provider::Histogram => n * size + 8 * HISTOGRAM_BINS,
        Provider::SegmentedReduce => n * size + segments * (size + 8),
        // Its output is of R's size, not known here (no CUB row has a chain).
        Provider::SortBy | Provider::SegmentedSortBy | Provider::ChainCollect => return None,
    })
}

/// "ok", or the first of `size`-byte little-endian unsigned values where
/// two outputs differ.
fn first_difference(ours: &[u8], cub: &[u8], size: usize, what: &str) -> String {
    let value = |c: &[u8]| {
        let mut w = [0u8; 8];
        w[..size].copy_from_slice(c);
        u64::from_le_bytes(w)
    };
    match ours
        .chunks(size)
        .zip(cub.chunks(size))
        .position(|(a, b)| a != b)
    {
        Some(i) => format!(
            "{what} {i}: ours {}, CUB {}",
            value(&ours[i * size..][..size]),
            value(&cub[i * size..][..size])
        ),
        None => "ok".into(),
    }
}

/// The driver's device-to-device copy of the largest size (at most 1 GiB).
fn copy_ceiling(gpu: &Gpu, options: &Options) -> Result<f64, RuntimeError> {
    let bytes = (4usize << options.sizes.iter().copied().max().unwrap_or(10)).min(1 << 30);
    let (a, b) = (gpu.alloc(bytes)?, gpu.alloc(bytes)?);
    a.fill_bytes(1)?;
    let us = time_pass(gpu, 3, 20, |_| {
        gpu.copy_device(Stream::null(), &b, &a, bytes)
    })?;
    Ok(2.0 * bytes as f64 / (us * 1e-6) / 1e9)
}

/// Compares the two outputs; returns the verdict and the number of kept
/// elements (select).
fn compare(
    provider: Provider,
    element: Scalar,
    (n, segments): (u64, u64),
    scratch: &Scratch<'_>,
    (ours, rejected_at): (&DeviceBuffer<'_>, usize),
    cub: &DeviceBuffer<'_>,
) -> Result<(String, u64), RuntimeError> {
    let size = element.size() as usize;
    let (count, ours_bytes, cub_bytes, kept) = match provider {
        Provider::Reduce => {
            let mut c = vec![0u8; size];
            cub.download(0, &mut c)?;
            let record = result_record(provider, &Signature::fold(element))
                .ok_or_else(|| RuntimeError::Usage("a reduce has a result record".into()))?;
            let ours = scratch.read_value(record)?.unwrap_or_default();
            (1, ours, c, 0)
        }
        Provider::Select | Provider::DedupBy => {
            let kept = scratch.read_count()?;
            let mut cub_kept = [0u64];
            cub.download(n as usize * size, &mut cub_kept)?;
            if kept != cub_kept[0] {
                return Ok((format!("kept {kept}, CUB kept {}", cub_kept[0]), kept));
            }
            let (mut o, mut c) = (
                vec![0u8; kept as usize * size],
                vec![0u8; kept as usize * size],
            );
            ours.download(0, &mut o)?;
            cub.download(0, &mut c)?;
            (kept as usize, o, c, kept)
        }
        // CUB's DevicePartition::If writes the rejected elements after the
        // kept ones, last first; ours go to a second array, first first.
        Provider::Partition => {
            let kept = scratch.read_count()?;
            let mut cub_kept = [0u64];
            cub.download(n as usize * size, &mut cub_kept)?;
            if kept != cub_kept[0] {
                return Ok((format!("kept {kept}, CUB kept {}", cub_kept[0]), kept));
            }
            let (k, all) = (kept as usize * size, n as usize * size);
            let (mut o, mut c) = (vec![0u8; all], vec![0u8; all]);
            ours.download(0, &mut o[..k])?;
            ours.download(rejected_at, &mut o[k..])?;
            cub.download(0, &mut c)?;
            let rejected: Vec<u8> = c[k..].chunks(size).rev().flatten().copied().collect();
            c[k..].copy_from_slice(&rejected);
            (n as usize, o, c, kept)
        }
        // Each run's key, then its fold: CUB's after n elements, with the
        // count of runs after 2n; ours after the room for all of them.
        Provider::ReduceByKey => {
            let runs = scratch.read_count()?;
            let mut cub_runs = [0u64];
            cub.download(2 * n as usize * size, &mut cub_runs)?;
            if runs != cub_runs[0] {
                return Ok((format!("{runs} runs, CUB {}", cub_runs[0]), runs));
            }
            let r = runs as usize * size;
            let (mut o, mut c) = (vec![0u8; 2 * r], vec![0u8; 2 * r]);
            ours.download(0, &mut o[..r])?;
            ours.download(rejected_at, &mut o[r..])?;
            cub.download(0, &mut c[..r])?;
            cub.download(n as usize * size, &mut c[r..])?;
            (2 * runs as usize, o, c, runs)
        }
        // Both inputs' elements.
        Provider::MergeBy => {
            let all = 2 * n as usize * size;
            let (mut o, mut c) = (vec![0u8; all], vec![0u8; all]);
            ours.download(0, &mut o)?;
            cub.download(0, &mut c)?;
            (2 * n as usize, o, c, 0)
        }
        // An index a query, on both sides.
        Provider::PartitionPoint => {
            let (mut o, mut c) = (vec![0u8; n as usize * 8], vec![0u8; n as usize * 8]);
            ours.download(0, &mut o)?;
            cub.download(0, &mut c)?;
            return Ok((first_difference(&o, &c, 8, "index"), 0));
        }
        // Our counts are 64-bit, CUB's (as its users count) 32-bit.
        Provider::Histogram => {
            let bins = HISTOGRAM_BINS as usize;
            let (mut o, mut c) = (vec![0u64; bins], vec![0u32; bins]);
            ours.download(0, &mut o)?;
            cub.download(0, &mut c)?;
            let c: Vec<u64> = c.into_iter().map(u64::from).collect();
            let check = match o.iter().zip(&c).position(|(a, b)| a != b) {
                Some(i) => format!("bin {i}: ours {}, CUB {}", o[i], c[i]),
                None if o.iter().sum::<u64>() == 0 => "nothing counted".into(),
                None => "ok".into(),
            };
            return Ok((check, 0));
        }
        _ => {
            let count = if provider == Provider::SegmentedReduce {
                segments
            } else {
                n
            } as usize;
            let (mut o, mut c) = (vec![0u8; count * size], vec![0u8; count * size]);
            ours.download(0, &mut o)?;
            cub.download(0, &mut c)?;
            (count, o, c, 0)
        }
    };
    // Float sums group differently, and nvcc fuses CUB's 3x + 1.
    let tolerant = matches!(element, Scalar::F32 | Scalar::F64)
        && matches!(
            provider,
            Provider::InclusiveScan
                | Provider::ExclusiveScan
                | Provider::Transform
                | Provider::Transform2
                | Provider::SegmentedReduce
        );
    for i in 0..count {
        let (a, b) = (
            &ours_bytes[i * size..][..size],
            &cub_bytes[i * size..][..size],
        );
        if a == b {
            continue;
        }
        let value = |x: &[u8]| match element {
            Scalar::F32 => f32::from_le_bytes(x.try_into().expect("4 bytes")) as f64,
            Scalar::F64 => f64::from_le_bytes(x.try_into().expect("8 bytes")),
            Scalar::I32 => i32::from_le_bytes(x.try_into().expect("4 bytes")) as f64,
            _ => i64::from_le_bytes(x.try_into().expect("8 bytes")) as f64,
        };
        let (x, y) = (value(a), value(b));
        // Sums of random values in [-1000, 1000] are about 1000 sqrt(terms)
        // in magnitude; their rounding error, whatever the order, about eps
        // of that.
        let terms = match provider {
            Provider::InclusiveScan | Provider::ExclusiveScan => i as f64 + 1.0,
            Provider::SegmentedReduce => 1024.0,
            _ => 1.0,
        };
        let scale = x.abs().max(y.abs()).max(1000.0 * terms.sqrt());
        let relative = (x - y).abs() / scale;
        let bound = if element == Scalar::F32 { 1e-3 } else { 1e-9 };
        if !tolerant || relative > bound {
            return Ok((format!("element {i}: ours {x}, CUB {y}"), kept));
        }
    }
    Ok(("ok".into(), kept))
}
