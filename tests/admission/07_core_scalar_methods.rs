// Admitted: allowlisted core scalar methods `min`, `max`, `abs`,
// `wrapping_mul`, `rotate_left` and `saturating_sub`, all used.
pub fn entry(data: &[i32], lo: i32, hi: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let clamped = b.max(lo).min(hi);
        let mag = clamped.abs();
        let mixed = a.wrapping_mul(3).rotate_left(5);
        mixed.saturating_sub(mag)
    })
}
