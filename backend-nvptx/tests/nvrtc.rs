//! NVRTC: outputs of each kind, errors with their log, CUB headers.

use backend_nvptx::container::{describe, ItemKind};
use backend_nvptx::nvrtc::{self, NvrtcError, NvrtcOptions, NvrtcTarget};
use backend_nvptx::Arch;

const SAXPY: &str = r#"
extern "C" __global__ void saxpy(float a, const float *x, float *y) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = a * x[i] + y[i];
}
"#;

#[test]
fn each_target_yields_its_kind() {
    for (target, kind, arch) in [
        (NvrtcTarget::Ptx, ItemKind::Ptx, "compute_90"),
        (NvrtcTarget::Ltoir, ItemKind::Ltoir, "lto_90"),
        (NvrtcTarget::Cubin, ItemKind::Cubin, "sm_90"),
    ] {
        let out = nvrtc::compile("saxpy.cu", SAXPY, &NvrtcOptions::new(Arch::SM_90, target))
            .unwrap_or_else(|e| panic!("{target:?}: {e}"));
        let d = describe("out", &out.bytes).unwrap();
        assert_eq!(d.kind(), kind, "{target:?}");
        assert_eq!(d.root.arch.as_deref(), Some(arch), "{target:?}");
    }
}

#[test]
fn compile_errors_carry_the_log() {
    let err = nvrtc::compile(
        "broken.cu",
        "__global__ void k() { undeclared_name = 1; }",
        &NvrtcOptions::new(Arch::SM_90, NvrtcTarget::Ptx),
    )
    .unwrap_err();
    match &err {
        NvrtcError::Compile { name, log, .. } => {
            assert_eq!(name, "broken.cu");
            assert!(log.contains("undeclared_name"), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
fn cub_headers_are_found() {
    let dir =
        backend_nvptx::nvidia::cccl_include_dir().expect("CCCL headers (nvidia-cuda-cccl wheel)");
    assert!(dir.join("cub/cub.cuh").is_file());
    let source = r#"
#include <cub/warp/warp_reduce.cuh>
extern "C" __global__ void warp_sum(const int *in, int *out) {
    using WarpReduce = cub::WarpReduce<int>;
    __shared__ typename WarpReduce::TempStorage temp;
    int sum = WarpReduce(temp).Sum(in[threadIdx.x]);
    if (threadIdx.x == 0) *out = sum;
}
"#;
    let out = nvrtc::compile(
        "warp_sum.cu",
        source,
        &NvrtcOptions::new(Arch::SM_90, NvrtcTarget::Ltoir),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(describe("w", &out.bytes).unwrap().kind(), ItemKind::Ltoir);
}
