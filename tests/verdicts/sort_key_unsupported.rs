// expect: rejected E0105
// Keys the merge sort's thunk cannot compare field by field: an `Option`
// (an enum) and a tuple nested in a tuple. The help points at `sort_by`.
pub fn by_remainder(data: &[u32]) -> Vec<u32> {
    native::sort_by_key(data, |x| x.checked_sub(10))
}

pub fn nested(data: &[u32]) -> Vec<u32> {
    native::sort_by_key(data, |x| ((x >> 8, x >> 4), x & 15))
}
