// A `move` closure capturing a `*mut i32` and writing through it (a side
// effect from an `Fn`): reject as a raw-pointer capture.
pub fn entry(data: &[i32], p: *mut i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        unsafe { *p = b };
        a.wrapping_add(b)
    })
}
