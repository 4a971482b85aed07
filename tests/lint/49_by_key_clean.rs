// expect: clean
// Equal keys (or keys in one bucket) with associative folds: a wrapping
// sum, a maximum, a field-wise fold of pairs, the last value of each run
// (associative, not commutative: a scan needs no more).
pub fn totals(keys: &[u32], values: &[u64]) -> (Vec<u32>, Vec<u64>) {
    native::reduce_by_key(keys, values, |a, b| a == b, |x, y| x.wrapping_add(y))
}

pub fn peaks(keys: &[i64], values: &[f32], width: i64) -> (Vec<i64>, Vec<f32>) {
    native::reduce_by_key(
        keys,
        values,
        move |a, b| a / width.max(1) == b / width.max(1),
        |x, y| x.max(y),
    )
}

pub fn extents(keys: &[(u16, u8)], values: &[(i32, i32)]) -> Vec<(i32, i32)> {
    native::scan_by_key(keys, values, |a, b| a.0 == b.0, |x, y| (x.0.min(y.0), x.1.max(y.1)))
}

pub fn latest(keys: &[u8], values: &[f64]) -> Vec<f64> {
    native::scan_by_key(keys, values, |a, b| a == b, |_, y| y)
}
