// Admitted: `move` captures of f32, i64, bool and u8 together, all used with
// `as` casts; the environment has four scalar fields of different sizes.
pub fn entry(data: &[i32], scale: f32, offset: i64, negate: bool, shift: u8) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let scaled = (b as f32 * scale) as i32;
        let shifted = scaled.wrapping_shl(shift as u32);
        let sum = (a as i64).wrapping_add(shifted as i64).wrapping_add(offset) as i32;
        if negate {
            sum.wrapping_neg()
        } else {
            sum
        }
    })
}
