// Admitted: a `move` closure capturing one `i32` by value; the environment is
// one i32 field read as `(*_1).0`.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))
}
