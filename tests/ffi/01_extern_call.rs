// link: lib/helpers.cu lib/leaf.cu
// expect: admitted
// A keyed maximum: the callback calls `ffi_mix` of helpers.cu, with a
// run-time key.
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
