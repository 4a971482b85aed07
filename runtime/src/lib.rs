//! The GPU side: loads a cubin and its manifest, checks them against each
//! other and against the driver's view of the kernels, packs callback
//! environments from the manifest's layout, launches, compares with the host
//! reference, and benchmarks.
//!
//! Invariant: never links LLVM or MLIR (the GPU machine has neither), and
//! loads libcuda at run time, so it builds and reports clear errors on
//! machines without a GPU. Library code does not panic on bad input.
//!
//! What a program's `native::gpu` calls need (`host`, and what it uses) is
//! always built; the `tools` feature (on by default, off in `native`'s
//! `gpu` feature) adds what only the `gpu-run`, `gpu-bench` and
//! `gpu-make-selftest` programs use, so that a user's crate compiles less.

pub mod build;
pub mod cubin;
pub mod dispatch;
mod error;
pub mod gpu;
pub mod host;
pub mod launch;
mod nccl;

pub use build::{Build, Loaded};
pub use error::RuntimeError;

#[cfg(feature = "tools")]
pub mod bench;
#[cfg(feature = "tools")]
pub mod providers_bench;
#[cfg(feature = "tools")]
pub mod run;
#[cfg(feature = "tools")]
pub mod selftest;

#[cfg(feature = "tools")]
pub use bench::{bench, BenchOptions, BenchReport, BenchRow};
#[cfg(feature = "tools")]
pub use run::{run_bundle, run_checked, Prepared, Report, RunOptions};
