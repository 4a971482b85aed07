// expect: W0201 transitive
// Keys "within 10 of the one before" chain: 0, 8, 16 are each near the
// one before, but 16 is not near 0. Runs of such keys are whatever the
// pairs of neighbours say, which need not be what the host's `chunk_by`
// would say of a longer window.
pub fn near(keys: &[i32], values: &[u32]) -> (Vec<i32>, Vec<u32>) {
    native::reduce_by_key(keys, values, |a, b| a.abs_diff(*b) < 10, |x, y| x.wrapping_add(y))
}
