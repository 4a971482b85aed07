//! Code generation for every admitted case of tests/admission: PTX from
//! LLVM's NVPTX target, NVVM IR that libNVVM accepts and compiles to LTOIR,
//! debug lines in PTX with `-g`; reviewed snapshots of the optimised thunk
//! IR and of the NVVM IR; and the point of the LTOIR route, checked in the
//! SASS of the linked reduce kernel: with LTOIR on both sides the callback
//! is inlined (no `CALL`), with a PTX thunk the call remains.

use std::path::{Path, PathBuf};
use std::process::Command;

use backend_nvptx::codegen::{compile_ltoir, emit_llvm_ir, emit_nvvm_ir, emit_ptx, CodegenOptions};
use backend_nvptx::nvrtc::{self, NvrtcOptions, NvrtcTarget};
use backend_nvptx::{describe, Arch, ItemKind, LinkInput, LinkPlan};
use frontend::bridge::Bridge;
use frontend::toolchain::RustcConfig;
use manifest::provider::{emit_translation_unit, kernel_name, KernelRequest, Operation};
use manifest::{Provider, RegistrationId, Variant};
use melior::Context;
use passes::lower::{Options, Pipeline, Thunk};
use passes::pipeline::admitted;

const CASES: &[(&str, u8, bool)] = &[
    ("01_add_overflow_checks.rs", 0, true),
    ("02_fn_item_add.rs", 0, true),
    ("03_wrapping_capture.rs", 0, true),
    ("04_mixed_scalar_captures.rs", 0, true),
    ("05_helper_chain.rs", 0, true),
    ("06_if_else_while.rs", 0, true),
    ("07_core_scalar_methods.rs", 0, true),
    ("08_wrapping_capture_opt3.rs", 3, true),
];

fn case(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/admission")
        .join(name)
}

/// Imports, admits and lowers a case; the module is LLVM dialect after.
fn lowered<'c>(
    context: &'c Context,
    name: &str,
    opt: u8,
    checks: bool,
) -> (melior::ir::Module<'c>, Vec<Thunk>) {
    lowered_file(context, &case(name), opt, checks)
}

fn lowered_file<'c>(
    context: &'c Context,
    path: &Path,
    opt: u8,
    checks: bool,
) -> (melior::ir::Module<'c>, Vec<Thunk>) {
    let name = path.display();
    let bridge = Bridge::new(RustcConfig {
        opt_level: opt,
        overflow_checks: checks,
        ..RustcConfig::default()
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let pmir = bridge
        .import(path)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut module = ir::import(context, &pmir).unwrap_or_else(|e| panic!("{name}: {e}"));
    let outcomes = passes::pipeline::admit_module(&module).unwrap_or_else(|e| panic!("{e}"));
    let lowered = Pipeline::standard()
        .run(&mut module, &admitted(&outcomes), &Options::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    (module, lowered.thunks)
}

fn context() -> Context {
    ir::context().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_admitted_case_emits_ptx_and_ltoir() {
    let options = CodegenOptions::default();
    for (name, opt, checks) in CASES {
        let context = context();
        let (module, thunks) = lowered(&context, name, *opt, *checks);
        let thunk = &thunks[0].symbol;
        let ptx = emit_ptx(&module, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(ptx.contains(".target sm_90"), "{name}:\n{ptx}");
        assert!(
            ptx.contains(&format!(
                ".visible .func  (.param .b32 func_retval0) {thunk}("
            )),
            "{name}: no exported thunk in\n{ptx}"
        );
        let nvvm = emit_nvvm_ir(&module, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(
            nvvm.contains(&format!("define i32 @{thunk}(i8* %p0, i32 %p1, i32 %p2)")),
            "{name}:\n{nvvm}"
        );
        for modern in [" ptr ", "ptr,", "poison", "captures(", "memory(", "noundef"] {
            assert!(
                !nvvm.contains(modern),
                "{name}: `{modern}` in LLVM 7 IR:\n{nvvm}"
            );
        }
        let ltoir =
            compile_ltoir(&module, &options).unwrap_or_else(|e| panic!("{name}: {e}\n{nvvm}"));
        let d = describe("thunk.ltoir", &ltoir).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(d.kind(), ItemKind::Ltoir, "{name}");
    }
}

#[test]
fn debug_info_reaches_the_ptx() {
    let context = context();
    let (module, _) = lowered(&context, "07_core_scalar_methods.rs", 0, true);
    let options = CodegenOptions {
        debug: backend_nvptx::codegen::DebugInfo::Full,
        ..CodegenOptions::default()
    };
    let ptx = emit_ptx(&module, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(ptx.contains(".file\t1 \""), "{ptx}");
    assert!(ptx.contains("07_core_scalar_methods.rs\""), "{ptx}");
    // Prepared MIR locates calls by their own span and other statements by
    // the closure's: line 6 is the closure, line 8 `a.abs().max(b.abs())`.
    for line in [".loc\t1 6 29", ".loc\t1 8 "] {
        assert!(
            ptx.lines().any(|l| l.trim_start().starts_with(line)),
            "no `{line}` in\n{ptx}"
        );
    }
    let plain = emit_ptx(&module, &CodegenOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(!plain.contains(".loc"), "{plain}");
}

/// The NVVM IR of a helper chain with `-g` and `-lineinfo` metadata, on
/// both dialects: libNVVM compiles it (a form it does not take is refused
/// or silently dropped, so the PTX is checked for the Rust lines too), and
/// the `sm_90` text is a reviewed snapshot.
#[test]
fn nvvm_ir_debug_info_is_what_libnvvm_takes() {
    use backend_nvptx::codegen::DebugInfo;
    let context = context();
    let (module, _) = lowered(&context, "05_helper_chain.rs", 0, true);
    for arch in ["sm_90", "sm_100"] {
        for debug in [DebugInfo::LineTables, DebugInfo::Full] {
            let options = CodegenOptions {
                arch: arch.parse::<Arch>().unwrap_or_else(|e| panic!("{e}")),
                debug,
                ..CodegenOptions::default()
            };
            let nvvm = emit_nvvm_ir(&module, &options).unwrap_or_else(|e| panic!("{e}"));
            assert!(nvvm.contains("!nvvmir.version = !{!0}\n!0 = !{i32 2, i32 0, i32 3, i32 2}"));
            assert!(nvvm.contains("inlinedAt: !"), "{nvvm}");
            if arch == "sm_90" {
                // The folder is the checkout's: not part of the snapshot.
                let redacted: String = nvvm
                    .lines()
                    .map(|l| match l.split_once("directory: \"") {
                        Some((head, _)) => {
                            format!("{head}directory: \"CHECKOUT/tests/admission\")")
                        }
                        None => l.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                snapshot(&format!("nvvm_debug_{debug:?}_05_helper_chain"), &redacted);
            }
            // libNVVM's PTX of the same IR keeps the Rust lines.
            let ptx =
                backend_nvptx::nvvm::compile_to_ptx("debug.ll", nvvm.as_bytes(), options.arch)
                    .unwrap_or_else(|e| panic!("{arch} {debug:?}: {e}\n{nvvm}"));
            let ptx = String::from_utf8_lossy(&ptx.bytes);
            assert!(
                ptx.contains("05_helper_chain.rs\""),
                "{arch} {debug:?}: {ptx}"
            );
            assert!(ptx.contains(".loc\t"), "{arch} {debug:?}: {ptx}");
            assert_eq!(
                ptx.contains(", debug"),
                debug == DebugInfo::Full,
                "{arch} {debug:?}: only -g makes ptxas compile for the debugger"
            );
            compile_ltoir(&module, &options).unwrap_or_else(|e| panic!("{e}\n{nvvm}"));
        }
    }
}

#[test]
fn blackwell_gets_modern_nvvm_ir_that_libnvvm_accepts() {
    let context = context();
    let (module, thunks) = lowered(&context, "07_core_scalar_methods.rs", 0, true);
    let options = CodegenOptions {
        arch: "sm_100".parse::<Arch>().unwrap_or_else(|e| panic!("{e}")),
        ..CodegenOptions::default()
    };
    let nvvm = emit_nvvm_ir(&module, &options).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        nvvm.contains(&format!(
            "define i32 @{}(ptr %p0, i32 %p1, i32 %p2)",
            thunks[0].symbol
        )),
        "{nvvm}"
    );
    assert!(nvvm.contains("@llvm.smax.i32"), "{nvvm}");
    compile_ltoir(&module, &options).unwrap_or_else(|e| panic!("{e}\n{nvvm}"));
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({
        snapshot_path => "../../snapshots/lower",
        prepend_module_to_snapshot => false,
    }, {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn thunk_ir_snapshots() {
    let options = CodegenOptions::default();
    for (name, stem) in [
        ("03_wrapping_capture.rs", "03_wrapping_capture"),
        ("04_mixed_scalar_captures.rs", "04_mixed_scalar_captures"),
        ("07_core_scalar_methods.rs", "07_core_scalar_methods"),
    ] {
        let context = context();
        let (module, _) = lowered(&context, name, 0, true);
        let llvm = emit_llvm_ir(&module, &options).unwrap_or_else(|e| panic!("{e}"));
        snapshot(&format!("llvm_o3_{stem}"), &llvm);
        let nvvm = emit_nvvm_ir(&module, &options).unwrap_or_else(|e| panic!("{e}"));
        snapshot(&format!("nvvm_{stem}"), &nvvm);
    }
}

// ---- the SASS check ----

fn cuobjdump() -> PathBuf {
    let root = backend_nvptx::nvidia::wheel_root()
        .unwrap_or_else(|| panic!("no .nvidia/nvidia/cu13: run scripts/setup.sh"));
    root.join("bin/cuobjdump")
}

/// The SASS of `kernel` in `cubin`, as cuobjdump prints it.
fn kernel_sass(cubin: &[u8], kernel: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("linked.cubin");
    std::fs::write(&path, cubin).unwrap();
    let out = Command::new(cuobjdump())
        .arg("-sass")
        .arg(&path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cuobjdump: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut sections = text.split("Function : ").skip(1);
    sections
        .find(|s| s.lines().next().map(str::trim) == Some(kernel))
        .unwrap_or_else(|| panic!("no `{kernel}` in\n{text}"))
        .to_string()
}

/// Links the reduce provider (NVRTC, `-dlto -rdc=true`) with the thunk.
fn link_reduce(thunk: &Thunk, variant: Variant, thunk_input: LinkInput) -> (Vec<u8>, String) {
    let tu = emit_translation_unit(&[KernelRequest::i32_reduce(
        RegistrationId(thunk.registration as u32),
        Operation::Thunk {
            symbol: thunk.symbol.clone(),
            variant,
        },
        thunk.env.clone(),
    )])
    .unwrap_or_else(|e| panic!("{e}"));
    let mut options = NvrtcOptions::new(Arch::SM_90, NvrtcTarget::Ltoir);
    options.extra = tu.nvrtc_options.clone();
    let provider =
        nvrtc::compile("reduce.cu", &tu.source, &options).unwrap_or_else(|e| panic!("{e}"));
    let linked = LinkPlan::new(Arch::SM_90)
        .with_input(
            LinkInput::new("reduce.ltoir", provider.bytes).unwrap_or_else(|e| panic!("{e}")),
        )
        .with_input(thunk_input)
        .link()
        .unwrap_or_else(|e| panic!("{e}"));
    let kernel = kernel_name(
        Provider::Reduce,
        &manifest::Scalar::I32.into(),
        Some(RegistrationId(thunk.registration as u32)),
        variant,
        manifest::Stage::Main,
    );
    (linked.bytes, kernel)
}

#[test]
fn ltoir_thunk_is_inlined_into_the_reduce_kernel_and_ptx_thunk_is_called() {
    let context = context();
    let (module, thunks) = lowered(&context, "03_wrapping_capture.rs", 0, true);
    let thunk = &thunks[0];
    let options = CodegenOptions::default();

    let ltoir = compile_ltoir(&module, &options).unwrap_or_else(|e| panic!("{e}"));
    let input = LinkInput::new("thunk.ltoir", ltoir).unwrap_or_else(|e| panic!("{e}"));
    let (cubin, kernel) = link_reduce(thunk, Variant::RustLtoir, input);
    let sass = kernel_sass(&cubin, &kernel);
    assert!(sass.contains("SHFL.DOWN"), "not the reduce kernel:\n{sass}");
    assert!(
        !sass.contains("CALL"),
        "the LTOIR thunk was not inlined:\n{sass}"
    );

    let ptx = emit_ptx(&module, &options).unwrap_or_else(|e| panic!("{e}"));
    let input = LinkInput::new("thunk.ptx", ptx.into_bytes()).unwrap_or_else(|e| panic!("{e}"));
    let (cubin, kernel) = link_reduce(thunk, Variant::RustPtx, input);
    let sass = kernel_sass(&cubin, &kernel);
    assert!(
        sass.contains("CALL"),
        "the PTX thunk should stay a call:\n{sass}"
    );
}

// ---- the NVVM IR emitter on IR the lowering rarely produces ----

/// Modern LLVM IR using what LLVM 7 lacks: every function must come out as
/// IR that libNVVM accepts for compute_90, and must keep its meaning
/// (checked on the emitted text for the expansions).
const MODERN_IR: &str = r#"
target triple = "nvptx64-nvidia-cuda"
%pair = type { i32, i64 }

define i32 @intrinsics(i32 %a, i32 %b, i8 %c, float %f) {
  %1 = call i32 @llvm.umin.i32(i32 %a, i32 %b)
  %2 = call i32 @llvm.fshr.i32(i32 %1, i32 %b, i32 %a)
  %3 = call i32 @llvm.usub.sat.i32(i32 %2, i32 %a)
  %4 = call i8 @llvm.sadd.sat.i8(i8 %c, i8 3)
  %5 = sext i8 %4 to i32
  %6 = call i32 @llvm.fptoui.sat.i32.f32(float %f)
  %7 = call i32 @llvm.abs.i32(i32 %5, i1 false)
  %8 = add nsw i32 %3, %6
  %9 = or disjoint i32 %8, %7
  %10 = freeze i32 %9
  ret i32 %10
}

define i16 @frozen_aggregate({ { i16, i1 }, [2 x ptr] } %a) {
  %f = freeze { { i16, i1 }, [2 x ptr] } %a
  %x = extractvalue { { i16, i1 }, [2 x ptr] } %f, 0, 0
  ret i16 %x
}

define float @floats(float %x, float %y) {
  %1 = fneg nnan float %x
  %2 = fadd fast float %1, %y
  %3 = call float @llvm.fabs.f32(float %2)
  ret float %3
}

define i64 @memory(ptr %p, i32 %i, i1 %c) {
entry:
  %slot = alloca %pair, align 8
  %f1 = getelementptr inbounds nuw %pair, ptr %slot, i32 0, i32 1
  store i64 7, ptr %f1, align 8
  %q = getelementptr inbounds [4 x i64], ptr %p, i64 0, i32 %i
  %v = load i64, ptr %q, align 8
  switch i32 %i, label %done [
    i32 1, label %one
    i32 2, label %done
  ]
one:
  %w = load i64, ptr %f1, align 8
  br label %done
done:
  %r = phi i64 [ %v, %entry ], [ %w, %one ], [ %v, %entry ]
  %s = select i1 %c, i64 %r, i64 0
  ret i64 %s
}

declare i32 @llvm.umin.i32(i32, i32)
declare i32 @llvm.fshr.i32(i32, i32, i32)
declare i32 @llvm.usub.sat.i32(i32, i32)
declare i8 @llvm.sadd.sat.i8(i8, i8)
declare i32 @llvm.fptoui.sat.i32.f32(float)
declare i32 @llvm.abs.i32(i32, i1)
declare float @llvm.fabs.f32(float)
"#;

#[test]
fn the_nvvm_emitter_writes_llvm7_ir_libnvvm_accepts() {
    use backend_nvptx::codegen::{emit_nvvm_ir_text, NvvmDialect};
    use inkwell::{context::Context as Llvm, memory_buffer::MemoryBuffer};
    let llvm = Llvm::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(MODERN_IR.as_bytes(), "modern.ll");
    let module = llvm
        .create_module_from_ir(buffer)
        .unwrap_or_else(|e| panic!("{e}"));
    let text = emit_nvvm_ir_text(
        &module,
        NvvmDialect::Llvm7,
        backend_nvptx::codegen::DebugInfo::None,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for gone in [
        "umin",
        "fshr",
        ".sat.",
        "@llvm.abs",
        "freeze",
        "fneg",
        "disjoint",
        " nuw %",
        " ptr ",
        "(ptr",
    ] {
        assert!(!text.contains(gone), "`{gone}` left in\n{text}");
    }
    for kept in [
        "call { i32, i1 } @llvm.usub.with.overflow.i32(",
        // libNVVM's overflow intrinsics stop at i16: i8 is widened.
        "sext i8 %p2 to i32",
        "fsub nnan float -0.0, %p0",
        "fadd fast float",
        "alloca { i32, i64 }, align 8",
        "getelementptr inbounds { i32, i64 }, { i32, i64 }* ",
        "getelementptr inbounds [4 x i64], [4 x i64]* ",
        "switch i32 %p1, label %bb2 [",
        "phi i64 [ ",
        "add nsw i32",
        "call float @llvm.nvvm.fabs.f(float ",
        // An aggregate is frozen leaf by leaf: an `i1` through an `i32`
        // register, a pointer through an `i64`.
        "extractvalue { { i16, i1 }, [2 x i8*] } %p0, 0",
        "asm \"mov.b64 $0, $1;\"",
        "insertvalue [2 x i8*] ",
    ] {
        assert!(text.contains(kept), "no `{kept}` in\n{text}");
    }
    backend_nvptx::nvvm::compile_to_ltoir("modern.ll", text.as_bytes(), Arch::SM_90, false)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
}

#[test]
fn the_nvvm_emitter_names_what_it_cannot_write() {
    use backend_nvptx::codegen::{emit_nvvm_ir_text, NvvmDialect};
    use inkwell::{context::Context as Llvm, memory_buffer::MemoryBuffer};
    let ir =
        "define i32 @f(ptr %p) {\n  %v = atomicrmw add ptr %p, i32 1 seq_cst\n  ret i32 %v\n}\n";
    let llvm = Llvm::create();
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "atomic.ll");
    let module = llvm
        .create_module_from_ir(buffer)
        .unwrap_or_else(|e| panic!("{e}"));
    let err = emit_nvvm_ir_text(
        &module,
        NvvmDialect::Llvm7,
        backend_nvptx::codegen::DebugInfo::None,
    )
    .unwrap_err();
    assert_eq!(err.function, "f");
    assert!(
        err.to_string().contains("LLVMAtomicRMW is not supported"),
        "{err}"
    );
}

/// The host JIT runs the lowered thunk itself: case 03 adds its captured
/// `k`, case 01 panics on overflow (the call reports it, the process goes
/// on), case 05's helpers are inlined into the thunk.
#[test]
fn lowered_thunks_run_on_the_host() {
    use backend_nvptx::codegen::host::{with_host_code, SLOT};
    let slot = |v: i32| {
        let mut s = [0u8; SLOT];
        s[..4].copy_from_slice(&v.to_le_bytes());
        s
    };
    let context = context();
    let (module, thunks) = lowered(&context, "03_wrapping_capture.rs", 0, true);
    let env = 1000i32.to_le_bytes();
    let r = with_host_code(&module, &thunks[0].symbol, &|_| Ok(None), |f| {
        let mut out = [0u8; SLOT];
        f.call(&env, &[slot(i32::MAX), slot(2)], &mut out).unwrap();
        i32::from_le_bytes(out[..4].try_into().unwrap())
    })
    .unwrap();
    assert_eq!(r, i32::MAX.wrapping_add(2).wrapping_add(1000));

    let context = self::context();
    let (module, thunks) = lowered(&context, "01_add_overflow_checks.rs", 0, true);
    let (ok, panicked) = with_host_code(&module, &thunks[0].symbol, &|_| Ok(None), |f| {
        let mut out = [0u8; SLOT];
        let ok = f.call(&[], &[slot(40), slot(2)], &mut out).map(|()| out[0]);
        let panicked = f.call(&[], &[slot(i32::MAX), slot(1)], &mut out);
        (ok, panicked)
    })
    .unwrap();
    assert_eq!((ok, panicked), (Some(42), None));

    let context = self::context();
    let (module, thunks) = lowered(&context, "05_helper_chain.rs", 0, true);
    with_host_code(&module, &thunks[0].symbol, &|_| Ok(None), |f| {
        let mut out = [0u8; SLOT];
        f.call(&[0u8; 64], &[slot(3), slot(4)], &mut out)
    })
    .unwrap();
}

/// A sort thunk's answer (nonzero: "less than") for operands `a` and `b`
/// (little-endian, in the thunk ABI's 32-bit or wider slots), run on the
/// host by the JIT.
fn less_on_host(
    module: &melior::ir::Module<'_>,
    symbol: &str,
    a: &[u8],
    b: &[u8],
    env: &[u8],
) -> Result<u32, String> {
    use backend_nvptx::codegen::host::{with_host_code, SLOT};
    let slot = |v: &[u8]| {
        let mut s = [0u8; SLOT];
        s[..v.len()].copy_from_slice(v);
        s
    };
    with_host_code(module, symbol, &|_| Ok(None), |f| {
        let mut out = [0u8; SLOT];
        f.call(env, &[slot(a), slot(b)], &mut out).unwrap();
        u32::from_le_bytes(out[..4].try_into().unwrap())
    })
    .map_err(|e| e.to_string())
}

/// A comparator's thunk answers "less than" for the user's `Ordering`
/// (tests/verdicts/provider_sort.rs, run on the host by the JIT): `cmp`,
/// `total_cmp` reversed (signed zeros and NaN in their total order), an
/// `Ordering` built by `match`, an fn item on `u8` (travelling as 32 bits).
#[test]
fn comparator_thunks_answer_less_than() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verdicts/provider_sort.rs");
    for opt in [0, 3] {
        let context = context();
        let (module, thunks) = lowered_file(&context, &file, opt, true);
        let less = |i: usize, a: &[u8], b: &[u8], env: &[u8]| {
            less_on_host(&module, &thunks[i].symbol, a, b, env)
                .unwrap_or_else(|e| panic!("O{opt} {}: {e}", thunks[i].symbol))
        };
        let i64s = |a: i64, b: i64| less(0, &a.to_le_bytes(), &b.to_le_bytes(), &[]);
        assert_eq!(
            [i64s(1, 2), i64s(2, 1), i64s(2, 2), i64s(-5, 3)],
            [1, 0, 0, 1],
            "O{opt}"
        );
        let f64s = |a: f64, b: f64| less(1, &a.to_le_bytes(), &b.to_le_bytes(), &[]);
        assert_eq!(
            [
                f64s(2.0, 1.0),
                f64s(1.0, 2.0),
                f64s(-0.0, 0.0),
                f64s(0.0, -0.0),
                f64s(f64::NAN, 1.0)
            ],
            [1, 0, 0, 1, 1],
            "O{opt}: descending by total_cmp"
        );
        let width = 10.0f32.to_le_bytes();
        let f32s = |a: f32, b: f32| less(2, &a.to_le_bytes(), &b.to_le_bytes(), &width);
        assert_eq!(
            [f32s(5.0, 15.0), f32s(15.0, 5.0), f32s(1.0, 9.0)],
            [1, 0, 0],
            "O{opt}"
        );
        let u32s = |a: u32, b: u32| less(3, &a.to_le_bytes(), &b.to_le_bytes(), &[]);
        assert_eq!(
            [u32s(3, 2), u32s(2, 3), u32s(3, 5)],
            [1, 0, 0],
            "O{opt}: odd first"
        );
        let u8s = |a: u32, b: u32| less(4, &a.to_le_bytes(), &b.to_le_bytes(), &[]);
        assert_eq!(
            [u8s(200, 100), u8s(100, 200), u8s(7, 7)],
            [1, 0, 0],
            "O{opt}: fn item"
        );
    }
}

/// `sort` and `sort_unstable` compile the core model's comparator of the
/// element type (tests/verdicts/provider_sort_natural.rs, run on the
/// host): its thunk answers `a < b` as the type orders, signed or
/// unsigned, at every width (an `i8` or `u16` travels as 32 bits).
#[test]
fn natural_order_thunks_compare_as_ord() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verdicts/provider_sort_natural.rs");
    for opt in [0, 3] {
        let context = context();
        let (module, thunks) = lowered_file(&context, &file, opt, true);
        assert!(
            thunks[0].symbol.contains("rmir_natural_order_u32"),
            "{}",
            thunks[0].symbol
        );
        let less = |i: usize, a: &[u8], b: &[u8]| {
            less_on_host(&module, &thunks[i].symbol, a, b, &[])
                .unwrap_or_else(|e| panic!("O{opt} {}: {e}", thunks[i].symbol))
        };
        let u32s = |a: u32, b: u32| less(0, &a.to_le_bytes(), &b.to_le_bytes());
        assert_eq!(
            [u32s(1, 2), u32s(2, 1), u32s(7, 7), u32s(u32::MAX, 1)],
            [1, 0, 0, 0],
            "O{opt}: u32"
        );
        let i64s = |a: i64, b: i64| less(1, &a.to_le_bytes(), &b.to_le_bytes());
        assert_eq!(
            [i64s(i64::MIN, 0), i64s(0, i64::MIN), i64s(-1, -1)],
            [1, 0, 0],
            "O{opt}: i64"
        );
        let i8s = |a: i32, b: i32| less(2, &a.to_le_bytes(), &b.to_le_bytes());
        assert_eq!(
            [i8s(-1, 1), i8s(1, -1), i8s(-128, 127)],
            [1, 0, 1],
            "O{opt}: i8"
        );
        let u16s = |a: u32, b: u32| less(3, &a.to_le_bytes(), &b.to_le_bytes());
        assert_eq!([u16s(65535, 1), u16s(1, 65535)], [0, 1], "O{opt}: u16");
        // The `sort_by` beside it, descending.
        assert_eq!(
            [
                u16s(1, 2),
                less(4, &1u32.to_le_bytes(), &2u32.to_le_bytes())
            ],
            [1, 0]
        );
        let u64s = |a: u64, b: u64| less(5, &a.to_le_bytes(), &b.to_le_bytes());
        assert_eq!(
            [u64s(u64::MAX, 0), u64s(0, u64::MAX)],
            [0, 1],
            "O{opt}: u64"
        );
    }
}

/// A key function's thunk answers `key(&a) < key(&b)`, compared as the key
/// type orders (tests/verdicts/provider_sort_by_key.rs, run on the host):
/// an unsigned key of a signed element (`i64::MIN` has the largest
/// magnitude), a signed key with a capture (-1 < 0), `bool`, `char`, and
/// tuple keys field by field.
#[test]
fn key_thunks_compare_keys() {
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verdicts/provider_sort_by_key.rs");
    for opt in [0, 3] {
        let context = context();
        let (module, thunks) = lowered_file(&context, &file, opt, true);
        let less = |i: usize, a: &[u8], b: &[u8], env: &[u8]| {
            less_on_host(&module, &thunks[i].symbol, a, b, env)
                .unwrap_or_else(|e| panic!("O{opt} {}: {e}", thunks[i].symbol))
        };
        let u32s = |i, a: u32, b: u32, env: &[u8]| less(i, &a.to_le_bytes(), &b.to_le_bytes(), env);
        assert_eq!(
            [
                u32s(0, 0x10, 0x25, &[]),
                u32s(0, 0x25, 0x10, &[]),
                u32s(0, 0x11, 0x1f, &[])
            ],
            [1, 0, 0],
            "O{opt}: bucket"
        );
        let i64s = |a: i64, b: i64| less(1, &a.to_le_bytes(), &b.to_le_bytes(), &[]);
        assert_eq!(
            [
                i64s(-5, 3),
                i64s(3, -5),
                i64s(i64::MIN, 0),
                i64s(0, i64::MIN)
            ],
            [0, 1, 0, 1],
            "O{opt}: magnitude"
        );
        let pivot = 10i32.to_le_bytes();
        let i32s = |a: i32, b: i32| less(2, &a.to_le_bytes(), &b.to_le_bytes(), &pivot);
        assert_eq!(
            [i32s(5, 15), i32s(15, 5), i32s(3, 10), i32s(10, 3)],
            [1, 0, 1, 0],
            "O{opt}: side of the pivot"
        );
        let f32s = |a: f32, b: f32| less(3, &a.to_le_bytes(), &b.to_le_bytes(), &[]);
        assert_eq!(
            [f32s(1.0, 1.5), f32s(1.5, 1.0), f32s(2.0, 3.0)],
            [1, 0, 0],
            "O{opt}: whole first"
        );
        assert_eq!(
            [
                u32s(4, 0, 1, &[]),
                u32s(4, 25, 26, &[]),
                u32s(4, 3, 29, &[])
            ],
            [1, 0, 0],
            "O{opt}: letter"
        );
        assert_eq!(
            [
                u32s(5, 0x12, 0x21, &[]),
                u32s(5, 0x21, 0x12, &[]),
                u32s(5, 0x12, 0x13, &[]),
                u32s(5, 0x13, 0x12, &[]),
                u32s(5, 0x12, 0x12, &[])
            ],
            [1, 0, 1, 0, 0],
            "O{opt}: (high, low)"
        );
        let i16s =
            |a: i16, b: i16| less(6, &(a as i32).to_le_bytes(), &(b as i32).to_le_bytes(), &[]);
        assert_eq!(
            [
                i16s(5, -3),
                i16s(-3, 5),
                i16s(7, 5),
                i16s(5, 7),
                i16s(-1, -2),
                i16s(-2, -1),
                i16s(4, 4)
            ],
            [1, 0, 1, 0, 1, 0, 0],
            "O{opt}: (negative, descending, even)"
        );
        assert_eq!(
            [u32s(7, 7, 8, &[]), u32s(7, 8, 7, &[]), u32s(7, 14, 0, &[])],
            [1, 0, 0],
            "O{opt}: multiples of 7 first"
        );
    }
}

/// Iteration over arrays (tests/verdicts/array_iteration.rs), lowered and
/// run on the host by the JIT: every callback's result equals the same
/// Rust code's, bit for bit, over edge and pseudo-random inputs, with the
/// captured array `k` in the environment at rustc's offsets (0, 4, 8).
/// Each expected value is the case's closure body, written again here.
#[test]
fn array_iteration_runs_on_the_host_as_rust_computes_it() {
    use backend_nvptx::codegen::host::{with_host_code, SLOT};
    const PRIMES: [u32; 6] = [2, 3, 5, 7, 11, 13];
    const W: [f32; 4] = [0.1, 0.2, 0.3, 0.4];
    let k: [u32; 3] = [3, 0x9e37, 7];
    let env: Vec<u8> = k.iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut inputs: Vec<u32> = vec![
        0,
        1,
        2,
        3,
        5,
        6,
        7,
        11,
        13,
        15,
        16,
        30,
        31,
        255,
        u32::MAX - 1,
        u32::MAX,
    ];
    let mut r = 0x2545_f491_4f6c_dd1d_u64;
    for _ in 0..2000 {
        r = r
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        inputs.push((r >> 32) as u32 >> (r % 29));
    }
    let floats: Vec<f32> = inputs.iter().map(|&x| x as f32 / 977.0 - 40.0).collect();
    let int = |f: &dyn Fn(u32) -> u32| -> Vec<[u8; SLOT]> {
        inputs.iter().map(|&x| slot(&f(x).to_le_bytes())).collect()
    };
    let boolean = |f: &dyn Fn(u32) -> bool| -> Vec<[u8; SLOT]> {
        inputs.iter().map(|&x| slot(&[f(x) as u8])).collect()
    };
    let float = |f: &dyn Fn(f32) -> f32| -> Vec<[u8; SLOT]> {
        floats
            .iter()
            .map(|&x| slot(&f(x).to_bits().to_le_bytes()))
            .collect()
    };
    fn slot(bytes: &[u8]) -> [u8; SLOT] {
        let mut s = [0u8; SLOT];
        s[..bytes.len()].copy_from_slice(bytes);
        s
    }
    // (function holding the registration, expected results, float inputs,
    // bytes of the result compared)
    let cases: Vec<(&str, Vec<[u8; SLOT]>, bool, usize)> = vec![
        (
            "divisible",
            boolean(&|x| PRIMES.iter().any(|&p| x % p == 0)),
            false,
            1,
        ),
        (
            "coprime",
            boolean(&|x| PRIMES.iter().all(|&p| x % p != 0)),
            false,
            1,
        ),
        (
            "weighted",
            float(&|x| {
                W.iter()
                    .enumerate()
                    .map(|(i, w)| w * x * i as f32)
                    .sum::<f32>()
            }),
            true,
            4,
        ),
        (
            "dotted",
            float(&|x| W.iter().zip(W.iter()).map(|(a, b)| a * b * x).sum::<f32>()),
            true,
            4,
        ),
        (
            "by_value",
            int(&|x| {
                let mut acc = 0u32;
                for p in PRIMES {
                    acc = acc.wrapping_add(x.wrapping_mul(p));
                }
                acc
            }),
            false,
            4,
        ),
        (
            "by_value_adapters",
            int(&|x| {
                let a = PRIMES.into_iter().fold(x, |a, p| a.rotate_left(p) ^ p);
                let b = [1u32, 2, 3]
                    .into_iter()
                    .rev()
                    .fold(0u32, |a, i| a.wrapping_mul(7) ^ i);
                let c = PRIMES
                    .into_iter()
                    .map(|p| p ^ x)
                    .fold(0u32, |a, b| a.wrapping_add(b));
                let d = PRIMES.into_iter().filter(|&p| p < x % 16).count() as u32;
                let e = PRIMES.iter().copied().filter(|&p| p > x % 16).count() as u32;
                let mut f = 0u32;
                #[allow(clippy::single_element_loop)] // the case's `[x]` by value
                for v in [x] {
                    f ^= v;
                }
                a ^ b ^ c ^ (d << 8) ^ (e << 16) ^ f
            }),
            false,
            4,
        ),
        (
            "folded",
            int(&|x| {
                k.iter().fold(x, |a, &b| a ^ b)
                    ^ k.iter().rev().fold(0u32, |a, &b| a.wrapping_mul(31) ^ b)
            }),
            false,
            4,
        ),
        (
            "sums",
            int(&|x| {
                x.wrapping_add(k.iter().sum::<u32>())
                    ^ PRIMES.iter().product::<u32>()
                    ^ PRIMES.iter().take(3).sum::<u32>()
            }),
            false,
            4,
        ),
        (
            "searched",
            int(&|x| {
                let at = PRIMES
                    .iter()
                    .position(|&p| p > x % 16)
                    .map_or(99, |i| i as u32);
                let f = PRIMES.iter().copied().find(|p| x % p == 0).unwrap_or(1);
                at * 1000 + f + PRIMES.iter().filter(|&&p| p < x % 16).count() as u32
            }),
            false,
            4,
        ),
        (
            "extremes",
            float(&|x| W.iter().copied().fold(f32::MIN, f32::max) * x),
            true,
            4,
        ),
        (
            "extremes_int",
            int(&|x| k.iter().copied().max().unwrap_or(x) ^ *k.iter().min().unwrap_or(&x)),
            false,
            4,
        ),
        (
            "loops",
            int(&|x| {
                let mut a = x;
                for v in &k {
                    a ^= *v;
                }
                for v in k.iter() {
                    a = a.wrapping_add(*v);
                }
                a
            }),
            false,
            4,
        ),
        (
            "slice_indexed",
            int(&|x| {
                let s: &[u32] = &k;
                s[x as usize % 3] ^ s.len() as u32
            }),
            false,
            4,
        ),
        (
            "slice_helpers",
            int(&|x| {
                let total =
                    |xs: &[u32]| xs.iter().fold(0u32, |a, &b| a.wrapping_add(b)) ^ xs.len() as u32;
                x ^ total(&k) ^ total(&PRIMES) ^ total(&[x, 1])
            }),
            false,
            4,
        ),
        (
            "slice_dot",
            float(&|x| {
                let (a, b) = (W, [x, 1.0, x, 2.0]);
                let mut s = 0.0f32;
                for i in 0..a.len().min(b.len()) {
                    s += a[i] * b[i];
                }
                s
            }),
            true,
            4,
        ),
        (
            "through_a_helper",
            int(&|x| PRIMES.iter().copied().find(|p| x % p == 0).unwrap_or(x)),
            false,
            4,
        ),
    ];
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verdicts/array_iteration.rs");
    for (opt, checks) in [(0, true), (3, false)] {
        let context = context();
        let (module, thunks) = lowered_file(&context, &path, opt, checks);
        assert_eq!(thunks.len(), cases.len(), "one thunk per registration");
        for (name, expected, is_float, width) in &cases {
            let thunk = thunks
                .iter()
                .find(|t| t.symbol.ends_with(&format!("_{name}_closure_0")))
                .unwrap_or_else(|| panic!("no thunk for `{name}`"));
            let args: Vec<[u8; SLOT]> = if *is_float {
                floats
                    .iter()
                    .map(|x| slot(&x.to_bits().to_le_bytes()))
                    .collect()
            } else {
                inputs.iter().map(|x| slot(&x.to_le_bytes())).collect()
            };
            let wrong = with_host_code(&module, &thunk.symbol, &|_| Ok(None), |f| {
                let mut wrong = Vec::new();
                for (i, (a, want)) in args.iter().zip(expected).enumerate() {
                    let mut out = [0u8; SLOT];
                    let got = f
                        .call(&env, std::slice::from_ref(a), &mut out)
                        .map(|()| out);
                    if got.map(|o| o[..*width] == want[..*width]) != Some(true) {
                        wrong.push(i);
                    }
                }
                wrong
            })
            .unwrap_or_else(|e| panic!("{name} O{opt}: {e}"));
            assert!(
                wrong.is_empty(),
                "{name} at O{opt}: {} of {} results differ, the first for input #{}",
                wrong.len(),
                args.len(),
                wrong[0]
            );
        }
    }
}

/// A thunk parameter slot holding the address of `v`.
fn at<T>(v: &T) -> [u8; backend_nvptx::codegen::host::SLOT] {
    let mut s = [0u8; backend_nvptx::codegen::host::SLOT];
    s[..8].copy_from_slice(&(v as *const T as usize as u64).to_le_bytes());
    s
}

/// Runs thunk `symbol` of `module` on the host with `args` and the address
/// of an `R` (first `fill`) last: its answer and the `R` (which it wrote,
/// or left as `fill`).
fn call_with_out<R: Copy>(
    module: &melior::ir::Module<'_>,
    symbol: &str,
    env: &[u8],
    args: &[[u8; backend_nvptx::codegen::host::SLOT]],
    fill: R,
) -> (u32, R) {
    use backend_nvptx::codegen::host::{with_host_code, SLOT};
    let mut r = std::mem::MaybeUninit::new(fill);
    let mut all = args.to_vec();
    all.push(at(&r));
    let mut out = [0u8; SLOT];
    with_host_code(module, symbol, &|_| Ok(None), |f| {
        f.call(env, &all, &mut out).expect("no panic")
    })
    .unwrap_or_else(|e| panic!("{symbol}: {e}"));
    let answer = u32::from_le_bytes(out[..4].try_into().unwrap());
    // SAFETY: initialised with `fill`; the thunk wrote an R or nothing.
    (answer, unsafe { r.assume_init_mut().to_owned() })
}

/// Tuples and structs as elements (tests/verdicts/composite_elements.rs),
/// lowered and run on the host by the JIT at O0 and O3: each thunk reads
/// real Rust values of this test's own types (the same rustc lays them
/// out as the probe measured) through pointers, and writes a real Rust
/// value; the results equal the case's closures, written again here. The
/// result's padding is filled with a pattern first and must not matter.
#[test]
fn composite_thunks_read_and_write_rusts_layout() {
    use backend_nvptx::codegen::host::{with_host_code, SLOT};
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Point {
        x: f32,
        y: f32,
        w: u32,
    }
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Body {
        id: u8,
        at: Point,
        mass: f64,
    }
    fn scalar(bytes: &[u8]) -> [u8; SLOT] {
        let mut s = [0u8; SLOT];
        s[..bytes.len()].copy_from_slice(bytes);
        s
    }
    /// Calls `thunk` with `args` and the address of an `R` last: the R.
    fn run<R: Copy>(
        module: &melior::ir::Module<'_>,
        thunk: &Thunk,
        env: &[u8],
        args: &[[u8; SLOT]],
        fill: R,
    ) -> R {
        call_with_out(module, &thunk.symbol, env, args, fill).1
    }
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verdicts/composite_elements.rs");
    for opt in [0, 3] {
        let context = context();
        let (module, thunks) = lowered_file(&context, &file, opt, true);
        assert_eq!(thunks.len(), 9, "O{opt}");
        // arg_min: the less value, of equal ones the less index.
        let pick = |a: (f32, u32), b: (f32, u32)| {
            run(
                &module,
                &thunks[0],
                &[],
                &[at(&a), at(&b)],
                (f32::NAN, 7u32),
            )
        };
        assert_eq!(pick((1.5, 9), (0.5, 2)), (0.5, 2), "O{opt}");
        assert_eq!(pick((0.5, 9), (0.5, 2)), (0.5, 2), "O{opt}");
        assert_eq!(pick((0.5, 1), (0.5, 2)), (0.5, 1), "O{opt}");
        assert_eq!(pick((-1.0, 1), (0.5, 0)), (-1.0, 1), "O{opt}");
        // totals: field by field.
        let (p, q) = (
            Point {
                x: 1.0,
                y: -2.0,
                w: u32::MAX,
            },
            Point {
                x: 3.0,
                y: 4.0,
                w: 2,
            },
        );
        let fill = Point {
            x: 0.0,
            y: 0.0,
            w: 0,
        };
        assert_eq!(
            run(&module, &thunks[1], &[], &[at(&p), at(&q)], fill),
            Point {
                x: 3.0,
                y: -2.0,
                w: 1
            },
            "O{opt}"
        );
        // norms: a struct in, a scalar out.
        let norm = with_host_code(&module, &thunks[2].symbol, &|_| Ok(None), |f| {
            let mut out = [0u8; SLOT];
            f.call(&[], &[at(&q)], &mut out).unwrap();
            f32::from_le_bytes(out[..4].try_into().unwrap())
        })
        .unwrap();
        assert_eq!(norm, 25.0, "O{opt}");
        // pair_up: a scalar in, a tuple out, a capture.
        for v in [0u32, 0x1ff, u32::MAX, 0x8000_0001] {
            let k = 0x5au8;
            let r = run(
                &module,
                &thunks[3],
                &[k],
                &[scalar(&v.to_le_bytes())],
                (0u8, 0u32),
            );
            assert_eq!(r, ((v as u8) ^ k, v.wrapping_mul(3)), "O{opt} {v}");
        }
        // moments: a #[repr(C)] struct holding a struct, a capture.
        let g = 0.5f64;
        let b = Body {
            id: 200,
            at: Point {
                x: 3.0,
                y: 0.0,
                w: 9,
            },
            mass: 2.5,
        };
        let r = run(
            &module,
            &thunks[4],
            &g.to_le_bytes(),
            &[at(&b)],
            (0.0f64, 0u8),
        );
        assert_eq!(r, (2.5 * 3.0 * 0.5, 200), "O{opt}");
        // nested: rustc reorders the outer tuple and the inner one.
        type N = (u8, (u16, i64), i8);
        let (a, c): (N, N) = ((0x0f, (0x100, -5), -1), (0xf0, (0x001, 7), 0x3c));
        let r = run(
            &module,
            &thunks[5],
            &[],
            &[at(&a), at(&c)],
            (0u8, (0u16, 0i64), 0i8),
        );
        assert_eq!(r, (0xff, (0x101, 7), 0x3c), "O{opt}");
        // widen: a tuple pattern in the parameter, a triple with padding out.
        for (x, y) in [
            (-3i16, 1.25f32),
            (i16::MAX, -0.0),
            (i16::MIN, f32::INFINITY),
        ] {
            let r = run(&module, &thunks[6], &[], &[at(&(x, y))], (0f64, 0i64, 0u8));
            assert_eq!(r.0.to_bits(), (y as f64).to_bits(), "O{opt}");
            assert_eq!((r.1, r.2), (x as i64 * 3, (x & 0x7f) as u8), "O{opt}");
        }
        // weigh: a struct and a scalar in, a tuple out.
        let r = run(
            &module,
            &thunks[7],
            &[],
            &[at(&q), scalar(&0.5f64.to_le_bytes())],
            (0f64, 0u32),
        );
        assert_eq!(r, (1.5, 2), "O{opt}");
        // segment_extents: the struct fold of a segmented reduce.
        assert_eq!(
            run(&module, &thunks[8], &[], &[at(&p), at(&q)], fill),
            Point {
                x: 3.0,
                y: -2.0,
                w: u32::MAX ^ 2
            },
            "O{opt}"
        );
    }
}

/// Comparators and key functions over tuples and structs
/// (tests/verdicts/composite_sorts.rs), run on the host by the JIT at O0
/// and O3 on this test's own Rust values through pointers: each thunk
/// answers "less" as the closure's `Ordering` or key says.
#[test]
fn composite_comparators_answer_less_than() {
    use backend_nvptx::codegen::host::{with_host_code, SLOT};
    // Its fields are read by the thunks only, through pointers.
    #[allow(dead_code)]
    #[derive(Clone, Copy)]
    struct Order {
        price: f32,
        id: u32,
        side: i8,
    }
    #[allow(dead_code)]
    #[derive(Clone, Copy)]
    struct Trade {
        at: u64,
        price: f64,
        qty: i32,
        venue: u16,
        side: i8,
        book: u64,
    }
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verdicts/composite_sorts.rs");
    for opt in [0, 3] {
        let context = context();
        let (module, thunks) = lowered_file(&context, &file, opt, true);
        assert_eq!(thunks.len(), 7, "O{opt}");
        let less = |i: usize, a: [u8; SLOT], b: [u8; SLOT], env: &[u8]| {
            with_host_code(&module, &thunks[i].symbol, &|_| Ok(None), |f| {
                let mut out = [0u8; SLOT];
                f.call(env, &[a, b], &mut out).expect("no panic");
                out[0] != 0
            })
            .unwrap_or_else(|e| panic!("O{opt} {}: {e}", thunks[i].symbol))
        };
        let both = |i: usize, a: [u8; SLOT], b: [u8; SLOT], env: &[u8]| {
            [less(i, a, b, env), less(i, b, a, env)]
        };
        let (cheap, dear) = (
            Order {
                price: 1.5,
                id: 9,
                side: 1,
            },
            Order {
                price: 2.5,
                id: 3,
                side: -1,
            },
        );
        // by_price, by_id, by_side_then_price (descending price in a side).
        assert_eq!(both(0, at(&cheap), at(&dear), &[]), [true, false], "O{opt}");
        assert_eq!(both(1, at(&cheap), at(&dear), &[]), [false, true], "O{opt}");
        assert_eq!(both(2, at(&cheap), at(&dear), &[]), [false, true], "O{opt}");
        let twin = Order {
            price: 3.0,
            ..cheap
        };
        assert_eq!(both(2, at(&cheap), at(&twin), &[]), [false, true], "O{opt}");
        assert!(!less(0, at(&cheap), at(&cheap), &[]), "O{opt}: irreflexive");
        // pairs: by the first field only.
        let (a, b): ((i32, u64), (i32, u64)) = ((-4, 1), (3, 0));
        assert_eq!(both(3, at(&a), at(&b), &[]), [true, false], "O{opt}");
        // pairs_by_key: the key (p.1.0 ^ k, p.0), with k captured.
        let k = 0x0fu8;
        type Keyed = (u16, (u8, u64));
        let (a, b): (Keyed, Keyed) = ((7, (0x0f, 0)), (2, (0x0e, 0)));
        assert_eq!(both(4, at(&a), at(&b), &[k]), [true, false], "O{opt}");
        let (a, b): (Keyed, Keyed) = ((7, (0x0f, 5)), (2, (0x0f, 9)));
        assert_eq!(both(4, at(&a), at(&b), &[k]), [false, true], "O{opt}");
        // Wide records (rustc reorders `book` before `qty`): by price,
        // then the latest first; by quantity.
        let trade = |at: u64, price: f64, qty: i32| Trade {
            at,
            price,
            qty,
            venue: 4,
            side: -1,
            book: 77,
        };
        let (a, b, c) = (trade(5, 1.0, -3), trade(1, 2.0, 2), trade(9, 1.0, 8));
        assert_eq!(both(5, at(&a), at(&b), &[]), [true, false], "O{opt}");
        assert_eq!(both(5, at(&a), at(&c), &[]), [false, true], "O{opt}");
        assert_eq!(both(6, at(&a), at(&b), &[]), [true, false], "O{opt}");
        assert_eq!(both(6, at(&b), at(&c), &[]), [true, false], "O{opt}");
    }
}

/// The stage and combine thunks of `par_iter` chains over tuples and
/// structs (`tests/verdicts/composite_chains.rs`), run on the host at O0
/// and O3: an item read by pointer at rustc's offsets, a composite value
/// written through `out` at them, a pick's answer.
#[test]
fn composite_chain_thunks_read_and_write_rusts_layout() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Hit {
        energy: f32,
        detector: u16,
    }
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/verdicts/composite_chains.rs");
    let hit = |energy: f32, detector: u16| Hit { energy, detector };
    for opt in [0, 3] {
        let context = context();
        let (module, thunks) = lowered_file(&context, &file, opt, true);
        assert_eq!(thunks.len(), 8, "O{opt}");
        let stage = |i: usize| format!("{}_stage", thunks[i].symbol);
        let combine = |i: usize| format!("{}_combine", thunks[i].symbol);
        // totals: a struct's field, kept.
        let h = hit(2.5, 7);
        assert_eq!(
            call_with_out(&module, &stage(0), &[], &[at(&h)], 0f32),
            (1, 2.5),
            "O{opt}"
        );
        // picks: the later pair wins a `min_by` when it is less.
        let pair = |v: f32, i: u32| (v, i);
        let (a, b, c) = (pair(1.0, 1), pair(0.5, 2), pair(1.0, 3));
        // Whether registration `i`'s pick takes the later `y` over `x`.
        let takes = |i: usize, x: &(f32, u32), y: &(f32, u32)| {
            call_with_out(
                &module,
                &combine(i),
                &[],
                &[at(x), at(y)],
                pair(f32::NAN, 9),
            )
            .0
        };
        let wins = |x: &(f32, u32), y: &(f32, u32)| takes(2, x, y);
        assert_eq!(wins(&a, &b), 1, "O{opt}");
        assert_eq!(wins(&b, &a), 0, "O{opt}");
        assert_eq!(wins(&a, &c), 0, "O{opt}: ties go to the earlier");
        assert_eq!(
            call_with_out(&module, &stage(2), &[], &[at(&b)], pair(f32::NAN, 9)),
            (1, b),
            "O{opt}"
        );
        // ... and a `min_by` on both fields, the value then the tag.
        let wins_both = |x: &(f32, u32), y: &(f32, u32)| takes(3, x, y);
        assert_eq!(wins_both(&a, &b), 1, "O{opt}");
        assert_eq!(
            wins_both(&a, &c),
            0,
            "O{opt}: (1, 3) is not less than (1, 1)"
        );
        assert_eq!(wins_both(&c, &a), 1, "O{opt}: (1, 1) is less than (1, 3)");
        assert_eq!(
            wins_both(&a, &a),
            0,
            "O{opt}: equal pairs are the same pair"
        );
        // The hits of one detector (its id in the environment), kept whole.
        let d = 7u16.to_le_bytes();
        let none = hit(f32::NAN, 0);
        assert_eq!(
            call_with_out(&module, &stage(4), &d, &[at(&h)], none).0,
            1,
            "O{opt}"
        );
        assert_eq!(
            call_with_out(&module, &stage(4), &d, &[at(&h)], none).1,
            h,
            "O{opt}"
        );
        assert_eq!(
            call_with_out(&module, &stage(4), &d, &[at(&hit(1.0, 3))], none).0,
            0,
            "O{opt}"
        );
        // A struct mapped to a pair, and pairs folded field by field.
        assert_eq!(
            call_with_out(&module, &stage(5), &[], &[at(&h)], (0u32, 0u32)),
            (1, (1, 7)),
            "O{opt}"
        );
        let (x, y) = ((3u32, 9u32), (u32::MAX, 4u32));
        assert_eq!(
            call_with_out(&module, &combine(5), &[], &[at(&x), at(&y)], (0u32, 0u32)).1,
            (2, 9),
            "O{opt}"
        );
        // collect: a struct to a tuple rustc may lay out its own way.
        assert_eq!(
            call_with_out(&module, &stage(7), &[], &[at(&h)], (0u16, 0f32)),
            (1, (7, 2.5)),
            "O{opt}"
        );
    }
}
