// A closure calling a tiny helper without `#[inline(never)]`: at opt-level 3
// rustc's MIR inliner may fold it into the closure (an `inlined` scope); admit.
fn add3(a: i32, b: i32, c: i32) -> i32 {
    a.wrapping_add(b).wrapping_add(c)
}

pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| add3(a, b, k))
}
