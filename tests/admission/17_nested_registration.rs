// Rejected (reaches another provider): the closure itself calls the
// registration function `native::reduce` (on a local array, no captures).
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let pair = [a, b];
        native::reduce(&pair, 1, |x, y| x.wrapping_mul(y))
    })
}
