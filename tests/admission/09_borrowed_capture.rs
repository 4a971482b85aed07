// Rejected (borrowed capture): a non-`move` closure reads `k` through a
// reference; the environment field is `&i32`.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(k))
}
