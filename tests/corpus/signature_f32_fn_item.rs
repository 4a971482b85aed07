// A fn item of type `fn(f32, f32) -> f32` through `native::reduce`: reject as
// another signature.
fn fmax(a: f32, b: f32) -> f32 {
    a.max(b)
}

pub fn entry(data: &[f32]) -> f32 {
    native::reduce(data, f32::MIN, fmax)
}
