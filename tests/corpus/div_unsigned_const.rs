// Unsigned division/remainder by a non-zero constant (no panic edge needed;
// rustc drops the zero check): admit.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let u = b as u32;
        a.wrapping_add((u / 10) as i32).wrapping_add((u % 7) as i32)
    })
}
