//! Passes over the `rmir` dialect: admission (accept or reject each
//! registration's callback, with diagnostics) and lowering.
//!
//! Invariant: admission runs before any code generation and never changes the
//! module; every rejection is a [`diagnostic::Diagnostic`] with a stable code.

pub mod admission;
pub mod call_graph;
pub mod codes;
pub mod diagnostic;
pub mod lower;
pub mod suggestion;
