// expect: admitted
// `partition_point`: for each query, where it goes in sorted data, as
// `slice::partition_point` finds it. The predicate takes an element and a
// query by reference; the thunk takes their values, which may be of two
// types.
pub fn lower_bounds(sorted: &[i32], queries: &[i32]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x < q)
}

/// After the equal ones, in data sorted by a scaled key (a capture).
pub fn upper_bounds(sorted: &[f64], queries: &[f32], scale: f64) -> Vec<usize> {
    native::partition_point(sorted, queries, move |x, q| *x * scale <= f64::from(*q))
}

/// Data sorted in descending order: the predicate holds first for the
/// larger elements.
pub fn descending(sorted: &[u16], queries: &[u16]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x > q)
}
