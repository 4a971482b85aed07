// expect: admitted
// `reduce_by_key` and `scan_by_key`: two callbacks, `same` on consecutive
// keys (as `slice::chunk_by` asks it) and `op` on values, compiled as one
// body whose environment is both closures; two thunks, `same` taking the
// keys by value and handing the body references, `op` a fold's.
pub fn totals(keys: &[u32], values: &[f32]) -> (Vec<u32>, Vec<f32>) {
    native::reduce_by_key(keys, values, |a, b| a == b, |x, y| x + y)
}

/// Captures in both closures: keys bucketed by a width, values summed
/// with a wrapping add and a capture each time (still associative).
pub fn buckets(keys: &[i64], values: &[u16], width: i64, k: u16) -> (Vec<i64>, Vec<u16>) {
    native::reduce_by_key(
        keys,
        values,
        move |a, b| a / width == b / width,
        move |x, y| x.wrapping_add(y).wrapping_add(k),
    )
}

/// A running maximum restarting at each run of equal bytes.
pub fn running_max(keys: &[u8], values: &[f64]) -> Vec<f64> {
    native::scan_by_key(keys, values, |a, b| a == b, |x: f64, y: f64| x.max(y))
}

/// Only `op` captures.
pub fn offsets(keys: &[i16], values: &[u64], bias: u64) -> Vec<u64> {
    native::scan_by_key(keys, values, |a, b| a == b, move |x, y| x + y + bias)
}
