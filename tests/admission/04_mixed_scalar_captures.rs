// Admitted: `move` captures of f32, i64, bool and u8 together, all used with
// `as` casts; the environment has four scalar fields of different sizes.
// The captures only form a per-call bias, so the operation stays a wrapping
// sum: associative and commutative, as the reduce provider requires.
pub fn entry(data: &[i32], scale: f32, offset: i64, negate: bool, shift: u8) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let bias = (scale as i32)
            .wrapping_add(offset as i32)
            .wrapping_add(shift as i32);
        let bias = if negate { bias.wrapping_neg() } else { bias };
        a.wrapping_add(b).wrapping_add(bias)
    })
}
