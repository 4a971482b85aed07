// expect: admitted
// `partition` of tuples and structs: the predicate reads fields at
// rustc's offsets; both halves move whole elements.
#[derive(Clone, Copy)]
pub struct Job {
    pub cost: f64,
    pub owner: u16,
    pub done: u8,
}

/// Finished jobs, and the others.
pub fn finished(data: &[Job]) -> (Vec<Job>, Vec<Job>) {
    native::partition(data, |j| j.done != 0)
}

/// Pairs whose key is under a captured bound.
pub fn below(data: &[(u32, i64)], bound: u32) -> (Vec<(u32, i64)>, Vec<(u32, i64)>) {
    native::partition(data, move |p| p.0 < bound)
}
