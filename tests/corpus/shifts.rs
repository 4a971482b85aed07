// Shifts `<<` and `>>` by a variable amount (checked: the amount must be < 32,
// an `assert` with overflow checks on) and by a constant: admit.
pub fn entry(data: &[i32], s: u32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let amount = s & 31;
        let left = b << amount;
        let right = a >> amount;
        let logical = ((b as u32) >> 3) as i32;
        left ^ right ^ logical
    })
}
