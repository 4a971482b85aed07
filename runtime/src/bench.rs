//! The bandwidth benchmark: every variant on the same rotated input
//! buffers, timed with device events after warm-up, median per pass, each
//! variant timed in every pass so the spread between passes shows the noise.

use crate::build::{Loaded, ResolvedKernel};
use crate::gpu::{DeviceBuffer, Gpu, Stream};
use crate::launch::{launch, LaunchArgs, Workspace};
use crate::run::{generate_parallel, guard, Prepared};
use crate::RuntimeError;
use manifest::{
    BenchVariant, GridPolicy, InputSpec, KernelKind, Provider, RegistrationId, Variant,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Debug, Default)]
pub struct BenchOptions {
    pub device: usize,
    /// Replaces every kernel's blocks-per-SM cap (to explore the policy).
    pub blocks_per_sm: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BenchRow {
    pub label: String,
    /// `None` for the driver's memcpy.
    pub kernel: Option<String>,
    pub variant: Option<Variant>,
    pub registration: Option<RegistrationId>,
    /// Bytes each launch must move (reduce: read; copy: read + write).
    pub bytes: u64,
    /// Median milliseconds per launch, one per pass.
    pub median_ms: Vec<f64>,
    pub registers: Option<i32>,
    pub local_bytes: Option<i32>,
    /// Blocks per launch (none for the driver's memcpy).
    pub grid: Option<u32>,
    /// `ok`, or what was wrong with the results.
    pub check: String,
}

impl BenchRow {
    pub fn best_ms(&self) -> f64 {
        self.median_ms.iter().copied().fold(f64::INFINITY, f64::min)
    }

    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / (self.best_ms() * 1e-3) / 1e9
    }

    fn is_copy(&self) -> bool {
        self.kernel.is_none() || self.variant == Some(Variant::Plain)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct BenchReport {
    pub device: String,
    pub size: u64,
    pub buffers: usize,
    pub warmup: u32,
    pub repeats: u32,
    pub grid_note: String,
    pub rows: Vec<BenchRow>,
}

impl BenchReport {
    /// The best copy bandwidth of the run (read + write bytes).
    pub fn copy_ceiling(&self) -> Option<f64> {
        self.rows
            .iter()
            .filter(|r| r.is_copy() && r.check == "ok")
            .map(BenchRow::gbps)
            .reduce(f64::max)
    }

    pub fn all_checks_ok(&self) -> bool {
        self.rows.iter().all(|r| r.check == "ok")
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "device {}; {} i32 ({:.3} GB) per launch, {} rotated buffers, {} warm-up, median of {} launches per pass{}",
            self.device,
            self.size,
            self.size as f64 * 4.0 / 1e9,
            self.buffers,
            self.warmup,
            self.repeats,
            self.grid_note
        );
        let ceiling = self.copy_ceiling();
        let passes = self.rows.first().map_or(0, |r| r.median_ms.len());
        let mut header = format!(
            "{:<24} {:<32} {:>5} {:>5} {:>5}",
            "variant", "kernel", "regs", "local", "grid"
        );
        for p in 0..passes {
            let _ = write!(header, " {:>10}", format!("pass{} us", p + 1));
        }
        let _ = write!(
            header,
            " {:>9} {:>8} {:>8}  check",
            "GB/s", "vs copy", "vs C++"
        );
        let _ = writeln!(out, "{header}");
        for row in &self.rows {
            let mut line = format!(
                "{:<24} {:<32} {:>5} {:>5} {:>5}",
                row.label,
                row.kernel.as_deref().unwrap_or("cuMemcpyDtoDAsync"),
                row.registers.map_or("-".into(), |r| r.to_string()),
                row.local_bytes.map_or("-".into(), |r| r.to_string()),
                row.grid.map_or("-".into(), |g| g.to_string()),
            );
            for ms in &row.median_ms {
                let _ = write!(line, " {:>10.1}", ms * 1e3);
            }
            let vs_copy = ceiling.map_or("-".into(), |c| format!("{:.3}", row.gbps() / c));
            let cpp = self.rows.iter().find(|r| {
                r.variant == Some(Variant::CppFunctor)
                    && r.registration == row.registration
                    && !row.is_copy()
            });
            let vs_cpp = cpp.map_or("-".into(), |c| {
                format!("{:.3}", c.best_ms() / row.best_ms())
            });
            let _ = writeln!(
                line,
                " {:>9.1} {:>8} {:>8}  {}",
                row.gbps(),
                vs_copy,
                vs_cpp,
                row.check
            );
            out.push_str(&line);
        }
        let _ = writeln!(
            out,
            "GB/s from the best pass median; vs copy = GB/s over the best copy's (read + write bytes); \
             vs C++ = the C++ functor's time over this variant's (same registration)"
        );
        out
    }
}

pub fn bench(dir: &Path, options: &BenchOptions) -> Result<BenchReport, RuntimeError> {
    let prepared = Prepared::load(dir)?;
    guard(|| bench_prepared(&prepared, options))
}

/// Results of the reduce variants that must agree, keyed by (registration,
/// init): (label, result per buffer).
type AgreementGroups = BTreeMap<(Option<RegistrationId>, i32), Vec<(String, Vec<i32>)>>;

enum Target<'a, 'm> {
    Kernel {
        resolved: &'a ResolvedKernel<'m>,
        init: i32,
        expected: &'a [i32],
    },
    Memcpy,
}

pub fn bench_prepared(
    prepared: &Prepared,
    options: &BenchOptions,
) -> Result<BenchReport, RuntimeError> {
    let spec = prepared.bundle.bench.as_ref().ok_or_else(|| {
        RuntimeError::Usage(format!(
            "{} has no bench section",
            prepared.bundle_path.display()
        ))
    })?;
    let gpu = Gpu::open(options.device)?;
    let loaded = Loaded::load(&gpu, &prepared.build)?;
    let kernels = loaded.resolve(&prepared.build.manifest)?;
    let policy = options
        .blocks_per_sm
        .map(|blocks_per_sm| GridPolicy::TilesCappedBySms { blocks_per_sm });

    let bytes = spec.size as usize * 4;
    let mut inputs: Vec<DeviceBuffer<'_>> = Vec::with_capacity(spec.seeds.len());
    let mut host = Vec::new();
    let mut first_host = Vec::new();
    for (i, &seed) in spec.seeds.iter().enumerate() {
        generate_parallel(
            InputSpec {
                size: spec.size,
                seed,
            },
            &mut host,
        );
        let buffer = gpu.alloc(bytes)?;
        buffer.upload(0, &host)?;
        inputs.push(buffer);
        if i == 0 {
            first_host = std::mem::take(&mut host);
        }
    }
    drop(host);
    let copy_output = gpu.alloc(bytes)?;

    let mut targets = Vec::with_capacity(spec.variants.len());
    for variant in &spec.variants {
        targets.push(match variant {
            BenchVariant::Kernel {
                kernel,
                init,
                expected,
                ..
            } => Target::Kernel {
                resolved: kernels.get(kernel).ok_or_else(|| {
                    RuntimeError::Usage(format!("kernel `{kernel}` not resolved"))
                })?,
                init: *init,
                expected,
            },
            BenchVariant::DriverMemcpy { .. } => Target::Memcpy,
        });
    }
    let workspace = Workspace::new(
        &gpu,
        targets.iter().filter_map(|t| match t {
            Target::Kernel { resolved, .. } if resolved.kernel.kind == Provider::Reduce => {
                Some(&resolved.kernel)
            }
            _ => None,
        }),
        policy,
    )?;

    let run_once = |target: &Target<'_, '_>, buffer: usize| -> Result<Option<u32>, RuntimeError> {
        match target {
            // SAFETY: every input buffer and the copy's output hold
            // `spec.size` words, and live until the benchmark's end.
            Target::Kernel { resolved, init, .. } => unsafe {
                launch(
                    &gpu,
                    resolved,
                    &LaunchArgs {
                        input: inputs[buffer].address(0),
                        len: spec.size,
                        init: *init,
                        workspace: Some(&workspace),
                        copy_output: Some(copy_output.address(0)),
                        env: prepared.env(resolved.kernel.registration),
                        grid_policy: policy,
                    },
                )
            }
            .map(Some),
            Target::Memcpy => gpu
                .copy_device(Stream::null(), &copy_output, &inputs[buffer], bytes)
                .map(|()| None),
        }
    };

    // Check first: each reduce variant on every buffer, each copy once.
    let mut rows = Vec::with_capacity(targets.len());
    let mut results: AgreementGroups = BTreeMap::new();
    for (variant, target) in spec.variants.iter().zip(&targets) {
        let mut check = String::from("ok");
        let mut grid = None;
        let (kernel, kind, registration, resources, moved) = match target {
            Target::Kernel {
                resolved,
                expected,
                init,
            } => {
                let k = &resolved.kernel;
                let moved = if k.kind == KernelKind::Copy {
                    2 * bytes
                } else {
                    bytes
                } as u64;
                if k.kind == Provider::Reduce {
                    let mut got = Vec::with_capacity(inputs.len());
                    for b in 0..inputs.len() {
                        grid = run_once(target, b)?;
                        gpu.synchronize()?;
                        got.push(workspace.read_result()?);
                    }
                    if !expected.is_empty() && expected[..] != got[..] {
                        check = format!("expected {expected:?}, got {got:?}");
                    }
                    results
                        .entry((k.registration, *init))
                        .or_default()
                        .push((variant.label().to_string(), got));
                }
                (
                    Some(k.name.clone()),
                    Some(k.variant),
                    k.registration,
                    Some(resolved.resources),
                    moved,
                )
            }
            Target::Memcpy => (None, None, None, None, 2 * bytes as u64),
        };
        let is_copy = !matches!(target, Target::Kernel { resolved, .. } if resolved.kernel.kind == Provider::Reduce);
        if is_copy {
            copy_output.fill_bytes(0)?; // zero never occurs in the input
            grid = run_once(target, 0)?;
            gpu.synchronize()?;
            let mut back = vec![0i32; spec.size as usize];
            copy_output.download(0, &mut back)?;
            if let Some(i) = back.iter().zip(&first_host).position(|(a, b)| a != b) {
                check = format!(
                    "element {i} is {} after the copy, {} before",
                    back[i], first_host[i]
                );
            }
        }
        rows.push(BenchRow {
            label: variant.label().to_string(),
            kernel,
            variant: kind,
            registration,
            bytes: moved,
            median_ms: Vec::new(),
            registers: resources.map(|r| r.registers),
            local_bytes: resources.map(|r| r.local_bytes),
            grid,
            check,
        });
    }
    // Variants of one registration and init compute the same function.
    for group in results.values() {
        let (first_label, first) = &group[0];
        for (label, got) in &group[1..] {
            if got != first {
                for row in rows.iter_mut().filter(|r| &r.label == label) {
                    if row.check == "ok" {
                        row.check = format!("disagrees with `{first_label}`: {got:?} vs {first:?}");
                    }
                }
            }
        }
    }

    let events = (0..=spec.repeats)
        .map(|_| gpu.event())
        .collect::<Result<Vec<_>, _>>()?;
    for _pass in 0..spec.passes {
        for (row, target) in rows.iter_mut().zip(&targets) {
            for w in 0..spec.warmup as usize {
                run_once(target, w % inputs.len())?;
            }
            events[0].record()?;
            for r in 0..spec.repeats as usize {
                run_once(target, r % inputs.len())?;
                events[r + 1].record()?;
            }
            events[spec.repeats as usize].synchronize()?;
            gpu.synchronize()?;
            let mut times = Vec::with_capacity(spec.repeats as usize);
            for r in 0..spec.repeats as usize {
                times.push(f64::from(events[r].elapsed_ms(&events[r + 1])?));
            }
            times.sort_by(f64::total_cmp);
            row.median_ms.push(times[times.len() / 2]);
        }
    }
    Ok(BenchReport {
        device: format!(
            "{} (sm_{}{}, {} SMs)",
            gpu.name, gpu.compute_capability.0, gpu.compute_capability.1, gpu.multiprocessors
        ),
        size: spec.size,
        buffers: inputs.len(),
        warmup: spec.warmup,
        repeats: spec.repeats,
        grid_note: options.blocks_per_sm.map_or(String::new(), |b| {
            format!(", grid capped at {b} blocks per SM (override)")
        }),
        rows,
    })
}
