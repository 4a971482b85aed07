//! libNVVM: NVVM IR in the LLVM 7.0.1 dialect (typed pointers) that
//! libNVVM 13 accepts for compute_90, compiled to LTOIR and PTX.

use backend_nvptx::container::{describe, ItemKind, LTOIR_MAGIC};
use backend_nvptx::nvrtc::{self, NvrtcOptions, NvrtcTarget};
use backend_nvptx::nvvm::{self, NvvmProgram};
use backend_nvptx::{Arch, LinkInput, LinkPlan};

/// A thunk `i32 thunk(const void *env, i32, i32)` reading an i32 capture
/// from its environment: typed pointers (`i8*`, `i32*`), as LLVM 7 wrote them.
const THUNK_IR: &str = r#"target datalayout = "e-p:64:64:64-i1:8:8-i8:8:8-i16:16:16-i32:32:32-i64:64:64-i128:128:128-f32:32:32-f64:64:64-v16:16:16-v32:32:32-v64:64:64-v128:128:128-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

define i32 @thunk(i8* %env, i32 %a, i32 %b) {
entry:
  %k.ptr = bitcast i8* %env to i32*
  %k = load i32, i32* %k.ptr, align 4
  %m = mul i32 %a, %k
  %r = add i32 %m, %b
  ret i32 %r
}

!nvvmir.version = !{!0}
!0 = !{i32 2, i32 0}
"#;

/// An LTOIR kernel that calls the thunk, as a provider would.
const PROVIDER_CU: &str = r#"
extern "C" __device__ int thunk(const void *env, int a, int b);
extern "C" __global__ void reduce_pairs(const int *k, int *p) { p[threadIdx.x] = thunk(k, p[threadIdx.x], 1); }
"#;

#[test]
fn typed_pointer_ir_compiles_to_ltoir_for_compute_90() {
    let out = nvvm::compile_to_ltoir("thunk.ll", THUNK_IR.as_bytes(), Arch::SM_90, false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.bytes.get(..4), Some(&LTOIR_MAGIC.to_le_bytes()[..]));
    let description = describe("thunk.ltoir", &out.bytes).unwrap();
    assert_eq!(description.kind(), ItemKind::Ltoir);
    assert_eq!(description.root.arch.as_deref(), Some("lto_90"));

    // The provider side, as LTOIR, links with it and inlines the call.
    let provider = nvrtc::compile(
        "provider.cu",
        PROVIDER_CU,
        &NvrtcOptions::new(Arch::SM_90, NvrtcTarget::Ltoir),
    )
    .unwrap();
    let plan = LinkPlan::new(Arch::SM_90)
        .with_input(LinkInput::new("provider.ltoir", provider.bytes).unwrap())
        .with_input(LinkInput::new("thunk.ltoir", out.bytes).unwrap());
    assert_eq!(
        plan.explain().unwrap().options(),
        ["-arch=sm_90", "-lto", "-fma=0"]
    );
    let linked = plan.link().unwrap_or_else(|e| panic!("{e}"));
    let cubin = describe("linked.cubin", &linked.bytes).unwrap();
    assert!(
        cubin
            .root
            .facts
            .iter()
            .any(|f| f == "functions: reduce_pairs"),
        "the thunk should be inlined: {:?}",
        cubin.root.facts
    );
}

#[test]
fn without_gen_lto_the_result_is_ptx() {
    let mut program = NvvmProgram::new().unwrap();
    program.add_module("thunk.ll", THUNK_IR.as_bytes()).unwrap();
    let out = program.compile(&["-arch=compute_90".to_string()]).unwrap();
    let ptx = describe("thunk.ptx", &out.bytes).unwrap();
    assert_eq!(ptx.kind(), ItemKind::Ptx);
    assert!(
        String::from_utf8_lossy(&out.bytes).contains(".func  (.param .b32 func_retval0) thunk(")
    );
}

#[test]
fn opaque_pointers_are_refused_for_compute_90_with_the_log() {
    let ir = THUNK_IR
        .replace("i8* %env", "ptr %env")
        .replace("  %k.ptr = bitcast i8* %env to i32*\n", "")
        .replace("i32* %k.ptr", "ptr %env");
    let err = nvvm::compile_to_ltoir("opaque.ll", ir.as_bytes(), Arch::SM_90, false).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("opaque.ll"), "{text}");
    assert!(text.contains("NVVM_ERROR"), "{text}");
}

#[test]
fn versions_are_reported() {
    let versions = backend_nvptx::toolchain_versions().unwrap();
    assert_eq!(versions.nvrtc.major, 13);
    assert_eq!(versions.nvjitlink.major, 13);
    assert!(versions.nvvm_ir.ir.major >= 2, "{versions:?}");
    assert!(versions.nvvm_path.ends_with("libnvvm.so.4"), "{versions:?}");
}
