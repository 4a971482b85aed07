// expect: admitted
// `partition`: the elements a predicate keeps and those it does not, each
// in order, as `Iterator::partition` splits them. The predicate takes a
// reference, as `Iterator::partition`'s does; the thunk takes the value.
pub fn signs(data: &[i32]) -> (Vec<i32>, Vec<i32>) {
    native::partition(data, |x| *x >= 0)
}

/// Readings over a captured limit, and the rest.
pub fn over(data: &[f32], limit: f32) -> (Vec<f32>, Vec<f32>) {
    native::partition(data, move |x| *x > limit)
}

/// Narrow integers travel widened through the thunk.
pub fn odd(data: &[u8]) -> (Vec<u8>, Vec<u8>) {
    native::partition(data, |x| x % 2 == 1)
}
