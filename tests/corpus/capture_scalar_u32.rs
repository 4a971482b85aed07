// A `move` closure capturing one `u32` by value and casting it to i32: admit
// (scalar capture by value), unless the compiler restricts this width/kind.
pub fn entry(data: &[i32], k: u32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k as i32))
}
