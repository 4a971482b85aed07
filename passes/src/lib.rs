//! Passes over the `rmir` dialect: admission (accept or reject each
//! registration's callback, with diagnostics), lowering, and the pipeline
//! that runs admission with a trial lowering of what it admits.
//!
//! Invariant: admission runs before any code generation and never changes the
//! module; every rejection is a [`diagnostic::Diagnostic`] with a stable code.

pub mod admission;
pub mod call_graph;
pub mod codes;
pub mod diagnostic;
pub mod lower;
pub mod pipeline;
pub mod suggestion;
