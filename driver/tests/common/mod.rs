//! Shared by the driver's integration tests.
pub mod gen;
