// expect: admitted
// At -O, `saturating_mul` inlines into `mul_with_overflow` and a call of
// the `cold_path` hint, which has no receiver type.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.saturating_mul(b) | 1)
}
