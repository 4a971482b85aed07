// A `move` closure capturing a `Vec<i32>` and reading its length: reject as a
// non-scalar capture (the closure also owns a value with drop glue).
pub fn entry(data: &[i32], v: Vec<i32>) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(v.len() as i32))
}
