// expect: rejected E0103
// The terminal's closure of a `par_iter` chain captures a `Vec`: a chain's
// closures hold numbers by value, as any callback's.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn weighted(gpu: &Gpu, x: &DeviceVec<u32>, w: Vec<u32>) -> Result<bool, Error> {
    gpu.par_iter(x).map(|v: u32| v % 4).any(move |v: u32| v == w[0])
}
