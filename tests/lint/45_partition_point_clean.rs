// expect: clean
// Predicates a binary search can trust: before the query in ascending
// data, after it in descending data, by one field of a struct, and by a
// captured scale that may be negative (then the data is sorted the other
// way).
pub fn lower(sorted: &[i32], queries: &[i32]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x < q)
}

pub fn descending(sorted: &[f64], queries: &[f64]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x > q)
}

#[derive(Clone, Copy)]
pub struct Event {
    pub kind: u8,
    pub at: u64,
}

pub fn first_at(sorted: &[Event], times: &[(u64, u8)]) -> Vec<usize> {
    native::partition_point(sorted, times, |e, t| e.at < t.0)
}

pub fn scaled(sorted: &[f32], queries: &[f32], scale: f32) -> Vec<usize> {
    native::partition_point(sorted, queries, move |x, q| *x * scale <= *q)
}
