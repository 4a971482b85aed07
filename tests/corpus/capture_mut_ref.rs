// A `move` closure capturing a `&mut i32` and only reading through it: reject
// as a borrowed capture (`&mut T`), even without a write.
pub fn entry(data: &[i32], k: &mut i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(*k))
}
