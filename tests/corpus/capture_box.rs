// A `move` closure capturing a `Box<i32>` and dereferencing it: reject as a
// non-scalar capture (a box is a heap pointer).
pub fn entry(data: &[i32], k: Box<i32>) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(*k))
}
