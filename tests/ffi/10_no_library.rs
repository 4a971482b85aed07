// link:
// expect: rejected
// No device library is given: `ffi_mix` has no definition.
unsafe extern "C" {
    safe fn ffi_mix(x: u32, key: u32) -> u32;
}

pub fn entry(data: &[i32], key: u32) -> i32 {
    native::reduce(data, 0, move |a, b| a ^ ffi_mix(b as u32, key) as i32)
}
