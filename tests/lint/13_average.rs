// expect: W0201 associative
// Half of each operand, summed: commutative, not associative.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| (a >> 1).wrapping_add(b >> 1))
}
