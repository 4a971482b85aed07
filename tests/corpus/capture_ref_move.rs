// A `move` closure capturing a `&i32` by value (the reference itself is the
// capture): reject as a borrowed capture (`&T`).
pub fn entry(data: &[i32], k: &i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(*k))
}
