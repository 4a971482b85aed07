// expect: rejected E0109
// An inclusive range of constants is a promoted constant that rustc
// builds with a call of `RangeInclusive::new` (an exclusive one, or an
// inclusive one of variables, is built in place and is taken): the GPU
// lowering does not place that constant in memory yet, and says where.
// `(b'a'..=b'z')` written `b'a' <= b && b <= b'z'`, or with a variable
// bound, is taken.
pub fn lowercase(data: &[u8]) -> u8 {
    native::reduce(data, 0u8, |a, b| a.wrapping_add(u8::from((b'a'..=b'z').contains(&b))))
}
