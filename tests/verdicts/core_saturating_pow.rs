// expect: admitted
// Optimised MIR inlines `saturating_pow` into a call of `checked_pow` and a
// `match` on the `Option` it returns; `checked_pow` is in the capability
// table (its body is a loop, which MIR does not inline), and the lowering
// reports an overflow of any multiplication of the square-and-multiply loop.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b.saturating_pow(2)))
}
