// expect: admitted
// `enumerate` on `par_iter` chains: each item with its element's index in
// the input, `(usize, item)`, before or after `map` stages and before
// `filter`s (as rayon's, `enumerate` needs every element's item); the
// index reaches the stages through the stage thunk. Every `reduce`
// operation is associative and commutative (a wrapping sum).
use native::gpu::{DeviceVec, Error, Gpu};

// Arg-min and arg-max: the index of the least (the first of equal ones)
// and of the greatest value (the last of equal ones).
pub fn arg_picks(gpu: &Gpu, x: &DeviceVec<f32>, w: &[i16]) -> Result<usize, Error> {
    let lo: Option<(usize, f32)> = gpu.par_iter(x).enumerate().min_by(|a: &(usize, f32), b: &(usize, f32)| a.1.total_cmp(&b.1))?;
    let hi: Option<(usize, i16)> = gpu.par_iter(w).enumerate().max_by_key(|p: &(usize, i16)| p.1)?;
    let far = gpu.par_iter(w).map(|v: i16| v as i64).enumerate().min_by_key(|p: &(usize, i64)| (p.1.abs(), p.0))?;
    Ok(lo.map_or(0, |p| p.0) + hi.map_or(0, |p| p.0) + far.map_or(0, |p| p.0))
}

// The index in a fold and a filter: a weighted sum, and how many values
// exceed their position.
pub fn folds(gpu: &Gpu, k: &DeviceVec<u64>, t: u64) -> Result<u64, Error> {
    let weighted: u64 = gpu
        .par_iter(k)
        .enumerate()
        .map(|p: (usize, u64)| (p.0 as u64).wrapping_mul(p.1))
        .reduce(0, |a: u64, b: u64| a.wrapping_add(b))?;
    let above: usize = gpu.par_iter(k).enumerate().filter(move |p: &(usize, u64)| p.1 > p.0 as u64 + t).count()?;
    let sum: usize = gpu.par_iter(k).enumerate().map(|p: (usize, u64)| p.0).sum()?;
    Ok(weighted.wrapping_add(above as u64).wrapping_add(sum as u64))
}

// `collect`: where the values pass a threshold, in order (the indices,
// wider than the elements: the kept elements' positions are kept too), and
// the pairs themselves.
pub fn collects(gpu: &Gpu, x: &DeviceVec<f32>, b: &[u8], t: f32) -> Result<usize, Error> {
    let hits: DeviceVec<usize> = gpu
        .par_iter(x)
        .enumerate()
        .filter(move |p: &(usize, f32)| p.1 > t)
        .map(|p: (usize, f32)| p.0)
        .collect()?;
    let pairs: DeviceVec<(usize, u8)> = gpu.par_iter(b).enumerate().filter(|p: &(usize, u8)| p.1 % 2 == 1).collect()?;
    Ok(hits.len() + pairs.len())
}
