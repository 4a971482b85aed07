// expect: W0201 associative
// A difference: the tree's grouping changes the result.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_sub(b))
}
