// expect: admitted
// `sort` and `sort_unstable` of integers, as `slice::sort` and
// `slice::sort_unstable`: no callback argument, the element type's own
// order (the core model's comparator of it), as free functions of `native`
// and as methods of the host API, beside a `sort_by` of the same type, and
// in a generic helper called with two element types.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn ascending(data: &[u32]) -> Vec<u32> {
    native::sort(data)
}

pub fn ascending_signed(data: &[i64]) -> Vec<i64> {
    native::sort_unstable(data)
}

pub fn bytes(data: &[i8]) -> Vec<i8> {
    native::sort(data)
}

pub fn on_the_gpu(gpu: &Gpu, d: &DeviceVec<u16>) -> Result<(DeviceVec<u16>, DeviceVec<u16>), Error> {
    let up = gpu.sort(d)?;
    let down = gpu.sort_by(d, |a, b| b.cmp(a))?;
    Ok((up, down))
}

pub fn unstable_on_the_gpu(gpu: &Gpu, host: &[u64]) -> Result<Vec<u64>, Error> {
    gpu.sort_unstable(host)?.to_vec()
}

// A generic helper: each element type it is called with sorts by its own
// order, both calls at the helper's one call site.
fn sorted<T: native::gpu::DeviceElement + Ord>(gpu: &Gpu, d: &DeviceVec<T>) -> Result<DeviceVec<T>, Error> {
    gpu.sort(d)
}

pub fn two_types(gpu: &Gpu, a: &DeviceVec<u32>, b: &DeviceVec<i16>) -> Result<(DeviceVec<u32>, DeviceVec<i16>), Error> {
    Ok((sorted(gpu, a)?, sorted(gpu, b)?))
}
