// expect: clean
// `total_cmp` on floats, `partial_cmp` on floats without NaN (a NaN panics,
// and the lint skips inputs that panic), and `cmp` on a key: total orders.
pub fn by_value(data: &[f32]) -> Vec<f32> {
    native::sort_by(data, |a, b| a.total_cmp(b))
}

pub fn by_partial(data: &[f64]) -> Vec<f64> {
    native::sort_by(data, |a, b| a.partial_cmp(b).unwrap())
}

pub fn by_high_bits(data: &[u64]) -> Vec<u64> {
    native::sort_by(data, |a, b| (a >> 32).cmp(&(b >> 32)))
}
