//! Test inputs built once per test binary: NVRTC outputs in memory, and
//! nvcc/ar outputs built in a temporary folder that is removed afterwards.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use backend_nvptx::nvrtc::{self, NvrtcOptions, NvrtcTarget};
use backend_nvptx::{Arch, LinkInput};

/// A device function defined in one input ...
pub const CALLEE_CU: &str = r#"
extern "C" __device__ int callee(int a, int b) { return a * 3 + b; }
"#;

/// ... and a kernel in another that calls it.
pub const KERNEL_CU: &str = r#"
extern "C" __device__ int callee(int a, int b);
extern "C" __global__ void kern(int *p) { p[threadIdx.x] = callee(p[threadIdx.x], 1); }
"#;

/// LTOIR that defines `callee` beside a kernel of its own: LTO keeps only
/// what its kernels reach, so a PTX caller of `callee` finds it gone.
pub const CALLEE_WITH_KERNEL_CU: &str = r#"
extern "C" __device__ int callee(int a, int b) { return a * 3 + b; }
extern "C" __global__ void other(int *p) { p[0] = callee(p[1], 2); }
"#;

pub struct Fixtures {
    pub callee_with_kernel_ltoir: Vec<u8>,
    pub kernel_ptx: Vec<u8>,
    pub callee_ptx: Vec<u8>,
    pub kernel_ltoir: Vec<u8>,
    pub callee_ltoir: Vec<u8>,
    pub callee_cubin: Vec<u8>,
    /// `nvcc -fatbin -dlto -rdc=true kernel.cu`: PTX + LTOIR entries.
    pub kernel_lto_fatbin: Vec<u8>,
    /// `nvcc -fatbin -rdc=true kernel.cu`: cubin + PTX entries.
    pub kernel_fatbin: Vec<u8>,
    /// `nvcc -fatbin -dlto -rdc=true -no-compress kernel.cu`: plain payloads.
    pub kernel_lto_fatbin_uncompressed: Vec<u8>,
    /// `nvcc -dc -dlto kernel.cu`: LTOIR in `__nv_relfatbin`.
    pub kernel_lto_object: Vec<u8>,
    /// `nvcc -dc kernel.cu`: cubin + PTX in `__nv_relfatbin`.
    pub kernel_object: Vec<u8>,
    /// A host-only object (no device code).
    pub host_object: Vec<u8>,
    /// `ar rcs` of the LTO kernel object (long member name) and a host-only object.
    pub lto_library: Vec<u8>,
}

pub fn wheel_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../.nvidia/nvidia/cu13")
}

fn nvrtc(name: &str, source: &str, target: NvrtcTarget) -> Vec<u8> {
    let options = NvrtcOptions::new(Arch::SM_90, target);
    match nvrtc::compile(name, source, &options) {
        Ok(out) => out.bytes,
        Err(e) => panic!("NVRTC failed on {name}: {e}"),
    }
}

fn run(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn nvcc(dir: &Path, args: &[&str]) {
    let bin = wheel_root().join("bin");
    assert!(
        wheel_root().join("include/cuda_runtime.h").is_file(),
        "nvcc needs cuda_runtime.h in {}: install the wheels nvidia-cuda-runtime==13.0.88 and \
         nvidia-cuda-crt==13.0.88 (scripts/setup.sh)",
        wheel_root().join("include").display()
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    run(Command::new(bin.join("nvcc"))
        .current_dir(dir)
        .env("PATH", path)
        .args(["-arch=sm_90"])
        .args(args));
}

/// The fixtures, built on first use. A failed build is remembered, so every
/// test reports it at once instead of rebuilding.
pub fn fixtures() -> &'static Fixtures {
    static FIXTURES: OnceLock<Result<Fixtures, String>> = OnceLock::new();
    let built = FIXTURES.get_or_init(|| {
        std::panic::catch_unwind(build).map_err(|e| {
            e.downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "fixture build panicked".to_string())
        })
    });
    match built {
        Ok(fixtures) => fixtures,
        Err(message) => panic!("building test inputs failed: {message}"),
    }
}

fn build() -> Fixtures {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    std::fs::write(d.join("kernel.cu"), KERNEL_CU).unwrap();
    std::fs::write(d.join("callee.cu"), CALLEE_CU).unwrap();
    nvcc(
        d,
        &[
            "-fatbin",
            "-dlto",
            "-rdc=true",
            "kernel.cu",
            "-o",
            "kernel_lto.fatbin",
        ],
    );
    nvcc(
        d,
        &["-fatbin", "-rdc=true", "kernel.cu", "-o", "kernel.fatbin"],
    );
    nvcc(
        d,
        &[
            "-dc",
            "-dlto",
            "kernel.cu",
            "-o",
            "kernel_with_a_long_member_name_lto.o",
        ],
    );
    nvcc(d, &["-dc", "kernel.cu", "-o", "kernel.o"]);
    nvcc(
        d,
        &[
            "-fatbin",
            "-dlto",
            "-rdc=true",
            "-no-compress",
            "kernel.cu",
            "-o",
            "kernel_plain.fatbin",
        ],
    );
    std::fs::write(d.join("host.c"), "int host_side(int x) { return x + 1; }\n").unwrap();
    run(Command::new("cc")
        .current_dir(d)
        .args(["-c", "host.c", "-o", "host.o"]));
    run(Command::new("ar").current_dir(d).args([
        "rcs",
        "libkernel.a",
        "kernel_with_a_long_member_name_lto.o",
        "host.o",
    ]));
    let read = |name: &str| std::fs::read(d.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    Fixtures {
        kernel_ptx: nvrtc("kernel.cu", KERNEL_CU, NvrtcTarget::Ptx),
        callee_ptx: nvrtc("callee.cu", CALLEE_CU, NvrtcTarget::Ptx),
        kernel_ltoir: nvrtc("kernel.cu", KERNEL_CU, NvrtcTarget::Ltoir),
        callee_ltoir: nvrtc("callee.cu", CALLEE_CU, NvrtcTarget::Ltoir),
        callee_cubin: nvrtc("callee.cu", CALLEE_CU, NvrtcTarget::Cubin),
        callee_with_kernel_ltoir: nvrtc(
            "callee_with_kernel.cu",
            CALLEE_WITH_KERNEL_CU,
            NvrtcTarget::Ltoir,
        ),
        host_object: read("host.o"),
        kernel_lto_fatbin: read("kernel_lto.fatbin"),
        kernel_fatbin: read("kernel.fatbin"),
        kernel_lto_fatbin_uncompressed: read("kernel_plain.fatbin"),
        kernel_lto_object: read("kernel_with_a_long_member_name_lto.o"),
        kernel_object: read("kernel.o"),
        lto_library: read("libkernel.a"),
    }
}

pub fn input(name: &str, bytes: &[u8]) -> LinkInput {
    LinkInput::new(name, bytes.to_vec()).unwrap_or_else(|e| panic!("classifying {name}: {e}"))
}
