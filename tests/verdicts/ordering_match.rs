// expect: admitted
// `Ord::cmp` gives an `Ordering` (MIR's `Cmp`, -1, 0 or 1 in an `i8`); the
// `match` switches on its discriminant.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| match a.cmp(&b) {
        core::cmp::Ordering::Less => b,
        _ => a,
    })
}
