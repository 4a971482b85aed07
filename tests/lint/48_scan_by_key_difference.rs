// expect: W0201 associative
// A running difference per run: `(a - b) - c` is not `a - (b - c)`, and
// the GPU groups each run's values in tiles.
pub fn differences(keys: &[u8], values: &[i64]) -> Vec<i64> {
    native::scan_by_key(keys, values, |a, b| a == b, |x, y| x.wrapping_sub(y))
}
