// link: lib/helpers.cu lib/leaf.cu
// expect: admitted
// 64-bit and float parameters; one function renamed with `#[link_name]`,
// called from a Rust helper.
extern "C" {
    fn ffi_wide(a: i64, b: i64) -> i64;
    #[link_name = "ffi_weight"]
    fn weight(x: f64, w: f32) -> f64;
}

fn heavier(a: i32, b: i32, w: f32) -> bool {
    unsafe { weight(a as f64, w) >= weight(b as f64, w) }
}

pub fn entry(data: &[i32], w: f32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let m = unsafe { ffi_wide(a as i64, b as i64) } as i32;
        if heavier(a, b, w) { m ^ a } else { m ^ b }
    })
}
