//! The GPU side: loads a cubin and its manifest, checks them against each
//! other and against the driver's view of the kernels, packs callback
//! environments from the manifest's layout, launches, compares with the host
//! reference, and benchmarks.
//!
//! Invariant: never links LLVM or MLIR (the GPU machine has neither), and
//! loads libcuda at run time, so it builds and reports clear errors on
//! machines without a GPU. Library code does not panic on bad input.

pub mod cubin;
pub mod dispatch;
mod error;
pub mod gpu;
pub mod host;

pub use error::RuntimeError;
pub mod bench;
pub mod build;
pub mod launch;
pub mod providers_bench;
pub mod run;
pub mod selftest;

pub use bench::{bench, BenchOptions, BenchReport, BenchRow};
pub use build::{Build, Loaded};
pub use run::{run_bundle, run_checked, Prepared, Report, RunOptions};
