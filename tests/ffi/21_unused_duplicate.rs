// link: lib/helpers.cu lib/leaf.cu lib/dup.ptx
// expect: link-error
// The callback calls only `ffi_wide`, but two libraries define `ffi_mix`:
// the build stops before nvJitLink.
extern "C" {
    fn ffi_wide(a: i64, b: i64) -> i64;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| unsafe { ffi_wide(a as i64, b as i64) } as i32)
}
