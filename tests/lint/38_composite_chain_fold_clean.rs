// expect: clean
// A chain over structs whose fold is associative and commutative field by
// field: a wrapping count and a maximum of what its stages keep.
use native::gpu::{device_element, DeviceVec, Error, Gpu};

#[derive(Clone, Copy)]
pub struct Hit {
    pub energy: f32,
    pub detector: u16,
}

device_element!(Hit { energy: f32, detector: u16 });

pub fn entry(gpu: &Gpu, data: &DeviceVec<Hit>, floor: f32) -> Result<(u32, f32), Error> {
    gpu.par_iter(data)
        .filter(move |h: &Hit| h.energy > floor)
        .map(|h: Hit| (1u32, h.energy))
        .reduce((0, f32::NEG_INFINITY), |a: (u32, f32), b: (u32, f32)| (a.0.wrapping_add(b.0), a.1.max(b.1)))
}
