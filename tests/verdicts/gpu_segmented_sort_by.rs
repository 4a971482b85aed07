// expect: admitted
// `Gpu::segmented_sort_by`: a registration as the free function is, over
// device data and host data alike; the sorted elements stay on the device.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn descending(gpu: &Gpu, data: &DeviceVec<i16>, offsets: &[usize]) -> Result<DeviceVec<i16>, Error> {
    gpu.segmented_sort_by(data, offsets, |a, b| b.cmp(a))
}

pub fn from_host(gpu: &Gpu, data: &[f64], offsets: &[usize]) -> Result<DeviceVec<f64>, Error> {
    gpu.segmented_sort_by(data, offsets, |a, b| a.total_cmp(b))
}
