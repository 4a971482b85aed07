//! The input generator itself, with no dependencies: this file is also
//! compiled into the host-reference harness (`GENERATOR_SOURCE`), so the
//! host and the GPU runner generate the same inputs from one source.

/// The generator's name in bundles; a bundle naming another is rejected.
pub const GENERATOR: &str = "splitmix64-nonzero-1000/1";

/// Values lie in `[-INPUT_BOUND, -1] ∪ [1, INPUT_BOUND]`.
pub const INPUT_BOUND: i32 = 1000;

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Element `index` of the input for `seed`.
pub fn input_value(seed: u64, index: u64) -> i32 {
    let z = mix(seed.wrapping_add(index.wrapping_add(1).wrapping_mul(GAMMA)));
    // Lemire's multiply-shift: uniform enough over 2000 values, no division.
    let r = (((z >> 32) * (2 * INPUT_BOUND as u64)) >> 32) as i32; // 0..2000
    if r < INPUT_BOUND {
        r - INPUT_BOUND // -1000..=-1
    } else {
        r - INPUT_BOUND + 1 // 1..=1000
    }
}

/// Writes elements `start .. start + out.len()` of the input for `seed`.
pub fn fill_inputs(seed: u64, start: u64, out: &mut [i32]) {
    for (k, slot) in out.iter_mut().enumerate() {
        *slot = input_value(seed, start + k as u64);
    }
}
