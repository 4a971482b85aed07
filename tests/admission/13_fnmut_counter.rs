// Rejected (mutable state): an `FnMut` closure increments a captured counter,
// registered through `native::reduce_mut`.
pub fn entry(data: &[i32]) -> i32 {
    let mut calls = 0i32;
    native::reduce_mut(data, 0, move |a, b| {
        calls = calls.wrapping_add(1);
        a.wrapping_add(b).wrapping_add(calls)
    })
}
