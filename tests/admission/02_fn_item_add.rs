// Admitted: a fn item `add` (not a closure) passed as the callback; there is
// no environment, the thunk ignores its `env` argument.
pub fn add(a: i32, b: i32) -> i32 {
    a.wrapping_add(b)
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, add)
}
