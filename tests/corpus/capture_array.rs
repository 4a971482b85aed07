// A `move` closure capturing a `[i32; 4]` array and indexing it: reject as a
// non-scalar capture.
pub fn entry(data: &[i32], weights: [i32; 4]) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b.wrapping_mul(weights[(b & 3) as usize])))
}
