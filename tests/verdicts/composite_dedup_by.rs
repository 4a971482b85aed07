// expect: admitted
// `dedup_by` over tuples and structs: `same` reads the fields it compares
// at rustc's offsets, and the kept elements move whole.
#[derive(Clone, Copy)]
pub struct Event {
    pub at: u64,
    pub source: u16,
    pub level: f32,
}

/// The first event of each run from one source.
pub fn by_source(data: &[Event]) -> Vec<Event> {
    native::dedup_by(data, |a, b| a.source == b.source)
}

/// Pairs whose keys repeat: the first of each run of equal keys.
pub fn first_of_key(data: &[(u32, f32)]) -> Vec<(u32, f32)> {
    native::dedup_by(data, |a, b| a.0 == b.0)
}
