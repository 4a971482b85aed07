// expect: admitted
// The host API's methods, one per provider, and the `_into` forms that
// write into a caller's device buffer: each is a registration, as the free
// functions are.
use native::gpu::{DeviceVec, Error, Gpu};

pub fn all(gpu: &Gpu, a: &[i32], b: &[u8], offsets: &[usize], k: i32) -> Result<usize, Error> {
    let r = gpu.reduce(a, 0, move |x, y| x.wrapping_add(y).wrapping_add(k))?;
    let s = gpu.inclusive_scan(a, |x, y| x.max(y))?;
    let e = gpu.exclusive_scan(a, k, |x, y| x.wrapping_add(y))?;
    let t = gpu.transform(a, move |x| x as f64 * k as f64)?;
    let t2 = gpu.transform2(a, b, |x, y| x.wrapping_add(y as i32))?;
    let g = gpu.segmented_reduce(a, offsets, 0, |x, y| x.min(y))?;
    let f = gpu.select(a, move |x| x > k)?;
    let o = gpu.sort_by(a, |x, y| y.cmp(x))?;
    Ok(r as usize + s.len() + e.len() + t.len() + t2.len() + g.len() + f.len() + o.len())
}

pub fn into(gpu: &Gpu, a: &DeviceVec<i32>, b: &[u8], offsets: &[usize], k: i32) -> Result<usize, Error> {
    let mut out: DeviceVec<i32> = gpu.alloc(a.len())?;
    let mut wide: DeviceVec<f64> = gpu.alloc(a.len())?;
    let mut per: DeviceVec<i32> = gpu.alloc(offsets.len().saturating_sub(1))?;
    gpu.inclusive_scan_into(a, &mut out, |x, y| x.max(y))?;
    gpu.exclusive_scan_into(a, &mut out, k, |x, y| x.wrapping_add(y))?;
    gpu.transform_into(a, &mut wide, move |x| x as f64 * k as f64)?;
    gpu.transform2_into(a, b, &mut out.slice_mut(..), |x, y| x.wrapping_add(y as i32))?;
    gpu.segmented_reduce_into(a, offsets, &mut per, 0, |x, y| x.min(y))?;
    Ok(out.len() + wide.len() + per.len())
}
