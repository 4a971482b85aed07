// expect: admitted
// Integer methods that optimised MIR calls instead of inlining (their
// bodies loop or are large): `checked_pow` (an `Option`), `overflowing_pow`
// (a tuple), `pow`, `rem_euclid`, `div_euclid`.
pub fn powers(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| {
        let e = (x & 7) as u32;
        x.checked_pow(e).unwrap_or(-1) ^ x.overflowing_pow(e).0 ^ (x.overflowing_pow(e).1 as i32)
    })
}

pub fn euclid(data: &[i64]) -> Vec<i64> {
    native::transform(data, |x| x.rem_euclid(7) * 100 + x.div_euclid(-3))
}
