// expect: rejected E0105
// A `par_iter` chain in a generic function: its closures are written in
// `T`, and a chain is not compiled for each of the function's instances.
// Each of its two instances (rustc inlined both into `run`) is refused
// with a located error that says so.
use native::gpu::{DeviceElement, DeviceVec, Error, Gpu};

pub fn count_above<T: DeviceElement + PartialOrd>(gpu: &Gpu, x: &DeviceVec<T>, t: T) -> Result<usize, Error> {
    gpu.par_iter(x).filter(move |v: &T| *v > t).count()
}

pub fn run(gpu: &Gpu, a: &DeviceVec<f32>, b: &DeviceVec<u16>) -> Result<usize, Error> {
    Ok(count_above(gpu, a, 0.5f32)? + count_above(gpu, b, 7u16)?)
}
