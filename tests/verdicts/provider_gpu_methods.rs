// expect: admitted
// The host API's methods, one per provider: each is a registration, as the
// free functions are.
use native::gpu::{Error, Gpu};

pub fn all(gpu: &Gpu, a: &[i32], b: &[u8], offsets: &[usize], k: i32) -> Result<usize, Error> {
    let r = gpu.reduce(a, 0, move |x, y| x.wrapping_add(y).wrapping_add(k))?;
    let s = gpu.inclusive_scan(a, |x, y| x.max(y))?;
    let e = gpu.exclusive_scan(a, k, |x, y| x.wrapping_add(y))?;
    let t = gpu.transform(a, move |x| x as f64 * k as f64)?;
    let t2 = gpu.transform2(a, b, |x, y| x.wrapping_add(y as i32))?;
    let g = gpu.segmented_reduce(a, offsets, 0, |x, y| x.min(y))?;
    let f = gpu.select(a, move |x| x > k)?;
    let o = gpu.sort_by(a, |x, y| x < y)?;
    Ok(r as usize + s.len() + e.len() + t.len() + t2.len() + g.len() + f.len() + o.len())
}
