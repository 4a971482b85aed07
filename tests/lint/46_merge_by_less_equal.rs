// expect: W0201 irreflexive
// `Less` for equal keys: the merge path then splits a run of equal keys
// where it likes, and the GPU's order of them need not be the host's
// (CCCL issue 7729's mistake, in a merge).
use std::cmp::Ordering;

pub fn merged(a: &[i32], b: &[i32]) -> Vec<i32> {
    native::merge_by(a, b, |x, y| if x <= y { Ordering::Less } else { Ordering::Greater })
}
