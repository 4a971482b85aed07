//! The copy kernel: a device-to-device copy of 32-bit words that the
//! benchmarks measure the bandwidth ceiling with. It is no provider (no
//! registration names it, no callback runs in it); a manifest lists it as a
//! kernel of kind [`KernelKind::Copy`](crate::KernelKind::Copy), and only
//! the benchmark bundles (`driver build --bench`) and the self-test ask for
//! it.

use std::fmt::Write as _;

use crate::provider::EmitError;
use crate::{Kernel, KernelKind, LaunchFacts, Param, ParamKind, Stage, Variant};

/// Its name in every manifest.
pub const NAME: &str = "rcb_copy_i32";

/// The provider header that defines `rcb::copy_i32`.
pub(crate) const HEADER: &str = "reduce.cuh";

/// How it is launched: [`LaunchFacts::DEFAULT`], the reduces' grid-stride
/// shape (four 16-byte loads in flight per thread, at most eight blocks a
/// multiprocessor).
pub fn launch_facts() -> LaunchFacts {
    LaunchFacts::DEFAULT
}

/// What its launch facts must satisfy: [`LaunchFacts::check`], and whole
/// 16-byte vectors per thread (its template unrolls by them).
pub fn check_launch(launch: &LaunchFacts) -> Result<(), String> {
    launch.check()?;
    if !launch.items_per_thread.is_multiple_of(4) {
        return Err(format!(
            "items_per_thread {} is not a whole number of 16-byte vectors of i32",
            launch.items_per_thread
        ));
    }
    Ok(())
}

/// Its parameters: the input, the number of words, the output.
pub fn params() -> Vec<Param> {
    let p = |kind, size| Param {
        kind,
        size,
        align: size,
    };
    vec![
        p(ParamKind::Input, 8),
        p(ParamKind::Len, 8),
        p(ParamKind::Output, 8),
    ]
}

/// Writes its definition to `out` and returns its manifest entry.
pub(crate) fn emit(out: &mut String) -> Result<Kernel, EmitError> {
    let launch = launch_facts();
    check_launch(&launch).map_err(EmitError::Launch)?;
    let block = launch.block_size;
    let unroll = launch.items_per_thread / 4;
    let _ = write!(
        out,
        "\n// ---- {NAME}: device-to-device copy (bandwidth ceiling)\n\
         extern \"C\" __global__ void __launch_bounds__({block}) {NAME}(\n\
         \x20   const int *__restrict__ input, unsigned long long len, int *__restrict__ output) {{\n\
         \x20   rcb::copy_i32<{block}, {unroll}>(input, len, output);\n\
         }}\n"
    );
    Ok(Kernel {
        name: NAME.to_string(),
        kind: KernelKind::Copy,
        stage: Stage::Main,
        variant: Variant::Plain,
        registration: None,
        thunk: None,
        params: params(),
        launch,
        cubin: None,
    })
}
