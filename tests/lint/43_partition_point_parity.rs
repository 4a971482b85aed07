// expect: W0201 monotone
// "Same parity as the query" is no place in sorted data: a binary search
// probes a few elements and lands where their parities say, not where
// the first odd one is.
pub fn parity(sorted: &[u32], queries: &[u32]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| (x ^ q) & 1 == 0)
}
