// A `move` closure capturing two i32 values by value: admit; the environment
// holds two i32 fields in rustc's field order.
pub fn entry(data: &[i32], scale: i32, bias: i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b.wrapping_mul(scale)).wrapping_add(bias))
}
