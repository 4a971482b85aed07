// expect: rejected E0101
// A closure of a `par_iter` chain borrows `t`: the chain's closures run on
// the GPU, where a host address means nothing. The error points at that
// closure, and `move` fixes it.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn above(gpu: &Gpu, x: &DeviceVec<f32>, t: f32) -> Result<usize, Error> {
    gpu.par_iter(x).filter(|v: &f32| *v > t).count()
}
