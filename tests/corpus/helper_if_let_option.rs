// A helper that builds an `Option<i32>` and matches it with `if let`
// (enum aggregate, `discriminant`, downcast field): admit if the lowering
// handles Option, else reject as unsupported MIR.
#[inline(never)]
fn checked_mix(a: i32, b: i32) -> i32 {
    if let Some(p) = a.checked_mul(b) {
        p
    } else {
        a ^ b
    }
}

#[inline(never)]
fn positive(x: i32) -> Option<i32> {
    if x > 0 {
        Some(x)
    } else {
        None
    }
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| match positive(b) {
        Some(p) => checked_mix(a, p),
        None => a,
    })
}
