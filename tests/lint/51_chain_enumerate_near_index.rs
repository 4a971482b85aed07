// expect: W0201 transitive in its ties
// An arg-min over an `enumerate` chain whose comparator calls neighbouring
// indices equal: 0 ~ 1 and 1 ~ 2 but 0 < 2, so which minimum the GPU's
// tree finds depends on the order it compares the values in.
use native::gpu::{DeviceVec, Error, Gpu};
use std::cmp::Ordering;

pub fn entry(gpu: &Gpu, data: &DeviceVec<f32>) -> Result<Option<(usize, f32)>, Error> {
    gpu.par_iter(data).enumerate().min_by(|a: &(usize, f32), b: &(usize, f32)| {
        if a.0.abs_diff(b.0) <= 1 {
            Ordering::Equal
        } else {
            a.0.cmp(&b.0)
        }
    })
}
