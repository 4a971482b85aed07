// A closure calling a chain of three local helpers (h1 -> h2 -> h3), one of
// them taking the capture as an argument: admit all helpers transitively.
#[inline(never)]
fn h1(a: i32, b: i32, k: i32) -> i32 {
    h2(a ^ b, k)
}

#[inline(never)]
fn h2(x: i32, k: i32) -> i32 {
    h3(x).wrapping_add(k)
}

#[inline(never)]
fn h3(x: i32) -> i32 {
    x.rotate_right(3)
}

pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| h1(a, b, k))
}
