// A non-`move` closure borrowing a `Vec<i32>` that the entry fn owns (env field
// `&Vec<i32>`); the entry's MIR drops the Vec after the call (`drop`, cleanup
// blocks): reject as a borrowed capture.
pub fn entry(data: &[i32], v: Vec<i32>) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(v.len() as i32))
}
