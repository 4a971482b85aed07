// Admitted: the closure calls a local helper fn that calls a second local
// helper fn; both helpers must be compiled with the callback.
#[inline(never)]
fn mix(a: i32, b: i32) -> i32 {
    a.wrapping_mul(31).wrapping_add(square(b))
}

#[inline(never)]
fn square(x: i32) -> i32 {
    x.wrapping_mul(x)
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| mix(a, b))
}
