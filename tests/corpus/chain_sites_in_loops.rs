// Two `par_iter` chains of one terminal in a loop: rustc at -O puts the
// second one's blocks first, and each registration is still at its own
// call (the one whose chain holds its closure), with that closure's
// capture.
use native::gpu::{Error, Gpu};

pub fn sums(gpu: &Gpu, keys: &[u64], mask: u64, ok: &mut Vec<String>) -> Result<(), Error> {
    for n in [0usize, 1, 7] {
        let k = gpu.upload(&keys[..n])?;
        let at = |name: &str| format!("chain {name}, {n} u64");
        let hits: u64 = gpu.par_iter(&k).map(move |v: u64| (v & mask == 0) as u64).sum()?;
        if hits != keys.iter().map(|v| (v & mask == 0) as u64).sum::<u64>() {
            ok.push(at("mask sum"));
        }
        let plain: u64 = gpu.par_iter(&k).map(|v: u64| v >> 40).sum()?;
        if plain != keys.iter().map(|v| v >> 40).sum::<u64>() {
            ok.push(at("sum"));
        }
    }
    Ok(())
}
