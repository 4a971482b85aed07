// expect: admitted
// `segmented_sort_by`: each segment (`data[offsets[i]..offsets[i+1]]`)
// sorted by a comparator, stably; the elements outside every segment stay
// where they are. The comparator is `slice::sort_by`'s kind; the thunk
// answers "less than".

/// Each row of a ragged table in ascending order.
pub fn rows(data: &[i32], offsets: &[usize]) -> Vec<i32> {
    native::segmented_sort_by(data, offsets, |a, b| a.cmp(b))
}

/// Each bucket by a captured modulus, largest remainder first, then by
/// value.
pub fn by_remainder(data: &[u64], offsets: &[usize], m: u64) -> Vec<u64> {
    native::segmented_sort_by(data, offsets, move |a, b| {
        let (ra, rb) = (a % m.max(1), b % m.max(1));
        rb.cmp(&ra).then(a.cmp(b))
    })
}

/// Each series of readings by magnitude, NaNs last: a hand-written order.
pub fn magnitudes(data: &[f32], offsets: &[usize]) -> Vec<f32> {
    native::segmented_sort_by(data, offsets, |a, b| match (a.is_nan(), b.is_nan()) {
        (false, false) => a.abs().total_cmp(&b.abs()),
        (x, y) => x.cmp(&y),
    })
}
