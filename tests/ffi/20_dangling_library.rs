// link: lib/helpers.cu lib/leaf.cu lib/dangling.ptx
// expect: link-error
// Admitted (helpers.cu defines `ffi_mix`), but dangling.ptx calls
// `ffi_nowhere`, which no input defines: the build stops before nvJitLink.
unsafe extern "C" {
    safe fn ffi_mix(x: u32, key: u32) -> u32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a ^ ffi_mix(b as u32, 3) as i32)
}
