// expect: W0201 associative
// A `par_iter` chain whose `reduce` takes a difference: the GPU's tree
// regroups the chain's values as it does a reduce's elements.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn entry(gpu: &Gpu, data: &DeviceVec<i32>) -> Result<i32, Error> {
    gpu.par_iter(data).map(|v: i32| v & 0xff).reduce(0, |a: i32, b: i32| a.wrapping_sub(b))
}
