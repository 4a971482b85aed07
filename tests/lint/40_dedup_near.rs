// expect: W0201 transitive
// "Within 10 of the one before" chains: 0, 8, 16 are each near the one
// before, but 16 is not near 0. The host keeps 0 and 16 (it compares 16
// with 0, the last it kept); the GPU compares 16 with 8 and drops it.
pub fn near(data: &[i32]) -> Vec<i32> {
    native::dedup_by(data, |a, b| a.abs_diff(*b) < 10)
}
