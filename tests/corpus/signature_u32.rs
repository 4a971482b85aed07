// A `(u32, u32) -> u32` callback through the generic `native::reduce`:
// reject as another signature.
pub fn entry(data: &[u32]) -> u32 {
    native::reduce(data, 0u32, |a, b| a.wrapping_add(b))
}
