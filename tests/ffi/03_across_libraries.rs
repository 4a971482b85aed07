// link: lib/helpers.cu lib/leaf.cu
// expect: admitted
// `ffi_twice` (helpers.cu) calls `ffi_leaf` (leaf.cu): a definition that
// needs another library.
extern "C" {
    fn ffi_twice(x: i32) -> i32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(unsafe { ffi_twice(b) }))
}
