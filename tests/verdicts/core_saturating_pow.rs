// expect: admitted
// expect-O3: rejected E0107
// `saturating_pow` is in the capability table; the lowering saturates on
// an overflow of any multiplication of the square-and-multiply loop.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b.saturating_pow(2)))
}
