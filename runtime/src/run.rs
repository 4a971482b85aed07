//! Running a bundle: every case of every registration, compared with the
//! host reference's result.

use crate::build::{read, Build, Loaded};
use crate::gpu::Gpu;
use crate::launch::{launch, LaunchArgs, Workspace};
use crate::RuntimeError;
use manifest::{fill_inputs, Bundle, BundleError, Case, InputSpec, RegistrationId};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The bundle's file name inside a bundle directory.
pub const BUNDLE_FILE: &str = "bundle.json";

/// A bundle with its build, checked on the CPU: everything that can be
/// known before a GPU is touched.
#[derive(Debug)]
pub struct Prepared {
    pub bundle_path: PathBuf,
    pub bundle: Bundle,
    pub build: Build,
    /// Packed environment bytes per registration that has captures given.
    pub envs: BTreeMap<RegistrationId, Vec<u8>>,
}

impl Prepared {
    /// Reads `dir/bundle.json`, the manifest and cubin it names, and checks
    /// them together (fingerprint, kernels, captures).
    pub fn load(dir: &Path) -> Result<Prepared, RuntimeError> {
        let bundle_path = dir.join(BUNDLE_FILE);
        let bad = |source: BundleError| RuntimeError::Bundle {
            path: bundle_path.clone(),
            source,
        };
        let text = String::from_utf8(read(&bundle_path)?)
            .map_err(|_| bad(BundleError::Json("not UTF-8".into())))?;
        let bundle = Bundle::from_json(&text).map_err(bad)?;
        let build = Build::load(&dir.join(&bundle.manifest))?;
        if bundle.fingerprint != build.manifest.fingerprint {
            return Err(RuntimeError::Fingerprint {
                bundle: bundle.fingerprint.clone(),
                manifest: build.manifest.fingerprint.clone(),
            });
        }
        bundle.check_against(&build.manifest).map_err(bad)?;
        let mut envs = BTreeMap::new();
        for callback in &build.manifest.callbacks {
            if let Some(values) = bundle.captures(callback.registration) {
                let bytes = callback.env.pack(&values).map_err(|source| {
                    bad(BundleError::Captures {
                        registration: callback.registration,
                        source,
                    })
                })?;
                envs.insert(callback.registration, bytes);
            }
        }
        Ok(Prepared {
            bundle_path,
            bundle,
            build,
            envs,
        })
    }

    /// The packed environment a kernel of `registration` is launched with.
    pub fn env(&self, registration: Option<RegistrationId>) -> &[u8] {
        registration
            .and_then(|r| self.envs.get(&r))
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// Regenerates an input on all cores (the generator is random-access).
pub fn generate_parallel(spec: InputSpec, out: &mut Vec<i32>) {
    out.clear();
    out.resize(spec.size as usize, 0);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = (out.len().div_ceil(threads)).max(1 << 16);
    std::thread::scope(|scope| {
        for (i, part) in out.chunks_mut(chunk).enumerate() {
            scope.spawn(move || fill_inputs(spec.seed, (i * chunk) as u64, part));
        }
    });
}

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// CUDA device ordinal.
    pub device: usize,
    /// Skip cases larger than this (e.g. under compute-sanitizer).
    pub max_size: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseOutcome {
    pub registration: RegistrationId,
    pub kernel: String,
    pub case: Case,
    pub got: i32,
    pub grid: u32,
}

impl CaseOutcome {
    pub fn passed(&self) -> bool {
        self.got == self.case.expected
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub device: String,
    pub outcomes: Vec<CaseOutcome>,
    pub skipped: usize,
}

impl Report {
    pub fn passed(&self) -> usize {
        self.outcomes.iter().filter(|o| o.passed()).count()
    }

    pub fn failed(&self) -> usize {
        self.outcomes.len() - self.passed()
    }

    /// Whether the run proves anything: at least one case ran and none
    /// failed. "0 passed, 0 failed" is not a pass.
    pub fn ok(&self) -> bool {
        !self.outcomes.is_empty() && self.failed() == 0
    }

    /// One line per failing case, then `N passed, M failed`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for o in self.outcomes.iter().filter(|o| !o.passed()) {
            let _ = writeln!(
                out,
                "FAIL registration {} kernel {} size {} seed {} offset {} init {} (grid {}): expected {}, got {}",
                o.registration, o.kernel, o.case.size, o.case.seed, o.case.offset, o.case.init, o.grid, o.case.expected, o.got
            );
        }
        let _ = write!(out, "{} passed, {} failed", self.passed(), self.failed());
        if self.skipped > 0 {
            let _ = write!(out, " ({} skipped by --max-size)", self.skipped);
        }
        if self.outcomes.is_empty() {
            let _ = write!(out, "\nno case ran: nothing was checked");
        }
        out
    }
}

/// Runs every case of the bundle in `dir` on the GPU.
pub fn run_bundle(dir: &Path, options: &RunOptions) -> Result<Report, RuntimeError> {
    let prepared = Prepared::load(dir)?;
    run_checked(&prepared, options)
}

/// Runs a bundle already checked by [`Prepared::load`] on the GPU.
pub fn run_checked(prepared: &Prepared, options: &RunOptions) -> Result<Report, RuntimeError> {
    guard(|| run_prepared(prepared, options))
}

/// Turns a panic inside the driver bindings (a symbol missing from an old
/// libcuda) into an error.
pub(crate) fn guard<T>(f: impl FnOnce() -> Result<T, RuntimeError>) -> Result<T, RuntimeError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(RuntimeError::DriverSymbol(message))
        }
    }
}

pub fn run_prepared(prepared: &Prepared, options: &RunOptions) -> Result<Report, RuntimeError> {
    let gpu = Gpu::open(options.device)?;
    let loaded = Loaded::load(&gpu, &prepared.build)?;
    let kernels = loaded.resolve(&prepared.build.manifest)?;

    let mut jobs: Vec<(usize, usize)> = Vec::new();
    let mut skipped = 0;
    for (r, run) in prepared.bundle.registrations.iter().enumerate() {
        for (c, case) in run.cases.iter().enumerate() {
            if options.max_size.is_some_and(|max| case.size > max) {
                skipped += 1;
            } else {
                jobs.push((r, c));
            }
        }
    }
    // Same input back to back: generate and upload each once.
    let case_of = |&(r, c): &(usize, usize)| prepared.bundle.registrations[r].cases[c];
    jobs.sort_by_key(|job| {
        let case = case_of(job);
        (case.size, case.seed, case.offset)
    });
    let max_bytes = jobs
        .iter()
        .map(|job| {
            let case = case_of(job);
            (case.size + u64::from(case.offset)) * 4
        })
        .max()
        .unwrap_or(4);
    let input = gpu.alloc(max_bytes as usize)?;
    let reduce_kernels = prepared
        .bundle
        .registrations
        .iter()
        .filter_map(|run| kernels.get(&run.kernel).map(|k| &k.kernel));
    let workspace = Workspace::new(&gpu, reduce_kernels, None)?;

    let mut host = Vec::new();
    let mut current: Option<(u64, u64, u32)> = None;
    let mut outcomes = Vec::with_capacity(jobs.len());
    for job in &jobs {
        let run = &prepared.bundle.registrations[job.0];
        let case = case_of(job);
        let key = (case.size, case.seed, case.offset);
        if current != Some(key) {
            generate_parallel(case.input(), &mut host);
            input.upload(case.offset as usize * 4, &host)?;
            current = Some(key);
        }
        let resolved = kernels
            .get(&run.kernel)
            .ok_or_else(|| RuntimeError::Launch {
                kernel: run.kernel.clone(),
                what: "not resolved".into(),
            })?;
        // Poison the result so a kernel that writes nothing cannot pass.
        workspace.output.upload(0, &[!case.expected])?;
        // SAFETY: `input` holds the largest case's words past the largest
        // offset (allocated above), and lives until the synchronisation
        // below.
        let grid = unsafe {
            launch(
                &gpu,
                resolved,
                &LaunchArgs {
                    input: input.address(case.offset as usize * 4),
                    len: case.size,
                    init: case.init,
                    workspace: Some(&workspace),
                    copy_output: None,
                    env: prepared.env(Some(run.registration)),
                    grid_policy: None,
                },
            )?
        };
        gpu.synchronize().map_err(|e| RuntimeError::Launch {
            kernel: run.kernel.clone(),
            what: format!("size {} seed {}: {e}", case.size, case.seed),
        })?;
        outcomes.push(CaseOutcome {
            registration: run.registration,
            kernel: run.kernel.clone(),
            case,
            got: workspace.read_result()?,
            grid,
        });
    }
    Ok(Report {
        device: format!(
            "{} (sm_{}{}, {} SMs)",
            gpu.name, gpu.compute_capability.0, gpu.compute_capability.1, gpu.multiprocessors
        ),
        outcomes,
        skipped,
    })
}
