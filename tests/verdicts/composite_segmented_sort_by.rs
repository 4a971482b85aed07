// expect: admitted
// `segmented_sort_by` of records and of tuples: the comparator reads
// fields at rustc's offsets; the sort moves whole elements within their
// segments.
#[derive(Clone, Copy)]
pub struct Hit {
    pub score: f32,
    pub doc: u32,
    pub shard: u8,
}

/// Each query's hits, best score first, then by document.
pub fn ranked(hits: &[Hit], queries: &[usize]) -> Vec<Hit> {
    native::segmented_sort_by(hits, queries, |a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)))
}

/// Each group's edges by target, then weight.
pub fn adjacency(edges: &[(u32, f64)], groups: &[usize]) -> Vec<(u32, f64)> {
    native::segmented_sort_by(edges, groups, |a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
}
