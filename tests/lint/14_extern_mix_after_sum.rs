// expect: W0201 associative
// link: tests/ffi/lib/helpers.cu tests/ffi/lib/leaf.cu
// A device library's hash applied after every sum: the lint runs the
// library's host build (helpers.cu compiled as C++) with the callback.
unsafe extern "C" {
    safe fn ffi_mix(x: u32, key: u32) -> u32;
}

pub fn entry(data: &[u32], key: u32) -> u32 {
    native::reduce(data, 0, move |a, b| ffi_mix(a.wrapping_add(b), key))
}
