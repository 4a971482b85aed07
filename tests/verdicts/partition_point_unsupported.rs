// expect: rejected E0105
// What `partition_point` cannot take: a query type no provider takes
// (`u128`), and a predicate whose target is known only at run time.
pub fn wide(sorted: &[u64], queries: &[u128]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| u128::from(*x) < *q)
}

pub fn fn_ptr(sorted: &[i32], queries: &[i32], f: fn(&i32, &i32) -> bool) -> Vec<usize> {
    native::partition_point(sorted, queries, f)
}
