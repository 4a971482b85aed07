//! A lowered callback run on the host: the LLVM IR the GPU gets, compiled
//! for this CPU by LLVM's JIT, in process.
//!
//! The operator contract lint (`compiler::contract`) calls callbacks
//! hundreds of thousands of times over edge and random values; running the
//! code our lowering produced (not the user's source rebuilt by rustc) makes
//! that cheap and checks the lowering too. Three changes make device code
//! safe to run here, none of which changes a value the callback computes:
//!
//! - every function the thunk calls is inlined into it (`alwaysinline`),
//!   so that a panic anywhere leaves the thunk itself;
//! - a panic (`llvm.trap`, then `unreachable`) sets a flag and returns
//!   instead of stopping the process: the call reports it, and its result
//!   is not read;
//! - libdevice's functions (`__nv_sinf`) are the host's `libm`.
//!
//! Each thunk is called through a wrapper of one shape, whatever its types:
//! `u8 rmir_host_call(const void *env, const u8 *args, u8 *out)` reads
//! parameter `i` from `args[16 i..]`, writes the result to `out` (a `bool`
//! as one byte) and returns whether the callback panicked.

use std::collections::BTreeMap;

use inkwell::{
    attributes::{Attribute, AttributeLoc},
    context::Context as LlvmContext,
    execution_engine::ExecutionEngine,
    module::{Linkage, Module as LlvmModule},
    passes::PassBuilderOptions,
    targets::{CodeModel, InitializationConfig, RelocMode, Target, TargetMachine},
    types::BasicTypeEnum,
    values::{BasicValue, CallSiteValue, FunctionValue, InstructionOpcode},
    AddressSpace, OptimizationLevel,
};

use super::{to_llvm_ir, CodegenError, CodegenOptions};

/// The bytes each parameter and the result take in the wrapper's buffers.
pub const SLOT: usize = 16;

/// A compiled callback: call it while the [`with_host_code`] closure runs.
#[derive(Clone, Copy)]
pub struct HostFn {
    call: extern "C" fn(*const u8, *const u8, *mut u8) -> u8,
    params: usize,
}

impl HostFn {
    /// Calls the callback with the environment `env` and the parameters in
    /// `args` (one [`SLOT`] each, little-endian scalars); its result is
    /// written to `out`. `None` when the callback panicked.
    pub fn call(&self, env: &[u8], args: &[[u8; SLOT]], out: &mut [u8; SLOT]) -> Option<()> {
        assert_eq!(args.len(), self.params, "a host call's parameter count");
        // SAFETY: the wrapper reads `params` slots from `args`, the
        // environment's bytes the thunk's layout names (the caller passes
        // the environment of the layout the callback was lowered with), and
        // writes at most one slot to `out`; the engine is alive while the
        // closure of `with_host_code` runs, and a `HostFn` does not leave it.
        let trapped = (self.call)(env.as_ptr(), args.as_ptr().cast(), out.as_mut_ptr());
        (trapped == 0).then_some(())
    }
}

/// Why a callback cannot run on the host.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    #[error("it calls `{0}`, which has no host code")]
    Unresolved(String),
    /// The device libraries' host build failed or cannot exist.
    #[error("{0}")]
    NoHostCode(String),
    #[error("the host's LLVM JIT: {0}")]
    Jit(String),
    #[error("`{0}` is not a function of the module")]
    Missing(String),
}

/// Compiles `thunk` of the LLVM-dialect `module` for the host and gives
/// `f` a function that calls it. A function the module declares but does
/// not define is libdevice's (the host's `libm`), else `resolve` gives its
/// address (a device library's host build), else the callback cannot run
/// (and `resolve`'s error, when it has one, says why).
pub fn with_host_code<R>(
    module: &melior::ir::Module<'_>,
    thunk: &str,
    resolve: &dyn Fn(&str) -> Result<Option<usize>, String>,
    f: impl FnOnce(HostFn) -> R,
) -> Result<R, HostError> {
    let context = LlvmContext::create();
    let llvm = to_llvm_ir(module, &context, &CodegenOptions::default())?;
    let tm = host_machine()?;
    llvm.set_triple(&TargetMachine::get_default_triple());
    llvm.set_data_layout(&tm.get_target_data().get_data_layout());
    let target = llvm
        .get_function(thunk)
        .ok_or_else(|| HostError::Missing(thunk.to_string()))?;
    inline_into(target, &context, &llvm, &tm)?;
    let flag = llvm.add_global(context.i8_type(), None, "rmir_host_panicked");
    flag.set_initializer(&context.i8_type().const_zero());
    flag.set_linkage(Linkage::Internal);
    for function in llvm.get_functions() {
        if function.count_basic_blocks() > 0 {
            returns_on_panic(&context, function, flag.as_pointer_value())?;
        }
    }
    let params = target.count_params() as usize - 1;
    wrapper(&context, &llvm, target, flag.as_pointer_value())?;
    llvm.verify()
        .map_err(|e| CodegenError::Verify(e.to_string()))?;
    // Every declaration must resolve before the engine compiles: MCJIT stops
    // the process on a symbol it cannot find.
    let mut mapped = Vec::new();
    for function in llvm.get_functions() {
        let name = function.get_name().to_string_lossy().into_owned();
        if function.count_basic_blocks() > 0 || name.starts_with("llvm.") {
            continue;
        }
        let address = match libm().get(name.as_str()) {
            Some(&a) => a,
            None => resolve(&name)
                .map_err(HostError::NoHostCode)?
                .ok_or_else(|| HostError::Unresolved(name.clone()))?,
        };
        mapped.push((function, address));
    }
    let engine: ExecutionEngine<'_> = llvm
        .create_jit_execution_engine(OptimizationLevel::Default)
        .map_err(|e| HostError::Jit(e.to_string()))?;
    for (function, address) in &mapped {
        engine.add_global_mapping(function, *address);
    }
    let address = engine
        .get_function_address(WRAPPER)
        .map_err(|e| HostError::Jit(e.to_string()))?;
    // SAFETY: `WRAPPER` was built above with exactly this signature.
    let call = unsafe {
        std::mem::transmute::<usize, extern "C" fn(*const u8, *const u8, *mut u8) -> u8>(address)
    };
    let result = f(HostFn { call, params });
    drop(engine);
    Ok(result)
}

const WRAPPER: &str = "rmir_host_call";

fn host_machine() -> Result<TargetMachine, HostError> {
    Target::initialize_native(&InitializationConfig::default()).map_err(HostError::Jit)?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| HostError::Jit(e.to_string()))?;
    target
        .create_target_machine(
            &triple,
            "",
            "",
            OptimizationLevel::Default,
            RelocMode::Default,
            CodeModel::JITDefault,
        )
        .ok_or_else(|| HostError::Jit(format!("no target machine for {triple}")))
}

/// Marks every defined function but `thunk` `alwaysinline` and runs
/// LLVM's always-inliner: a panic in a helper then sits in the thunk, where
/// [`returns_on_panic`] makes it leave the call. (A recursive helper stays
/// a call; its panic returns from it, and the flag still reports the call
/// as panicked.)
fn inline_into<'c>(
    thunk: FunctionValue<'c>,
    context: &'c LlvmContext,
    llvm: &LlvmModule<'c>,
    tm: &TargetMachine,
) -> Result<(), HostError> {
    let always = Attribute::get_named_enum_kind_id("alwaysinline");
    let never = Attribute::get_named_enum_kind_id("noinline");
    for function in llvm.get_functions() {
        if function.count_basic_blocks() == 0 || function == thunk {
            continue;
        }
        function.remove_enum_attribute(AttributeLoc::Function, never);
        function.add_attribute(
            AttributeLoc::Function,
            context.create_enum_attribute(always, 0),
        );
    }
    llvm.run_passes("always-inline", tm, PassBuilderOptions::create())
        .map_err(|e| CodegenError::Optimize(e.to_string()).into())
}

/// Replaces every `unreachable` of `function` (a panic's `llvm.trap` is
/// followed by one) by setting `flag` and returning a zero value, and
/// drops the traps.
fn returns_on_panic<'c>(
    context: &'c LlvmContext,
    function: FunctionValue<'c>,
    flag: inkwell::values::PointerValue<'c>,
) -> Result<(), HostError> {
    let builder = context.create_builder();
    let ret = function.get_type().get_return_type();
    let jit = |e: inkwell::builder::BuilderError| HostError::Jit(e.to_string());
    for block in function.get_basic_block_iter() {
        let mut next = block.get_first_instruction();
        while let Some(inst) = next {
            next = inst.get_next_instruction();
            match inst.get_opcode() {
                InstructionOpcode::Call if is_trap(inst) => inst.erase_from_basic_block(),
                InstructionOpcode::Unreachable => {
                    builder.position_before(&inst);
                    builder
                        .build_store(flag, context.i8_type().const_int(1, false))
                        .map_err(jit)?;
                    match ret {
                        None => builder.build_return(None),
                        Some(t) => builder.build_return(Some(&zero(t))),
                    }
                    .map_err(jit)?;
                    inst.erase_from_basic_block();
                }
                _ => {}
            }
        }
    }
    Ok(())
}

fn is_trap(inst: inkwell::values::InstructionValue<'_>) -> bool {
    CallSiteValue::try_from(inst)
        .ok()
        .and_then(CallSiteValue::get_called_fn_value)
        .is_some_and(|f| {
            matches!(
                f.get_name().to_bytes(),
                b"llvm.trap" | b"llvm.ubsantrap" | b"llvm.debugtrap"
            )
        })
}

fn zero(t: BasicTypeEnum<'_>) -> inkwell::values::BasicValueEnum<'_> {
    match t {
        BasicTypeEnum::IntType(t) => t.const_zero().into(),
        BasicTypeEnum::FloatType(t) => t.const_zero().into(),
        BasicTypeEnum::PointerType(t) => t.const_zero().into(),
        BasicTypeEnum::StructType(t) => t.const_zero().into(),
        BasicTypeEnum::ArrayType(t) => t.const_zero().into(),
        BasicTypeEnum::VectorType(t) => t.const_zero().into(),
        BasicTypeEnum::ScalableVectorType(t) => t.const_zero().into(),
    }
}

/// `u8 rmir_host_call(const void *env, const u8 *args, u8 *out)`.
fn wrapper<'c>(
    context: &'c LlvmContext,
    llvm: &LlvmModule<'c>,
    thunk: FunctionValue<'c>,
    flag: inkwell::values::PointerValue<'c>,
) -> Result<(), HostError> {
    let jit = |e: inkwell::builder::BuilderError| HostError::Jit(e.to_string());
    let ptr = context.ptr_type(AddressSpace::default());
    let i8t = context.i8_type();
    let ty = i8t.fn_type(&[ptr.into(), ptr.into(), ptr.into()], false);
    let function = llvm.add_function(WRAPPER, ty, None);
    let b = context.create_builder();
    b.position_at_end(context.append_basic_block(function, "entry"));
    let env = function.get_nth_param(0).unwrap().into_pointer_value();
    let args = function.get_nth_param(1).unwrap().into_pointer_value();
    let out = function.get_nth_param(2).unwrap().into_pointer_value();
    let mut operands = vec![env.into()];
    for (i, p) in thunk.get_param_iter().skip(1).enumerate() {
        // SAFETY: an in-bounds offset into the caller's slots.
        let at = unsafe {
            b.build_gep(
                i8t,
                args,
                &[context.i64_type().const_int((i * SLOT) as u64, false)],
                "",
            )
        }
        .map_err(jit)?;
        let v = b.build_load(p.get_type(), at, "").map_err(jit)?;
        v.as_instruction_value()
            .map(|l| l.set_alignment(1))
            .transpose()
            .map_err(|e| HostError::Jit(e.to_string()))?;
        operands.push(v.into());
    }
    b.build_store(flag, i8t.const_zero()).map_err(jit)?;
    let r = b.build_call(thunk, &operands, "").map_err(jit)?;
    if let Some(v) = r.try_as_basic_value().basic() {
        let v = match v {
            inkwell::values::BasicValueEnum::IntValue(i) if i.get_type().get_bit_width() == 1 => {
                b.build_int_z_extend(i, i8t, "").map_err(jit)?.into()
            }
            v => v,
        };
        let st = b.build_store(out, v).map_err(jit)?;
        st.set_alignment(1)
            .map_err(|e| HostError::Jit(e.to_string()))?;
    }
    let panicked = b.build_load(i8t, flag, "").map_err(jit)?;
    b.build_return(Some(&panicked)).map_err(jit)?;
    Ok(())
}

macro_rules! unary {
    ($($name:ident: $t:ident . $m:ident),* $(,)?) => {
        $(extern "C" fn $name(x: $t) -> $t { x.$m() })*
    };
}
macro_rules! binary {
    ($($name:ident: $t:ident . $m:ident),* $(,)?) => {
        $(extern "C" fn $name(x: $t, y: $t) -> $t { x.$m(y) })*
    };
}
unary!(
    expf: f32.exp, exp2f: f32.exp2, expm1f: f32.exp_m1, logf: f32.ln, log1pf: f32.ln_1p,
    log2f: f32.log2, log10f: f32.log10, cbrtf: f32.cbrt, sinf: f32.sin, cosf: f32.cos,
    tanf: f32.tan, asinf: f32.asin, acosf: f32.acos, atanf: f32.atan, sinhf: f32.sinh,
    coshf: f32.cosh, tanhf: f32.tanh, asinhf: f32.asinh, acoshf: f32.acosh, atanhf: f32.atanh,
    exp: f64.exp, exp2: f64.exp2, expm1: f64.exp_m1, log: f64.ln, log1p: f64.ln_1p,
    log2: f64.log2, log10: f64.log10, cbrt: f64.cbrt, sin: f64.sin, cos: f64.cos,
    tan: f64.tan, asin: f64.asin, acos: f64.acos, atan: f64.atan, sinh: f64.sinh,
    cosh: f64.cosh, tanh: f64.tanh, asinh: f64.asinh, acosh: f64.acosh, atanh: f64.atanh,
);
binary!(
    powf: f32.powf, atan2f: f32.atan2, hypotf: f32.hypot,
    pow: f64.powf, atan2: f64.atan2, hypot: f64.hypot,
);
extern "C" fn powif(x: f32, n: i32) -> f32 {
    x.powi(n)
}
extern "C" fn powi(x: f64, n: i32) -> f64 {
    x.powi(n)
}

/// libdevice's functions the lowering calls, by their host counterparts.
fn libm() -> &'static BTreeMap<&'static str, usize> {
    static TABLE: std::sync::OnceLock<BTreeMap<&'static str, usize>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        macro_rules! table {
            ($($f:ident),* $(,)?) => {
                BTreeMap::from([$((concat!("__nv_", stringify!($f)), $f as *const () as usize)),*])
            };
        }
        table!(
            expf, exp2f, expm1f, logf, log1pf, log2f, log10f, cbrtf, sinf, cosf, tanf, asinf,
            acosf, atanf, sinhf, coshf, tanhf, asinhf, acoshf, atanhf, exp, exp2, expm1, log,
            log1p, log2, log10, cbrt, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh, asinh,
            acosh, atanh, powf, atan2f, hypotf, pow, atan2, hypot, powif, powi,
        )
    })
}
