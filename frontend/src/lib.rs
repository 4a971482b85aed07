//! Frontend: real rustc MIR text in, prepared MIR out.
//!
//! Invariants: never links MLIR or LLVM; parsing never panics (every failure
//! is a located [`parse::MirError`]); nothing after this crate needs rustc.

pub mod adt;
pub mod adt_items;
pub mod bridge;
mod cached;
pub mod chain;
pub mod closure_layout;
pub mod core_model;
pub mod layout;
mod mono;
mod niche;
pub mod order;
pub mod panics;
pub mod parse;
pub mod pmir;
pub mod prepare;
pub mod registry;
pub mod rustc;
pub mod scratch;
mod slices;
pub mod source;
pub mod span;
pub mod summary;
pub mod toolchain;
pub mod ty;
pub mod validate;

pub use pmir::PreparedMir;
