// expect: clean
// `a + b` with overflow checks: the inputs on which it panics (traps on
// the GPU) are skipped; where it is defined it is associative.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a + b)
}
