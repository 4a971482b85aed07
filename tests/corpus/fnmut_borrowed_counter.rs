// A non-`move` `FnMut` closure incrementing an outer counter through a
// `&mut i32` capture, via `native::reduce_mut`: reject (mutable state and a
// borrowed capture).
pub fn entry(data: &[i32]) -> (i32, i32) {
    let mut calls = 0i32;
    let sum = native::reduce_mut(data, 0, |a, b| {
        calls += 1;
        a.wrapping_add(b)
    });
    (sum, calls)
}
