// A closure that calls another closure it captured by value: the capture's
// type is a closure (non-scalar), even though the inner one only holds an i32:
// reject as a non-scalar capture.
pub fn entry(data: &[i32], k: i32) -> i32 {
    let inner = move |x: i32| x.wrapping_mul(k);
    native::reduce(data, 0, move |a, b| a.wrapping_add(inner(b)))
}
