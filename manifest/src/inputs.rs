//! Deterministic test inputs, shared by the host (which computes expected
//! results) and the GPU runner (which regenerates the data), so inputs are
//! never stored in a bundle.
//!
//! Element `i` of the input for `seed` is the `i`-th output of SplitMix64
//! started at `seed` (counter-based: `mix(seed + (i + 1) * GAMMA)`), mapped to
//! `[-1000, -1] ∪ [1, 1000]` by the high 32 bits. Never zero: zeros hide
//! unwritten outputs and wrong indexing. Random access by index lets both
//! sides generate in parallel and a case be sliced without regenerating.

use serde::{Deserialize, Serialize};

pub use crate::generator::{fill_inputs, input_value, GENERATOR, INPUT_BOUND};

/// The generator's source text, compiled into the host-reference harness.
pub const GENERATOR_SOURCE: &str = include_str!("generator.rs");

/// Identifies one generated input: element count and seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct InputSpec {
    pub size: u64,
    pub seed: u64,
}

/// The whole input for `spec`.
pub fn generate_inputs(spec: InputSpec) -> Vec<i32> {
    let mut data = vec![0i32; spec.size as usize];
    fill_inputs(spec.seed, 0, &mut data);
    data
}
