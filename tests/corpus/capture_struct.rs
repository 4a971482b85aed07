// A `move` closure capturing a whole `Params` struct (passed to a helper):
// reject as a non-scalar capture.
#[derive(Clone, Copy)]
pub struct Params {
    pub scale: i32,
    pub bias: i32,
}

#[inline(never)]
fn affine(p: Params, x: i32) -> i32 {
    x.wrapping_mul(p.scale).wrapping_add(p.bias)
}

pub fn entry(data: &[i32], params: Params) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(affine(params, b)))
}
