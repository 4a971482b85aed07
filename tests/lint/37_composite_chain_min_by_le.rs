// expect: W0201 irreflexive
// A `min_by` over pairs whose comparator answers `Greater` for equal
// values (`<` written where `<=` was meant, the other way round): the
// least pair the GPU finds depends on the order it compares them in.
use native::gpu::{DeviceVec, Error, Gpu};
use std::cmp::Ordering;

pub fn entry(gpu: &Gpu, data: &DeviceVec<(f32, u32)>) -> Result<Option<(f32, u32)>, Error> {
    gpu.par_iter(data)
        .min_by(|a: &(f32, u32), b: &(f32, u32)| if a.0 < b.0 { Ordering::Less } else { Ordering::Greater })
}
