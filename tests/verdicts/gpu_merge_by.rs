// expect: admitted
// `Gpu::merge_by`: a registration as the free function is, over device
// data and host data alike; the merged elements stay on the device.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn merged(gpu: &Gpu, a: &DeviceVec<u16>, b: &[u16]) -> Result<DeviceVec<u16>, Error> {
    gpu.merge_by(a, b, |x, y| x.cmp(y))
}
