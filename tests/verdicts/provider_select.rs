// expect: admitted
// Predicates: a captured threshold, and a helper on floats.
pub fn above(data: &[u32], lo: u32) -> Vec<u32> {
    native::select(data, move |x| x > lo)
}

fn in_band(x: f64, lo: f64, hi: f64) -> bool {
    x >= lo && x < hi
}

pub fn band(data: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    native::select(data, move |x| in_band(x, lo, hi))
}
