// expect: admitted
// One fold per segment: a float maximum, and a wrapping sum with a
// captured bias.
pub fn peaks(data: &[f32], offsets: &[usize]) -> Vec<f32> {
    native::segmented_reduce(data, offsets, f32::MIN, |a, b| a.max(b))
}

pub fn sums(data: &[u16], offsets: &[usize], bias: u16) -> Vec<u16> {
    native::segmented_reduce(data, offsets, 0, move |a, b| a.wrapping_add(b).wrapping_add(bias))
}
