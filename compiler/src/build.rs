//! The main job (`driver build`). `.rs` → admitted callbacks → thunks (PTX or
//! LTOIR) + the provider (NVRTC) → one cubin (nvJitLink) + a manifest, and
//! with `--bundle` the host-reference inputs for `gpu-run`.
//!
//! Callbacks compile in parallel (rayon), in fixed-size chunks so the output
//! does not depend on the number of threads: same inputs, same bytes. All
//! files are written into a temporary folder that replaces the output folder
//! only once everything succeeded.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use backend_nvptx::codegen::{self, CallbackDebug, CodegenOptions, DebugInfo};
use backend_nvptx::nvrtc::{self, NvrtcOptions, NvrtcTarget};
use backend_nvptx::symbols::SymbolReader;
use backend_nvptx::{Arch, LinkInput, LinkPlan};
use frontend::pmir::Callback as PmirCallback;
use frontend::toolchain::RustcConfig;
use frontend::PreparedMir;
use manifest::bundle::{
    standard_case_inputs, BenchSpec, BenchVariant, Bundle, CaptureValue, Case, RegistrationRun,
    BUNDLE_FORMAT,
};
use manifest::provider::{
    emit_translation_unit_with, ComputedKey, KernelRequest, Operation, TranslationUnit, Tuning,
};
use manifest::{
    Callback, Fingerprint, InputSpec, Manifest, RegistrationId, Variant, GENERATOR, MANIFEST_FORMAT,
};
use passes::admission::{Outcome, Verdict};
use passes::diagnostic::{Emitter, Format};
use passes::lower::{self, Thunk};
use rayon::prelude::*;

use crate::admit::{admit_and_lower, admit_and_lower_doc};
use crate::hostref::{self, HostJob};
use crate::timings::Timings;

/// Callbacks per compilation unit (chunk): a function of the number of
/// callbacks (and of `edits`, [`BuildArgs::for_edits`]) only, so output is
/// independent of threads. Small files get
/// chunks of 4 (more parallel work, and an edit of one callback relinks 4
/// kernels, not 16); from 256 callbacks on, chunks of 16 (every chunk pays
/// NVRTC and nvJitLink's fixed cost: chunks of 4 made 1,000 callbacks take
/// 62 s instead of 33; docs/perf.md).
fn chunk_size(callbacks: usize, edits: bool) -> usize {
    if edits && callbacks <= EDIT_CHUNKS_UP_TO {
        return 1;
    }
    callbacks.div_ceil(16).clamp(4, 16)
}

/// With [`BuildArgs::for_edits`], crates of up to this many callbacks get a
/// chunk (a cubin) per callback: an edit relinks one kernel, not four
/// (nvJitLink's link of a chunk is most of an edit's cost: docs/perf.md).
const EDIT_CHUNKS_UP_TO: usize = 8;

/// What `--emit` can ask for besides the cubin and manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum Emit {
    Mlir,
    Llvm,
    /// The NVVM IR given to libNVVM (the LTOIR route).
    Nvvm,
    Ptx,
    Ltoir,
    Cu,
    Cubin,
}

/// How a build runs: every choice the command line, the Cargo wrapper and
/// the environment make, decided once at the edge. No stage below reads a
/// flag or a variable of its own.
pub struct Config {
    pub arch: Arch,
    /// `-g`: full debug information (the provider by NVRTC `-G`, the
    /// callbacks' `FullDebug` metadata, nvJitLink `-g`).
    pub debug: bool,
    /// `-lineinfo`: line tables with optimised code (the provider by NVRTC
    /// `-lineinfo`, the callbacks' line metadata, nvJitLink `-lineinfo`);
    /// `-g` includes it.
    pub lineinfo: bool,
    /// The LTOIR route (libNVVM); else the PTX route (LLVM's NVPTX).
    pub lto: bool,
    /// What the artifacts hold besides the cubins and manifest.
    pub emit: Vec<Emit>,
    /// Also build the host-reference bundle (`--bundle`, for `gpu-run`).
    pub bundle: Option<BundleRequest>,
    /// Also build what the bandwidth benchmark needs (`--bench`); nothing
    /// else about a build depends on the benchmark.
    pub bench: Option<BenchRequest>,
    /// How nvJitLink runs: in a child process (a program that serves
    /// `backend_nvptx::isolate` jobs, such as the `driver`) or in process.
    pub isolation: backend_nvptx::Isolation,
    /// The build cache (see [`crate::buildcache`]); `None` builds everything.
    pub cache: Option<cache::Cache>,
    /// The size the cache is trimmed to after a build that stored entries
    /// ([`crate::buildcache::max_bytes`]).
    pub cache_max_bytes: u64,
    /// User device libraries (`--link FILE`), linked with every chunk in
    /// this order; `extern "C"` functions they define may be called.
    pub link: Vec<PathBuf>,
    /// Overrides of the providers' launch tuning (`RMIR_TUNING`).
    pub tuning: Tuning,
    /// Check the operator contract of tree-combining providers on the host
    /// (W0201, `crate::contract`); only for a `.rs` file.
    pub lint: bool,
    /// Warnings fail the build (exit 1, nothing built).
    pub deny_warnings: bool,
    /// The flag that denied them, for the note (`--deny-warnings`).
    pub deny_by: &'static str,
    /// Build the admitted registrations when others are rejected (the
    /// build still fails); without it a rejection builds nothing.
    pub keep_going: bool,
    /// A failure for rejections names `--keep-going` (the command line has
    /// the flag; a Cargo build does not).
    pub hint_keep_going: bool,
    /// How rejections and warnings are rendered.
    pub diagnostics: Format,
    /// Show a progress bar on standard error while callbacks compile.
    pub progress: bool,
    /// Admit and lint only (`cargo check`): no device code is built.
    pub check_only: bool,
    /// Chunk for fast rebuilds after an edit rather than for the fewest
    /// links (a Cargo build: a cubin per callback in small crates).
    pub for_edits: bool,
}

/// `--bundle`: host-reference results of a `.rs` file's registrations,
/// for `gpu-run` to compare the GPU's with.
#[derive(Clone, Debug, Default)]
pub struct BundleRequest {
    /// Largest case size (2^28 by default).
    pub max_size: Option<u64>,
}

/// `--bench`: every admitted callback also built by the PTX route, the
/// copy kernel (the bandwidth ceiling), and, with a bundle, the benchmark's
/// description and rotated inputs (`gpu-run --bench`).
#[derive(Clone, Debug, Default)]
pub struct BenchRequest {
    /// A hand-written C++ expression of `a`, `b` and `env.NAME` for the first
    /// registration: the benchmark's baseline functor.
    pub cpp_baseline: Option<String>,
}

impl Config {
    /// The defaults of `driver build` for `arch`: the LTOIR route, the
    /// lint on, nothing extra emitted, no cache, nvJitLink in process.
    pub fn new(arch: Arch) -> Config {
        Config {
            arch,
            debug: false,
            lineinfo: false,
            lto: true,
            emit: Vec::new(),
            bundle: None,
            bench: None,
            isolation: backend_nvptx::Isolation::InProcess,
            cache: None,
            cache_max_bytes: u64::MAX,
            link: Vec::new(),
            tuning: Tuning::default(),
            lint: true,
            deny_warnings: false,
            deny_by: "--deny-warnings",
            keep_going: false,
            hint_keep_going: true,
            diagnostics: Format::Human { styled: false },
            progress: false,
            check_only: false,
            for_edits: false,
        }
    }
}

/// What a build compiles.
pub enum Input<'a> {
    /// A `.rs` file (compiled by rustc with `rustc`'s options) or a
    /// prepared-MIR document.
    File {
        path: &'a Path,
        rustc: &'a RustcConfig,
    },
    /// A document already prepared (a Cargo crate's MIR), of the crate
    /// named: it begins the closure type names the run-time lookup checks.
    Prepared {
        doc: &'a PreparedMir,
        crate_name: Option<&'a str>,
    },
}

impl Input<'_> {
    fn crate_name(&self) -> Option<&str> {
        match self {
            Input::File { .. } => None,
            Input::Prepared { crate_name, .. } => *crate_name,
        }
    }
}

/// What a build made, in memory: the CLI writes it to a folder
/// ([`Artifacts::write`]), the Cargo wrapper embeds it in the program.
#[derive(Debug)]
pub struct Artifacts {
    /// `None` when only checked ([`Config::check_only`]).
    pub manifest: Option<Manifest>,
    /// Each cubin by the name the manifest gives it.
    pub cubins: Vec<(String, Vec<u8>)>,
    /// What `--emit` and `--bundle` asked for, by file name.
    pub extra: Vec<(String, Vec<u8>)>,
    /// Rejections, warnings and notes, rendered in [`Config::diagnostics`]'
    /// format, in the order they arose.
    pub diagnostics: Vec<String>,
    pub timings: Timings,
    pub counts: Built,
    /// nvJitLink's options (the first chunk's).
    pub link_options: Vec<String>,
}

impl Artifacts {
    /// The callbacks built (none when only checked).
    pub fn callbacks(&self) -> usize {
        self.manifest.as_ref().map_or(0, |m| m.callbacks.len())
    }

    /// The kernels linked (none when only checked).
    pub fn kernels(&self) -> usize {
        self.manifest.as_ref().map_or(0, |m| m.kernels.len())
    }

    /// Every file of the output folder, in order: the manifest, the cubins,
    /// then what was asked for.
    pub fn files(&self) -> Vec<(String, Vec<u8>)> {
        let mut files = Vec::new();
        if let Some(m) = &self.manifest {
            files.push(("manifest.json".to_string(), m.to_json().into_bytes()));
        }
        files.extend(self.cubins.iter().cloned());
        files.extend(self.extra.iter().cloned());
        files
    }

    /// Writes [`Artifacts::files`] into a fresh folder beside `dir`, then
    /// puts it in place; an existing `dir` is replaced only if it is an
    /// earlier build output.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        crate::output::replace_dir(dir, &self.files())
    }

    /// The line `driver build` ends with.
    pub fn summary(&self, dir: &Path) -> String {
        let cubin_bytes: usize = self.cubins.iter().map(|(_, b)| b.len()).sum();
        format!(
            "wrote {} ({} callbacks, {} kernels, {} cubin{} of {} bytes, nvJitLink {}); {} admitted, {} rejected{}",
            dir.display(),
            self.callbacks(),
            self.kernels(),
            self.cubins.len(),
            if self.cubins.len() == 1 { "" } else { "s" },
            cubin_bytes,
            self.link_options.join(" "),
            self.counts.admitted,
            self.counts.rejected,
            match self.counts.warnings {
                0 => String::new(),
                1 => ", 1 warning".to_string(),
                n => format!(", {n} warnings"),
            }
        )
    }

    /// The time of each stage (`--timings`).
    pub fn render_timings(&self) -> String {
        self.timings.render(
            self.callbacks(),
            &[
                "import to rmir",
                "admission + lowering",
                "split",
                "LLVM IR + O3",
                "PTX (NVPTX)",
                "NVVM IR emission",
            ],
        )
    }
}

/// One compiled chunk of callbacks.
struct Chunk {
    thunks: Vec<Thunk>,
    /// The thunk object for the link: LTOIR bytes or PTX text.
    object: Vec<u8>,
    /// PTX-route object when both routes are built.
    ptx_object: Option<Vec<u8>>,
    /// With `-g` on the LTOIR route, the same thunks as PTX (same symbols):
    /// what the link falls back to when nvJitLink's `-g` link of the LTOIR
    /// fails (docs/debug-info.md, "A limit of nvJitLink's `-g` link").
    debug_ptx: Option<Vec<u8>>,
    llvm: String,
    nvvm: String,
    timings: Timings,
}

/// What the orders proved on the callbacks choose, by registration
/// index: each sorting registration's sort (its radix kernels are built
/// where the order is proved: `passes::admission::sort_choice`), and how
/// each chain pick keeps one of two equal values
/// (`passes::admission::pick_ties`).
struct Orders {
    sorts: BTreeMap<usize, manifest::SortChoice>,
    picks: BTreeMap<usize, manifest::Ties>,
}

impl Orders {
    fn of(admitted: &crate::admit::Admitted<'_>) -> Orders {
        let mut orders = Orders {
            sorts: BTreeMap::new(),
            picks: BTreeMap::new(),
        };
        for o in &admitted.outcomes {
            let passes::admission::Verdict::Admitted(abi) = &o.verdict else {
                continue;
            };
            let index = o.registration.index;
            if let Some(sort) = passes::admission::sort_choice(&admitted.doc, abi) {
                orders.sorts.insert(index, sort);
            }
            if let Some(ties) = passes::admission::pick_ties(&admitted.doc, &o.registration, abi) {
                orders.picks.insert(index, ties);
            }
        }
        orders
    }
}

/// What a build did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Built {
    pub admitted: usize,
    pub rejected: usize,
    /// Cubins linked (none when only checked).
    pub cubins: usize,
    /// Warnings reported.
    pub warnings: usize,
}

/// Why a build failed, with the diagnostics reported before it failed.
/// `reported`: those diagnostics say why (a rejection, a denied warning),
/// so a caller that prints errors as rustc does (inside cargo) need not
/// repeat the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildFailure {
    pub message: String,
    pub reported: bool,
    pub diagnostics: Vec<String>,
}

impl BuildFailure {
    fn reported(message: String) -> BuildFailure {
        BuildFailure {
            message,
            reported: true,
            diagnostics: Vec::new(),
        }
    }
}

impl From<String> for BuildFailure {
    fn from(message: String) -> BuildFailure {
        BuildFailure {
            message,
            reported: false,
            diagnostics: Vec::new(),
        }
    }
}

impl From<&str> for BuildFailure {
    fn from(message: &str) -> BuildFailure {
        message.to_string().into()
    }
}

impl std::fmt::Display for BuildFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Builds `input` as `config` says, in memory: `.rs` → admitted callbacks
/// → thunks (PTX or LTOIR) + the provider (NVRTC) → cubins (nvJitLink) + a
/// manifest. A rejected registration fails the build, as an error fails
/// rustc's, unless [`Config::keep_going`]: then the admitted ones are
/// built and [`Built::rejected`] counts the rest.
pub fn build(input: &Input<'_>, config: &Config) -> Result<Artifacts, BuildFailure> {
    let mut report = Report::default();
    match run(input, config, &mut report) {
        Ok(mut artifacts) => {
            artifacts.diagnostics = report.diagnostics;
            artifacts.timings = report.timings;
            Ok(artifacts)
        }
        Err(mut failure) => {
            failure.diagnostics = report.diagnostics;
            Err(failure)
        }
    }
}

/// What the stages report as they go: rendered diagnostics, and the time
/// of each stage.
#[derive(Default)]
struct Report {
    diagnostics: Vec<String>,
    timings: Timings,
}

/// The stages of [`build`], in order.
fn run(input: &Input<'_>, config: &Config, report: &mut Report) -> Result<Artifacts, BuildFailure> {
    check_config(input, config)?;
    let context = report
        .timings
        .time("MLIR context", ir::context)
        .map_err(|e| e.to_string())?;
    let device = crate::admit::DeviceInputs {
        inputs: report
            .timings
            .time("device libraries", || crate::devicelibs::load(&config.link))?,
        reader: SymbolReader {
            isolation: config.isolation.clone(),
            ..SymbolReader::new(config.arch)
        },
        ptx_route: !config.lto,
    };
    let admitted = match input {
        Input::Prepared { doc, .. } => {
            admit_and_lower_doc((*doc).clone(), &context, &mut report.timings, &device)?
        }
        Input::File { path, rustc } => {
            admit_and_lower(path, rustc, &context, &mut report.timings, &device)?
        }
    };
    let emitter = Emitter::new(&admitted.doc.source, false);
    let rejected = report_rejections(&admitted, &emitter, config, report)?;
    let Some((module, lowered)) = &admitted.lowered else {
        let message = format!(
            "{}: no admitted registration to build ({} found, {rejected} rejected)",
            admitted.doc.source.file,
            admitted.outcomes.len()
        );
        return Err(if rejected > 0 {
            BuildFailure::reported(message)
        } else {
            message.into()
        });
    };
    check_device_libraries(&admitted, &device.inputs)?;
    let units = report
        .timings
        .time("split", || split_units(module, &lowered.thunks, config))?;
    let compiled = compile_and_lint(&admitted, &units, &device.inputs, config, &emitter, report)?;
    let mut counts = Built {
        admitted: lowered.thunks.len(),
        rejected,
        cubins: 0,
        warnings: compiled.warnings,
    };
    if config.check_only {
        return Ok(Artifacts {
            manifest: None,
            cubins: Vec::new(),
            extra: Vec::new(),
            diagnostics: Vec::new(),
            timings: Timings::default(),
            counts,
            link_options: Vec::new(),
        });
    }
    let chunks = compiled.chunks;
    let orders = Orders::of(&admitted);
    let linked = link_chunks(&chunks, &orders, &device.inputs, config, report)?;
    let (manifest, fingerprint) = make_manifest(
        &admitted,
        input,
        &chunks,
        &orders,
        &linked,
        &device.inputs,
        config,
    )?;
    let mut extra = emitted_files(&admitted, &chunks, &linked, config);
    let thunks: Vec<&Thunk> = chunks.iter().flat_map(|c| &c.thunks).collect();
    if let (Some(_), Input::File { path, .. }) = (&config.bundle, input) {
        let bundle = report.timings.time("host reference (--bundle)", || {
            make_bundle(
                &admitted,
                path,
                config,
                &thunks,
                &manifest.kernels,
                &fingerprint,
                &device.inputs,
            )
        })?;
        extra.push(("bundle.json".into(), bundle.to_json().into_bytes()));
    }
    if let Some(c) = config.cache.as_ref().filter(|c| c.counters().misses > 0) {
        crate::buildcache::trim(c, config.cache_max_bytes);
    }
    counts.cubins = linked.len();
    Ok(Artifacts {
        link_options: linked[0].options.clone(),
        manifest: Some(manifest),
        cubins: linked
            .into_iter()
            .map(|l| (l.cubin_name, l.cubin))
            .collect(),
        extra,
        diagnostics: Vec::new(),
        timings: Timings::default(),
        counts,
    })
}

/// What the configuration needs of the input, checked before anything is
/// compiled.
fn check_config(input: &Input<'_>, config: &Config) -> Result<(), String> {
    if config.bench.is_some() && !config.lto {
        return Err("--bench builds both routes and needs --lto".into());
    }
    if let Some(request) = &config.bundle {
        let not_rs = match input {
            Input::File { path, .. } if path.extension().is_some_and(|e| e == "rs") => None,
            Input::File { path, .. } => Some(path.display().to_string()),
            Input::Prepared { doc, .. } => Some(doc.source.file.clone()),
        };
        if let Some(path) = not_rs {
            return Err(format!(
                "{path}: --bundle builds the host reference from the Rust source, so it needs the original `.rs` file, not this one"
            ));
        }
        if request.max_size == Some(0) {
            return Err("--max-size 0 leaves no case in the bundle: the smallest size is 1".into());
        }
    }
    Ok(())
}

/// Renders each rejection; fails when there is one and the build may not
/// go on without it ([`Config::keep_going`]). Returns how many there were.
fn report_rejections(
    admitted: &crate::admit::Admitted<'_>,
    emitter: &Emitter<'_>,
    config: &Config,
    report: &mut Report,
) -> Result<usize, BuildFailure> {
    let outcomes = &admitted.outcomes;
    let mut rejected = 0;
    for o in outcomes {
        if let Verdict::Rejected(diags) = &o.verdict {
            rejected += 1;
            for d in diags {
                report.diagnostics.push(emitter.emit(d, config.diagnostics));
            }
        }
    }
    if rejected > 0 && !config.keep_going && admitted.lowered.is_some() {
        return Err(BuildFailure::reported(format!(
            "{rejected} rejected of {} registrations: nothing is written{}",
            outcomes.len(),
            if config.hint_keep_going {
                " (`--keep-going` builds the admitted ones)"
            } else {
                ""
            }
        )));
    }
    Ok(rejected)
}

/// The device libraries together with what the admitted callbacks call
/// (what admission found defined): unresolved and multiply defined symbols
/// by name, before any link runs.
fn check_device_libraries(
    admitted: &crate::admit::Admitted<'_>,
    device_inputs: &[LinkInput],
) -> Result<(), String> {
    if device_inputs.is_empty() {
        return Ok(());
    }
    let used: Vec<String> = admitted
        .wanted
        .iter()
        .filter(|w| admitted.resolved.libraries.functions.contains_key(*w))
        .cloned()
        .collect();
    crate::devicelibs::check(&admitted.resolved, &used)
}

/// The module admission judged is the module that is built: its lowering,
/// split into chunks of thunks (as MLIR text) for parallel code generation.
fn split_units(
    module: &melior::ir::Module<'_>,
    thunks: &[Thunk],
    config: &Config,
) -> Result<Vec<(Vec<Thunk>, String)>, String> {
    let parts = lower::split::Parts::of(module);
    thunks
        .chunks(chunk_size(thunks.len(), config.for_edits))
        .map(|group| {
            let exported: Vec<String> = group.iter().flat_map(Thunk::exported).collect();
            let roots: Vec<&str> = exported.iter().map(String::as_str).collect();
            parts
                .extract(&roots, true)
                .map(|text| (group.to_vec(), text))
                .map_err(|e| e.to_string())
        })
        .collect()
}

/// The compiled chunks (none when only checked) and the lint's warnings.
struct Compiled {
    chunks: Vec<Chunk>,
    warnings: usize,
}

/// Generates code for every chunk while the operator contract is checked on
/// the host (rayon); reports the lint's warnings and notes, and fails when
/// warnings are denied.
fn compile_and_lint(
    admitted: &crate::admit::Admitted<'_>,
    units: &[(Vec<Thunk>, String)],
    device_inputs: &[LinkInput],
    config: &Config,
    emitter: &Emitter<'_>,
    report: &mut Report,
) -> Result<Compiled, BuildFailure> {
    let Some((module, lowered)) = &admitted.lowered else {
        return Ok(Compiled {
            chunks: Vec::new(),
            warnings: 0,
        });
    };
    let codegen = CodegenOptions {
        arch: config.arch,
        debug: if config.debug {
            DebugInfo::Full
        } else if config.lineinfo {
            DebugInfo::LineTables
        } else {
            DebugInfo::None
        },
        opt_level: 3,
    };
    let wall = std::time::Instant::now();
    // Variables are described only with full debug information.
    let debug_vars = match codegen.debug {
        DebugInfo::Full => callback_debug(&admitted.doc, &lowered.thunks),
        _ => Vec::new(),
    };
    let lint_jobs = if config.lint {
        Some(report.timings.time("operator contract (split)", || {
            let function = |r: usize| {
                admitted
                    .outcomes
                    .iter()
                    .find(|o| o.registration.index == r)
                    .map(|o| o.registration.function.clone())
            };
            crate::contract::jobs(module, &lowered.thunks, &function)
        })?)
    } else {
        None
    };
    // Only what is shared between threads: the MLIR module is not.
    let (source, outcomes) = (&admitted.doc.source, &admitted.outcomes);
    let (chunks, linted) = rayon::join(
        || match config.check_only {
            true => Ok(Vec::new()),
            false => compile_chunks(units, &codegen, config, &debug_vars),
        },
        || {
            lint_jobs.map(|jobs| {
                let mut t = Timings::default();
                let linted = crate::contract::lint(
                    &jobs,
                    source,
                    outcomes,
                    device_inputs,
                    config.cache.as_ref(),
                    &mut t,
                );
                (linted, t)
            })
        },
    );
    let chunks = chunks?;
    let warnings = match linted {
        Some((l, t)) => {
            report.timings.merge(&t);
            report_lint(l, config, emitter, report)
        }
        None => 0,
    };
    if config.deny_warnings && warnings > 0 {
        return Err(BuildFailure::reported(format!(
            "{warnings} warning{} denied (--deny-warnings): nothing is written",
            if warnings == 1 { "" } else { "s" }
        )));
    }
    if !config.check_only {
        for c in &chunks {
            report.timings.merge(&c.timings);
        }
        // The per-stage figures are summed over chunks; this is the wall
        // time of the parallel section, to see how it scales with threads.
        report
            .timings
            .add("callbacks, wall (rayon)", wall.elapsed());
    }
    Ok(Compiled { chunks, warnings })
}

/// Renders the lint's warnings (denied ones as errors) and its note on what
/// it could not check; returns how many warnings there were.
fn report_lint(
    l: crate::contract::Linted,
    config: &Config,
    emitter: &Emitter<'_>,
    report: &mut Report,
) -> usize {
    let warnings = l.warnings.len();
    for w in l.warnings {
        let w = match config.deny_warnings {
            true => w.deny(config.deny_by),
            false => w,
        };
        report
            .diagnostics
            .push(emitter.emit(&w, config.diagnostics));
    }
    if !l.unchecked.is_empty() {
        let note = format!(
            "the operator contract was not checked for {}",
            l.unchecked.join("; ")
        );
        let mut note = config.diagnostics.message("note", &note);
        if let Format::Human { .. } = config.diagnostics {
            note.push('\n');
        }
        report.diagnostics.push(note);
    }
    warnings
}

/// Links each chunk on its own, in parallel: its thunks with the provider
/// instantiated for them, into one cubin per chunk.
fn link_chunks(
    chunks: &[Chunk],
    orders: &Orders,
    device_inputs: &[LinkInput],
    config: &Config,
    report: &mut Report,
) -> Result<Vec<LinkedChunk>, String> {
    let wall = std::time::Instant::now();
    let linked: Vec<LinkedChunk> = chunks
        .par_iter()
        .enumerate()
        .map(|(i, c)| link_chunk(i, c, chunks.len(), orders, config, device_inputs))
        .collect::<Result<_, String>>()?;
    report
        .timings
        .add("providers + links, wall (rayon)", wall.elapsed());
    for l in &linked {
        report.timings.merge(&l.timings);
        report.diagnostics.extend(l.warnings.iter().cloned());
    }
    Ok(linked)
}

/// The manifest, fingerprinted over every input of the build.
fn make_manifest(
    admitted: &crate::admit::Admitted<'_>,
    input: &Input<'_>,
    chunks: &[Chunk],
    orders: &Orders,
    linked: &[LinkedChunk],
    device_inputs: &[LinkInput],
    config: &Config,
) -> Result<(Manifest, Fingerprint), String> {
    let (doc, outcomes) = (&admitted.doc, &admitted.outcomes);
    let arch = config.arch;
    let mut fp_inputs: Vec<(String, Vec<u8>)> = vec![
        ("prepared MIR".into(), doc.to_json().into_bytes()),
        (
            "options".into(),
            format!(
                "arch={arch} debug={} lineinfo={} lto={} bench={}",
                config.debug,
                config.lineinfo,
                config.lto,
                config.bench.is_some()
            )
            .into_bytes(),
        ),
    ];
    for d in device_inputs {
        fp_inputs.push((format!("device library {}", d.name), d.bytes.clone()));
    }
    for (i, (c, l)) in chunks.iter().zip(linked).enumerate() {
        fp_inputs.push((format!("thunks.{i}"), c.object.clone()));
        fp_inputs.push((l.provider_name("cu"), l.source.clone().into_bytes()));
    }
    let fp_refs: Vec<(&str, &[u8])> = fp_inputs
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let fingerprint = Fingerprint::of_inputs(&fp_refs);
    let mut callbacks = Vec::new();
    for t in chunks.iter().flat_map(|c| &c.thunks) {
        callbacks.push(Callback {
            registration: RegistrationId(t.registration as u32),
            provider: t.provider,
            signature: t.signature.clone(),
            origin: origin(doc, outcomes, t.registration),
            site: call_site(doc, outcomes, t.registration, input.crate_name())?,
            env: t.env.clone(),
            sort: orders.sorts.get(&t.registration).cloned(),
            pick: orders.picks.get(&t.registration).copied(),
        });
    }
    ambiguous_sites(outcomes, &callbacks)?;
    let manifest = Manifest {
        format: MANIFEST_FORMAT.into(),
        fingerprint: fingerprint.clone(),
        arch: arch.sm(),
        cubin: linked[0].cubin_name.clone(),
        toolchain: toolchain(doc),
        callbacks,
        kernels: linked.iter().flat_map(|l| l.kernels.clone()).collect(),
        device_libraries: device_inputs
            .iter()
            .map(|d| manifest::DeviceLibrary::new(&d.name, d.description.kind().label(), &d.bytes))
            .collect(),
    };
    manifest
        .validate()
        .map_err(|e| format!("internal error: the manifest does not validate: {e}"))?;
    Ok((manifest, fingerprint))
}

/// The files `--emit` asks for, by name.
fn emitted_files(
    admitted: &crate::admit::Admitted<'_>,
    chunks: &[Chunk],
    linked: &[LinkedChunk],
    config: &Config,
) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for e in &config.emit {
        match e {
            Emit::Mlir => {
                files.push((
                    "callbacks.mlir".into(),
                    ir::print(&admitted.module).into_bytes(),
                ));
            }
            Emit::Llvm => {
                for (i, c) in chunks.iter().enumerate() {
                    files.push((format!("callbacks.{i}.ll"), c.llvm.clone().into_bytes()));
                }
            }
            Emit::Nvvm => {
                for (i, c) in chunks.iter().enumerate() {
                    files.push((
                        format!("callbacks.{i}.nvvm.ll"),
                        c.nvvm.clone().into_bytes(),
                    ));
                }
            }
            Emit::Ptx | Emit::Ltoir => {
                for (i, c) in chunks.iter().enumerate() {
                    let (ext, bytes) = match (e, config.lto, &c.ptx_object) {
                        (Emit::Ltoir, true, _) => ("ltoir", &c.object),
                        (Emit::Ptx, false, _) => ("ptx", &c.object),
                        (Emit::Ptx, true, Some(p)) => ("ptx", p),
                        _ => continue,
                    };
                    files.push((format!("thunks.{i}.{ext}"), bytes.clone()));
                }
                if (*e == Emit::Ltoir) == config.lto {
                    let ext = if config.lto { "ltoir" } else { "ptx" };
                    for l in linked {
                        files.push((l.provider_name(ext), l.provider.clone()));
                    }
                }
            }
            Emit::Cu => {
                for l in linked {
                    files.push((l.provider_name("cu"), l.source.clone().into_bytes()));
                }
            }
            Emit::Cubin => {}
        }
    }
    files
}

/// A chunk linked with its provider.
struct LinkedChunk {
    /// `callbacks.cubin`, or `callbacks.N.cubin` when there are several.
    cubin_name: String,
    cubin: Vec<u8>,
    /// The chunk's kernels, each naming its cubin when there are several.
    kernels: Vec<manifest::Kernel>,
    /// The provider's CUDA C++ and its NVRTC output.
    source: String,
    provider: Vec<u8>,
    /// `provider` or `provider.N`: the stem of the provider files.
    stem: String,
    options: Vec<String>,
    timings: Timings,
    /// Warnings of the link (`-g`'s fallback to PTX thunks).
    warnings: Vec<String>,
}

impl LinkedChunk {
    fn provider_name(&self, ext: &str) -> String {
        format!("{}.{ext}", self.stem)
    }
}

/// What nvJitLink 13.0 says when its `-g` link of LTOIR fails for control
/// flow it cannot give debug information (docs/debug-info.md).
const G_LINK_FAILURES: [&str; 2] = [
    "Symbol name with unsupported characters",
    // ptxas inside nvJitLink, on some loops `-g` keeps (core's iterator
    // models, docs/debug-info.md).
    "Attempted to Dereference Out of Bounds",
];

/// Instantiates the provider for chunk `i`'s thunks (chunk 0 also holds the
/// benchmark's C++ functor and copy kernel), compiles it with NVRTC and links
/// it with the chunk's thunks: the flags come from what the inputs hold.
fn link_chunk(
    i: usize,
    chunk: &Chunk,
    count: usize,
    orders: &Orders,
    config: &Config,
    device_inputs: &[LinkInput],
) -> Result<LinkedChunk, String> {
    let mut t = Timings::default();
    let mut warnings = Vec::new();
    let requests = kernel_requests(i, chunk, orders, config);
    let tu = emit_translation_unit_with(&requests, &config.tuning).map_err(|e| e.to_string())?;
    let (stem, cubin_name) = if count == 1 {
        ("provider".to_string(), "callbacks.cubin".to_string())
    } else {
        (format!("provider.{i}"), format!("callbacks.{i}.cubin"))
    };
    let provider = compile_provider(&tu, &format!("{stem}.cu"), config, &mut t)?;
    let ext = if config.lto { "ltoir" } else { "ptx" };
    let link = ChunkLink {
        i,
        chunk,
        config,
        provider: input(&format!("{stem}.{ext}"), provider.clone())?,
        device_inputs,
    };
    let plan = link.plan(input(&format!("thunks.{i}.{ext}"), chunk.object.clone())?)?;
    let link_options = plan.explain().map_err(|e| e.to_string())?.options();
    // The cubin and the link's warnings, cached together: a rebuild that
    // hits the cache warns as the link did.
    let linked = crate::buildcache::fetch(
        config.cache.as_ref(),
        &mut t,
        "nvJitLink (cache hit)",
        "linked-cubin",
        || {
            let joined = link_options.join("\0");
            let mut parts: Vec<(&str, &[u8])> = vec![("options", joined.as_bytes())];
            for i in &plan.inputs {
                parts.push(("input", i.name.as_bytes()));
                parts.push(("bytes", &i.bytes));
            }
            crate::buildcache::key("linked-cubin", &parts)
        },
        |t| {
            let mut said = Vec::new();
            let cubin = link.run(&plan, t, &mut said)?;
            Ok(crate::buildcache::pack(&[
                &cubin,
                said.join("\n").as_bytes(),
            ]))
        },
    )?;
    let (cubin, said) = match crate::buildcache::unpack(&linked).as_deref() {
        Some([cubin, said]) => (cubin.clone(), String::from_utf8_lossy(said).into_owned()),
        _ => {
            return Err(format!(
                "internal error: chunk {i}'s linked cubin does not unpack"
            ))
        }
    };
    warnings.extend(said.lines().map(str::to_string));
    let mut kernels = tu.kernels;
    if count > 1 {
        for k in &mut kernels {
            k.cubin = Some(cubin_name.clone());
        }
    }
    Ok(LinkedChunk {
        cubin_name,
        cubin,
        kernels,
        source: tu.source,
        provider,
        stem,
        options: link_options,
        timings: t,
        warnings,
    })
}

/// What chunk `i`'s link takes besides its thunks.
struct ChunkLink<'a> {
    i: usize,
    chunk: &'a Chunk,
    config: &'a Config,
    /// The provider NVRTC compiled for the chunk.
    provider: LinkInput,
    device_inputs: &'a [LinkInput],
}

impl ChunkLink<'_> {
    /// The link plan with `thunks`: the provider, the thunks (and the
    /// `--bench` PTX twin), then the user's device libraries.
    fn plan(&self, thunks: LinkInput) -> Result<LinkPlan, String> {
        let (i, config) = (self.i, self.config);
        let mut plan = LinkPlan::new(config.arch);
        // In a child process: a crash in nvJitLink is an error, and the
        // errors it only prints (`Multiple definition`) fail the link.
        plan.isolation = config.isolation.clone();
        // nvJitLink `-g` is ptxas `--device-debug`, which ignores (and warns
        // about) `-lineinfo`: one or the other.
        plan.debug = config.debug;
        plan.lineinfo = config.lineinfo && !config.debug;
        plan = plan.with_input(self.provider.clone());
        plan = plan.with_input(thunks);
        if let Some(ptx) = &self.chunk.ptx_object {
            plan = plan.with_input(input(&format!("thunks.{i}.ptx"), ptx.clone())?);
        }
        // The user's device libraries, in the order given; a `.cu` file is
        // compiled by NVRTC as the plan says (to LTOIR on the LTO route).
        plan.inputs.extend(self.device_inputs.iter().cloned());
        Ok(plan)
    }

    /// nvJitLink's cubin of `plan`. nvJitLink 13.0's `-g` link of LTOIR
    /// fails for some control flow (docs/debug-info.md): the thunks then go
    /// in as PTX, which links; the provider calls the callback rather than
    /// inlining it. The same inputs always take the same path, so the
    /// result is cached under the first plan's key.
    fn run(
        &self,
        plan: &LinkPlan,
        t: &mut Timings,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<u8>, String> {
        let (i, config) = (self.i, self.config);
        match (t.time("nvJitLink", || plan.link()), &self.chunk.debug_ptx) {
            (Ok(linked), _) => {
                // nvJitLink's own warnings (`Function too large, generated
                // debug information may not be accurate` under `-g`).
                warnings.extend(
                    linked
                        .info_log
                        .lines()
                        .filter_map(|l| l.trim().strip_prefix("warning"))
                        .map(|l| {
                            format!(
                                "warning: nvJitLink, chunk {i}: {}",
                                l.trim_start_matches([':', ' '])
                            )
                        }),
                );
                Ok(linked.bytes)
            }
            (Err(e), Some(ptx)) if config.lto && config.debug => {
                let text = e.to_string();
                let Some(why) = G_LINK_FAILURES.iter().find(|f| text.contains(*f)) else {
                    return Err(text);
                };
                warnings.push(format!(
                    "warning: nvJitLink's `-g` link of chunk {i}'s LTOIR failed ({why}, \
                     docs/debug-info.md); its callbacks are linked as PTX, called rather than inlined"
                ));
                let fallback = self.plan(input(&format!("thunks.{i}.ptx"), ptx.clone())?)?;
                t.time("nvJitLink (-g, PTX thunks)", || fallback.link())
                    .map(|linked| linked.bytes)
                    .map_err(|e| e.to_string())
            }
            (Err(e), _) => Err(e.to_string()),
        }
    }
}

/// The kernels chunk `i` instantiates: each thunk's on its route (and its
/// PTX twin with `--bench`); chunk 0 also holds the benchmark's C++
/// functor and copy kernel.
fn kernel_requests(
    i: usize,
    chunk: &Chunk,
    orders: &Orders,
    config: &Config,
) -> Vec<KernelRequest> {
    let mut requests = Vec::new();
    let callback = |th: &Thunk, op: Operation| KernelRequest::Callback {
        provider: th.provider,
        registration: RegistrationId(th.registration as u32),
        signature: th.signature.clone(),
        op,
        env: th.env.clone(),
        ties: orders
            .picks
            .get(&th.registration)
            .copied()
            .unwrap_or_default(),
    };
    for th in &chunk.thunks {
        requests.push(callback(
            th,
            Operation::Thunk {
                symbol: th.symbol.clone(),
                variant: if config.lto {
                    Variant::RustLtoir
                } else {
                    Variant::RustPtx
                },
            },
        ));
        if config.bench.is_some() {
            requests.push(callback(
                th,
                Operation::Thunk {
                    symbol: ptx_symbol(&th.symbol),
                    variant: Variant::RustPtx,
                },
            ));
        }
        // A proved order's radix sort: plain kernels, shared by every
        // variant of the registration.
        // A computed key's kernel calls the key thunk of the route's
        // variant (`SYMBOL_key`, `passes::lower::thunks::build_key`).
        let sort = orders.sorts.get(&th.registration);
        if let Some(keys) = sort.and_then(|s| s.radix_keys()) {
            requests.push(KernelRequest::Radix {
                registration: RegistrationId(th.registration as u32),
                element: th.signature.element().clone(),
                keys: keys.to_vec(),
                computed: sort.and_then(|s| s.computed_key()).map(|key| ComputedKey {
                    key: key.clone(),
                    thunk: format!("{}_key", th.symbol),
                    env: th.env.clone(),
                }),
            });
        }
    }
    if i == 0 {
        let baseline = config
            .bench
            .as_ref()
            .and_then(|b| b.cpp_baseline.as_deref());
        if let (Some(expr), Some(th)) = (baseline, chunk.thunks.first()) {
            requests.push(callback(
                th,
                Operation::Cpp {
                    expr: expr.to_string(),
                },
            ));
        }
        if config.bench.is_some() {
            requests.push(KernelRequest::Copy);
        }
    }
    requests
}

/// The provider's translation unit compiled by NVRTC (or the cache) for the
/// route: PTX or LTOIR, with `-G` or `-lineinfo` as asked.
fn compile_provider(
    tu: &TranslationUnit,
    provider_name: &str,
    config: &Config,
    t: &mut Timings,
) -> Result<Vec<u8>, String> {
    let target = if config.lto {
        NvrtcTarget::Ltoir
    } else {
        NvrtcTarget::Ptx
    };
    let mut options = NvrtcOptions::new(config.arch, target);
    // The merge sort is CUB's: its headers (and their version, for the
    // cache) come from the nvidia-cuda-cccl wheel.
    let cccl_version = if tu.needs_cccl {
        let dir = backend_nvptx::nvidia::cccl_include_dir().ok_or_else(|| {
            "sort_by is CUB's merge sort, and CUB's headers were not found: run \
             scripts/setup.sh (it installs the nvidia-cuda-cccl wheel into .nvidia/)"
                .to_string()
        })?;
        std::fs::read(dir.join("cub/version.cuh"))
            .map_err(|e| format!("{}: {e}", dir.join("cub/version.cuh").display()))?
    } else {
        Vec::new()
    };
    // `-G` and `-lineinfo` together are `-G`.
    options.debug = config.debug;
    options.lineinfo = config.lineinfo && !config.debug;
    options.extra.extend(tu.nvrtc_options.iter().cloned());
    // Composite elements as byte arrays under `-g`, which nvJitLink's
    // `-g` link takes (`manifest::provider::BYTE_COMPOSITES`).
    if config.debug {
        options
            .extra
            .push(manifest::provider::BYTE_COMPOSITES.to_string());
    }
    crate::buildcache::fetch(
        config.cache.as_ref(),
        t,
        "NVRTC (cache hit)",
        "provider",
        || {
            // NVRTC writes the source's absolute path (the working folder's)
            // into line tables: with them, the folder is an input too.
            let cwd = match options.debug || options.lineinfo {
                true => std::env::current_dir()
                    .map(|d| d.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                false => String::new(),
            };
            crate::buildcache::key(
                "provider",
                &[
                    ("arguments", options.to_args().join("\0").as_bytes()),
                    ("name", provider_name.as_bytes()),
                    ("source", tu.source.as_bytes()),
                    ("cwd", cwd.as_bytes()),
                    ("cccl", &cccl_version),
                ],
            )
        },
        |t| {
            t.time("NVRTC (provider)", || {
                nvrtc::compile(provider_name, &tu.source, &options)
            })
            .map(|out| out.bytes)
            .map_err(|e| format!("compiling the provider: {e}"))
        },
    )
}

fn input(name: &str, bytes: Vec<u8>) -> Result<LinkInput, String> {
    LinkInput::new(name, bytes).map_err(|e| format!("internal error: {name}: {e}"))
}

/// The PTX-route twin of a thunk (both routes in one cubin need two names).
fn ptx_symbol(symbol: &str) -> String {
    format!("{symbol}_ptx")
}

/// Generates code for every chunk of the lowered module, in parallel.
fn compile_chunks(
    units: &[(Vec<Thunk>, String)],
    codegen: &CodegenOptions,
    config: &Config,
    debug_vars: &[CallbackDebug],
) -> Result<Vec<Chunk>, String> {
    let total: usize = units.iter().map(|(t, _)| t.len()).sum();
    let progress = (std::io::stderr().is_terminal() && units.len() > 1).then(|| {
        let bar = indicatif::ProgressBar::new(total as u64);
        bar.set_message("compiling callbacks");
        bar
    });
    let result: Result<Vec<Chunk>, String> = units
        .par_iter()
        .map(|(thunks, text)| {
            let chunk = compile_chunk(thunks, text, codegen, config, debug_vars);
            if let Some(bar) = &progress {
                bar.inc(thunks.len() as u64);
            }
            chunk
        })
        .collect();
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    result
}

fn compile_chunk(
    thunks: &[Thunk],
    text: &str,
    codegen: &CodegenOptions,
    config: &Config,
    debug_vars: &[CallbackDebug],
) -> Result<Chunk, String> {
    let mut t = Timings::default();
    let want_llvm = config.emit.contains(&Emit::Llvm);
    let want_nvvm = config.emit.contains(&Emit::Nvvm);
    let mut llvm = String::new();
    let mut nvvm = String::new();
    let symbols: Vec<&str> = thunks.iter().map(|t| t.symbol.as_str()).collect();
    // This chunk's callbacks' variables: another chunk's are not its input.
    let variables: Vec<&CallbackDebug> = debug_vars
        .iter()
        .filter(|c| symbols.contains(&c.thunk.as_str()))
        .collect();
    let options = format!(
        "arch={} debug={:?} opt={} lto={} bench={}",
        codegen.arch.sm(),
        codegen.debug,
        codegen.opt_level,
        config.lto,
        config.bench.is_some()
    );
    let payload = crate::buildcache::fetch(
        // `--emit llvm|nvvm` wants IR, which only generation gives.
        config.cache.as_ref().filter(|_| !want_llvm && !want_nvvm),
        &mut t,
        "callbacks (cache hit)",
        "thunks",
        || {
            crate::buildcache::key(
                "thunks",
                &[
                    ("options", options.as_bytes()),
                    ("symbols", symbols.join("\0").as_bytes()),
                    ("module", text.as_bytes()),
                    ("variables", format!("{variables:?}").as_bytes()),
                ],
            )
        },
        |t| {
            // MLIR contexts are not shared between threads: one per chunk,
            // which reads its part of the lowered module.
            let context = t
                .time("MLIR context", ir::context)
                .map_err(|e| e.to_string())?;
            let mut module = t
                .time("split", || ir::parse(&context, text))
                .map_err(|e| format!("internal error: a lowered chunk does not parse back: {e}"))?;
            if want_llvm {
                llvm = t
                    .time("LLVM IR + O3", || codegen::emit_llvm_ir(&module, codegen))
                    .map_err(|e| e.to_string())?;
            }
            let (object, ptx, text) = generate_chunk(
                thunks,
                &context,
                &mut module,
                codegen,
                config,
                debug_vars,
                t,
            )?;
            if want_nvvm {
                nvvm = text;
            }
            let mut parts: Vec<&[u8]> = vec![&object];
            parts.extend(ptx.as_deref());
            Ok(crate::buildcache::pack(&parts))
        },
    )?;
    let (object, second) = match crate::buildcache::unpack(&payload).as_deref() {
        Some([object]) => (object.clone(), None),
        Some([object, ptx]) => (object.clone(), Some(ptx.clone())),
        _ => return Err("internal error: a cached thunk object is malformed".into()),
    };
    // The second object is the benchmark's PTX twin, or `-g`'s fallback.
    let (ptx_object, debug_ptx) = match config.bench.is_some() {
        true => (second, None),
        false => (None, second),
    };
    Ok(Chunk {
        thunks: thunks.to_vec(),
        object,
        ptx_object,
        debug_ptx,
        llvm,
        nvvm,
        timings: t,
    })
}

/// What the debugger is told about each thunk: the body's Rust argument
/// names (its `debug NAME => _N` lines) and the captures at their offsets.
fn callback_debug(doc: &PreparedMir, thunks: &[Thunk]) -> Vec<CallbackDebug> {
    thunks
        .iter()
        .filter_map(|t| {
            let body = doc.body(&t.body)?;
            let first = if t.takes_env { 2 } else { 1 };
            let params = (first..=body.arg_count)
                .map(|i| {
                    let name = body
                        .debug_vars
                        .iter()
                        .find(|d| {
                            d.place
                                .as_ref()
                                .is_some_and(|p| p.local.0 == i && p.projections.is_empty())
                        })
                        .map_or_else(|| format!("arg{i}"), |d| d.name.clone());
                    let scalar = body.locals.get(i as usize)?.ty.scalar()?;
                    Some((name, scalar))
                })
                .collect::<Option<Vec<_>>>()?;
            let captures = t
                .env
                .fields
                .iter()
                .filter_map(|f| {
                    let scalar = frontend::ty::Scalar::from_name(f.scalar.name())?;
                    Some((f.name.clone(), scalar, f.offset))
                })
                .collect();
            Some(CallbackDebug {
                thunk: t.symbol.clone(),
                name: t.body.clone(),
                body: t.body_symbol.clone(),
                params,
                captures,
            })
        })
        .collect()
}

/// What [`generate_chunk`] makes: the thunk object, the `--bench` PTX twin,
/// and the NVVM IR text (the LTOIR route).
type Generated = (Vec<u8>, Option<Vec<u8>>, String);

/// A chunk's thunk object (LTOIR through libNVVM, or PTX), and with
/// `--bench` its PTX twin under other names.
fn generate_chunk<'c>(
    thunks: &[Thunk],
    context: &'c melior::Context,
    module: &mut melior::ir::Module<'c>,
    codegen: &CodegenOptions,
    config: &Config,
    debug_vars: &[CallbackDebug],
    t: &mut Timings,
) -> Result<Generated, String> {
    let mut nvvm = String::new();
    let object = if config.lto {
        let text = t
            .time("NVVM IR emission", || {
                codegen::emit_nvvm_ir_with(module, codegen, debug_vars)
            })
            .map_err(|e| e.to_string())?;
        // The emitter's compile unit says what debug information libNVVM
        // keeps; libNVVM's own `-g` changes nothing.
        t.time("libNVVM (LTOIR)", || {
            backend_nvptx::nvvm::compile_to_ltoir(
                "callbacks.ll",
                text.as_bytes(),
                codegen.arch,
                false,
            )
        })
        .map_err(|e| e.to_string())
        .map(|out| {
            nvvm = text;
            out.bytes
        })?
    } else {
        t.time("PTX (NVPTX)", || codegen::emit_ptx(module, codegen))
            .map_err(|e| e.to_string())?
            .into_bytes()
    };
    let ptx_object = if config.bench.is_some() && config.lto {
        // The same thunks under other names, as PTX, for the PTX-route
        // kernels: renamed in the module, then generated again.
        for t in thunks {
            let twins = passes::lower::plan::exported_as(&ptx_symbol(&t.symbol), &t.adapter);
            for (from, to) in t.exported().iter().zip(&twins) {
                ir::rename_symbol(context, module, from, to)
                    .map_err(|e| format!("internal error: the lowered chunk: {e}"))?;
            }
        }
        let ptx = codegen::emit_ptx(module, codegen).map_err(|e| e.to_string())?;
        Some(ptx.into_bytes())
    } else if config.lto && config.debug {
        // `-g`'s fallback: the same thunks, same symbols, as PTX.
        let ptx = t
            .time("PTX (NVPTX, -g fallback)", || {
                codegen::emit_ptx(module, codegen)
            })
            .map_err(|e| e.to_string())?;
        Some(ptx.into_bytes())
    } else {
        None
    };
    Ok((object, ptx_object, nvvm))
}

fn toolchain(doc: &PreparedMir) -> BTreeMap<String, String> {
    let mut t = BTreeMap::new();
    t.insert("driver".into(), env!("CARGO_PKG_VERSION").into());
    if let Some(r) = &doc.source.rustc {
        t.insert("rustc".into(), r.clone());
    }
    if let Ok(v) = backend_nvptx::toolchain_versions() {
        if let Ok(serde_json::Value::Object(map)) = serde_json::to_value(&v) {
            for (k, v) in map {
                if k.contains("path") {
                    continue; // machine-specific: not part of the artifact
                }
                t.insert(
                    k,
                    v.as_str()
                        .map(str::to_string)
                        .unwrap_or_else(|| v.to_string()),
                );
            }
        }
    }
    t
}

fn origin(doc: &PreparedMir, outcomes: &[Outcome], registration: usize) -> Option<String> {
    let o = outcomes.get(registration)?;
    let span = o.registration.loc.span?;
    Some(format!(
        "{}:{}:{}",
        doc.source.file_name(span.file),
        span.lo_line,
        span.lo_col
    ))
}

/// Where a host-API registration (`gpu.reduce(…)`) is called, as
/// `#[track_caller]` reports it: the method name of a method call, the
/// start of the path of a path call (`Gpu::reduce(&gpu, …)`). A host-API
/// call whose source the build cannot find is an error: its program could
/// never find the kernel.
fn call_site(
    doc: &PreparedMir,
    outcomes: &[Outcome],
    registration: usize,
    crate_name: Option<&str>,
) -> Result<Option<manifest::CallSite>, String> {
    let Some(reg) = outcomes.get(registration).map(|o| &o.registration) else {
        return Ok(None);
    };
    if !frontend::registry::is_host_method(&reg.function) {
        return Ok(None);
    }
    let Some(span) = reg.loc.span else {
        return Err(format!(
            "{}:{}: cannot find this call of `{}` in the Rust source, so the program \
             could not find its kernel at run time (a call written by a macro, or a \
             function name defined twice in one file, hides it)",
            doc.source.mir_file,
            reg.loc.mir_line.unwrap_or(0),
            reg.function
        ));
    };
    // `#[track_caller]` names the file of the call, which may be a module
    // file of the crate.
    let file = doc.source.file_name(span.file).to_string();
    let closure_body = match &reg.callback {
        ir::facts::CallbackRef::Closure(body) => Some(body.as_str()),
        _ => None,
    };
    let mut column = span.lo_col;
    if let Some(text) = doc.source.text_of(span.file) {
        column = path_start(text, span.lo_line, span.lo_col);
    }
    // MIR names a closure body by its item's shortest unique path
    // (`mix::{closure#0}`): the end of the closure's type name.
    let closure_suffix = closure_body
        .filter(|body| !body.contains(['<', ' ', '@']))
        .map(|body| {
            body.split("::")
                .map(|seg| {
                    if seg.starts_with("{closure#") {
                        "{{closure}}"
                    } else {
                        seg
                    }
                })
                .collect::<Vec<_>>()
                .join("::")
        });
    // `sort`'s comparator is the compiler's, not a value of the user's
    // crate: the program names no closure (it passes `()`).
    let natural = frontend::registry::is_natural_order(&reg.function);
    // A `par_iter` chain's call passes its chain object (`native::gpu::Chain`),
    // a by-key's its two closures (`native::gpu::ByKey`).
    let object = match reg.provider.shape() {
        manifest::Shape::Chain => Some(manifest::CHAIN_TYPE),
        manifest::Shape::ByKey => Some(manifest::BY_KEY_TYPE),
        _ => None,
    };
    Ok(Some(manifest::CallSite {
        file,
        line: span.lo_line,
        column,
        crate_name: crate_name.filter(|_| !natural).map(str::to_string),
        closure_suffix: match object {
            Some(t) => Some(t.to_string()),
            None => closure_suffix.filter(|_| !natural),
        },
    }))
}

/// Two callbacks the program could not tell apart: one call site (closures
/// handed to a helper that rustc inlined, which makes the call), the same
/// provider, types, closure name and environment size. The program finds a
/// kernel by exactly these, so it would run the first for both.
fn ambiguous_sites(outcomes: &[Outcome], callbacks: &[Callback]) -> Result<(), String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for c in callbacks {
        let Some(site) = &c.site else { continue };
        let key = format!(
            "{}:{}:{} {:?} {} {:?} {} {}",
            site.file,
            site.line,
            site.column,
            c.provider,
            c.signature,
            site.closure_suffix,
            c.env.size,
            c.env.align
        );
        let index = c.registration.0 as usize;
        let body = |r: usize| match outcomes.get(r).map(|o| &o.registration.callback) {
            Some(ir::facts::CallbackRef::Closure(b) | ir::facts::CallbackRef::FnItem(b)) => {
                b.clone()
            }
            _ => format!("registration {r}"),
        };
        // One callback registered twice at one call (its registering
        // closure also inlined into its caller) runs one kernel either way.
        if let Some(&first) = seen.get(&key).filter(|&&first| body(first) != body(index)) {
            let function = outcomes
                .get(index)
                .map_or("the registration", |o| o.registration.function.as_str());
            return Err(format!(
                "{}:{}:{}: the callbacks `{}` and `{}` both reach this call of `{function}` \
                 through a function rustc inlined, with the same types and environment size: \
                 the program finds a kernel by call site, types and closure, and could not tell \
                 them apart at run time; pass each closure to `{function}` at a call of its own",
                site.file,
                site.line,
                site.column,
                body(first),
                body(index),
            ));
        }
        seen.insert(key, index);
    }
    Ok(())
}

/// The column where the path ending at `line:col` starts: back over
/// `Ident::` segments (`Gpu::reduce`, `native::gpu::Gpu::reduce`).
fn path_start(text: &str, line: u32, col: u32) -> u32 {
    let Some(l) = text.lines().nth(line.saturating_sub(1) as usize) else {
        return col;
    };
    let chars: Vec<char> = l.chars().collect();
    let mut start = (col.saturating_sub(1) as usize).min(chars.len());
    loop {
        if start >= 2 && chars[start - 1] == ':' && chars[start - 2] == ':' {
            let mut s = start - 2;
            while s > 0 && (chars[s - 1].is_alphanumeric() || chars[s - 1] == '_') {
                s -= 1;
            }
            if s == start - 2 {
                break;
            }
            start = s;
        } else {
            break;
        }
    }
    start as u32 + 1
}

/// The run bundle: host-reference results for every registration whose
/// caller the harness can call, at the standard sizes.
fn make_bundle(
    admitted: &crate::admit::Admitted<'_>,
    file: &Path,
    config: &Config,
    thunks: &[&Thunk],
    kernels: &[manifest::Kernel],
    fingerprint: &Fingerprint,
    device_inputs: &[LinkInput],
) -> Result<Bundle, String> {
    let doc = &admitted.doc;
    let max = config
        .bundle
        .as_ref()
        .and_then(|b| b.max_size)
        .unwrap_or(1 << 28);
    let cases: Vec<(InputSpec, u32)> = standard_case_inputs()
        .into_iter()
        .filter(|(s, _)| s.size <= max)
        .collect();
    if cases.is_empty() {
        return Err(format!(
            "--max-size {max} leaves no case in the bundle: the smallest size is 1"
        ));
    }
    let mut jobs = Vec::new();
    let mut captures_of = BTreeMap::new();
    // Every registration that cannot be checked is a reason to fail: a
    // bundle that silently covers less than the build is a vacuous pass.
    let mut left_out = Vec::new();
    for t in thunks {
        match host_job(doc, t, &cases) {
            Ok((job, captures)) => {
                captures_of.insert(t.registration, captures);
                jobs.push(job);
            }
            Err(why) => left_out.push(format!("registration #{}: {why}", t.registration)),
        }
    }
    // The benchmark rotates several inputs at the largest size (so L2 does not
    // flatter a variant); the host computes their expected results too.
    if config.bench.is_some() {
        if let Some(job) = jobs.first_mut() {
            job.cases.extend(
                BENCH_SEEDS
                    .iter()
                    .map(|&seed| InputSpec { size: max, seed }),
            );
        }
    }
    if !left_out.is_empty() {
        return Err(format!(
            "--bundle: {} of {} callbacks cannot be checked against the host reference, so no bundle is written:\n  {}",
            left_out.len(),
            thunks.len(),
            left_out.join("\n  ")
        ));
    }
    let oc = doc.source.overflow_checks.unwrap_or(true);
    let results = hostref::run_jobs(file, oc, &jobs, device_inputs)?;
    let runs = bundle_runs(&jobs, &cases, &results, kernels, &captures_of)?;
    let bench = config
        .bench
        .is_some()
        .then(|| bench_spec(&jobs, &results, kernels, max));
    let bundle = Bundle {
        format: BUNDLE_FORMAT.into(),
        fingerprint: fingerprint.clone(),
        manifest: "manifest.json".into(),
        generator: GENERATOR.into(),
        registrations: runs,
        bench: bench.flatten(),
    };
    bundle
        .validate()
        .map_err(|e| format!("internal error: {e}"))?;
    Ok(bundle)
}

/// The host reference's job for one thunk's registration, with the values
/// of its captures; or why a bundle cannot check it.
fn host_job(
    doc: &frontend::PreparedMir,
    t: &Thunk,
    cases: &[(InputSpec, u32)],
) -> Result<(HostJob, Vec<CaptureValue>), String> {
    let reg = &doc.registrations[t.registration];
    let caller = doc
        .body(&reg.caller)
        .ok_or_else(|| format!("its caller `{}` has no body", reg.caller))?;
    // A bundle holds one i32 per case: it checks i32 reduces; every
    // other provider and type is checked through `native::gpu`
    // (examples/gpu-providers).
    if t.provider != manifest::Provider::Reduce
        || t.signature != manifest::Signature::fold(manifest::Scalar::I32)
    {
        return Err(format!(
            "bundles check `i32` reduces, and this is a `{}` of `{}` \
             (check it through `native::gpu`, as examples/gpu-providers does)",
            t.provider.name(),
            t.signature
        ));
    }
    let arguments = hostref::bundle_arguments(doc, caller, 0x5EED + t.registration as u64)?;
    // Capture values: the caller's arguments of the same names (or
    // their fields, for a precise capture such as `pair.0`).
    let closure = match &reg.callback {
        PmirCallback::Closure { body } => doc.closure(body),
        _ => None,
    };
    let mut values = Vec::new();
    for cap in closure.map(|c| c.captures.as_slice()).unwrap_or(&[]) {
        let value = hostref::capture_value(&arguments, &cap.name).ok_or_else(|| {
            format!(
                "capture `{}` is not an argument of `{}` (or a field of one)",
                cap.name, reg.caller
            )
        })?;
        values.push(CaptureValue {
            name: cap.name.clone(),
            value,
        });
    }
    let job = HostJob {
        registration: t.registration,
        caller: reg.caller.clone(),
        call_index: hostref::call_index(doc, t.registration),
        arguments,
        cases: cases.iter().map(|(s, _)| *s).collect(),
    };
    Ok((job, values))
}

/// The bundle's runs: each job's kernels with the host's result per case.
fn bundle_runs(
    jobs: &[HostJob],
    cases: &[(InputSpec, u32)],
    results: &[hostref::HostResult],
    kernels: &[manifest::Kernel],
    captures_of: &BTreeMap<usize, Vec<CaptureValue>>,
) -> Result<Vec<RegistrationRun>, String> {
    // Indexed: thousands of registrations times their cases.
    let by_case: BTreeMap<(usize, InputSpec), &hostref::HostResult> = results
        .iter()
        .map(|r| ((r.registration, r.spec), r))
        .collect();
    let mut runs = Vec::new();
    for job in jobs {
        let id = RegistrationId(job.registration as u32);
        for kernel in kernels.iter().filter(|k| k.registration == Some(id)) {
            let cases = cases
                .iter()
                .map(|(spec, offset)| {
                    let r = by_case.get(&(job.registration, *spec)).ok_or_else(|| {
                        format!(
                            "internal error: the host reference gave no result for registration #{} at size {} seed {}",
                            job.registration, spec.size, spec.seed
                        )
                    })?;
                    Ok(Case {
                        size: spec.size,
                        seed: spec.seed,
                        offset: *offset,
                        init: r.init,
                        expected: r.expected,
                    })
                })
                .collect::<Result<_, String>>()?;
            runs.push(RegistrationRun {
                registration: id,
                kernel: kernel.name.clone(),
                captures: captures_of[&job.registration].clone(),
                cases,
            });
        }
    }
    Ok(runs)
}

/// Seeds of the benchmark's rotated inputs.
const BENCH_SEEDS: [u64; 4] = [0xB0, 0xB1, 0xB2, 0xB3];

/// The benchmark: every kernel of the first registration the host evaluated,
/// on the rotated inputs, plus the copy ceilings.
fn bench_spec(
    jobs: &[HostJob],
    results: &[hostref::HostResult],
    kernels: &[manifest::Kernel],
    max: u64,
) -> Option<BenchSpec> {
    let job = jobs.first()?;
    let mine: Vec<&hostref::HostResult> = BENCH_SEEDS
        .iter()
        .map(|&seed| {
            results.iter().find(|r| {
                r.registration == job.registration && r.spec == InputSpec { size: max, seed }
            })
        })
        .collect::<Option<_>>()?;
    let init = mine[0].init;
    let expected: Vec<i32> = mine.iter().map(|r| r.expected).collect();
    let id = RegistrationId(job.registration as u32);
    let mut variants: Vec<BenchVariant> = kernels
        .iter()
        .filter(|k| k.registration == Some(id))
        .map(|k| BenchVariant::Kernel {
            label: match k.variant {
                Variant::RustLtoir => "Rust callback, LTOIR".to_string(),
                Variant::RustPtx => "Rust callback, PTX".to_string(),
                Variant::CppFunctor => "C++ functor".to_string(),
                Variant::Plain => k.name.clone(),
            },
            kernel: k.name.clone(),
            init,
            expected: expected.clone(),
        })
        .collect();
    variants.extend(manifest::bundle::copy_ceilings());
    Some(BenchSpec {
        size: max,
        seeds: BENCH_SEEDS.to_vec(),
        warmup: 5,
        repeats: 50,
        passes: 2,
        variants,
    })
}
