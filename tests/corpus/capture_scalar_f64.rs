// A `move` closure capturing one `f64` by value and casting it to i32: admit
// (scalar capture by value), unless the compiler restricts this width/kind.
pub fn entry(data: &[i32], k: f64) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k as i32))
}
