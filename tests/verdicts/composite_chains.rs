// expect: admitted
// `par_iter` chains over tuples and structs: the items and the values the
// stages make may be composites, read and written at rustc's offsets (the
// thunks take them by pointer), and the picks keep the first of equal
// values as `Iterator`'s. Every fold is associative and commutative.
use native::gpu::{device_element, DeviceVec, Error, Gpu};

#[derive(Clone, Copy)]
pub struct Hit {
    pub energy: f32,
    pub detector: u16,
}

device_element!(Hit { energy: f32, detector: u16 });

/// A field summed, the items above a threshold counted.
pub fn totals(gpu: &Gpu, hits: &DeviceVec<Hit>, floor: f32) -> Result<(f32, usize), Error> {
    let energy: f32 = gpu.par_iter(hits).map(|h: Hit| h.energy).sum()?;
    let above = gpu.par_iter(hits).filter(move |h: &Hit| h.energy > floor).count()?;
    Ok((energy, above))
}

/// The least pair by its value (`total_cmp`), and by its value then its
/// tag (an order on every field: equal pairs are identical, picked by
/// value alone), the hit of most energy on one detector, a pair of
/// counters folded field by field.
pub fn picks(gpu: &Gpu, pairs: &DeviceVec<(f32, u32)>, hits: &DeviceVec<Hit>, d: u16) -> Result<u32, Error> {
    let least = gpu.par_iter(pairs).min_by(|a: &(f32, u32), b: &(f32, u32)| a.0.total_cmp(&b.0))?;
    let first = gpu
        .par_iter(pairs)
        .min_by(|a: &(f32, u32), b: &(f32, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))?;
    let most = gpu
        .par_iter(hits)
        .filter(move |h: &Hit| h.detector == d)
        .max_by_key(|h: &Hit| h.energy.to_bits())?;
    let counted = gpu
        .par_iter(hits)
        .map(|h: Hit| (1u32, h.detector as u32))
        .reduce((0, 0), |a: (u32, u32), b: (u32, u32)| (a.0.wrapping_add(b.0), a.1.max(b.1)))?;
    Ok(least.map_or(0, |p| p.1) + first.map_or(0, |p| p.1) + most.map_or(0, |h| h.detector as u32) + counted.0)
}

/// The pairs of even index, kept whole; the energies of one detector as
/// pairs with their detector.
pub fn collected(gpu: &Gpu, pairs: &DeviceVec<(f32, u32)>, hits: &DeviceVec<Hit>) -> Result<usize, Error> {
    let even: DeviceVec<(f32, u32)> = gpu.par_iter(pairs).filter(|p: &(f32, u32)| p.1 % 2 == 0).collect()?;
    let tagged: DeviceVec<(u16, f32)> = gpu.par_iter(hits).map(|h: Hit| (h.detector, h.energy)).collect()?;
    Ok(even.len() + tagged.len())
}
