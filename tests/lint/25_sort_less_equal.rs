// expect: W0201 irreflexive
// `<=` is not a strict order: an element is "less" than itself, and a
// merge sort's order of equal elements then depends on the algorithm.
pub fn entry(data: &[i32]) -> Vec<i32> {
    native::sort_by(data, |a, b| a <= b)
}
