// expect: admitted
// `merge_by`: two inputs sorted by a comparator merged into one, stably
// (of equal elements, the first input's first). The comparator is
// `slice::sort_by`'s kind; the thunk answers "less than".
pub fn merged(a: &[i64], b: &[i64]) -> Vec<i64> {
    native::merge_by(a, b, |x, y| x.cmp(y))
}

/// Descending data, by a captured bucket width.
pub fn by_bucket_descending(a: &[u32], b: &[u32], width: u32) -> Vec<u32> {
    native::merge_by(a, b, move |x, y| (y / width.max(1)).cmp(&(x / width.max(1))))
}

/// Floats by their total order.
pub fn readings(a: &[f32], b: &[f32]) -> Vec<f32> {
    native::merge_by(a, b, |x, y| x.total_cmp(y))
}
