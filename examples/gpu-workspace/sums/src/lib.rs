//! Reductions whose operators capture values known only at run time.

use native::gpu::{Error, Gpu};

/// Keyed sums: the captured values arrive at run time (a module file,
/// `keyed.rs`, with a module file of its own, `keyed/wide.rs`).
pub mod keyed;

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
