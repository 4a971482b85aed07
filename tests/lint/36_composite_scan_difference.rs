// expect: W0201 associative
// A running "difference" of a struct's fields: `a - b` regroups with the
// look-back's tree (the scan of tile aggregates is not the sequential
// one), so the GPU's running values are not the CPU's.
#[derive(Clone, Copy)]
pub struct Level {
    pub depth: i32,
    pub stamp: u32,
}

pub fn entry(data: &[Level]) -> Vec<Level> {
    native::inclusive_scan(data, |a, b| Level {
        depth: a.depth.wrapping_sub(b.depth),
        stamp: a.stamp.max(b.stamp),
    })
}
