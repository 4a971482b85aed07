// expect: admitted
// `GpuSet`'s methods over sharded data: each a registration with the same
// callback as `Gpu`'s, compiled once for every shard's GPU; the captures
// are the closures' own bytes, as for one GPU.
use native::gpu::{Error, GpuSet, Sharded};

pub fn calls(gpus: &GpuSet, x: &Sharded<f32>, k: &Sharded<u32>, g: f32) -> Result<f32, Error> {
    let y = gpus.transform(x, move |v: f32| v * g + 1.0)?;
    let z = gpus.transform2(&y, x, |a: f32, b: f32| a - b)?;
    let kept = gpus.select(&z, move |v: f32| v > g)?;
    let scanned = gpus.inclusive_scan(k, |a: u32, b: u32| a.wrapping_add(b))?;
    let before = gpus.exclusive_scan(&scanned, 7, |a: u32, b: u32| a.max(b))?;
    let offsets = [0, 2, 2, k.len()];
    let sums = gpus.segmented_reduce(&before, &offsets, 0, |a: u32, b: u32| a ^ b)?;
    let sorted = gpus.sort_by(&kept, |a: &f32, b: &f32| b.total_cmp(a))?;
    let by_key = gpus.sort_by_key(&sums, move |v: &u32| *v >> 4)?;
    let firsts = gpus.dedup_by(&by_key, |a: &u32, b: &u32| a == b)?;
    let (small, _) = gpus.partition(&firsts, move |v: &u32| (*v as f32) < g)?;
    let counts = gpus.histogram(&small, 16, |v: u32| (v >> 28) as usize)?;
    let ordered = gpus.sort(&small)?;
    let _ = gpus.sort_unstable(&ordered)?;
    drop(counts);
    gpus.reduce(&sorted, f32::MIN, |a: f32, b: f32| a.max(b))
}
