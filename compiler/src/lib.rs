//! `compiler`: the compiler as a library. One call takes a Rust file to
//! its artifacts: prepared MIR, the `rmir` module, admission's verdicts,
//! the lowering of what was admitted, thunks (PTX or LTOIR), the providers
//! (NVRTC), linked cubins (nvJitLink) and the manifest, and with a bundle
//! the host reference. The `driver` CLI is one caller; the Cargo
//! integration is another.
//!
//! Invariants: never prints to standard output (diagnostics and progress
//! go to standard error, results are values); every artifact is written
//! into a temporary folder that replaces the output only once everything
//! succeeded (`output`); how nvJitLink is isolated is the caller's choice
//! (`Config::isolation`), since only the caller knows which program can
//! serve as the child.

pub mod admit;
pub mod build;
pub mod buildcache;
pub mod cargo;
pub mod contract;
pub mod devicelibs;
pub mod hostref;
pub mod input;
pub mod laws;
pub mod output;
pub mod timings;
