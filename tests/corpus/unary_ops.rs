// Unary operators: `-x` (a checked `Neg` with overflow checks on, asserting
// x != i32::MIN) and `!x` (bitwise not on i32, logical not on bool): admit.
pub fn entry(data: &[i32], flip: bool) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let n = if b == i32::MIN { 0 } else { -b };
        let m = !a;
        if !flip {
            a.wrapping_add(n)
        } else {
            m.wrapping_add(n)
        }
    })
}
