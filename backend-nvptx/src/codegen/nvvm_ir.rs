//! An NVVM IR emitter: prints an (optimised) LLVM module in the IR dialect
//! libNVVM accepts.
//!
//! libNVVM 13 parses only LLVM 7.0.1-style IR for targets before Blackwell
//! (`compute_90` and older): typed pointers, no `ptr`, no `poison`, no
//! `freeze`/`fneg`, none of the newer flags and attributes, and none of the
//! intrinsics added after LLVM 7. LLVM 22 cannot print that, so this module
//! walks the module (functions, blocks, instructions, read through inkwell
//! and the LLVM C API) and prints each instruction itself:
//!
//! - every pointer value is `i8*` (`i8 addrspace(N)*`); a typed use
//!   (`load`, `store`, `getelementptr`, `alloca`) gets `bitcast`s to and from
//!   `T*` around it;
//! - flags LLVM 7 lacks (`samesign`, `disjoint`, `nneg`, `nuw`/`nsw` on
//!   `trunc`, GEP `nuw`/`nusw`) and every attribute are dropped; `nuw`,
//!   `nsw`, `exact`, `inbounds` and fast-math flags are kept;
//! - `poison` → `undef`; `freeze x` → an inline-asm `mov` of `x` (LLVM 7
//!   has poison but no `freeze`; see `freeze_llvm7`); `fneg x` → `fsub -0.0, x`;
//! - intrinsics newer than LLVM 7 are expanded: `smax/smin/umax/umin` and
//!   `abs` → `icmp` + `select`; `scmp/ucmp` → two `icmp`s, `zext`, `select`;
//!   `fshl/fshr` → shifts and `or`;
//!   `{s,u}{add,sub}.sat` and `fpto{s,u}i.sat` → LLVM 7 overflow intrinsics,
//!   compares and selects; hints (`lifetime.*`, `assume`,
//!   `experimental.noalias.scope.decl`) are dropped; the rest of a fixed
//!   list that libNVVM accepts (`trap`, `ctpop`, `ctlz`, `cttz`, `bswap`,
//!   `bitreverse`, `sqrt`, `floor`, `ceil`, `fma`, `fmuladd`, `copysign`,
//!   `minnum`, `maxnum`) is called as is; `fabs`, `trunc` and `roundeven`
//!   (which libNVVM rejects) become `llvm.nvvm.{fabs,trunc,round}.{f,d}`
//!   (NVVM's `round` is half to even); `round` (half away from zero) is
//!   libdevice's `roundf`: a half of the operand's sign added rounding
//!   toward zero, then truncated; `is.fpclass` is tested on the bits; the
//!   `*.with.overflow` family is kept for i16/i32/i64 and computed exactly
//!   in i32 for narrower integers (libNVVM takes only those three widths).
//!
//! From `compute_100` on, libNVVM takes modern IR: the same walk prints
//! `ptr`, keeps `poison`, `freeze`, `fneg` and every intrinsic, and still
//! drops attributes and post-LLVM-20 flags.
//!
//! With debug information ([`DebugInfo`]), every instruction's location,
//! every function's and inlined function's `DISubprogram` and the inlining
//! chains (`inlinedAt:`) of the LLVM module are printed as metadata in the
//! form libNVVM 13 accepts (measured, docs/debug-info.md): LLVM 7 fields
//! (`isLocal:`/`isDefinition:`, no `spFlags:`) before `compute_100`, a
//! `DISubroutineType` on every subprogram (libNVVM crashes without one), the
//! `"Debug Info Version"` 3 module flag with behaviour 1 (NVRTC's: another
//! behaviour fails the LTO link), `!nvvmir.version` with its debug version
//! (3.2), and `nameTableKind: None` on the compile unit from `compute_100`
//! on. The unit's `emissionKind` is `FullDebug` for `-g` and
//! `DebugDirectivesOnly` for `-lineinfo`: libNVVM's own `-g` changes nothing.
//!
//! Every opcode is matched; an instruction, type, constant or intrinsic this
//! emitter has no form for is an [`NvvmIrError`] naming it, never a guess.
//! The module gets NVVM's data layout and triple and the `!nvvmir.version`
//! metadata libNVVM requires.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use inkwell::{
    basic_block::BasicBlock,
    module::Module,
    values::{AsValueRef, FunctionValue},
};
use llvm_sys::{
    core::*,
    debuginfo::*,
    prelude::{LLVMBasicBlockRef, LLVMContextRef, LLVMMetadataRef, LLVMTypeRef, LLVMValueRef},
    LLVMIntPredicate, LLVMLinkage, LLVMOpcode, LLVMRealPredicate, LLVMTypeKind,
};

use super::DebugInfo;

/// Which IR syntax libNVVM expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NvvmDialect {
    /// LLVM 7.0.1 (libNVVM 13 for `compute_90` and older).
    Llvm7,
    /// Opaque pointers and current syntax (libNVVM 13 for `compute_100`+).
    Modern,
}

/// NVVM's data layout for 64-bit targets (the NVVM IR specification's).
pub const NVVM_DATALAYOUT: &str = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64";

/// The NVVM IR version this emitter writes (`!nvvmir.version`).
pub const NVVM_IR_VERSION: (u32, u32) = (2, 0);

/// The NVVM debug metadata version, the second pair of `!nvvmir.version`
/// when the module has debug information (libNVVM 13 takes 3.0 to 3.2).
pub const NVVM_DEBUG_VERSION: (u32, u32) = (3, 2);

/// Something in the module the emitter has no NVVM IR form for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("NVVM IR emitter, in `@{function}`: {message}")]
pub struct NvvmIrError {
    pub function: String,
    pub message: String,
}

/// Prints `module` as NVVM IR in `dialect`, with the module's debug
/// locations as `debug` asks (none: no metadata at all).
pub fn emit(
    module: &Module<'_>,
    dialect: NvvmDialect,
    debug: DebugInfo,
) -> Result<String, NvvmIrError> {
    emit_with(module, dialect, debug, &[])
}

/// [`emit`], and with [`DebugInfo::Full`] each of `callbacks`' arguments and
/// captures as a `DILocalVariable` of the callback body's subprogram, given
/// its value by `llvm.dbg.value` at the thunk's entry (a capture: a load
/// from the environment, which the optimiser merges with the body's own
/// load; one the body never reads is "optimised out").
pub fn emit_with(
    module: &Module<'_>,
    dialect: NvvmDialect,
    debug: DebugInfo,
    callbacks: &[super::CallbackDebug],
) -> Result<String, NvvmIrError> {
    let mut e = Emitter {
        dialect,
        debug,
        callbacks: callbacks.to_vec(),
        // SAFETY: the module is live.
        context: unsafe { LLVMGetModuleContext(module.as_mut_ptr()) },
        di: Di::default(),
        out: String::new(),
        decls: BTreeMap::new(),
        names: HashMap::new(),
        blocks: HashMap::new(),
        function: String::new(),
        tmp: 0,
        globals: HashMap::new(),
    };
    e.out
        .push_str("; NVVM IR written by backend_nvptx::codegen::nvvm_ir\n");
    let _ = writeln!(e.out, "target datalayout = \"{NVVM_DATALAYOUT}\"");
    e.out.push_str("target triple = \"nvptx64-nvidia-cuda\"\n");
    // SAFETY: the module is live; globals are walked with LLVM's iterators.
    unsafe {
        let mut g = LLVMGetFirstGlobal(module.as_mut_ptr());
        while !g.is_null() {
            e.constant_global(g)?;
            g = LLVMGetNextGlobal(g);
        }
    }
    for f in module.get_functions() {
        let name = value_name(f.as_value_ref());
        if name.starts_with("llvm.") {
            continue;
        }
        e.function = name;
        e.function_def(f)?;
    }
    for d in e.decls.values() {
        let _ = write!(e.out, "\n{d}\n");
    }
    let (major, minor) = NVVM_IR_VERSION;
    if e.di.nodes.is_empty() {
        let _ = write!(
            e.out,
            "\n!nvvmir.version = !{{!0}}\n!0 = !{{i32 {major}, i32 {minor}}}\n"
        );
    } else {
        let (dmajor, dminor) = NVVM_DEBUG_VERSION;
        let _ = write!(
            e.out,
            "\n!nvvmir.version = !{{!0}}\n!0 = !{{i32 {major}, i32 {minor}, i32 {dmajor}, i32 {dminor}}}\n"
        );
        e.finish_debug_info();
    }
    Ok(e.out)
}

fn value_name(v: LLVMValueRef) -> String {
    let mut len = 0usize;
    // SAFETY: `v` is a live value; LLVM returns a pointer to `len` bytes.
    unsafe {
        let p = LLVMGetValueName2(v, &mut len);
        if p.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(p.cast::<u8>(), len)).into_owned()
    }
}

/// `@name`, quoted when LLVM's grammar needs it.
/// The width of a scalar in bits (`isize`/`usize`: 64, as on NVPTX64).
fn scalar_bits(s: frontend::ty::Scalar) -> u32 {
    use frontend::ty::Scalar::*;
    match s {
        Bool | I8 | U8 => 8,
        I16 | U16 | F16 => 16,
        Char | I32 | U32 | F32 => 32,
        I64 | U64 | Isize | Usize | F64 => 64,
        I128 | U128 | F128 => 128,
    }
}

/// The LLVM type of a scalar as it sits in memory, and its alignment.
fn scalar_llvm(s: frontend::ty::Scalar) -> (&'static str, u32) {
    use frontend::ty::Scalar::*;
    match s {
        Bool | I8 | U8 => ("i8", 1),
        I16 | U16 => ("i16", 2),
        F16 => ("half", 2),
        Char | I32 | U32 => ("i32", 4),
        F32 => ("float", 4),
        I64 | U64 | Isize | Usize => ("i64", 8),
        F64 => ("double", 8),
        I128 | U128 => ("i128", 16),
        F128 => ("fp128", 16),
    }
}

/// A metadata string literal (`"…"`, with `"`, `\\` and controls escaped
/// as `\XX`).
fn md_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
            let _ = write!(out, "\\{b:02X}");
        } else {
            out.push(b as char);
        }
    }
    out.push('"');
    out
}

/// The value of `FIELD: "…"` in LLVM's text of a node.
fn field(printed: &str, name: &str) -> Option<String> {
    // ` name: "` or, first in the node, `(name: "`: keys of one length.
    let key = format!(" {name}: \"");
    let at = printed
        .find(&key)
        .or_else(|| printed.find(&format!("({name}: \"")))?
        + key.len();
    let rest = &printed[at..];
    Some(rest[..rest.find('"')?].to_string())
}

/// The Rust name of a lowered function's symbol: `rmir_fn1_keep_smaller` →
/// `keep_smaller`, `rmir_cb0_entry_closure_0` stays (a closure has no
/// name of its own).
fn rust_name(symbol: &str) -> &str {
    if let Some(rest) = symbol.strip_prefix("rmir_fn") {
        if let Some((n, name)) = rest.split_once('_') {
            if n.chars().all(|c| c.is_ascii_digit()) && !name.is_empty() {
                return name;
            }
        }
    }
    symbol
}

fn global(name: &str) -> String {
    let plain = !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '$' | '.' | '_'));
    if plain {
        format!("@{name}")
    } else {
        format!("@\"{}\"", name.replace('"', "\\22"))
    }
}

struct Emitter {
    dialect: NvvmDialect,
    debug: DebugInfo,
    callbacks: Vec<super::CallbackDebug>,
    context: LLVMContextRef,
    di: Di,
    out: String,
    /// Declarations by callee name.
    decls: BTreeMap<String, String>,
    names: HashMap<LLVMValueRef, String>,
    blocks: HashMap<LLVMBasicBlockRef, String>,
    function: String,
    tmp: usize,
    /// Constant globals (`switch.table.*` lookup tables from O3), by their
    /// value: the expression that uses them as a generic `i8*`/`ptr`.
    globals: HashMap<LLVMValueRef, String>,
}

/// Debug metadata collected while functions are printed; printed after
/// them. Node `i` of `nodes` is `!{i + 1}` (`!0` is `!nvvmir.version`).
#[derive(Default)]
struct Di {
    nodes: Vec<String>,
    /// Subprograms and locations already numbered.
    by_ref: HashMap<LLVMMetadataRef, usize>,
    files: HashMap<(String, String), usize>,
    /// The compile unit, filled in last (it names the first file).
    cu: Option<usize>,
    first_file: Option<usize>,
    /// A callback body's subprogram → its thunk's: the body is shown as the
    /// thunk (one frame, named after the closure), see `callback_variables`.
    collapse: HashMap<LLVMMetadataRef, LLVMMetadataRef>,
    /// Subprogram names given by the callbacks (`entry::{closure#0}`).
    names: HashMap<LLVMMetadataRef, String>,
    subroutine_type: Option<usize>,
}

type Res<T> = Result<T, NvvmIrError>;

impl Emitter {
    fn err<T>(&self, message: impl Into<String>) -> Res<T> {
        Err(NvvmIrError {
            function: self.function.clone(),
            message: message.into(),
        })
    }

    fn llvm7(&self) -> bool {
        self.dialect == NvvmDialect::Llvm7
    }

    // ----- types -----

    fn ty(&self, t: LLVMTypeRef) -> Res<String> {
        // SAFETY: `t` is a live type of the module.
        unsafe {
            Ok(match LLVMGetTypeKind(t) {
                LLVMTypeKind::LLVMVoidTypeKind => "void".into(),
                LLVMTypeKind::LLVMHalfTypeKind => "half".into(),
                LLVMTypeKind::LLVMFloatTypeKind => "float".into(),
                LLVMTypeKind::LLVMDoubleTypeKind => "double".into(),
                LLVMTypeKind::LLVMIntegerTypeKind => format!("i{}", LLVMGetIntTypeWidth(t)),
                LLVMTypeKind::LLVMLabelTypeKind => "label".into(),
                LLVMTypeKind::LLVMPointerTypeKind => {
                    let space = LLVMGetPointerAddressSpace(t);
                    match (self.llvm7(), space) {
                        (true, 0) => "i8*".into(),
                        (true, n) => format!("i8 addrspace({n})*"),
                        (false, 0) => "ptr".into(),
                        (false, n) => format!("ptr addrspace({n})"),
                    }
                }
                LLVMTypeKind::LLVMStructTypeKind => {
                    // A named struct is written as its body: every use in
                    // the emitted module spells it the same way.
                    if LLVMIsOpaqueStruct(t) != 0 {
                        return self.err("opaque struct types are not supported");
                    }
                    let n = LLVMCountStructElementTypes(t);
                    let mut parts = Vec::new();
                    for i in 0..n {
                        parts.push(self.ty(LLVMStructGetTypeAtIndex(t, i))?);
                    }
                    if LLVMIsPackedStruct(t) != 0 {
                        format!("<{{ {} }}>", parts.join(", "))
                    } else {
                        format!("{{ {} }}", parts.join(", "))
                    }
                }
                LLVMTypeKind::LLVMArrayTypeKind => format!(
                    "[{} x {}]",
                    LLVMGetArrayLength2(t),
                    self.ty(LLVMGetElementType(t))?
                ),
                LLVMTypeKind::LLVMVectorTypeKind => format!(
                    "<{} x {}>",
                    LLVMGetVectorSize(t),
                    self.ty(LLVMGetElementType(t))?
                ),
                other => return self.err(format!("the type kind {other:?} has no NVVM IR form")),
            })
        }
    }

    /// A pointer to `elem` in address space `space` (typed, LLVM 7).
    fn typed_ptr(&self, elem: &str, space: u32) -> String {
        if space == 0 {
            format!("{elem}*")
        } else {
            format!("{elem} addrspace({space})*")
        }
    }

    fn type_of(&self, v: LLVMValueRef) -> Res<String> {
        // SAFETY: `v` is a live value.
        self.ty(unsafe { LLVMTypeOf(v) })
    }

    // ----- values -----

    fn val(&self, v: LLVMValueRef) -> Res<String> {
        if let Some(n) = self.names.get(&v) {
            return Ok(n.clone());
        }
        // SAFETY: `v` is a live value; each query checks its kind first.
        unsafe {
            if !LLVMIsAConstantInt(v).is_null() {
                let t = LLVMTypeOf(v);
                let w = LLVMGetIntTypeWidth(t);
                return match w {
                    1 => Ok(if LLVMConstIntGetZExtValue(v) != 0 {
                        "true".into()
                    } else {
                        "false".into()
                    }),
                    2..=64 => Ok(LLVMConstIntGetSExtValue(v).to_string()),
                    // No C API reads a wider value: its printed form is
                    // `iN <decimal>`, which LLVM 7's parser reads too.
                    _ => {
                        let printed = LLVMPrintValueToString(v);
                        let text = std::ffi::CStr::from_ptr(printed)
                            .to_string_lossy()
                            .into_owned();
                        LLVMDisposeMessage(printed);
                        match text.split_once(' ') {
                            Some((ty, digits))
                                if ty == format!("i{w}")
                                    && digits
                                        .trim_start_matches('-')
                                        .bytes()
                                        .all(|b| b.is_ascii_digit()) =>
                            {
                                Ok(digits.to_string())
                            }
                            _ => self.err(format!("an i{w} constant printed as `{text}`")),
                        }
                    }
                };
            }
            if !LLVMIsAConstantFP(v).is_null() {
                let mut loses = 0;
                let d = LLVMConstRealGetDouble(v, &mut loses);
                return match LLVMGetTypeKind(LLVMTypeOf(v)) {
                    LLVMTypeKind::LLVMFloatTypeKind | LLVMTypeKind::LLVMDoubleTypeKind => {
                        Ok(format!("0x{:016X}", d.to_bits()))
                    }
                    _ => self.err("a floating-point constant of a type other than float or double"),
                };
            }
            if LLVMIsPoison(v) != 0 {
                return Ok(if self.llvm7() { "undef" } else { "poison" }.into());
            }
            if LLVMIsUndef(v) != 0 {
                return Ok("undef".into());
            }
            if !LLVMIsAConstantPointerNull(v).is_null() {
                return Ok("null".into());
            }
            if !LLVMIsAConstantAggregateZero(v).is_null() {
                return Ok("zeroinitializer".into());
            }
            // `{ i32 5000, i1 false }`, `[2 x i32] [i32 1, i32 2]`: LLVM's
            // optimiser folds such values into `select`s and `phi`s (an
            // `Option` a search returns). The same syntax in both dialects.
            if !LLVMIsAConstantStruct(v).is_null()
                || !LLVMIsAConstantArray(v).is_null()
                || !LLVMIsAConstantDataSequential(v).is_null()
            {
                let t = LLVMTypeOf(v);
                let (open, close, n) = match LLVMGetTypeKind(t) {
                    LLVMTypeKind::LLVMStructTypeKind if LLVMIsPackedStruct(t) != 0 => {
                        ("<{ ", " }>", LLVMCountStructElementTypes(t) as u64)
                    }
                    LLVMTypeKind::LLVMStructTypeKind => {
                        ("{ ", " }", LLVMCountStructElementTypes(t) as u64)
                    }
                    LLVMTypeKind::LLVMArrayTypeKind => ("[", "]", LLVMGetArrayLength2(t)),
                    LLVMTypeKind::LLVMVectorTypeKind => ("<", ">", LLVMGetVectorSize(t) as u64),
                    other => {
                        return self
                            .err(format!("an aggregate constant of the type kind {other:?}"))
                    }
                };
                let mut parts = Vec::new();
                for i in 0..n {
                    let e = LLVMGetAggregateElement(v, i as u32);
                    if e.is_null() {
                        return self.err("an aggregate constant whose element cannot be read");
                    }
                    parts.push(format!("{} {}", self.type_of(e)?, self.val(e)?));
                }
                return Ok(format!("{open}{}{close}", parts.join(", ")));
            }
            if !LLVMIsAFunction(v).is_null() {
                return Ok(global(&value_name(v)));
            }
            if !LLVMIsAConstantExpr(v).is_null() {
                return self.err("constant expressions are not supported");
            }
            if !LLVMIsAGlobalVariable(v).is_null() {
                if let Some(expr) = self.globals.get(&v) {
                    return Ok(expr.clone());
                }
                return self.err(format!(
                    "the global variable `{}` is not supported",
                    value_name(v)
                ));
            }
        }
        self.err("an operand this emitter has no form for")
    }

    /// A constant global of numbers (the lookup tables LLVM's O3 makes of
    /// `switch`es): defined in the global address space, as NVVM IR wants
    /// module-scope data, and used through a constant `addrspacecast` to a
    /// generic pointer. Any other global is left for `val` to refuse.
    fn constant_global(&mut self, g: LLVMValueRef) -> Res<()> {
        // SAFETY: `g` is a live global variable of the module.
        unsafe {
            if LLVMIsGlobalConstant(g) == 0 || LLVMIsDeclaration(g) != 0 {
                return Ok(());
            }
            let init = LLVMGetInitializer(g);
            if init.is_null()
                || (LLVMIsAConstantDataArray(init).is_null()
                    && LLVMIsAConstantArray(init).is_null())
            {
                return Ok(());
            }
            let arr = LLVMTypeOf(init);
            let elem = LLVMGetElementType(arr);
            if !matches!(
                LLVMGetTypeKind(elem),
                LLVMTypeKind::LLVMIntegerTypeKind
                    | LLVMTypeKind::LLVMFloatTypeKind
                    | LLVMTypeKind::LLVMDoubleTypeKind
            ) {
                return Ok(());
            }
            let printed = LLVMPrintValueToString(init);
            let text = std::ffi::CStr::from_ptr(printed)
                .to_string_lossy()
                .into_owned();
            LLVMDisposeMessage(printed);
            let ty = self.ty(arr)?;
            let name = global(&value_name(g));
            let align = LLVMGetAlignment(g).max(1);
            let _ = writeln!(
                self.out,
                "{name} = internal addrspace(1) constant {text}, align {align}"
            );
            let expr = if self.llvm7() {
                format!("bitcast ({ty}* addrspacecast ({ty} addrspace(1)* {name} to {ty}*) to i8*)")
            } else {
                format!("addrspacecast (ptr addrspace(1) {name} to ptr)")
            };
            self.globals.insert(g, expr);
        }
        Ok(())
    }

    fn typed(&self, v: LLVMValueRef) -> Res<String> {
        Ok(format!("{} {}", self.type_of(v)?, self.val(v)?))
    }

    fn block(&self, b: LLVMBasicBlockRef) -> Res<String> {
        match self.blocks.get(&b) {
            Some(n) => Ok(format!("label %{n}")),
            None => self.err("a branch to a block of another function"),
        }
    }

    fn fresh(&mut self, base: &str) -> String {
        self.tmp += 1;
        format!("{base}.t{}", self.tmp)
    }

    // ----- debug information -----

    fn di_node(&mut self, text: String) -> usize {
        self.di.nodes.push(text);
        self.di.nodes.len()
    }

    fn di_cu(&mut self) -> usize {
        match self.di.cu {
            Some(id) => id,
            None => {
                let id = self.di_node(String::new());
                self.di.cu = Some(id);
                id
            }
        }
    }

    /// The `DIFile` of a scope.
    fn di_file(&mut self, scope: LLVMMetadataRef) -> usize {
        // SAFETY: `scope` is a live DIScope; the strings are copied at once.
        let (name, dir) = unsafe {
            let file = LLVMDIScopeGetFile(scope);
            let text = |get: unsafe extern "C" fn(LLVMMetadataRef, *mut u32) -> *const i8| {
                if file.is_null() {
                    return String::new();
                }
                let mut len = 0u32;
                let p = get(file, &mut len);
                if p.is_null() {
                    return String::new();
                }
                let bytes = std::slice::from_raw_parts(p as *const u8, len as usize);
                String::from_utf8_lossy(bytes).into_owned()
            };
            (text(LLVMDIFileGetFilename), text(LLVMDIFileGetDirectory))
        };
        if let Some(id) = self.di.files.get(&(name.clone(), dir.clone())) {
            return *id;
        }
        let id = self.di_node(format!(
            "!DIFile(filename: {}, directory: {})",
            md_string(&name),
            md_string(&dir)
        ));
        self.di.first_file.get_or_insert(id);
        self.di.files.insert((name, dir), id);
        id
    }

    /// A `DISubprogram` (distinct, with a type: libNVVM needs both).
    fn di_subprogram(&mut self, sp: LLVMMetadataRef) -> Res<usize> {
        if let Some(id) = self.di.by_ref.get(&sp) {
            return Ok(*id);
        }
        // SAFETY: `sp` is live metadata.
        if !matches!(
            unsafe { LLVMGetMetadataKind(sp) },
            LLVMMetadataKind::LLVMDISubprogramMetadataKind
        ) {
            return self.err("a debug scope that is not a subprogram".to_string());
        }
        let id = self.di_node(String::new());
        self.di.by_ref.insert(sp, id);
        let file = self.di_file(sp);
        let cu = self.di_cu();
        let ty = match self.di.subroutine_type {
            Some(t) => t,
            None => {
                let empty = self.di_node("!{}".into());
                let t = self.di_node(format!("!DISubroutineType(types: !{empty})"));
                self.di.subroutine_type = Some(t);
                t
            }
        };
        // SAFETY: `sp` is a live DISubprogram.
        let line = unsafe { LLVMDISubprogramGetLine(sp) };
        let printed = self.metadata_text(sp);
        let symbol = field(&printed, "linkageName").unwrap_or_default();
        // A callback is shown by its Rust name: debuggers prefer a linkage
        // name to the name, so it gets none.
        let (name, linkage) = match self.di.names.get(&sp) {
            Some(n) => (n.clone(), String::new()),
            None => {
                let name = field(&printed, "name").unwrap_or_else(|| symbol.clone());
                (
                    rust_name(&name).to_string(),
                    format!("linkageName: {}, ", md_string(&symbol)),
                )
            }
        };
        let flags = match self.dialect {
            NvvmDialect::Llvm7 => "isLocal: false, isDefinition: true, isOptimized: true",
            NvvmDialect::Modern => "spFlags: DISPFlagDefinition | DISPFlagOptimized",
        };
        self.di.nodes[id - 1] = format!(
            "distinct !DISubprogram(name: {}, {linkage}scope: !{file}, file: !{file}, \
             line: {line}, type: !{ty}, scopeLine: {line}, {flags}, unit: !{cu})",
            md_string(&name)
        );
        Ok(id)
    }

    /// A `DILocation`, with its scope and the chain it is inlined at.
    fn di_location(&mut self, loc: LLVMMetadataRef) -> Res<usize> {
        if let Some(id) = self.di.by_ref.get(&loc) {
            return Ok(*id);
        }
        // SAFETY: `loc` is a live DILocation.
        let (line, column, mut scope, mut inlined_at) = unsafe {
            (
                LLVMDILocationGetLine(loc),
                LLVMDILocationGetColumn(loc),
                LLVMDILocationGetScope(loc),
                LLVMDILocationGetInlinedAt(loc),
            )
        };
        // A callback body inlined into its thunk is shown as the thunk.
        if let Some(thunk) = self.di.collapse.get(&scope).copied() {
            // SAFETY: a live DILocation.
            if !inlined_at.is_null() && unsafe { LLVMDILocationGetScope(inlined_at) } == thunk {
                scope = thunk;
                inlined_at = unsafe { LLVMDILocationGetInlinedAt(inlined_at) };
            }
        }
        let scope = self.di_subprogram(scope)?;
        let inlined = match inlined_at.is_null() {
            true => String::new(),
            false => format!(", inlinedAt: !{}", self.di_location(inlined_at)?),
        };
        let id = self.di_node(format!(
            "!DILocation(line: {line}, column: {column}, scope: !{scope}{inlined})"
        ));
        self.di.by_ref.insert(loc, id);
        Ok(id)
    }

    /// The variables of the callback whose thunk is the current function
    /// `f`: lines for the start of the entry block (`llvm.dbg.value` of the
    /// arguments; each capture the body reads, loaded there and described),
    /// and the body's loads those entry loads replace. (A load made only for
    /// the debugger would be dead code, deleted with its description: the
    /// body's own reads keep the entry load alive.)
    fn callback_variables(
        &mut self,
        f: LLVMValueRef,
        blocks: &[BasicBlock<'_>],
    ) -> Res<(Vec<String>, HashSet<LLVMValueRef>)> {
        let none = || (Vec::new(), HashSet::new());
        let Some(cb) = self
            .callbacks
            .iter()
            .find(|c| c.thunk == self.function)
            .cloned()
        else {
            return Ok(none());
        };
        // The body's subprogram, and where the thunk inlines it: the first
        // location whose chain passes through it.
        let mut found: Option<(LLVMMetadataRef, LLVMMetadataRef)> = None;
        'search: for b in blocks {
            for inst in b.get_instructions() {
                // SAFETY: live instruction and metadata.
                let mut loc = unsafe { LLVMInstructionGetDebugLoc(inst.as_value_ref()) };
                while !loc.is_null() {
                    let (scope, inlined_at) =
                        unsafe { (LLVMDILocationGetScope(loc), LLVMDILocationGetInlinedAt(loc)) };
                    let linkage = field(&self.metadata_text(scope), "linkageName");
                    if linkage.as_deref() == Some(cb.body.as_str()) {
                        found = Some((scope, inlined_at));
                        break 'search;
                    }
                    loc = inlined_at;
                }
            }
        }
        let Some((sp, inlined_at)) = found else {
            return Ok(none());
        };
        // The body is inlined into the thunk, which does nothing else: both
        // are shown as one subprogram, the thunk's, named after the closure,
        // and the variables belong to it. (Variables of the inlined body's
        // own scope lost their locations through the LTO link: measured.)
        // SAFETY: `f` is a live function; `inlined_at` a live DILocation.
        let thunk_sp = unsafe { LLVMGetSubprogram(f) };
        let direct =
            !inlined_at.is_null() && unsafe { LLVMDILocationGetScope(inlined_at) } == thunk_sp;
        if thunk_sp.is_null() || !direct {
            return Ok(none());
        }
        self.di.collapse.insert(sp, thunk_sp);
        self.di.names.insert(thunk_sp, cb.name.clone());
        let scope = self.di_subprogram(thunk_sp)?;
        let file = self.di_file(sp);
        // SAFETY: `sp` is a live DISubprogram.
        let line = unsafe { LLVMDISubprogramGetLine(sp) };
        let loc = self.di_node(format!(
            "!DILocation(line: {line}, column: 1, scope: !{scope})"
        ));
        self.decls.insert(
            "llvm.dbg.value".into(),
            "declare void @llvm.dbg.value(metadata, metadata, metadata)".into(),
        );
        let expr = "metadata !DIExpression()";
        let mut lines = Vec::new();
        for (k, (name, scalar)) in cb.params.iter().enumerate() {
            let ty = self.di_basic_type(*scalar);
            let var = self.di_node(format!(
                "!DILocalVariable(name: {}, arg: {}, scope: !{scope}, file: !{file}, line: {line}, type: !{ty})",
                md_string(name),
                k + 2
            ));
            // The thunk's own parameter type: a narrow integer travels
            // widened to 32 bits in the thunk ABI (its low bits are the value).
            // SAFETY: `f` is a live thunk with a parameter per argument.
            let param = unsafe {
                (LLVMCountParams(f) > k as u32 + 1).then(|| LLVMGetParam(f, k as u32 + 1))
            };
            let llvm_ty = match param {
                Some(p) => self.type_of(p)?,
                None => scalar_llvm(*scalar).0.to_string(),
            };
            lines.push(format!(
                "call void @llvm.dbg.value(metadata {llvm_ty} %p{}, metadata !{var}, {expr}), !dbg !{loc}",
                k + 1
            ));
        }
        // Loads from the environment (the thunk's first parameter), by offset.
        // SAFETY: `f` is a live function with at least one parameter when it
        // is a thunk; instructions and operands are read with LLVM's API.
        let env = unsafe { (LLVMCountParams(f) > 0).then(|| LLVMGetParam(f, 0)) };
        let mut loads: Vec<(LLVMValueRef, u64, String)> = Vec::new();
        for b in blocks {
            for inst in b.get_instructions() {
                let v = inst.as_value_ref();
                unsafe {
                    if LLVMGetInstructionOpcode(v) != LLVMOpcode::LLVMLoad {
                        continue;
                    }
                    let ptr = LLVMGetOperand(v, 0);
                    let offset = if Some(ptr) == env {
                        Some(0)
                    } else if !LLVMIsAGetElementPtrInst(ptr).is_null()
                        && LLVMGetNumOperands(ptr) == 2
                        && Some(LLVMGetOperand(ptr, 0)) == env
                        && !LLVMIsAConstantInt(LLVMGetOperand(ptr, 1)).is_null()
                        && self.ty(LLVMGetGEPSourceElementType(ptr)).as_deref() == Ok("i8")
                    {
                        u64::try_from(LLVMConstIntGetSExtValue(LLVMGetOperand(ptr, 1))).ok()
                    } else {
                        None
                    };
                    if let Some(offset) = offset {
                        loads.push((v, offset, self.ty(LLVMTypeOf(v))?));
                    }
                }
            }
        }
        // Each capture the body reads is loaded once, at the entry, and
        // every load of it in the body becomes that value (the environment
        // is immutable): the debugger then finds it on every line of the
        // callback. A capture the body never reads has no value to show.
        let mut moved = HashSet::new();
        for (k, (name, scalar, offset)) in cb.captures.iter().enumerate() {
            let (llvm_ty, align) = scalar_llvm(*scalar);
            let reads: Vec<LLVMValueRef> = loads
                .iter()
                .filter(|(_, o, t)| o == offset && t == llvm_ty)
                .map(|(l, _, _)| *l)
                .collect();
            if reads.is_empty() {
                continue;
            }
            let ty = self.di_basic_type(*scalar);
            let var = self.di_node(format!(
                "!DILocalVariable(name: {}, scope: !{scope}, file: !{file}, line: {line}, type: !{ty})",
                md_string(name)
            ));
            let v = format!("%dbg.c{k}");
            match self.dialect {
                NvvmDialect::Llvm7 => {
                    lines.push(format!(
                        "{v}.at = getelementptr inbounds i8, i8* %p0, i64 {offset}, !dbg !{loc}"
                    ));
                    lines.push(format!(
                        "{v}.p = bitcast i8* {v}.at to {llvm_ty}*, !dbg !{loc}"
                    ));
                    lines.push(format!(
                        "{v} = load {llvm_ty}, {llvm_ty}* {v}.p, align {align}, !dbg !{loc}"
                    ));
                }
                NvvmDialect::Modern => {
                    lines.push(format!(
                        "{v}.at = getelementptr inbounds i8, ptr %p0, i64 {offset}, !dbg !{loc}"
                    ));
                    lines.push(format!(
                        "{v} = load {llvm_ty}, ptr {v}.at, align {align}, !dbg !{loc}"
                    ));
                }
            }
            lines.push(format!(
                "call void @llvm.dbg.value(metadata {llvm_ty} {v}, metadata !{var}, {expr}), !dbg !{loc}"
            ));
            for read in reads {
                self.names.insert(read, v.clone());
                moved.insert(read);
            }
        }
        Ok((lines, moved))
    }

    /// The `DIBasicType` of a Rust scalar (one node per scalar).
    fn di_basic_type(&mut self, scalar: frontend::ty::Scalar) -> usize {
        use frontend::ty::Scalar::*;
        let (bits, encoding) = match scalar {
            Bool => (8, "DW_ATE_boolean"),
            Char => (32, "DW_ATE_UTF"),
            I8 | I16 | I32 | I64 | I128 | Isize => (scalar_bits(scalar), "DW_ATE_signed"),
            U8 | U16 | U32 | U64 | U128 | Usize => (scalar_bits(scalar), "DW_ATE_unsigned"),
            F16 | F32 | F64 | F128 => (scalar_bits(scalar), "DW_ATE_float"),
        };
        let text = format!(
            "!DIBasicType(name: {}, size: {bits}, encoding: {encoding})",
            md_string(scalar.name())
        );
        match self.di.nodes.iter().position(|n| *n == text) {
            Some(i) => i + 1,
            None => self.di_node(text),
        }
    }

    /// Appends `, !dbg !ID` to every line printed since `start`.
    fn attach(&mut self, start: usize, id: usize) {
        let printed = self.out.split_off(start);
        for line in printed.lines() {
            let _ = writeln!(self.out, "{line}, !dbg !{id}");
        }
    }

    /// LLVM's own text of a metadata node (`distinct !DISubprogram(name: …)`).
    fn metadata_text(&self, md: LLVMMetadataRef) -> String {
        // SAFETY: `md` is live metadata of `self.context`; the string is
        // copied, then freed with LLVM's allocator.
        unsafe {
            let v = LLVMMetadataAsValue(self.context, md);
            let p = LLVMPrintValueToString(v);
            if p.is_null() {
                return String::new();
            }
            let text = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
            LLVMDisposeMessage(p);
            text
        }
    }

    /// The compile unit, the module flags and every node, after the code.
    fn finish_debug_info(&mut self) {
        let cu = self.di_cu();
        let file = self.di.first_file.unwrap_or_else(|| {
            self.di
                .nodes
                .push("!DIFile(filename: \"\", directory: \"\")".into());
            self.di.nodes.len()
        });
        let kind = match self.debug {
            DebugInfo::Full => "FullDebug",
            _ => "DebugDirectivesOnly",
        };
        // compute_100: without `nameTableKind: None`, two `.debug_pubnames`
        // sections fail ptxas (LLVM 7 has no such field).
        let names = match self.dialect {
            NvvmDialect::Llvm7 => "",
            NvvmDialect::Modern => ", nameTableKind: None",
        };
        self.di.nodes[cu - 1] = format!(
            "distinct !DICompileUnit(language: DW_LANG_Rust, file: !{file}, producer: \"rmir\", \
             isOptimized: true, runtimeVersion: 0, emissionKind: {kind}{names})"
        );
        let flag = self.di.nodes.len() + 1;
        let _ = write!(
            self.out,
            "!llvm.dbg.cu = !{{!{cu}}}\n!llvm.module.flags = !{{!{flag}}}\n"
        );
        for (i, n) in self.di.nodes.iter().enumerate() {
            let _ = writeln!(self.out, "!{} = {n}", i + 1);
        }
        // Behaviour 1 (error), as NVRTC writes it: another behaviour fails
        // nvJitLink's LTO link with the provider.
        let _ = writeln!(
            self.out,
            "!{flag} = !{{i32 1, !\"Debug Info Version\", i32 3}}"
        );
    }

    // ----- functions -----

    fn function_def(&mut self, f: FunctionValue<'_>) -> Res<()> {
        let raw = f.as_value_ref();
        // SAFETY: `raw` is a live function of the module.
        let (ret, linkage) = unsafe {
            (
                self.ty(LLVMGetReturnType(LLVMGlobalGetValueType(raw)))?,
                LLVMGetLinkage(raw),
            )
        };
        let linkage = match linkage {
            LLVMLinkage::LLVMExternalLinkage => "",
            LLVMLinkage::LLVMInternalLinkage => "internal ",
            LLVMLinkage::LLVMPrivateLinkage => "private ",
            other => return self.err(format!("the linkage {other:?} is not supported")),
        };
        self.names.clear();
        self.blocks.clear();
        let mut params = Vec::new();
        for (i, p) in f.get_param_iter().enumerate() {
            let name = format!("%p{i}");
            self.names.insert(p.as_value_ref(), name.clone());
            params.push(format!("{} {name}", self.type_of(p.as_value_ref())?));
        }
        let blocks: Vec<BasicBlock<'_>> = f.get_basic_block_iter().collect();
        let name = global(&self.function);
        if blocks.is_empty() {
            // One declaration per function, whether a call or the module
            // lists it first (an `extern "C"` function a library defines).
            return self.declare(f.as_value_ref());
        }
        let mut n = 0usize;
        for (i, b) in blocks.iter().enumerate() {
            self.blocks.insert(b.as_mut_ptr(), format!("bb{i}"));
            for inst in b.get_instructions() {
                let v = inst.as_value_ref();
                // SAFETY: `v` is a live instruction.
                let void =
                    unsafe { LLVMGetTypeKind(LLVMTypeOf(v)) == LLVMTypeKind::LLVMVoidTypeKind };
                if !void {
                    self.names.insert(v, format!("%v{n}"));
                    n += 1;
                }
            }
        }
        // Before the function's own subprogram is numbered: a callback's
        // thunk is named after the closure.
        let (variables, moved) = match self.debug {
            DebugInfo::Full => self.callback_variables(raw, &blocks)?,
            _ => (Vec::new(), HashSet::new()),
        };
        // SAFETY: `raw` is a live function.
        let subprogram = unsafe { LLVMGetSubprogram(raw) };
        let dbg = match self.debug.any() && !subprogram.is_null() {
            true => format!(" !dbg !{}", self.di_subprogram(subprogram)?),
            false => String::new(),
        };
        let _ = write!(
            self.out,
            "\ndefine {linkage}{ret} {name}({}){dbg} {{\n",
            params.join(", ")
        );
        for (i, b) in blocks.iter().enumerate() {
            let _ = writeln!(self.out, "bb{i}:");
            if i == 0 {
                for line in &variables {
                    self.line(line.clone());
                }
            }
            for inst in b.get_instructions() {
                if moved.contains(&inst.as_value_ref()) {
                    continue; // loaded at the entry (`callback_variables`)
                }
                let start = self.out.len();
                self.instruction(inst.as_value_ref())?;

                if self.debug.any() {
                    // SAFETY: a live instruction; null when it has no location.
                    let loc = unsafe { LLVMInstructionGetDebugLoc(inst.as_value_ref()) };
                    if !loc.is_null() {
                        let id = self.di_location(loc)?;
                        self.attach(start, id);
                    }
                }
            }
        }
        self.out.push_str("}\n");
        Ok(())
    }

    fn line(&mut self, text: String) {
        self.out.push_str("  ");
        self.out.push_str(&text);
        self.out.push('\n');
    }

    fn operand(&self, i: LLVMValueRef, k: u32) -> Res<LLVMValueRef> {
        // SAFETY: bounds are checked against the operand count.
        unsafe {
            if (k as i32) < LLVMGetNumOperands(i) {
                Ok(LLVMGetOperand(i, k))
            } else {
                self.err(format!("missing operand {k}"))
            }
        }
    }

    /// `nuw nsw ` / `exact ` / fast-math flags, as LLVM 7 spells them.
    fn flags(&self, i: LLVMValueRef, op: LLVMOpcode) -> String {
        use LLVMOpcode::*;
        let mut s = String::new();
        // SAFETY: each query is made only on instructions of its kind.
        unsafe {
            match op {
                LLVMAdd | LLVMSub | LLVMMul | LLVMShl => {
                    if LLVMGetNUW(i) != 0 {
                        s.push_str("nuw ");
                    }
                    if LLVMGetNSW(i) != 0 {
                        s.push_str("nsw ");
                    }
                }
                LLVMUDiv | LLVMSDiv | LLVMLShr | LLVMAShr if LLVMGetExact(i) != 0 => {
                    s.push_str("exact ");
                }
                _ => {}
            }
            if matches!(
                op,
                LLVMFAdd | LLVMFSub | LLVMFMul | LLVMFDiv | LLVMFRem | LLVMFCmp | LLVMFNeg
            ) && LLVMCanValueUseFastMathFlags(i) != 0
            {
                let f = LLVMGetFastMathFlags(i);
                let all = (1 << 7) - 1;
                if f & all == all {
                    s.push_str("fast ");
                } else {
                    for (bit, word) in [
                        (llvm_sys::LLVMFastMathAllowReassoc, "reassoc"),
                        (llvm_sys::LLVMFastMathNoNaNs, "nnan"),
                        (llvm_sys::LLVMFastMathNoInfs, "ninf"),
                        (llvm_sys::LLVMFastMathNoSignedZeros, "nsz"),
                        (llvm_sys::LLVMFastMathAllowReciprocal, "arcp"),
                        (llvm_sys::LLVMFastMathAllowContract, "contract"),
                        (llvm_sys::LLVMFastMathApproxFunc, "afn"),
                    ] {
                        if f & bit != 0 {
                            s.push_str(word);
                            s.push(' ');
                        }
                    }
                }
            }
        }
        s
    }

    /// In LLVM 7, `ptr` (an `i8*` here) as a `T*` for a typed access: the
    /// pointer text and its type text.
    fn cast_to_typed(
        &mut self,
        base: &str,
        ptr: LLVMValueRef,
        elem: &str,
    ) -> Res<(String, String)> {
        // SAFETY: `ptr` is a live pointer value.
        let space = unsafe { LLVMGetPointerAddressSpace(LLVMTypeOf(ptr)) };
        let from = self.type_of(ptr)?;
        let to = self.typed_ptr(elem, space);
        if from == to {
            return Ok((self.val(ptr)?, to));
        }
        let t = self.fresh(base);
        let line = format!("{t} = bitcast {from} {} to {to}", self.val(ptr)?);
        self.line(line);
        Ok((t, to))
    }

    fn instruction(&mut self, i: LLVMValueRef) -> Res<()> {
        use LLVMOpcode::*;
        // SAFETY: `i` is a live instruction.
        let op = unsafe { LLVMGetInstructionOpcode(i) };
        let name = self.names.get(&i).cloned().unwrap_or_default();
        match op {
            LLVMRet => {
                // SAFETY: a ret has zero or one operand.
                let line = if unsafe { LLVMGetNumOperands(i) } == 0 {
                    "ret void".to_string()
                } else {
                    format!("ret {}", self.typed(self.operand(i, 0)?)?)
                };
                self.line(line);
            }
            LLVMBr => {
                // SAFETY: `i` is a branch.
                let line = unsafe {
                    if LLVMIsConditional(i) != 0 {
                        format!(
                            "br {}, {}, {}",
                            self.typed(LLVMGetCondition(i))?,
                            self.block(LLVMGetSuccessor(i, 0))?,
                            self.block(LLVMGetSuccessor(i, 1))?
                        )
                    } else {
                        format!("br {}", self.block(LLVMGetSuccessor(i, 0))?)
                    }
                };
                self.line(line);
            }
            LLVMSwitch => {
                // SAFETY: `i` is a switch; successor 0 is the default.
                let line = unsafe {
                    let mut s = format!(
                        "switch {}, {} [",
                        self.typed(self.operand(i, 0)?)?,
                        self.block(LLVMGetSuccessor(i, 0))?
                    );
                    // One line: a `!dbg` attachment follows the whole
                    // instruction (`Self::attach` appends it per line).
                    for k in 1..LLVMGetNumSuccessors(i) {
                        let _ = write!(
                            s,
                            " {}, {}",
                            self.typed(LLVMGetSwitchCaseValue(i, k))?,
                            self.block(LLVMGetSuccessor(i, k))?
                        );
                    }
                    s.push_str(" ]");
                    s
                };
                self.line(line);
            }
            LLVMUnreachable => self.line("unreachable".into()),
            LLVMAdd | LLVMSub | LLVMMul | LLVMUDiv | LLVMSDiv | LLVMURem | LLVMSRem | LLVMShl
            | LLVMLShr | LLVMAShr | LLVMAnd | LLVMOr | LLVMXor | LLVMFAdd | LLVMFSub | LLVMFMul
            | LLVMFDiv | LLVMFRem => {
                let word = match op {
                    LLVMAdd => "add",
                    LLVMSub => "sub",
                    LLVMMul => "mul",
                    LLVMUDiv => "udiv",
                    LLVMSDiv => "sdiv",
                    LLVMURem => "urem",
                    LLVMSRem => "srem",
                    LLVMShl => "shl",
                    LLVMLShr => "lshr",
                    LLVMAShr => "ashr",
                    LLVMAnd => "and",
                    LLVMOr => "or",
                    LLVMXor => "xor",
                    LLVMFAdd => "fadd",
                    LLVMFSub => "fsub",
                    LLVMFMul => "fmul",
                    LLVMFDiv => "fdiv",
                    _ => "frem",
                };
                let (a, b) = (self.operand(i, 0)?, self.operand(i, 1)?);
                let line = format!(
                    "{name} = {word} {}{}, {}",
                    self.flags(i, op),
                    self.typed(a)?,
                    self.val(b)?
                );
                self.line(line);
            }
            LLVMFNeg => {
                let a = self.operand(i, 0)?;
                let line = if self.llvm7() {
                    format!(
                        "{name} = fsub {}{} -0.0, {}",
                        self.flags(i, op),
                        self.type_of(a)?,
                        self.val(a)?
                    )
                } else {
                    format!("{name} = fneg {}{}", self.flags(i, op), self.typed(a)?)
                };
                self.line(line);
            }
            LLVMTrunc | LLVMZExt | LLVMSExt | LLVMFPTrunc | LLVMFPExt | LLVMFPToUI | LLVMFPToSI
            | LLVMUIToFP | LLVMSIToFP | LLVMPtrToInt | LLVMIntToPtr | LLVMBitCast
            | LLVMAddrSpaceCast => {
                let word = match op {
                    LLVMTrunc => "trunc",
                    LLVMZExt => "zext",
                    LLVMSExt => "sext",
                    LLVMFPTrunc => "fptrunc",
                    LLVMFPExt => "fpext",
                    LLVMFPToUI => "fptoui",
                    LLVMFPToSI => "fptosi",
                    LLVMUIToFP => "uitofp",
                    LLVMSIToFP => "sitofp",
                    LLVMPtrToInt => "ptrtoint",
                    LLVMIntToPtr => "inttoptr",
                    LLVMBitCast => "bitcast",
                    _ => "addrspacecast",
                };
                let a = self.operand(i, 0)?;
                let line = format!("{name} = {word} {} to {}", self.typed(a)?, self.type_of(i)?);
                self.line(line);
            }
            LLVMICmp => {
                // SAFETY: `i` is an icmp.
                let pred = match unsafe { LLVMGetICmpPredicate(i) } {
                    LLVMIntPredicate::LLVMIntEQ => "eq",
                    LLVMIntPredicate::LLVMIntNE => "ne",
                    LLVMIntPredicate::LLVMIntUGT => "ugt",
                    LLVMIntPredicate::LLVMIntUGE => "uge",
                    LLVMIntPredicate::LLVMIntULT => "ult",
                    LLVMIntPredicate::LLVMIntULE => "ule",
                    LLVMIntPredicate::LLVMIntSGT => "sgt",
                    LLVMIntPredicate::LLVMIntSGE => "sge",
                    LLVMIntPredicate::LLVMIntSLT => "slt",
                    LLVMIntPredicate::LLVMIntSLE => "sle",
                };
                let (a, b) = (self.operand(i, 0)?, self.operand(i, 1)?);
                let line = format!("{name} = icmp {pred} {}, {}", self.typed(a)?, self.val(b)?);
                self.line(line);
            }
            LLVMFCmp => {
                use LLVMRealPredicate::*;
                // SAFETY: `i` is an fcmp.
                let pred = match unsafe { LLVMGetFCmpPredicate(i) } {
                    LLVMRealPredicateFalse => "false",
                    LLVMRealOEQ => "oeq",
                    LLVMRealOGT => "ogt",
                    LLVMRealOGE => "oge",
                    LLVMRealOLT => "olt",
                    LLVMRealOLE => "ole",
                    LLVMRealONE => "one",
                    LLVMRealORD => "ord",
                    LLVMRealUNO => "uno",
                    LLVMRealUEQ => "ueq",
                    LLVMRealUGT => "ugt",
                    LLVMRealUGE => "uge",
                    LLVMRealULT => "ult",
                    LLVMRealULE => "ule",
                    LLVMRealUNE => "une",
                    LLVMRealPredicateTrue => "true",
                };
                let (a, b) = (self.operand(i, 0)?, self.operand(i, 1)?);
                let line = format!(
                    "{name} = fcmp {}{pred} {}, {}",
                    self.flags(i, op),
                    self.typed(a)?,
                    self.val(b)?
                );
                self.line(line);
            }
            LLVMSelect => {
                let (c, a, b) = (
                    self.operand(i, 0)?,
                    self.operand(i, 1)?,
                    self.operand(i, 2)?,
                );
                let line = format!(
                    "{name} = select {}, {}, {}",
                    self.typed(c)?,
                    self.typed(a)?,
                    self.typed(b)?
                );
                self.line(line);
            }
            LLVMPHI => {
                let mut arms = Vec::new();
                // SAFETY: `i` is a phi.
                unsafe {
                    for k in 0..LLVMCountIncoming(i) {
                        let b = LLVMGetIncomingBlock(i, k);
                        let label = self.blocks.get(&b).cloned().ok_or_else(|| NvvmIrError {
                            function: self.function.clone(),
                            message: "a phi from a block of another function".into(),
                        })?;
                        arms.push(format!(
                            "[ {}, %{label} ]",
                            self.val(LLVMGetIncomingValue(i, k))?
                        ));
                    }
                }
                let line = format!("{name} = phi {} {}", self.type_of(i)?, arms.join(", "));
                self.line(line);
            }
            LLVMAlloca => {
                // SAFETY: `i` is an alloca.
                let (elem, align, count) = unsafe {
                    (
                        LLVMGetAllocatedType(i),
                        LLVMGetAlignment(i),
                        LLVMGetOperand(i, 0),
                    )
                };
                let elem = self.ty(elem)?;
                let count_text = match self.val(count)?.as_str() {
                    "1" => String::new(),
                    _ => format!(", {}", self.typed(count)?),
                };
                if self.llvm7() && elem != "i8" {
                    let t = self.fresh(&name);
                    self.line(format!("{t} = alloca {elem}{count_text}, align {align}"));
                    self.line(format!("{name} = bitcast {elem}* {t} to i8*"));
                } else {
                    self.line(format!("{name} = alloca {elem}{count_text}, align {align}"));
                }
            }
            LLVMLoad => {
                let p = self.operand(i, 0)?;
                let elem = self.type_of(i)?;
                // SAFETY: `i` is a load.
                let (align, volatile) = unsafe { (LLVMGetAlignment(i), LLVMGetVolatile(i) != 0) };
                let v = if volatile { "volatile " } else { "" };
                let (ptr, pty) = if self.llvm7() {
                    self.cast_to_typed(&name, p, &elem)?
                } else {
                    (self.val(p)?, self.type_of(p)?)
                };
                self.line(format!(
                    "{name} = load {v}{elem}, {pty} {ptr}, align {align}"
                ));
            }
            LLVMStore => {
                let (value, p) = (self.operand(i, 0)?, self.operand(i, 1)?);
                let elem = self.type_of(value)?;
                // SAFETY: `i` is a store.
                let (align, volatile) = unsafe { (LLVMGetAlignment(i), LLVMGetVolatile(i) != 0) };
                let v = if volatile { "volatile " } else { "" };
                let base = format!("%s{}", self.tmp);
                let (ptr, pty) = if self.llvm7() {
                    self.cast_to_typed(&base, p, &elem)?
                } else {
                    (self.val(p)?, self.type_of(p)?)
                };
                let line = format!(
                    "store {v}{elem} {}, {pty} {ptr}, align {align}",
                    self.val(value)?
                );
                self.line(line);
            }
            LLVMGetElementPtr => self.gep(i, &name)?,
            LLVMExtractValue | LLVMInsertValue => {
                // SAFETY: `i` is an extractvalue/insertvalue.
                let idx: Vec<String> = unsafe {
                    let n = LLVMGetNumIndices(i) as usize;
                    let p = LLVMGetIndices(i);
                    (0..n).map(|k| (*p.add(k)).to_string()).collect()
                };
                let line = if op == LLVMExtractValue {
                    format!(
                        "{name} = extractvalue {}, {}",
                        self.typed(self.operand(i, 0)?)?,
                        idx.join(", ")
                    )
                } else {
                    format!(
                        "{name} = insertvalue {}, {}, {}",
                        self.typed(self.operand(i, 0)?)?,
                        self.typed(self.operand(i, 1)?)?,
                        idx.join(", ")
                    )
                };
                self.line(line);
            }
            LLVMFreeze => {
                let a = self.operand(i, 0)?;
                if self.llvm7() {
                    self.freeze_llvm7(&name, a)?;
                } else {
                    let line = format!("{name} = freeze {}", self.typed(a)?);
                    self.line(line);
                }
            }
            LLVMCall => self.call(i, &name)?,
            LLVMIndirectBr | LLVMInvoke | LLVMCallBr | LLVMVAArg | LLVMExtractElement
            | LLVMInsertElement | LLVMShuffleVector | LLVMFence | LLVMAtomicCmpXchg
            | LLVMAtomicRMW | LLVMResume | LLVMLandingPad | LLVMCleanupRet | LLVMCatchRet
            | LLVMCatchPad | LLVMCleanupPad | LLVMCatchSwitch | LLVMUserOp1 | LLVMUserOp2
            | LLVMPtrToAddr => {
                return self.err(format!("the instruction {op:?} is not supported"));
            }
        }
        Ok(())
    }

    fn gep(&mut self, i: LLVMValueRef, name: &str) -> Res<()> {
        // SAFETY: `i` is a getelementptr.
        let (source, inbounds, n) = unsafe {
            (
                LLVMGetGEPSourceElementType(i),
                LLVMIsInBounds(i) != 0,
                LLVMGetNumOperands(i) as u32,
            )
        };
        let elem = self.ty(source)?;
        let base = self.operand(i, 0)?;
        let mut indices = Vec::new();
        // The element type the result points to.
        let mut cur = source;
        for k in 1..n {
            let idx = self.operand(i, k)?;
            indices.push(self.typed(idx)?);
            if k == 1 {
                continue;
            }
            // SAFETY: `cur` is a live type; struct indices are constants.
            cur = unsafe {
                match LLVMGetTypeKind(cur) {
                    LLVMTypeKind::LLVMStructTypeKind => {
                        if LLVMIsAConstantInt(idx).is_null() {
                            return self.err("a struct index that is not a constant");
                        }
                        LLVMStructGetTypeAtIndex(cur, LLVMConstIntGetZExtValue(idx) as u32)
                    }
                    LLVMTypeKind::LLVMArrayTypeKind | LLVMTypeKind::LLVMVectorTypeKind => {
                        LLVMGetElementType(cur)
                    }
                    _ => return self.err("a getelementptr index into a scalar"),
                }
            };
        }
        let ib = if inbounds { "inbounds " } else { "" };
        if !self.llvm7() {
            let line = format!(
                "{name} = getelementptr {ib}{elem}, {}, {}",
                self.typed(base)?,
                indices.join(", ")
            );
            self.line(line);
            return Ok(());
        }
        let result_elem = self.ty(cur)?;
        // SAFETY: `base` is a live pointer value.
        let space = unsafe { LLVMGetPointerAddressSpace(LLVMTypeOf(base)) };
        let (ptr, pty) = self.cast_to_typed(name, base, &elem)?;
        let rty = self.typed_ptr(&result_elem, space);
        let generic = self.typed_ptr("i8", space);
        if rty == generic {
            self.line(format!(
                "{name} = getelementptr {ib}{elem}, {pty} {ptr}, {}",
                indices.join(", ")
            ));
        } else {
            let t = self.fresh(name);
            self.line(format!(
                "{t} = getelementptr {ib}{elem}, {pty} {ptr}, {}",
                indices.join(", ")
            ));
            self.line(format!("{name} = bitcast {rty} {t} to {generic}"));
        }
        Ok(())
    }

    fn declare(&mut self, callee: LLVMValueRef) -> Res<()> {
        let name = value_name(callee);
        if self.decls.contains_key(&name) {
            return Ok(());
        }
        // SAFETY: `callee` is a live function.
        let text = unsafe {
            let fty = LLVMGlobalGetValueType(callee);
            let n = LLVMCountParamTypes(fty) as usize;
            let mut params = vec![std::ptr::null_mut(); n];
            LLVMGetParamTypes(fty, params.as_mut_ptr());
            let ps = params
                .iter()
                .map(|p| self.ty(*p))
                .collect::<Res<Vec<_>>>()?;
            format!(
                "declare {} {}({})",
                self.ty(LLVMGetReturnType(fty))?,
                global(&name),
                ps.join(", ")
            )
        };
        self.decls.insert(name, text);
        Ok(())
    }

    fn declare_text(&mut self, name: &str, text: String) {
        self.decls.entry(name.to_string()).or_insert(text);
    }

    /// `freeze` for LLVM 7, which cannot parse it (libNVVM 13:
    /// "expected instruction opcode"). Dropping it is unsound: libNVVM's
    /// LLVM 7 does have poison (it folds `icmp sgt (add nsw x, 1), x` to
    /// true), LLVM 22 inserts `freeze` exactly where a maybe-poison value
    /// must become one fixed value (a branch condition hoisted by loop
    /// unswitching or select-to-branch, a `select` of a maybe-poison
    /// operand), and a branch on poison or undef is undefined behaviour in
    /// LLVM 7. An inline-asm `mov` is opaque to the optimiser, so its
    /// result is a fixed value, which is what `freeze` means; it costs one
    /// `mov` that ptxas removes. Checked with libNVVM 13 (compute_90): the
    /// fold above no longer happens through the `mov`.
    /// An aggregate (`{ { i16, i16, i1 }, { i8*, … } }`, a struct of a
    /// closure's references) is frozen leaf by leaf: each scalar extracted,
    /// frozen as above, and inserted into the result.
    fn freeze_llvm7(&mut self, name: &str, a: LLVMValueRef) -> Res<()> {
        // SAFETY: `a` is a live value.
        let t = unsafe { LLVMTypeOf(a) };
        let v = self.val(a)?;
        self.freeze_value(name, t, &v)
    }

    fn freeze_value(&mut self, name: &str, ty: LLVMTypeRef, v: &str) -> Res<()> {
        let t = self.ty(ty)?;
        // SAFETY: `ty` is a live type of the module; each index is below
        // its element count.
        let elements: Vec<LLVMTypeRef> = unsafe {
            match LLVMGetTypeKind(ty) {
                LLVMTypeKind::LLVMStructTypeKind => (0..LLVMCountStructElementTypes(ty))
                    .map(|k| LLVMStructGetTypeAtIndex(ty, k))
                    .collect(),
                LLVMTypeKind::LLVMArrayTypeKind => {
                    vec![LLVMGetElementType(ty); LLVMGetArrayLength2(ty) as usize]
                }
                _ => return self.freeze_scalar(name, &t, v),
            }
        };
        if elements.is_empty() {
            return self.err(format!("freeze of `{t}`"));
        }
        let mut acc = "undef".to_string();
        for (k, &elem) in elements.iter().enumerate() {
            let et = self.ty(elem)?;
            let part = self.fresh(name);
            self.line(format!("{part} = extractvalue {t} {v}, {k}"));
            let frozen = self.fresh(name);
            self.freeze_value(&frozen, elem, &part)?;
            let next = if k + 1 == elements.len() {
                name.to_string()
            } else {
                self.fresh(name)
            };
            self.line(format!(
                "{next} = insertvalue {t} {acc}, {et} {frozen}, {k}"
            ));
            acc = next;
        }
        Ok(())
    }

    fn freeze_scalar(&mut self, name: &str, t: &str, v: &str) -> Res<()> {
        // (register type, asm width) the value travels as.
        let (via, width) = match t {
            "i1" | "i8" | "i16" | "i32" | "float" => ("i32", 32),
            "i64" | "double" => ("i64", 64),
            _ if t.ends_with('*') => ("i64", 64),
            _ => return self.err(format!("freeze of `{t}`")),
        };
        let (into, back) = match t {
            "i32" | "i64" => (None, None),
            "float" | "double" => (Some("bitcast"), Some("bitcast")),
            _ if t.ends_with('*') => (Some("ptrtoint"), Some("inttoptr")),
            _ => (Some("zext"), Some("trunc")),
        };
        let input = match into {
            Some(op) => {
                let w = self.fresh(name);
                self.line(format!("{w} = {op} {t} {v} to {via}"));
                w
            }
            None => v.to_string(),
        };
        let (constraint, mov) = if width == 32 {
            ("=r,r", "mov.b32")
        } else {
            ("=l,l", "mov.b64")
        };
        let asm = format!("call {via} asm \"{mov} $0, $1;\", \"{constraint}\"({via} {input})");
        match back {
            Some(op) => {
                let f = self.fresh(name);
                self.line(format!("{f} = {asm}"));
                self.line(format!("{name} = {op} {via} {f} to {t}"));
            }
            None => self.line(format!("{name} = {asm}")),
        }
        Ok(())
    }

    fn call(&mut self, i: LLVMValueRef, name: &str) -> Res<()> {
        // SAFETY: `i` is a call; its callee is its last operand.
        let (callee, nargs) = unsafe { (LLVMGetCalledValue(i), LLVMGetNumArgOperands(i)) };
        // SAFETY: as above.
        if unsafe { LLVMIsAFunction(callee).is_null() } {
            return self.err("indirect calls are not supported");
        }
        let callee_name = value_name(callee);
        let args: Vec<LLVMValueRef> = (0..nargs).map(|k| self.operand(i, k)).collect::<Res<_>>()?;
        if callee_name.starts_with("llvm.") {
            return self.intrinsic(i, name, &callee_name, callee, &args);
        }
        self.plain_call(i, name, callee, &args)
    }

    fn plain_call(
        &mut self,
        i: LLVMValueRef,
        name: &str,
        callee: LLVMValueRef,
        args: &[LLVMValueRef],
    ) -> Res<()> {
        let ret = self.type_of(i)?;
        let list = args
            .iter()
            .map(|a| self.typed(*a))
            .collect::<Res<Vec<_>>>()?;
        let call = format!(
            "call {ret} {}({})",
            global(&value_name(callee)),
            list.join(", ")
        );
        // SAFETY: `callee` is a live function.
        if unsafe { LLVMCountBasicBlocks(callee) } == 0 {
            self.declare(callee)?;
        }
        if ret == "void" {
            self.line(call);
        } else {
            self.line(format!("{name} = {call}"));
        }
        Ok(())
    }

    /// `a OP b` and whether it overflowed, for `OP` in `{s,u}{add,sub,mul}`.
    /// libNVVM's overflow intrinsics take only i16, i32 and i64: narrower
    /// integers are computed exactly in i32 and compared after a round trip.
    fn overflow(
        &mut self,
        name: &str,
        op: &str,
        ty: &str,
        a: &str,
        b: &str,
    ) -> Res<(String, String)> {
        let width = int_width(ty).unwrap_or(0);
        match width {
            16 | 32 | 64 => {
                let f = format!("llvm.{op}.with.overflow.{ty}");
                self.declare_text(&f, format!("declare {{ {ty}, i1 }} @{f}({ty}, {ty})"));
                let [pair, r, o] = [(); 3].map(|_| self.fresh(name));
                self.line(format!(
                    "{pair} = call {{ {ty}, i1 }} @{f}({ty} {a}, {ty} {b})"
                ));
                self.line(format!("{r} = extractvalue {{ {ty}, i1 }} {pair}, 0"));
                self.line(format!("{o} = extractvalue {{ {ty}, i1 }} {pair}, 1"));
                Ok((r, o))
            }
            1..=15 => {
                let ext = if op.starts_with('s') { "sext" } else { "zext" };
                let word = &op[1..];
                let [wa, wb, wide, r, back, o] = [(); 6].map(|_| self.fresh(name));
                self.line(format!("{wa} = {ext} {ty} {a} to i32"));
                self.line(format!("{wb} = {ext} {ty} {b} to i32"));
                self.line(format!("{wide} = {word} i32 {wa}, {wb}"));
                self.line(format!("{r} = trunc i32 {wide} to {ty}"));
                self.line(format!("{back} = {ext} {ty} {r} to i32"));
                self.line(format!("{o} = icmp ne i32 {back}, {wide}"));
                Ok((r, o))
            }
            128 => self.overflow128(name, op, a, b),
            _ => self.err(format!("overflow arithmetic on `{ty}` has no NVVM form")),
        }
    }

    /// The `*.with.overflow.i128` family, which libNVVM does not have, from
    /// plain i128 arithmetic (which it has). Add and subtract compare the
    /// result with the operands; multiply splits the operands in 64-bit
    /// halves: `a * b` fits when at most one high half is non-zero, the
    /// cross product fits in 64 bits, and adding it (shifted) to the exact
    /// low product does not carry. The signed forms multiply magnitudes and
    /// compare against 2^127 (2^127 - 1 for a positive result).
    fn overflow128(&mut self, name: &str, op: &str, a: &str, b: &str) -> Res<(String, String)> {
        const TWO_127: &str = "170141183460469231731687303715884105728";
        const TWO_127_M1: &str = "170141183460469231731687303715884105727";
        match op {
            "uadd" | "usub" => {
                let [r, o] = [(); 2].map(|_| self.fresh(name));
                let word = &op[1..];
                self.line(format!("{r} = {word} i128 {a}, {b}"));
                if op == "uadd" {
                    self.line(format!("{o} = icmp ult i128 {r}, {a}"));
                } else {
                    self.line(format!("{o} = icmp ult i128 {a}, {b}"));
                }
                Ok((r, o))
            }
            "sadd" | "ssub" => {
                let [r, x, y, both, o] = [(); 5].map(|_| self.fresh(name));
                let word = &op[1..];
                self.line(format!("{r} = {word} i128 {a}, {b}"));
                if op == "sadd" {
                    // Overflow iff both operands differ in sign from the result.
                    self.line(format!("{x} = xor i128 {a}, {r}"));
                    self.line(format!("{y} = xor i128 {b}, {r}"));
                } else {
                    // Overflow iff the operands differ in sign and the result
                    // differs in sign from `a`.
                    self.line(format!("{x} = xor i128 {a}, {b}"));
                    self.line(format!("{y} = xor i128 {a}, {r}"));
                }
                self.line(format!("{both} = and i128 {x}, {y}"));
                self.line(format!("{o} = icmp slt i128 {both}, 0"));
                Ok((r, o))
            }
            "umul" => {
                let r = self.fresh(name);
                self.line(format!("{r} = mul i128 {a}, {b}"));
                let o = self.umul128_overflow(name, a, b)?;
                Ok((r, o))
            }
            "smul" => {
                let [r, an, bn, na, nb, ua, ub, neg, lim, big, o] =
                    [(); 11].map(|_| self.fresh(name));
                self.line(format!("{r} = mul i128 {a}, {b}"));
                self.line(format!("{an} = icmp slt i128 {a}, 0"));
                self.line(format!("{bn} = icmp slt i128 {b}, 0"));
                self.line(format!("{na} = sub i128 0, {a}"));
                self.line(format!("{nb} = sub i128 0, {b}"));
                self.line(format!("{ua} = select i1 {an}, i128 {na}, i128 {a}"));
                self.line(format!("{ub} = select i1 {bn}, i128 {nb}, i128 {b}"));
                let uo = self.umul128_overflow(name, &ua, &ub)?;
                let p = self.fresh(name);
                self.line(format!("{p} = mul i128 {ua}, {ub}"));
                self.line(format!("{neg} = xor i1 {an}, {bn}"));
                self.line(format!(
                    "{lim} = select i1 {neg}, i128 {TWO_127}, i128 {TWO_127_M1}"
                ));
                self.line(format!("{big} = icmp ugt i128 {p}, {lim}"));
                self.line(format!("{o} = or i1 {uo}, {big}"));
                Ok((r, o))
            }
            _ => self.err(format!(
                "overflow arithmetic `{op}` on `i128` has no NVVM form"
            )),
        }
    }

    /// Whether the unsigned product of two i128 values overflows (see
    /// [`Self::overflow128`]).
    fn umul128_overflow(&mut self, name: &str, a: &str, b: &str) -> Res<String> {
        const LO_MASK: &str = "18446744073709551615";
        let [ah, bh, al, bl, ahz, bhz, both, c1, c2, cross, crossbig, low, sh, sum, carry, o1, o] =
            [(); 17].map(|_| self.fresh(name));
        self.line(format!("{ah} = lshr i128 {a}, 64"));
        self.line(format!("{bh} = lshr i128 {b}, 64"));
        self.line(format!("{al} = and i128 {a}, {LO_MASK}"));
        self.line(format!("{bl} = and i128 {b}, {LO_MASK}"));
        self.line(format!("{ahz} = icmp ne i128 {ah}, 0"));
        self.line(format!("{bhz} = icmp ne i128 {bh}, 0"));
        self.line(format!("{both} = and i1 {ahz}, {bhz}"));
        // With at most one high half non-zero, each partial product of two
        // 64-bit halves is exact in i128, and so is their sum.
        self.line(format!("{c1} = mul i128 {ah}, {bl}"));
        self.line(format!("{c2} = mul i128 {al}, {bh}"));
        self.line(format!("{cross} = add i128 {c1}, {c2}"));
        self.line(format!("{crossbig} = icmp ugt i128 {cross}, {LO_MASK}"));
        self.line(format!("{low} = mul i128 {al}, {bl}"));
        self.line(format!("{sh} = shl i128 {cross}, 64"));
        self.line(format!("{sum} = add i128 {low}, {sh}"));
        self.line(format!("{carry} = icmp ult i128 {sum}, {low}"));
        self.line(format!("{o1} = or i1 {both}, {crossbig}"));
        self.line(format!("{o} = or i1 {o1}, {carry}"));
        Ok(o)
    }

    fn intrinsic(
        &mut self,
        i: LLVMValueRef,
        name: &str,
        full: &str,
        callee: LLVMValueRef,
        args: &[LLVMValueRef],
    ) -> Res<()> {
        const DROPPED: &[&str] = &[
            "llvm.lifetime.start",
            "llvm.lifetime.end",
            "llvm.assume",
            "llvm.experimental.noalias.scope.decl",
            "llvm.dbg.",
            "llvm.invariant.start",
            "llvm.invariant.end",
            "llvm.sideeffect",
            "llvm.donothing",
        ];
        const KEPT: &[&str] = &[
            "llvm.trap",
            "llvm.ctpop.",
            "llvm.ctlz.",
            "llvm.cttz.",
            "llvm.bswap.",
            "llvm.bitreverse.",
            "llvm.sqrt.",
            "llvm.floor.",
            "llvm.ceil.",
            "llvm.fma.",
            "llvm.fmuladd.",
            "llvm.copysign.",
            "llvm.minnum.",
            "llvm.maxnum.",
        ];
        let is = |list: &[&str]| {
            list.iter().any(|p| {
                if p.ends_with('.') {
                    full.starts_with(p)
                } else {
                    full == *p || full.starts_with(&format!("{p}."))
                }
            })
        };
        if is(DROPPED) {
            return Ok(());
        }
        if !self.llvm7() || is(KEPT) {
            return self.plain_call(i, name, callee, args);
        }
        // libNVVM rejects these LLVM intrinsics; NVVM's own do the same.
        const RENAMED: &[(&str, &str)] = &[
            ("llvm.fabs.f32", "llvm.nvvm.fabs.f"),
            ("llvm.fabs.f64", "llvm.nvvm.fabs.d"),
            ("llvm.trunc.f32", "llvm.nvvm.trunc.f"),
            ("llvm.trunc.f64", "llvm.nvvm.trunc.d"),
            // NVVM's `round` rounds half to even (libdevice's `rintf` is
            // it); Rust's `round` (half away from zero) is expanded below.
            ("llvm.roundeven.f32", "llvm.nvvm.round.f"),
            ("llvm.roundeven.f64", "llvm.nvvm.round.d"),
        ];
        if let Some((_, nvvm)) = RENAMED.iter().find(|(l, _)| *l == full) {
            let ty = self.type_of(i)?;
            let list = args
                .iter()
                .map(|a| self.typed(*a))
                .collect::<Res<Vec<_>>>()?;
            let tys: Vec<&str> = list.iter().map(|_| ty.as_str()).collect();
            self.declare_text(nvvm, format!("declare {ty} @{nvvm}({})", tys.join(", ")));
            self.line(format!("{name} = call {ty} @{nvvm}({})", list.join(", ")));
            return Ok(());
        }
        if full.contains(".with.overflow.") {
            let op = full["llvm.".len()..]
                .split('.')
                .next()
                .unwrap_or("")
                .to_string();
            let ty = self.type_of(args.first().copied().unwrap_or(i))?;
            let (a, b) = match args {
                [a, b] => (self.val(*a)?, self.val(*b)?),
                _ => return self.err(format!("`{full}` without two arguments")),
            };
            let (r, o) = self.overflow(name, &op, &ty, &a, &b)?;
            let pair = format!("{{ {ty}, i1 }}");
            let t = self.fresh(name);
            self.line(format!("{t} = insertvalue {pair} undef, {ty} {r}, 0"));
            self.line(format!("{name} = insertvalue {pair} {t}, i1 {o}, 1"));
            return Ok(());
        }
        let base = full.split('.').take(2).collect::<Vec<_>>().join(".");
        let function = self.function.clone();
        let arg = |k: usize| -> Res<LLVMValueRef> {
            args.get(k).copied().ok_or_else(|| NvvmIrError {
                function: function.clone(),
                message: format!("`{full}` without argument {k}"),
            })
        };
        let ty = self.type_of(i)?;
        match base.as_str() {
            "llvm.smax" | "llvm.smin" | "llvm.umax" | "llvm.umin" => {
                let pred = match base.as_str() {
                    "llvm.smax" => "sgt",
                    "llvm.smin" => "slt",
                    "llvm.umax" => "ugt",
                    _ => "ult",
                };
                let (a, b) = (self.val(arg(0)?)?, self.val(arg(1)?)?);
                let c = self.fresh(name);
                self.line(format!("{c} = icmp {pred} {ty} {a}, {b}"));
                self.line(format!("{name} = select i1 {c}, {ty} {a}, {ty} {b}"));
            }
            // Three-way compare (LLVM 19+; InstCombine forms it from
            // `signum` and `Ord::cmp` shapes): -1, 0 or 1 in the result type.
            "llvm.scmp" | "llvm.ucmp" => {
                let (lt, gt) = if base == "llvm.scmp" {
                    ("slt", "sgt")
                } else {
                    ("ult", "ugt")
                };
                let op_ty = self.type_of(arg(0)?)?;
                let (a, b) = (self.val(arg(0)?)?, self.val(arg(1)?)?);
                let [l, g, z] = [(); 3].map(|_| self.fresh(name));
                self.line(format!("{l} = icmp {lt} {op_ty} {a}, {b}"));
                self.line(format!("{g} = icmp {gt} {op_ty} {a}, {b}"));
                self.line(format!("{z} = zext i1 {g} to {ty}"));
                self.line(format!("{name} = select i1 {l}, {ty} -1, {ty} {z}"));
            }
            // Half away from zero, as libdevice's `roundf`: add a half of
            // the operand's sign rounding toward zero, then truncate.
            "llvm.round" => {
                let (add, trunc) = match ty.as_str() {
                    "float" => ("llvm.nvvm.add.rz.f", "llvm.nvvm.trunc.f"),
                    "double" => ("llvm.nvvm.add.rz.d", "llvm.nvvm.trunc.d"),
                    other => return self.err(format!("`{full}` on `{other}`")),
                };
                let copysign = format!("llvm.copysign.{}", &full["llvm.round.".len()..]);
                self.declare_text(&copysign, format!("declare {ty} @{copysign}({ty}, {ty})"));
                self.declare_text(add, format!("declare {ty} @{add}({ty}, {ty})"));
                self.declare_text(trunc, format!("declare {ty} @{trunc}({ty})"));
                let a = self.val(arg(0)?)?;
                let [half, sum] = [(); 2].map(|_| self.fresh(name));
                self.line(format!(
                    "{half} = call {ty} @{copysign}({ty} 5.000000e-01, {ty} {a})"
                ));
                self.line(format!("{sum} = call {ty} @{add}({ty} {a}, {ty} {half})"));
                self.line(format!("{name} = call {ty} @{trunc}({ty} {sum})"));
            }
            // A float class test (LLVM 16+; InstCombine forms it from
            // `is_finite`/`is_infinite` shapes), on the bits: the magnitude
            // against infinity's pattern and the quiet bit, and the sign.
            "llvm.is" if full.starts_with("llvm.is.fpclass.") => {
                let x_ty = self.type_of(arg(0)?)?;
                let (int, exponent_bits, mantissa) = match x_ty.as_str() {
                    "float" => ("i32", 8u32, 23u32),
                    "double" => ("i64", 11, 52),
                    other => return self.err(format!("`{full}` on `{other}`")),
                };
                let mask_text = self.val(arg(1)?)?;
                let mask: u32 = mask_text
                    .parse()
                    .or_else(|_| self.err(format!("`{full}` with test mask `{mask_text}`")))?;
                let x = self.val(arg(0)?)?;
                let inf: u64 = ((1u64 << exponent_bits) - 1) << mantissa;
                let quiet: u64 = 1 << (mantissa - 1);
                let min_normal: u64 = 1 << mantissa;
                let abs_mask: u64 = (1u64 << (mantissa + exponent_bits)) - 1;
                let [bits, mag, neg, pos] = [(); 4].map(|_| self.fresh(name));
                self.line(format!("{bits} = bitcast {x_ty} {x} to {int}"));
                self.line(format!("{mag} = and {int} {bits}, {abs_mask}"));
                self.line(format!("{neg} = icmp slt {int} {bits}, 0"));
                self.line(format!("{pos} = xor i1 {neg}, true"));
                let mut terms: Vec<String> = Vec::new();
                // Bits 0 and 1: signalling and quiet NaN, of either sign.
                match (mask & 1 != 0, mask & 2 != 0) {
                    (true, true) => {
                        let t = self.fresh(name);
                        self.line(format!("{t} = icmp ugt {int} {mag}, {inf}"));
                        terms.push(t);
                    }
                    (false, true) => {
                        let t = self.fresh(name);
                        self.line(format!("{t} = icmp uge {int} {mag}, {}", inf | quiet));
                        terms.push(t);
                    }
                    (true, false) => {
                        let [a, b, t] = [(); 3].map(|_| self.fresh(name));
                        self.line(format!("{a} = icmp ugt {int} {mag}, {inf}"));
                        self.line(format!("{b} = icmp ult {int} {mag}, {}", inf | quiet));
                        self.line(format!("{t} = and i1 {a}, {b}"));
                        terms.push(t);
                    }
                    (false, false) => {}
                }
                // (negative bit, positive bit, the magnitude's range [lo, hi)).
                let classes = [
                    (2, 9, inf, inf + 1),
                    (3, 8, min_normal, inf),
                    (4, 7, 1, min_normal),
                    (5, 6, 0, 1),
                ];
                for (nbit, pbit, lo, hi) in classes {
                    let (n, p) = (mask >> nbit & 1 != 0, mask >> pbit & 1 != 0);
                    if !n && !p {
                        continue;
                    }
                    let [off, within] = [(); 2].map(|_| self.fresh(name));
                    self.line(format!("{off} = sub {int} {mag}, {lo}"));
                    self.line(format!("{within} = icmp ult {int} {off}, {}", hi - lo));
                    let t = match (n, p) {
                        (true, true) => within,
                        (sign_negative, _) => {
                            let t = self.fresh(name);
                            let sign = if sign_negative { &neg } else { &pos };
                            self.line(format!("{t} = and i1 {within}, {sign}"));
                            t
                        }
                    };
                    terms.push(t);
                }
                let mut acc = String::from("false");
                for t in terms {
                    let next = self.fresh(name);
                    self.line(format!("{next} = or i1 {acc}, {t}"));
                    acc = next;
                }
                self.line(format!("{name} = or i1 {acc}, false"));
            }
            "llvm.abs" => {
                let a = self.val(arg(0)?)?;
                let (neg, c) = (self.fresh(name), self.fresh(name));
                self.line(format!("{neg} = sub {ty} 0, {a}"));
                self.line(format!("{c} = icmp slt {ty} {a}, 0"));
                self.line(format!("{name} = select i1 {c}, {ty} {neg}, {ty} {a}"));
            }
            "llvm.fshl" | "llvm.fshr" => {
                let width = int_width(&ty).ok_or_else(|| NvvmIrError {
                    function: self.function.clone(),
                    message: format!("`{full}` on `{ty}`"),
                })?;
                let (a, b, s) = (self.val(arg(0)?)?, self.val(arg(1)?)?, self.val(arg(2)?)?);
                let [m, inv, hi, lo, or, z] = [(); 6].map(|_| self.fresh(name));
                self.line(format!("{m} = and {ty} {s}, {}", width - 1));
                self.line(format!("{inv} = sub {ty} {width}, {m}"));
                if base == "llvm.fshl" {
                    self.line(format!("{hi} = shl {ty} {a}, {m}"));
                    self.line(format!("{lo} = lshr {ty} {b}, {inv}"));
                } else {
                    self.line(format!("{hi} = shl {ty} {a}, {inv}"));
                    self.line(format!("{lo} = lshr {ty} {b}, {m}"));
                }
                self.line(format!("{or} = or {ty} {hi}, {lo}"));
                self.line(format!("{z} = icmp eq {ty} {m}, 0"));
                let keep = if base == "llvm.fshl" { a } else { b };
                self.line(format!("{name} = select i1 {z}, {ty} {keep}, {ty} {or}"));
            }
            "llvm.sadd" | "llvm.ssub" | "llvm.uadd" | "llvm.usub" if full.contains(".sat.") => {
                let width = int_width(&ty).ok_or_else(|| NvvmIrError {
                    function: self.function.clone(),
                    message: format!("`{full}` on `{ty}`"),
                })?;
                let op = &base["llvm.".len()..];
                let op = op.to_string();
                let (a, b) = (self.val(arg(0)?)?, self.val(arg(1)?)?);
                let (r, o) = self.overflow(name, &op, &ty, &a, &b)?;
                let sat = self.fresh(name);
                match op.as_str() {
                    "sadd" | "ssub" => {
                        let neg = self.fresh(name);
                        let (min, max) = signed_bounds(width);
                        self.line(format!("{neg} = icmp slt {ty} {a}, 0"));
                        self.line(format!("{sat} = select i1 {neg}, {ty} {min}, {ty} {max}"));
                    }
                    "uadd" => self.line(format!("{sat} = add {ty} 0, -1")),
                    _ => self.line(format!("{sat} = add {ty} 0, 0")),
                }
                self.line(format!("{name} = select i1 {o}, {ty} {sat}, {ty} {r}"));
            }
            "llvm.fptosi" | "llvm.fptoui" if full.contains(".sat.") => {
                let width = int_width(&ty).ok_or_else(|| NvvmIrError {
                    function: self.function.clone(),
                    message: format!("`{full}` to `{ty}`"),
                })?;
                let x = arg(0)?;
                let fty = self.type_of(x)?;
                if fty != "float" && fty != "double" {
                    return self.err(format!("`{full}` from `{fty}`"));
                }
                let xv = self.val(x)?;
                let signed = base == "llvm.fptosi";
                // Bounds as exact powers of two (representable in float).
                let (lo, hi) = if signed {
                    (-(2f64.powi(width as i32 - 1)), 2f64.powi(width as i32 - 1))
                } else {
                    (0.0, 2f64.powi(width as i32))
                };
                let (min, max) = if signed {
                    signed_bounds(width)
                } else {
                    ("0".to_string(), "-1".to_string())
                };
                let word = if signed { "fptosi" } else { "fptoui" };
                let [c, nan, big, small, s1, s2] = [(); 6].map(|_| self.fresh(name));
                self.line(format!("{c} = {word} {fty} {xv} to {ty}"));
                self.line(format!("{nan} = fcmp uno {fty} {xv}, {xv}"));
                self.line(format!(
                    "{big} = fcmp oge {fty} {xv}, 0x{:016X}",
                    hi.to_bits()
                ));
                self.line(format!(
                    "{small} = fcmp olt {fty} {xv}, 0x{:016X}",
                    lo.to_bits()
                ));
                self.line(format!("{s1} = select i1 {small}, {ty} {min}, {ty} {c}"));
                self.line(format!("{s2} = select i1 {big}, {ty} {max}, {ty} {s1}"));
                self.line(format!("{name} = select i1 {nan}, {ty} 0, {ty} {s2}"));
            }
            _ => return self.err(format!("the intrinsic `{full}` has no LLVM 7 form here")),
        }
        Ok(())
    }
}

fn int_width(ty: &str) -> Option<u32> {
    ty.strip_prefix('i')?.parse().ok()
}

/// `iN::MIN` and `iN::MAX` as decimal text.
fn signed_bounds(width: u32) -> (String, String) {
    if width >= 128 {
        (i128::MIN.to_string(), i128::MAX.to_string())
    } else {
        let min = -(1i128 << (width - 1));
        (min.to_string(), (-min - 1).to_string())
    }
}
