// A callback the compiler rejects: without `move`, the closure borrows `k`
// (its environment holds a `&i32`, which means nothing on the GPU). The
// diagnostic says so and suggests the fix; adding `move` makes it
// examples/quickstart.rs's `keyed_sum` shape.
pub fn borrowed_sum(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(k))
}
