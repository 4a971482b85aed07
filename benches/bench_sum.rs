// The bandwidth benchmark's callback: an i32 wrapping sum, the same
// operation as CuPy's `sum` (CUB) and the hand-written C++ functor `a + b`.
pub fn sum(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b))
}
