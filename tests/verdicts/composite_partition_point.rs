// expect: admitted
// `partition_point` over records sorted by a field, with tuple queries:
// the predicate reads both at rustc's offsets.
#[derive(Clone, Copy)]
pub struct Event {
    pub at: u64,
    pub kind: u8,
    pub weight: f32,
}

/// The first event at or after each time.
pub fn first_at(events: &[Event], times: &[u64]) -> Vec<usize> {
    native::partition_point(events, times, |e, t| e.at < *t)
}

/// Queries as (time, slack) pairs.
pub fn first_within(events: &[Event], windows: &[(u64, u32)]) -> Vec<usize> {
    native::partition_point(events, windows, |e, w| e.at + u64::from(w.1) < w.0)
}
