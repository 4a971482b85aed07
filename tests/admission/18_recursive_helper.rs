// Rejected (recursion): the closure calls `gcd`, a directly recursive helper.
fn gcd(a: i32, b: i32) -> i32 {
    if b == 0 {
        a
    } else {
        gcd(b, a.wrapping_rem(b))
    }
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| gcd(a.wrapping_abs(), b.wrapping_abs()))
}
