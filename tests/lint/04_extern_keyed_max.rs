// expect: clean
// link: tests/ffi/lib/helpers.cu tests/ffi/lib/leaf.cu
// A selection by a total order on a device library's hash (ties broken by
// the value): associative and commutative, checked with the library's host
// build.
unsafe extern "C" {
    safe fn ffi_mix(x: u32, key: u32) -> u32;
}

pub fn entry(data: &[i32], key: u32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let (ha, hb) = (ffi_mix(a as u32, key), ffi_mix(b as u32, key));
        if ha > hb || (ha == hb && a >= b) {
            a
        } else {
            b
        }
    })
}
