// expect: admitted
// Both scans: a float running sum, and a wrapping i16 sum from a captured
// offset after every step.
pub fn running(data: &[f64]) -> Vec<f64> {
    native::inclusive_scan(data, |a, b| a + b)
}

pub fn offsets(data: &[i16], base: i16, step: i16) -> Vec<i16> {
    native::exclusive_scan(data, base, move |a, b| a.wrapping_add(b).wrapping_add(step))
}
