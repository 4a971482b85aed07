// The closure calls C's `abs` from an `extern "C"` block (a foreign function
// with no body, not CUDA): reject as a foreign call with no body.
extern "C" {
    fn abs(x: i32) -> i32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(unsafe { abs(b) }))
}
