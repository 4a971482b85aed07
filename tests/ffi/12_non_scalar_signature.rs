// link: lib/helpers.cu lib/leaf.cu
// expect: rejected
// Parameters Rust and CUDA C++ do not pass alike: `u8` and `bool`.
extern "C" {
    fn ffi_small(x: u8, flag: bool) -> u8;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a ^ unsafe { ffi_small(b as u8, a > 0) } as i32)
}
