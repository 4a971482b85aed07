// expect: admitted
// Host code the GPU never runs (a fn item coerced to a fn pointer) must not
// fail the file.
fn add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

pub fn pick() -> fn(i32, i32) -> i32 {
    add
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b))
}
