// Rejected (another signature): an `(i128, i128) -> i128` callback through
// the generic `native::reduce` (128-bit elements are no provider's).
pub fn entry(data: &[i128]) -> i128 {
    native::reduce(data, 0i128, |a, b| a.wrapping_add(b))
}
