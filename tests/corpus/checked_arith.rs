// Plain `+ - *` on i32 (checked with overflow checks on: `AddWithOverflow`,
// `SubWithOverflow`, `MulWithOverflow` + `assert`): admit; the panic edges
// must be kept, not folded away.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| (a - k) * 2 + b)
}
