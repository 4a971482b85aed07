// A `move` closure capturing a `*const i32` and reading it in `unsafe`:
// reject as a raw-pointer capture.
pub fn entry(data: &[i32], p: *const i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(unsafe { *p }))
}
