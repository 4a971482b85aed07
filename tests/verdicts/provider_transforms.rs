// expect: admitted
// Maps that change the element type: i32 to f32 with a captured scale, and
// two inputs of different types to a third.
pub fn scaled(data: &[i32], scale: f32) -> Vec<f32> {
    native::transform(data, move |x| x as f32 * scale)
}

pub fn widened(a: &[u64], b: &[i8]) -> Vec<i64> {
    native::transform2(a, b, |x, y| (x as i64).wrapping_add(y as i64))
}

fn clamp_to(x: u16, hi: u16) -> u16 {
    if x > hi { hi } else { x }
}

pub fn clamped(data: &[u16], hi: u16) -> Vec<u16> {
    native::transform(data, move |x| clamp_to(x, hi))
}
