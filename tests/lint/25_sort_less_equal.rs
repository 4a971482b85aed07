// expect: W0201 irreflexive
// `Less` for `<=` is not a strict order: an element goes before itself,
// and a merge sort's order of equal elements then depends on the
// algorithm.
use std::cmp::Ordering;

pub fn entry(data: &[i32]) -> Vec<i32> {
    native::sort_by(data, |a, b| if a <= b { Ordering::Less } else { Ordering::Greater })
}
