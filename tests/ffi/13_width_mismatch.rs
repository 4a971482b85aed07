// link: lib/helpers.cu lib/leaf.cu
// expect: rejected
// The declaration says `u64`, helpers.cu's `ffi_mix` takes an `unsigned
// int`: the PTX parameter widths differ.
extern "C" {
    fn ffi_mix(x: u64, key: u32) -> u32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a ^ unsafe { ffi_mix(b as u64, 7) } as i32)
}
