// Admitted: allowlisted core scalar methods `min`, `max`, `abs`,
// `wrapping_mul`, `rotate_left` and `saturating_sub`, all used. The largest
// magnitude, capped by a non-negative bound computed from the captures:
// associative and commutative, as the reduce provider requires.
pub fn entry(data: &[i32], lo: i32, hi: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let bound = lo.wrapping_mul(3).rotate_left(5).saturating_sub(hi).max(0);
        a.abs().max(b.abs()).min(bound)
    })
}
