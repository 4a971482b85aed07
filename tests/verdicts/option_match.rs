// expect: admitted
// `checked_sub` returns an `Option` (inlined: `SubWithOverflow` and an
// `Option::Some` aggregate); the `match` reads its discriminant and the
// `Some` field through a downcast. The operation is `max`, written through
// the `Option` (associative and commutative, so the GPU's tree agrees with
// the host's fold).
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| match a.checked_sub(b) {
        Some(d) => if d < 0 { b } else { a },
        None => if a < 0 { b } else { a },
    })
}
