// A non-`move` closure reading two locals: both are captured by reference
// (`&i32` fields): reject as borrowed captures.
pub fn entry(data: &[i32], scale: i32, bias: i32) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b.wrapping_mul(scale)).wrapping_add(bias))
}
