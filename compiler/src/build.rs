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
use std::path::Path;
use std::process::ExitCode;

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
use manifest::provider::{emit_translation_unit, KernelRequest, Operation};
use manifest::{
    Callback, Fingerprint, InputSpec, Manifest, RegistrationId, Variant, GENERATOR, MANIFEST_FORMAT,
};
use passes::admission::{Outcome, Verdict};
use passes::diagnostic::{Emitter, Format};
use passes::lower::{self, Thunk};
use rayon::prelude::*;

use crate::admit::admit_and_lower;
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

pub struct BuildArgs<'a> {
    pub file: &'a Path,
    pub config: &'a RustcConfig,
    pub arch: &'a str,
    /// `-g`: full debug information (the provider by NVRTC `-G`, the
    /// callbacks' `FullDebug` metadata, nvJitLink `-g`).
    pub debug: bool,
    /// `-lineinfo`: line tables with optimised code (the provider by NVRTC
    /// `-lineinfo`, the callbacks' line metadata, nvJitLink `-lineinfo`);
    /// `-g` includes it.
    pub lineinfo: bool,
    pub lto: bool,
    pub emit: &'a [Emit],
    pub output: &'a Path,
    pub bundle: bool,
    /// Largest case size in the bundle (2^28 by default).
    pub max_size: Option<u64>,
    /// Also build every admitted callback by the PTX route and the copy
    /// kernel, and describe the benchmark in the bundle (`gpu-run --bench`).
    pub bench: bool,
    /// A hand-written C++ expression of `a`, `b` and `env.NAME` for the first
    /// registration: the benchmark's baseline functor.
    pub cpp_baseline: Option<&'a str>,
    /// Print the time of each stage.
    pub timings: bool,
    /// How nvJitLink runs: in a child process (a program that serves
    /// `backend_nvptx::isolate` jobs, such as the `driver`) or in process.
    pub isolation: backend_nvptx::Isolation,
    /// A document already prepared (a Cargo crate's MIR): built instead of
    /// loading `file`.
    pub prepared: Option<&'a PreparedMir>,
    /// The crate's name, when known (Cargo builds): it begins the closure
    /// type names the run-time lookup checks.
    pub crate_name: Option<&'a str>,
    /// Print no summary line (diagnostics are still printed).
    pub quiet: bool,
    /// The build cache (see [`crate::buildcache`]); `None` builds everything.
    pub cache: Option<&'a cache::Cache>,
    /// User device libraries (`--link FILE`), linked with every chunk in
    /// this order; `extern "C"` functions they define may be called.
    pub link: &'a [std::path::PathBuf],
    /// Check the operator contract of tree-combining providers on the host
    /// (W0201, `crate::contract`); only for a `.rs` file.
    pub lint: bool,
    /// Warnings fail the build (exit 1, nothing written).
    pub deny_warnings: bool,
    /// The flag that denied them, for the note (`--deny-warnings`).
    pub deny_by: &'a str,
    /// Build the admitted registrations when others are rejected (the
    /// build still fails, exit 1); without it a rejection writes nothing.
    pub keep_going: bool,
    /// How rejections and warnings are printed.
    pub diagnostics: Format,
    /// Admit and lint only (`cargo check`): no device code is built and
    /// nothing is written.
    pub check_only: bool,
    /// Chunk for fast rebuilds after an edit rather than for the fewest
    /// links (a Cargo build: a cubin per callback in small crates).
    pub for_edits: bool,
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

/// Builds, and fails (exit 1) when a registration was rejected, as rustc
/// does on an error: with [`BuildArgs::keep_going`] the admitted ones are
/// written first.
pub fn build(args: &BuildArgs<'_>) -> Result<ExitCode, String> {
    let built = build_counted(args).map_err(|e| e.message)?;
    if built.rejected > 0 {
        eprintln!(
            "error: {} rejected of {} registrations; the admitted ones are built (--keep-going)",
            built.rejected,
            built.rejected + built.admitted
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// What a build did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Built {
    pub admitted: usize,
    pub rejected: usize,
    /// Cubins linked (none when only checked).
    pub cubins: usize,
    /// Warnings printed.
    pub warnings: usize,
}

/// Why a build failed. `reported`: the diagnostics printed before it say
/// why (a rejection, a denied warning), so a caller that prints errors as
/// rustc does (inside cargo) need not repeat it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BuildFailure {
    pub message: String,
    pub reported: bool,
}

impl BuildFailure {
    fn reported(message: String) -> BuildFailure {
        BuildFailure {
            message,
            reported: true,
        }
    }
}

impl From<String> for BuildFailure {
    fn from(message: String) -> BuildFailure {
        BuildFailure {
            message,
            reported: false,
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

/// [`build`], saying how many registrations were admitted and rejected.
pub fn build_counted(args: &BuildArgs<'_>) -> Result<Built, BuildFailure> {
    let arch: Arch = args.arch.parse().map_err(|e| format!("--arch: {e}"))?;
    if args.bench && !args.lto {
        return Err("--bench builds both routes and needs --lto".into());
    }
    if args.bundle {
        check_bundle_args(args)?;
    }
    crate::output::check_dir(args.output)?;
    let mut timings = Timings::default();
    let context = timings
        .time("MLIR context", ir::context)
        .map_err(|e| e.to_string())?;
    let device = crate::admit::DeviceInputs {
        inputs: timings.time("device libraries", || crate::devicelibs::load(args.link))?,
        reader: SymbolReader {
            isolation: args.isolation.clone(),
            ..SymbolReader::new(arch)
        },
        ptx_route: !args.lto,
    };
    let admitted = match args.prepared {
        Some(doc) => {
            crate::admit::admit_and_lower_doc(doc.clone(), &context, &mut timings, &device)?
        }
        None => admit_and_lower(args.file, args.config, &context, &mut timings, &device)?,
    };
    let (doc, outcomes) = (&admitted.doc, &admitted.outcomes);
    let emitter = Emitter::new(&doc.source, false);
    let mut rejected = 0;
    for o in outcomes {
        if let Verdict::Rejected(diags) = &o.verdict {
            rejected += 1;
            for d in diags {
                eprintln!("{}", emitter.emit(d, args.diagnostics));
            }
        }
    }
    if rejected > 0 && !args.keep_going && admitted.lowered.is_some() {
        return Err(BuildFailure::reported(format!(
            "{rejected} rejected of {} registrations: nothing is written{}",
            outcomes.len(),
            if !args.quiet {
                " (`--keep-going` builds the admitted ones)"
            } else {
                ""
            }
        )));
    }
    let Some((lowered_module, lowered)) = &admitted.lowered else {
        let message = format!(
            "{}: no admitted registration to build ({} found, {rejected} rejected)",
            doc.source.file,
            outcomes.len()
        );
        return Err(if rejected > 0 {
            BuildFailure::reported(message)
        } else {
            message.into()
        });
    };
    // The device libraries together with what the admitted callbacks call
    // (what admission found defined): unresolved and multiply defined
    // symbols by name, before any link runs.
    if !device.inputs.is_empty() {
        let used: Vec<String> = admitted
            .wanted
            .iter()
            .filter(|w| admitted.resolved.libraries.functions.contains_key(*w))
            .cloned()
            .collect();
        crate::devicelibs::check(&admitted.resolved, &used)?;
    }
    let device_inputs = &device.inputs;
    // The module admission judged is the module that is built: its
    // lowering, split into chunks of thunks for parallel code generation.
    let units: Vec<(Vec<Thunk>, String)> = timings.time("split", || {
        let parts = lower::split::Parts::of(lowered_module);
        lowered
            .thunks
            .chunks(chunk_size(lowered.thunks.len(), args.for_edits))
            .map(|group| {
                let roots: Vec<&str> = group.iter().map(|t| t.symbol.as_str()).collect();
                parts
                    .extract(&roots, true)
                    .map(|text| (group.to_vec(), text))
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<Vec<_>, String>>()
    })?;
    let admitted_mlir = if args.emit.contains(&Emit::Mlir) {
        ir::print(&admitted.module)
    } else {
        String::new()
    };
    let codegen = CodegenOptions {
        arch,
        debug: if args.debug {
            DebugInfo::Full
        } else if args.lineinfo {
            DebugInfo::LineTables
        } else {
            DebugInfo::None
        },
        opt_level: 3,
    };
    let wall = std::time::Instant::now();
    // Variables are described only with full debug information.
    let debug_vars = match codegen.debug {
        DebugInfo::Full => callback_debug(doc, &lowered.thunks),
        _ => Vec::new(),
    };
    // The operator contract runs on the host while the callbacks compile.
    let lint_jobs = if args.lint {
        Some(timings.time("operator contract (split)", || {
            crate::contract::jobs(lowered_module, &lowered.thunks)
        })?)
    } else {
        None
    };
    let (chunks, linted) = rayon::join(
        || {
            if args.check_only {
                Ok(Vec::new())
            } else {
                compile_chunks(&units, &codegen, args, &debug_vars)
            }
        },
        || {
            lint_jobs.map(|jobs| {
                let mut t = Timings::default();
                let linted = crate::contract::lint(
                    &jobs,
                    &doc.source,
                    outcomes,
                    device_inputs,
                    args.cache,
                    &mut t,
                );
                (linted, t)
            })
        },
    );
    let chunks = chunks?;
    let mut warnings = 0;
    if let Some((l, t)) = linted {
        timings.merge(&t);
        warnings += l.warnings.len();
        for w in l.warnings {
            let w = if args.deny_warnings {
                w.deny(args.deny_by)
            } else {
                w
            };
            eprintln!("{}", emitter.emit(&w, args.diagnostics));
        }
        if !l.unchecked.is_empty() {
            let note = format!(
                "the operator contract was not checked for {}",
                l.unchecked.join("; ")
            );
            eprintln!("{}", args.diagnostics.message("note", &note));
            if let Format::Human { .. } = args.diagnostics {
                eprintln!();
            }
        }
    }
    if args.deny_warnings && warnings > 0 {
        return Err(BuildFailure::reported(format!(
            "{warnings} warning{} denied (--deny-warnings): nothing is written",
            if warnings == 1 { "" } else { "s" }
        )));
    }
    if args.check_only {
        return Ok(Built {
            admitted: lowered.thunks.len(),
            rejected,
            cubins: 0,
            warnings,
        });
    }
    let wall = wall.elapsed();
    for c in &chunks {
        timings.merge(&c.timings);
    }
    // The per-stage figures above are summed over chunks; this is the wall
    // time of the parallel section, to see how it scales with threads.
    timings.add("callbacks, wall (rayon)", wall);
    let thunks: Vec<&Thunk> = chunks.iter().flat_map(|c| &c.thunks).collect();

    // Each chunk is linked on its own, in parallel: its thunks with the
    // provider instantiated for them, into one cubin per chunk.
    let wall = std::time::Instant::now();
    let linked: Vec<LinkedChunk> = chunks
        .par_iter()
        .enumerate()
        .map(|(i, c)| link_chunk(i, c, chunks.len(), arch, args, device_inputs))
        .collect::<Result<_, String>>()?;
    timings.add("providers + links, wall (rayon)", wall.elapsed());
    for l in &linked {
        timings.merge(&l.timings);
    }
    let kernels: Vec<manifest::Kernel> = linked.iter().flat_map(|l| l.kernels.clone()).collect();

    // Manifest, fingerprinted over every input.
    let mut fp_inputs: Vec<(String, Vec<u8>)> = vec![
        ("prepared MIR".into(), doc.to_json().into_bytes()),
        (
            "options".into(),
            format!(
                "arch={arch} debug={} lineinfo={} lto={} bench={}",
                args.debug, args.lineinfo, args.lto, args.bench
            )
            .into_bytes(),
        ),
    ];
    for d in device_inputs {
        fp_inputs.push((format!("device library {}", d.name), d.bytes.clone()));
    }
    for (i, (c, l)) in chunks.iter().zip(&linked).enumerate() {
        fp_inputs.push((format!("thunks.{i}"), c.object.clone()));
        fp_inputs.push((l.provider_name("cu"), l.source.clone().into_bytes()));
    }
    let fp_refs: Vec<(&str, &[u8])> = fp_inputs
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let fingerprint = Fingerprint::of_inputs(&fp_refs);
    let mut callbacks = Vec::new();
    for t in &thunks {
        callbacks.push(Callback {
            registration: RegistrationId(t.registration as u32),
            provider: t.provider,
            signature: t.signature.clone(),
            origin: origin(doc, outcomes, t.registration),
            site: call_site(doc, outcomes, t.registration, args.crate_name)?,
            env: t.env.clone(),
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
        kernels: kernels.clone(),
        device_libraries: device_inputs
            .iter()
            .map(|d| manifest::DeviceLibrary::new(&d.name, d.description.kind().label(), &d.bytes))
            .collect(),
    };
    manifest
        .validate()
        .map_err(|e| format!("internal error: the manifest does not validate: {e}"))?;

    // Files, into a temporary folder first.
    let mut files: Vec<(String, Vec<u8>)> =
        vec![("manifest.json".into(), manifest.to_json().into_bytes())];
    for l in &linked {
        files.push((l.cubin_name.clone(), l.cubin.clone()));
    }
    for e in args.emit {
        match e {
            Emit::Mlir => {
                files.push(("callbacks.mlir".into(), admitted_mlir.clone().into_bytes()));
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
                    let (ext, bytes) = match (e, args.lto, &c.ptx_object) {
                        (Emit::Ltoir, true, _) => ("ltoir", &c.object),
                        (Emit::Ptx, false, _) => ("ptx", &c.object),
                        (Emit::Ptx, true, Some(p)) => ("ptx", p),
                        _ => continue,
                    };
                    files.push((format!("thunks.{i}.{ext}"), bytes.clone()));
                }
                if (*e == Emit::Ltoir) == args.lto {
                    let ext = if args.lto { "ltoir" } else { "ptx" };
                    for l in &linked {
                        files.push((l.provider_name(ext), l.provider.clone()));
                    }
                }
            }
            Emit::Cu => {
                for l in &linked {
                    files.push((l.provider_name("cu"), l.source.clone().into_bytes()));
                }
            }
            Emit::Cubin => {}
        }
    }
    if args.bundle {
        let bundle = timings.time("host reference (--bundle)", || {
            make_bundle(
                doc,
                args,
                outcomes,
                &thunks,
                &kernels,
                &fingerprint,
                device_inputs,
            )
        })?;
        files.push(("bundle.json".into(), bundle.to_json().into_bytes()));
    }
    timings.time("write", || write_dir(args.output, &files))?;
    if args.timings {
        eprint!(
            "{}",
            timings.render(
                thunks.len(),
                &[
                    "import to rmir",
                    "admission + lowering",
                    "split",
                    "LLVM IR + O3",
                    "PTX (NVPTX)",
                    "NVVM IR emission",
                ]
            )
        );
    }
    let cubin_bytes: usize = linked.iter().map(|l| l.cubin.len()).sum();
    if !args.quiet {
        eprintln!(
        "wrote {} ({} callbacks, {} kernels, {} cubin{} of {} bytes, nvJitLink {}); {} admitted, {rejected} rejected{}",
        args.output.display(),
        thunks.len(),
        kernels.len(),
        linked.len(),
        if linked.len() == 1 { "" } else { "s" },
        cubin_bytes,
        linked[0].options.join(" "),
        lowered.thunks.len(),
        match warnings {
            0 => String::new(),
            1 => ", 1 warning".to_string(),
            n => format!(", {n} warnings"),
        }
    );
    }
    if let Some(c) = args.cache.filter(|c| c.counters().misses > 0) {
        crate::buildcache::trim(c);
    }
    Ok(Built {
        admitted: lowered.thunks.len(),
        rejected,
        cubins: linked.len(),
        warnings,
    })
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
    arch: Arch,
    args: &BuildArgs<'_>,
    device_inputs: &[LinkInput],
) -> Result<LinkedChunk, String> {
    let mut t = Timings::default();
    let mut requests = Vec::new();
    let callback = |th: &Thunk, op: Operation| KernelRequest::Callback {
        provider: th.provider,
        registration: RegistrationId(th.registration as u32),
        signature: th.signature.clone(),
        op,
        env: th.env.clone(),
    };
    for th in &chunk.thunks {
        requests.push(callback(
            th,
            Operation::Thunk {
                symbol: th.symbol.clone(),
                variant: if args.lto {
                    Variant::RustLtoir
                } else {
                    Variant::RustPtx
                },
            },
        ));
        if args.bench {
            requests.push(callback(
                th,
                Operation::Thunk {
                    symbol: ptx_symbol(&th.symbol),
                    variant: Variant::RustPtx,
                },
            ));
        }
    }
    if i == 0 {
        if let (Some(expr), Some(th)) = (args.cpp_baseline, chunk.thunks.first()) {
            requests.push(callback(
                th,
                Operation::Cpp {
                    expr: expr.to_string(),
                },
            ));
        }
        if args.bench {
            requests.push(KernelRequest::Copy);
        }
    }
    let tu = emit_translation_unit(&requests).map_err(|e| e.to_string())?;
    let target = if args.lto {
        NvrtcTarget::Ltoir
    } else {
        NvrtcTarget::Ptx
    };
    let mut options = NvrtcOptions::new(arch, target);
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
    options.debug = args.debug;
    options.lineinfo = args.lineinfo && !args.debug;
    options.extra.extend(tu.nvrtc_options.iter().cloned());
    let (stem, cubin_name) = if count == 1 {
        ("provider".to_string(), "callbacks.cubin".to_string())
    } else {
        (format!("provider.{i}"), format!("callbacks.{i}.cubin"))
    };
    let provider_name = format!("{stem}.cu");
    let provider = crate::buildcache::fetch(
        args.cache,
        &mut t,
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
                nvrtc::compile(&provider_name, &tu.source, &options)
            })
            .map(|out| out.bytes)
            .map_err(|e| format!("compiling the provider: {e}"))
        },
    )?;
    let ext = if args.lto { "ltoir" } else { "ptx" };
    let plan_with = |thunks: LinkInput| -> Result<LinkPlan, String> {
        let mut plan = LinkPlan::new(arch);
        // In a child process: a crash in nvJitLink is an error, and the
        // errors it only prints (`Multiple definition`) fail the link.
        plan.isolation = args.isolation.clone();
        // nvJitLink `-g` is ptxas `--device-debug`, which ignores (and warns
        // about) `-lineinfo`: one or the other.
        plan.debug = args.debug;
        plan.lineinfo = args.lineinfo && !args.debug;
        plan = plan.with_input(input(&format!("{stem}.{ext}"), provider.clone())?);
        plan = plan.with_input(thunks);
        if let Some(ptx) = &chunk.ptx_object {
            plan = plan.with_input(input(&format!("thunks.{i}.ptx"), ptx.clone())?);
        }
        // The user's device libraries, in the order given; a `.cu` file is
        // compiled by NVRTC as the plan says (to LTOIR on the LTO route).
        plan.inputs.extend(device_inputs.iter().cloned());
        Ok(plan)
    };
    let plan = plan_with(input(&format!("thunks.{i}.{ext}"), chunk.object.clone())?)?;
    let link_options = plan.explain().map_err(|e| e.to_string())?.options();
    let cubin = crate::buildcache::fetch(
        args.cache,
        &mut t,
        "nvJitLink (cache hit)",
        "cubin",
        || {
            let joined = link_options.join("\0");
            let mut parts: Vec<(&str, &[u8])> = vec![("options", joined.as_bytes())];
            for i in &plan.inputs {
                parts.push(("input", i.name.as_bytes()));
                parts.push(("bytes", &i.bytes));
            }
            crate::buildcache::key("cubin", &parts)
        },
        |t| match (t.time("nvJitLink", || plan.link()), &chunk.debug_ptx) {
            (Ok(linked), _) => Ok(linked.bytes),
            // nvJitLink 13.0's `-g` link of LTOIR fails for some control
            // flow (docs/debug-info.md): the thunks then go in as PTX,
            // which links; the provider calls the callback rather than
            // inlining it. The same inputs always take the same path, so
            // the result is cached under the first plan's key.
            (Err(e), Some(ptx)) if args.lto && args.debug => {
                let text = e.to_string();
                let Some(why) = G_LINK_FAILURES.iter().find(|f| text.contains(*f)) else {
                    return Err(text);
                };
                eprintln!(
                    "warning: nvJitLink's `-g` link of chunk {i}'s LTOIR failed ({why}, \
                     docs/debug-info.md); its callbacks are linked as PTX, called rather than inlined"
                );
                let fallback = plan_with(input(&format!("thunks.{i}.ptx"), ptx.clone())?)?;
                t.time("nvJitLink (-g, PTX thunks)", || fallback.link())
                    .map(|linked| linked.bytes)
                    .map_err(|e| e.to_string())
            }
            (Err(e), _) => Err(e.to_string()),
        },
    )?;
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
    })
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
    args: &BuildArgs<'_>,
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
            let chunk = compile_chunk(thunks, text, codegen, args, debug_vars);
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
    args: &BuildArgs<'_>,
    debug_vars: &[CallbackDebug],
) -> Result<Chunk, String> {
    let mut t = Timings::default();
    let want_llvm = args.emit.contains(&Emit::Llvm);
    let want_nvvm = args.emit.contains(&Emit::Nvvm);
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
        args.lto,
        args.bench
    );
    let payload = crate::buildcache::fetch(
        // `--emit llvm|nvvm` wants IR, which only generation gives.
        args.cache.filter(|_| !want_llvm && !want_nvvm),
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
            let module = t
                .time("split", || ir::parse(&context, text))
                .map_err(|e| format!("internal error: a lowered chunk does not parse back: {e}"))?;
            if want_llvm {
                llvm = t
                    .time("LLVM IR + O3", || codegen::emit_llvm_ir(&module, codegen))
                    .map_err(|e| e.to_string())?;
            }
            let (object, ptx, text) =
                generate_chunk(thunks, &module, codegen, args, debug_vars, t)?;
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
    let (ptx_object, debug_ptx) = match args.bench {
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
fn generate_chunk(
    thunks: &[Thunk],
    module: &melior::ir::Module<'_>,
    codegen: &CodegenOptions,
    args: &BuildArgs<'_>,
    debug_vars: &[CallbackDebug],
    t: &mut Timings,
) -> Result<Generated, String> {
    let mut nvvm = String::new();
    let object = if args.lto {
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
    let ptx_object = if args.bench && args.lto {
        // The same thunks under other names, as PTX, for the PTX-route
        // kernels: renamed in the module, then generated again.
        for t in thunks {
            rename_function(module, &t.symbol, &ptx_symbol(&t.symbol))?;
        }
        let ptx = codegen::emit_ptx(module, codegen).map_err(|e| e.to_string())?;
        Some(ptx.into_bytes())
    } else if args.lto && args.debug {
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

/// Renames a top-level function of a lowered module (its `sym_name`).
fn rename_function(module: &melior::ir::Module<'_>, from: &str, to: &str) -> Result<(), String> {
    use melior::ir::attribute::StringAttribute;
    use melior::ir::block::BlockLike;
    use melior::ir::operation::{OperationLike, OperationMutLike};
    let context = module.context();
    let mut op = module.body().first_operation();
    while let Some(o) = op {
        let named = o
            .attribute("sym_name")
            .ok()
            .and_then(ir::string_attr)
            .is_some_and(|a| a == from);
        if named {
            // SAFETY: the module borrows its context, which outlives this call;
            // the op is a live top-level op of the module, renamed in place.
            let ctx = unsafe { context.to_ref() };
            let mut op_mut =
                unsafe { melior::ir::operation::OperationRefMut::from_raw(o.to_raw()) };
            op_mut.set_attribute("sym_name", StringAttribute::new(ctx, to).into());
            return Ok(());
        }
        op = o.next_in_block();
    }
    Err(format!(
        "internal error: no function `{from}` in the lowered module"
    ))
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
    Ok(Some(manifest::CallSite {
        file,
        line: span.lo_line,
        column,
        crate_name: crate_name.map(str::to_string),
        closure_suffix,
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
    doc: &PreparedMir,
    args: &BuildArgs<'_>,
    outcomes: &[Outcome],
    thunks: &[&Thunk],
    kernels: &[manifest::Kernel],
    fingerprint: &Fingerprint,
    device_inputs: &[LinkInput],
) -> Result<Bundle, String> {
    let max = args.max_size.unwrap_or(1 << 28);
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
        let reg = &doc.registrations[t.registration];
        let Some(caller) = doc.body(&reg.caller) else {
            left_out.push(format!(
                "registration #{}: its caller `{}` has no body",
                t.registration, reg.caller
            ));
            continue;
        };
        // A bundle holds one i32 per case: it checks i32 reduces; every
        // other provider and type is checked through `native::gpu`
        // (examples/gpu-providers).
        if t.provider != manifest::Provider::Reduce
            || t.signature != manifest::Signature::fold(manifest::Scalar::I32)
        {
            left_out.push(format!(
                "registration #{}: bundles check `i32` reduces, and this is a `{}` of `{}` \
                 (check it through `native::gpu`, as examples/gpu-providers does)",
                t.registration,
                t.provider.name(),
                t.signature
            ));
            continue;
        }
        let args_ = match hostref::bundle_arguments(doc, caller, 0x5EED + t.registration as u64) {
            Ok(a) => a,
            Err(why) => {
                left_out.push(format!("registration #{}: {why}", t.registration));
                continue;
            }
        };
        // Capture values: the caller's arguments of the same names (or
        // their fields, for a precise capture such as `pair.0`).
        let closure = match &reg.callback {
            PmirCallback::Closure { body } => doc.closure(body),
            _ => None,
        };
        let mut values = Vec::new();
        let mut missing = None;
        for cap in closure.map(|c| c.captures.as_slice()).unwrap_or(&[]) {
            match hostref::capture_value(&args_, &cap.name) {
                Some(value) => values.push(CaptureValue {
                    name: cap.name.clone(),
                    value,
                }),
                None => missing = Some(cap.name.clone()),
            }
        }
        if let Some(m) = missing {
            left_out.push(format!(
                "registration #{}: capture `{m}` is not an argument of `{}` (or a field of one)",
                t.registration, reg.caller
            ));
            continue;
        }
        let call_index = hostref::call_index(doc, t.registration);
        captures_of.insert(t.registration, values);
        jobs.push(HostJob {
            registration: t.registration,
            caller: reg.caller.clone(),
            call_index,
            arguments: args_,
            cases: cases.iter().map(|(s, _)| *s).collect(),
        });
    }
    // The benchmark rotates several inputs at the largest size (so L2 does not
    // flatter a variant); the host computes their expected results too.
    if args.bench {
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
    let results = hostref::run_jobs(args.file, oc, &jobs, device_inputs)?;
    // Indexed: thousands of registrations times their cases.
    let by_case: BTreeMap<(usize, InputSpec), &hostref::HostResult> = results
        .iter()
        .map(|r| ((r.registration, r.spec), r))
        .collect();
    let mut runs = Vec::new();
    for job in &jobs {
        let id = RegistrationId(job.registration as u32);
        for kernel in kernels.iter().filter(|k| k.registration == Some(id)) {
            let cases = cases
                .iter()
                .map(|(spec, offset)| {
                    let r = by_case
                        .get(&(job.registration, *spec))
                        .ok_or_else(|| {
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
    let _ = outcomes;
    let bench = args
        .bench
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

/// What `--bundle` needs, checked before anything is compiled.
fn check_bundle_args(args: &BuildArgs<'_>) -> Result<(), String> {
    if args.file.extension().is_none_or(|e| e != "rs") {
        return Err(format!(
            "{}: --bundle builds the host reference from the Rust source, so it needs the original `.rs` file, not this one",
            args.file.display()
        ));
    }
    if args.max_size == Some(0) {
        return Err("--max-size 0 leaves no case in the bundle: the smallest size is 1".into());
    }
    Ok(())
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

/// Writes `files` into a fresh folder beside `dir`, then puts it in place;
/// an existing `dir` is replaced only if it is an earlier build output.
fn write_dir(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    crate::output::replace_dir(dir, files)
}
