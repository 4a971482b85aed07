// Admitted: the same source as 03_wrapping_capture.rs, built at opt-level 3,
// where `wrapping_add` is inlined into the closure body (inlined scopes).
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))
}
