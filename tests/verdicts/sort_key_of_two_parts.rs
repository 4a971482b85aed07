// expect: rejected E0105
// A key of two parts: the merge sort's thunk compares one scalar key; the
// help points at `sort_by` with `then`.
pub fn by_pair(data: &[u32]) -> Vec<u32> {
    native::sort_by_key(data, |x| (x >> 4, x & 15))
}
