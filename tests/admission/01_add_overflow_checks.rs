// Admitted: a capture-free `|a, b| a + b`; built with overflow checks on, the
// addition is a checked `AddWithOverflow` whose panic edge must be lowered.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a + b)
}
