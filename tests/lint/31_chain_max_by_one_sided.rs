// expect: W0201 irreflexive
// A `max_by` comparator that reads its first operand only: whether the
// later of two values wins does not depend on the other, so the maximum the
// GPU finds depends on the order it compares them in.
use native::gpu::{DeviceVec, Error, Gpu};
use std::cmp::Ordering;

pub fn entry(gpu: &Gpu, data: &DeviceVec<u32>) -> Result<Option<u32>, Error> {
    gpu.par_iter(data)
        .max_by(|a: &u32, _b: &u32| if a % 2 == 0 { Ordering::Less } else { Ordering::Greater })
}
