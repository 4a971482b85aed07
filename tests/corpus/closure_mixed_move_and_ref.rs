// A `move` closure capturing an i32 by value and a `&i32` (a moved reference):
// reject the reference capture, even though the other capture is fine.
pub fn entry(data: &[i32], k: i32, r: &i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k).wrapping_add(*r))
}
