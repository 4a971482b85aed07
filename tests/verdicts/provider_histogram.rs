// expect: admitted
// `histogram`: how many elements a bin function maps to each bin; an index
// past the last bin is not counted.
pub fn bytes(data: &[u8]) -> Vec<u64> {
    native::histogram(data, 256, |x| x as usize)
}

/// Evenly spaced bins over a captured range; values outside it go to no
/// bin.
pub fn even(data: &[f32], lo: f32, hi: f32, bins: usize) -> Vec<u64> {
    let scale = bins as f32 / (hi - lo);
    native::histogram(data, bins, move |x| {
        if x >= lo && x < hi {
            ((x - lo) * scale) as usize
        } else {
            usize::MAX
        }
    })
}

/// The top byte of a 32-bit key, as a radix sort's first pass counts.
pub fn top_byte(data: &[u32]) -> Vec<u64> {
    native::histogram(data, 256, |x| (x >> 24) as usize)
}
