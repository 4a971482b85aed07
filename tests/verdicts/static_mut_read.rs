// expect: rejected E0104
// A `static mut` is shared mutable host state: its address means nothing
// on the GPU, and other threads may write it.
static mut BIAS: i32 = 3;

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(unsafe { BIAS }))
}
