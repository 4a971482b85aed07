// A `move` closure capturing a `String` and reading its length: reject as a
// non-scalar capture.
pub fn entry(data: &[i32], s: String) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(s.len() as i32))
}
