// expect: admitted
// `par_iter` chains (`native::gpu::ParIter`): `map` and `filter` stages and
// every terminal, each chain compiled as one callback whose environment is
// the chain's closures. Every `reduce` operation is associative and
// commutative (a wrapping sum, `max`).
use native::gpu::{DeviceVec, Error, Gpu};

fn scale(v: f32, g: f32) -> f32 {
    v * g + 1.0
}

pub fn folds(gpu: &Gpu, x: &DeviceVec<f32>, k: &DeviceVec<u64>, t: f32, g: f32, mask: u64) -> Result<f64, Error> {
    let n: usize = gpu.par_iter(x).filter(move |v: &f32| *v > t).count()?;
    let s: f32 = gpu.par_iter(x).map(move |v: f32| scale(v, g)).filter(move |v: &f32| *v > t).sum()?;
    let hits: u64 = gpu.par_iter(k).map(move |v: u64| (v & mask == 0) as u64).sum()?;
    let p: f64 = gpu.par_iter(x).map(|v: f32| v as f64).product()?;
    let r: u64 = gpu.par_iter(k).reduce(0, move |a: u64, b: u64| a.wrapping_add(b).wrapping_add(mask))?;
    let any: bool = gpu.par_iter(k).any(move |v: u64| v == mask)?;
    let all: bool = gpu.par_iter(x).map(|v: f32| v.abs()).all(|v: f32| v < 1.0e30)?;
    let plain: u64 = gpu.par_iter(k).sum()?;
    Ok(n as f64 + s as f64 + hits as f64 + p + r as f64 + any as u8 as f64 + all as u8 as f64 + plain as f64)
}

pub fn picks(gpu: &Gpu, x: &DeviceVec<f32>, w: &[i16], t: f32) -> Result<usize, Error> {
    let m = gpu.par_iter(x).map(|v: f32| v.abs()).max_by(|a: &f32, b: &f32| a.total_cmp(b))?;
    let lo = gpu.par_iter(x).filter(move |v: &f32| *v < t).min_by(|a: &f32, b: &f32| a.total_cmp(b))?;
    let i = gpu.par_iter(w).map(|v: i16| v as i32 * 3).min()?;
    let j = gpu.par_iter(w).max()?;
    let key = gpu.par_iter(w).min_by_key(|v: &i16| v.unsigned_abs())?;
    let far = gpu.par_iter(w).map(|v: i16| v as i64).max_by_key(move |v: &i64| (*v - 7).abs())?;
    Ok(m.is_some() as usize
        + lo.is_some() as usize
        + i.unwrap_or(0) as usize
        + j.unwrap_or(0) as usize
        + key.unwrap_or(0) as usize
        + far.unwrap_or(0) as usize)
}

// Several stages, the item type changing along the chain, and stages whose
// closures capture several values of several types.
pub fn long(gpu: &Gpu, b: &[u8], lo: u8, hi: u8, shift: u32, bias: i64) -> Result<i64, Error> {
    gpu.par_iter(b)
        .filter(move |v: &u8| *v >= lo)
        .map(move |v: u8| (v as u32) << shift)
        .filter(move |v: &u32| *v < (hi as u32) << shift)
        .map(move |v: u32| v as i64 - bias)
        .reduce(i64::MIN, |a: i64, b: i64| a.max(b))
}

// A key that is a tuple is compared as `Ord` compares tuples, field by
// field. This one holds the value whole beside `v % 7`: equal keys are
// equal values, so the pick carries no index.
pub fn by_tuple_key(gpu: &Gpu, x: &DeviceVec<u64>) -> Result<Option<u64>, Error> {
    gpu.par_iter(x).min_by_key(|v: &u64| (v % 7, *v))
}

// `collect`: the kept values, in order, in a new device vector.
pub fn collects(gpu: &Gpu, x: &DeviceVec<f32>, b: &[u8], g: f32, t: f32) -> Result<usize, Error> {
    let z: DeviceVec<f32> = gpu.par_iter(x).map(move |v: f32| v * g).filter(move |v: &f32| *v > t).collect()?;
    let wide: DeviceVec<f64> = gpu.par_iter(x).map(|v: f32| v as f64 * 0.5).collect()?;
    let odd: DeviceVec<u8> = gpu.par_iter(b).filter(|v: &u8| v % 2 == 1).collect()?;
    Ok(z.len() + wide.len() + odd.len())
}

// Keys that hold the value whole beside a call's result or a capture:
// equal keys are equal values, so each pick folds values alone; a key
// that holds the value less its lowest bit does not, and carries indices.
pub fn identifying_keys(gpu: &Gpu, x: &DeviceVec<u64>, m: u64) -> Result<u64, Error> {
    let ones = gpu.par_iter(x).max_by_key(|v: &u64| (v.count_ones(), *v))?;
    let by_m = gpu.par_iter(x).min_by_key(move |v: &u64| (v % m, *v))?;
    let half = gpu.par_iter(x).min_by_key(|v: &u64| (v % 7, *v >> 1))?;
    Ok(ones.unwrap_or(0) ^ by_m.unwrap_or(0) ^ half.unwrap_or(0))
}
