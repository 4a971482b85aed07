// An `(i64, i64) -> i64` callback with an i64 capture: reject as another
// signature (the capture alone would be fine).
pub fn entry(data: &[i64], k: i64) -> i64 {
    native::reduce(data, 0i64, move |a, b| a.wrapping_add(b).wrapping_add(k))
}
