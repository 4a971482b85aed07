// expect: clean
// A wrapping sum: associative and commutative.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b))
}
