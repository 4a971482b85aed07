// expect: admitted
// `Gpu::partition_point` and `Gpu::histogram`: registrations as the free
// functions are, over device data (a search's indices stay on the device,
// as do the counts).
use native::gpu::{DeviceVec, Error, Gpu};

pub fn place(gpu: &Gpu, sorted: &DeviceVec<f32>, queries: &[f32]) -> Result<DeviceVec<usize>, Error> {
    gpu.partition_point(sorted, queries, |x, q| x < q)
}

pub fn counts(gpu: &Gpu, data: &DeviceVec<u32>, shift: u32) -> Result<DeviceVec<u64>, Error> {
    gpu.histogram(data, 1 << (32 - shift), move |x| (x >> shift) as usize)
}
