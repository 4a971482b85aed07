// expect: W0201 associative
// A captured mask applied after every combination: `(a + b) ^ k` is not
// associative (for k != 0), although each step alone looks harmless.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b) ^ k)
}
