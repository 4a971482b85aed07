// A registration inside a private helper that a `pub fn` calls, with the
// capture threaded through: admit the closure defined in the helper.
#[inline(never)]
fn scaled_sum(data: &[i32], scale: i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b.wrapping_mul(scale)))
}

pub fn entry(data: &[i32], scale: i32) -> i32 {
    scaled_sum(data, scale)
}
