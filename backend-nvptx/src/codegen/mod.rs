//! Code generation for lowered callbacks: LLVM dialect → LLVM IR → PTX, or
//! → NVVM IR → LTOIR.
//!
//! ```text
//! LLVM-dialect module ─ mlirTranslateModuleToLLVMIR ─▶ LLVM IR (inkwell)
//!   ─ new pass manager, default<O3>, NVPTX target machine ─▶ optimised LLVM IR
//!       ├─ NVPTX TargetMachine (sm_NN, +ptxNN) ─▶ PTX                 (emit_ptx)
//!       └─ nvvm_ir emitter (LLVM 7 syntax before compute_100) ─▶ NVVM IR
//!             ─ libNVVM -arch=compute_NN -gen-lto ─▶ LTOIR              (compile_ltoir)
//! ```
//!
//! Unlike the rest of this crate, this module links LLVM (through inkwell)
//! and MLIR (through melior/mlir-sys): it is the only part of the backend
//! that does. Each call makes its own LLVM context, so calls may run on
//! many threads at once.
//!
//! With [`CodegenOptions::debug`], MLIR's
//! `ensure-debug-info-scope-on-llvm-func` gives every function a
//! `DISubprogram` built from its location, so the translated IR carries
//! debug locations from the Rust source (the first file location of every
//! op's fused location), and the PTX gets `.file`/`.loc` lines. The NVVM IR
//! emitter prints the same locations, subprograms and inlining chains as
//! LLVM 7-style metadata for libNVVM (`nvvm_ir`), so the LTOIR route keeps
//! the Rust lines through nvJitLink's inlining too.

pub mod host;
pub mod nvvm_ir;

use inkwell::{
    context::{AsContextRef, Context as LlvmContext},
    module::Module as LlvmModule,
    passes::PassBuilderOptions,
    targets::{
        CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
    },
    OptimizationLevel,
};
use melior::{
    ir::{
        operation::{OperationLike, WalkOrder, WalkResult},
        Module,
    },
    pass::PassManager,
    utility::parse_pass_pipeline,
};

use crate::{nvvm, Arch};

pub use nvvm_ir::{emit as emit_nvvm_ir_text, NvvmDialect, NvvmIrError};

/// The NVPTX target triple.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// Which debug information code generation writes, from the Rust source
/// locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DebugInfo {
    #[default]
    None,
    /// `-lineinfo`: line tables only; the code stays optimised (an NVVM IR
    /// compile unit of `emissionKind: DebugDirectivesOnly`, which ptxas
    /// reads as `-lineinfo`).
    LineTables,
    /// `-g`: full debug information (`emissionKind: FullDebug`: ptxas then
    /// compiles the whole linked kernel for the debugger, unoptimised).
    Full,
}

impl DebugInfo {
    /// Whether any debug information is written.
    pub fn any(self) -> bool {
        self != DebugInfo::None
    }
}

/// What `-g` tells the debugger about one callback: its thunk, the lowered
/// body whose lines a breakpoint stops on, and the Rust names of the body's
/// arguments and of the captures (with their offsets in the environment).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackDebug {
    pub thunk: String,
    /// The callback's Rust name (`entry::{closure#0}`), the frame's name.
    pub name: String,
    pub body: String,
    pub params: Vec<(String, frontend::ty::Scalar)>,
    pub captures: Vec<(String, frontend::ty::Scalar, u64)>,
}

/// How to generate code. A struct, not bool parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodegenOptions {
    /// The GPU (`--arch`, default `sm_90`).
    pub arch: Arch,
    /// `-g` / `-lineinfo`: debug information from the Rust source locations.
    pub debug: DebugInfo,
    /// LLVM optimisation level, 0 to 3 (`default<ON>`).
    pub opt_level: u8,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            arch: Arch::SM_90,
            debug: DebugInfo::None,
            opt_level: 3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    #[error("translating the LLVM dialect to LLVM IR failed: {0}")]
    Translate(String),
    #[error("the NVPTX target: {0}")]
    Target(String),
    #[error("LLVM's optimiser: {0}")]
    Optimize(String),
    #[error("the LLVM IR does not verify: {0}")]
    Verify(String),
    #[error("PTX emission: {0}")]
    Ptx(String),
    #[error("libdevice: {0}")]
    Libdevice(String),
    #[error(transparent)]
    NvvmIr(#[from] NvvmIrError),
    #[error(transparent)]
    Nvvm(#[from] nvvm::NvvmError),
}

/// The PTX ISA version to ask LLVM for: the lowest that supports `arch`
/// (and that CUDA 13's ptxas and nvJitLink accept).
pub fn ptx_feature(arch: Arch) -> &'static str {
    match arch.number {
        n if n >= 120 => "+ptx87",
        n if n >= 100 => "+ptx86",
        n if n >= 90 => "+ptx80",
        _ => "+ptx78",
    }
}

/// An NVPTX target machine for `options.arch`.
pub fn target_machine(options: &CodegenOptions) -> Result<TargetMachine, CodegenError> {
    Target::initialize_nvptx(&InitializationConfig::default());
    let triple = TargetTriple::create(TRIPLE);
    let target = Target::from_triple(&triple).map_err(|e| CodegenError::Target(e.to_string()))?;
    let level = match options.opt_level {
        0 => OptimizationLevel::None,
        1 => OptimizationLevel::Less,
        2 => OptimizationLevel::Default,
        _ => OptimizationLevel::Aggressive,
    };
    target
        .create_target_machine(
            &triple,
            &options.arch.sm(),
            ptx_feature(options.arch),
            level,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| {
            CodegenError::Target(format!(
                "LLVM has no NVPTX target machine for {}",
                options.arch.sm()
            ))
        })
}

/// Translates an LLVM-dialect module (as `passes::lower` leaves it) into an
/// LLVM module of `context`, with the NVPTX triple and data layout set. The
/// MLIR module is not changed (debug scopes are added to a copy).
pub fn to_llvm_ir<'ctx>(
    module: &Module<'_>,
    context: &'ctx LlvmContext,
    options: &CodegenOptions,
) -> Result<LlvmModule<'ctx>, CodegenError> {
    let op = module.as_operation();
    // SAFETY: the module borrows its context, which outlives this call.
    // The LLVM IR translations are registered by `ir::context()`.
    // The `ContextRef` must live in a local: `to_ref` borrows it, and a
    // temporary would leave a dangling reference (a crash in release builds).
    let context_ref = module.context();
    let mlir = unsafe { context_ref.to_ref() };
    let copy = melior::ir::Operation::clone(&op);
    let mut copy = Module::from_operation(copy)
        .ok_or_else(|| CodegenError::Translate("the operation is not a module".into()))?;
    let (result, diagnostics) = ir::diag::capture_diagnostics(mlir, || {
        if options.debug.any() {
            source_locations_only(&copy);
            passes::lower::upstream::register_passes_once();
            let pm = PassManager::new(mlir);
            let kind = match options.debug {
                DebugInfo::Full => "Full",
                _ => "DebugDirectivesOnly",
            };
            parse_pass_pipeline(
                pm.as_operation_pass_manager(),
                &format!(
                    "builtin.module(ensure-debug-info-scope-on-llvm-func{{emission-kind={kind}}})"
                ),
            )
            .map_err(|e| e.to_string())?;
            pm.run(&mut copy)
                .map_err(|_| "adding debug scopes failed".to_string())?;
        }
        // SAFETY: the copy is a valid module of LLVM-dialect ops; the LLVM
        // context outlives the returned module, which inkwell then owns.
        let raw = unsafe {
            mlir_sys::mlirTranslateModuleToLLVMIR(
                copy.as_operation().to_raw(),
                context.as_ctx_ref() as mlir_sys::LLVMContextRef,
            )
        };
        if raw.is_null() {
            Err("MLIR could not translate the module (is every op in the LLVM dialect?)".into())
        } else {
            Ok(raw)
        }
    });
    let raw = result.map_err(|e| {
        let notes: Vec<String> = diagnostics.iter().map(|d| d.to_string()).collect();
        CodegenError::Translate(if notes.is_empty() {
            e
        } else {
            format!("{e}\n  {}", notes.join("\n  "))
        })
    })?;
    // SAFETY: `raw` is a fresh module in `context`; inkwell takes ownership.
    let llvm = unsafe { LlvmModule::new(raw as llvm_sys::prelude::LLVMModuleRef) };
    let tm = target_machine(options)?;
    llvm.set_triple(&TargetTriple::create(TRIPLE));
    llvm.set_data_layout(&tm.get_target_data().get_data_layout());
    llvm.verify()
        .map_err(|e| CodegenError::Verify(e.to_string()))?;
    Ok(llvm)
}

/// Keeps only the Rust source part of every op's location. MLIR translates
/// a fused location by merging its parts into one `DILocation`; a source
/// range and a MIR line in another file merge to line 0.
fn source_locations_only(module: &Module<'_>) {
    // SAFETY: the module borrows its context, which outlives this call.
    let context_ref = module.context();
    let context = unsafe { context_ref.to_ref() };
    module.as_operation().walk(WalkOrder::PreOrder, |op| {
        let mut loc = ir::Loc::decode(op.location());
        if loc.source.is_some() && loc.mir.is_some() {
            loc.mir = None;
            // SAFETY: `op` is a live op of the module copy we own.
            unsafe { mlir_sys::mlirOperationSetLocation(op.to_raw(), loc.build(context).to_raw()) };
        }
        WalkResult::Advance
    });
}

/// Runs LLVM's `default<ON>` pipeline for the NVPTX target.
pub fn optimize(module: &LlvmModule<'_>, options: &CodegenOptions) -> Result<(), CodegenError> {
    let tm = target_machine(options)?;
    let pipeline = format!("default<O{}>", options.opt_level.min(3));
    module
        .run_passes(&pipeline, &tm, PassBuilderOptions::create())
        .map_err(|e| CodegenError::Optimize(e.to_string()))?;
    module
        .verify()
        .map_err(|e| CodegenError::Verify(e.to_string()))
}

/// Translates and optimises; the LLVM IR both routes start from.
pub fn optimized_llvm_ir<'ctx>(
    module: &Module<'_>,
    context: &'ctx LlvmContext,
    options: &CodegenOptions,
) -> Result<LlvmModule<'ctx>, CodegenError> {
    let llvm = to_llvm_ir(module, context, options)?;
    optimize(&llvm, options)?;
    Ok(llvm)
}

/// The optimised LLVM IR as LLVM prints it (`--emit llvm`).
pub fn emit_llvm_ir(module: &Module<'_>, options: &CodegenOptions) -> Result<String, CodegenError> {
    let context = LlvmContext::create();
    let llvm = optimized_llvm_ir(module, &context, options)?;
    Ok(llvm.print_to_string().to_string())
}

/// Links libdevice into `llvm` when it declares one of its functions
/// (`__nv_expf`): the PTX route has no libNVVM to add it. The linked
/// functions become internal, so the optimiser inlines the ones called and
/// drops the rest; the NVPTX target's pipeline runs `NVVMReflect`, which
/// folds libdevice's `__nvvm_reflect` queries (no flush to zero: the
/// module sets no `nvvm-reflect-ftz`).
pub fn link_libdevice<'ctx>(
    llvm: &LlvmModule<'ctx>,
    context: &'ctx LlvmContext,
) -> Result<(), CodegenError> {
    let called = llvm
        .get_functions()
        .any(|f| f.count_basic_blocks() == 0 && f.get_name().to_bytes().starts_with(b"__nv_"));
    if !called {
        return Ok(());
    }
    let path = crate::nvidia::libdevice_path().map_err(CodegenError::Libdevice)?;
    let lib = LlvmModule::parse_bitcode_from_path(&path, context)
        .map_err(|e| CodegenError::Libdevice(format!("cannot read {}: {e}", path.display())))?;
    lib.set_triple(&llvm.get_triple());
    lib.set_data_layout(&llvm.get_data_layout());
    let ours: Vec<String> = llvm
        .get_functions()
        .filter(|f| f.count_basic_blocks() > 0)
        .map(|f| f.get_name().to_string_lossy().into_owned())
        .collect();
    llvm.link_in_module(lib)
        .map_err(|e| CodegenError::Libdevice(format!("linking {}: {e}", path.display())))?;
    for f in llvm.get_functions() {
        let name = f.get_name().to_string_lossy().into_owned();
        if f.count_basic_blocks() > 0 && !ours.contains(&name) {
            f.set_linkage(inkwell::module::Linkage::Internal);
        }
    }
    Ok(())
}

/// PTX for `options.arch` (the PTX route).
pub fn emit_ptx(module: &Module<'_>, options: &CodegenOptions) -> Result<String, CodegenError> {
    let context = LlvmContext::create();
    let llvm = to_llvm_ir(module, &context, options)?;
    link_libdevice(&llvm, &context)?;
    optimize(&llvm, options)?;
    let tm = target_machine(options)?;
    let buffer = tm
        .write_to_memory_buffer(&llvm, FileType::Assembly)
        .map_err(|e| CodegenError::Ptx(e.to_string()))?;
    String::from_utf8(buffer.as_slice().to_vec())
        .map_err(|_| CodegenError::Ptx("LLVM wrote PTX that is not UTF-8".into()))
}

/// The dialect of NVVM IR that libNVVM accepts for `arch`: LLVM 7.0.1
/// syntax before Blackwell (`compute_100`), modern syntax from it on.
pub fn nvvm_dialect(arch: Arch) -> NvvmDialect {
    if arch.number >= 100 {
        NvvmDialect::Modern
    } else {
        NvvmDialect::Llvm7
    }
}

/// NVVM IR for libNVVM (the LTOIR route's input).
pub fn emit_nvvm_ir(module: &Module<'_>, options: &CodegenOptions) -> Result<String, CodegenError> {
    emit_nvvm_ir_with(module, options, &[])
}

/// [`emit_nvvm_ir`], and with full debug information (`-g`) the callbacks'
/// arguments and captures as variables the debugger can print.
pub fn emit_nvvm_ir_with(
    module: &Module<'_>,
    options: &CodegenOptions,
    callbacks: &[CallbackDebug],
) -> Result<String, CodegenError> {
    let context = LlvmContext::create();
    let llvm = optimized_llvm_ir(module, &context, options)?;
    Ok(nvvm_ir::emit_with(
        &llvm,
        nvvm_dialect(options.arch),
        options.debug,
        callbacks,
    )?)
}

/// LTOIR: the NVVM IR compiled by libNVVM with `-arch=compute_NN -gen-lto`.
pub fn compile_ltoir(
    module: &Module<'_>,
    options: &CodegenOptions,
) -> Result<Vec<u8>, CodegenError> {
    let text = emit_nvvm_ir(module, options)?;
    // The emitter's compile unit decides what libNVVM keeps (its
    // `emissionKind`); libNVVM's own `-g` changes nothing.
    let out = nvvm::compile_to_ltoir("callbacks.ll", text.as_bytes(), options.arch, false)?;
    Ok(out.bytes)
}
