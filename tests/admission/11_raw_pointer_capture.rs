// Rejected (raw-pointer capture): a `move` closure captures `*const i32` and
// reads through it in `unsafe`.
pub fn entry(data: &[i32], k: &i32) -> i32 {
    let p: *const i32 = k;
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(unsafe { *p }))
}
