//! Reductions whose operators capture values known only at run time.

use native::gpu::{Error, Gpu};

/// Keyed sums: the captured values arrive at run time.
pub mod keyed {
    use super::*;

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

    /// Captures that rustc reorders: `u8, u16, u32, f64, i8, i64, u16` sit
    /// at offsets 24, 20, 16, 0, 25, 8, 22 of the closure.
    #[allow(clippy::too_many_arguments)]
    pub fn scrambled(
        gpu: &Gpu,
        data: &[i32],
        a: u8,
        b: u16,
        c: u32,
        d: f64,
        e: i8,
        f: i64,
        g: u16,
    ) -> Result<i32, Error> {
        gpu.reduce(data, 0, move |x, y| {
            let bias = ((a as i32) ^ ((b as i32) << 3) ^ (c as i32) ^ (d as i32))
                .wrapping_add(e as i32)
                .wrapping_sub((f >> 7) as i32)
                ^ (g as i32);
            x.wrapping_add(y).wrapping_add(bias)
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub fn scrambled_cpu(
        data: &[i32],
        a: u8,
        b: u16,
        c: u32,
        d: f64,
        e: i8,
        f: i64,
        g: u16,
    ) -> i32 {
        native::reduce(data, 0, move |x, y| {
            let bias = ((a as i32) ^ ((b as i32) << 3) ^ (c as i32) ^ (d as i32))
                .wrapping_add(e as i32)
                .wrapping_sub((f >> 7) as i32)
                ^ (g as i32);
            x.wrapping_add(y).wrapping_add(bias)
        })
    }
}

/// Sums over data already on the device.
pub mod resident {
    use super::*;
    use native::gpu::DeviceVec;

    /// The largest element, clamped to `lo..=hi` (called as a path, not a
    /// method: the call site is the path's start).
    pub fn clamped_max(gpu: &Gpu, data: &DeviceVec<i32>, lo: i32, hi: i32) -> Result<i32, Error> {
        Gpu::reduce(gpu, data, i32::MIN, move |a, b| a.max(b).clamp(lo, hi))
    }

    pub fn clamped_max_cpu(data: &[i32], lo: i32, hi: i32) -> i32 {
        native::reduce(data, i32::MIN, move |a, b| a.max(b).clamp(lo, hi))
    }

    /// A plain sum plus a per-element bias (0 for a plain sum): the
    /// benchmark's operation, as CUB's `cuda::std::plus` with a capture.
    pub fn biased_sum(gpu: &Gpu, data: &DeviceVec<i32>, bias: i32) -> Result<i32, Error> {
        gpu.reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(bias))
    }

    /// [`biased_sum`] on a host slice (copied to the device by the call).
    pub fn biased_sum_host(gpu: &Gpu, data: &[i32], bias: i32) -> Result<i32, Error> {
        gpu.reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(bias))
    }

    pub fn biased_sum_cpu(data: &[i32], bias: i32) -> i32 {
        native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(bias))
    }
}
