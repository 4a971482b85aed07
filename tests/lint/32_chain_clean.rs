// expect: clean
// `par_iter` chains with lawful terminals: a wrapping sum, a comparator
// by `total_cmp`; `sum` and `count` combine with the compiler's own
// operations, which the lint leaves alone.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn entry(gpu: &Gpu, data: &DeviceVec<f32>, t: f32) -> Result<f32, Error> {
    let s: u64 = gpu
        .par_iter(data)
        .map(|v: f32| v.to_bits() as u64)
        .reduce(0, |a: u64, b: u64| a.wrapping_add(b))?;
    let m = gpu.par_iter(data).max_by(|a: &f32, b: &f32| a.total_cmp(b))?;
    let n = gpu.par_iter(data).filter(move |v: &f32| *v > t).count()?;
    let f: f32 = gpu.par_iter(data).sum()?;
    Ok(s as f32 + m.unwrap_or(0.0) + n as f32 + f)
}
