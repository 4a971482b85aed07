//! Keyed sums: the captured values arrive at run time.

use native::gpu::{Error, Gpu};

pub mod wide;
pub use wide::{scrambled, scrambled_cpu};

/// `a + b + k * m`: two captures of different types. Associative and
/// commutative, as a tree reduction needs (each element adds one k*m).
pub fn mix(gpu: &Gpu, data: &[i32], k: i32, m: u8) -> Result<i32, Error> {
    gpu.reduce(data, 0, move |a, b| {
        a.wrapping_add(b).wrapping_add(k.wrapping_mul(m as i32))
    })
}

/// The CPU reference of [`mix`].
pub fn mix_cpu(data: &[i32], k: i32, m: u8) -> i32 {
    native::reduce(data, 0, move |a, b| {
        a.wrapping_add(b).wrapping_add(k.wrapping_mul(m as i32))
    })
}
