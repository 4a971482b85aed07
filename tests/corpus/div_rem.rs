// Division and remainder by a captured divisor: rustc asserts `d != 0` and
// `!(a == i32::MIN && d == -1)` (panic edges present at every opt level): admit.
pub fn entry(data: &[i32], d: i32) -> i32 {
    native::reduce(data, 0, move |a, b| (a / d).wrapping_add(b % d))
}
