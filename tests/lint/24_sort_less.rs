// expect: clean
// `<` on floats without NaN, and `<` on a key: strict weak orders.
pub fn by_value(data: &[f32]) -> Vec<f32> {
    native::sort_by(data, |a, b| a < b)
}

pub fn by_high_bits(data: &[u64]) -> Vec<u64> {
    native::sort_by(data, |a, b| (a >> 32) < (b >> 32))
}
