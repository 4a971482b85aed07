// expect: W0201 monotone
// "Within 10 of the query" holds in the middle of sorted data, not at its
// start: false, then true, then false again, in either order.
#[derive(Clone, Copy)]
pub struct Reading {
    pub at: i64,
    pub level: f32,
}

pub fn near(sorted: &[Reading], times: &[i64]) -> Vec<usize> {
    native::partition_point(sorted, times, |r, t| r.at.abs_diff(*t) < 10)
}
