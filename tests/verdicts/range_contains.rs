// expect: admitted
// `Range::contains` and `RangeInclusive::contains`, as clippy suggests
// them for a pair of comparisons: over floats, over integers with
// captured bounds, inclusive, and an inclusive range of two constants
// (which rustc promotes to a constant built by `RangeInclusive::new`).
// A NaN is in no range.
pub fn in_window(data: &[f32]) -> Vec<u64> {
    native::histogram(data, 256, |x| {
        if (-1000.0..1000.0).contains(&x) {
            ((x + 1000.0) * 0.128) as usize
        } else {
            usize::MAX
        }
    })
}

pub fn between(data: &[i64], lo: i64, hi: i64) -> Vec<i64> {
    native::select(data, move |x| (lo..=hi).contains(&x))
}

pub fn beyond(data: &[f64], lo: f64) -> Vec<f64> {
    native::select(data, move |x| !(lo..=lo + 1.0).contains(&x))
}

pub fn lowercase(data: &[u8]) -> Vec<u8> {
    native::select(data, |b| (b'a'..=b'z').contains(&b))
}
