// expect: rejected E0101
// Captured references, each fixed by reading the value on the host first;
// the suggested `let` must compile and must not change other code.
pub struct Holder<'a> {
    pub x: &'a i32,
}

pub struct Pair<'a>(pub &'a i32, pub &'a i32);

pub struct Params {
    pub scale: i32,
}

// A `move` closure captures the fields `h.x` and `p.0` (each a `&i32`): the
// locals are named after the field, or after the path where the field has
// no name (`p_0`, not `0`).
pub fn fields(data: &[i32], h: Holder<'_>, p: Pair<'_>) -> i32 {
    native::reduce(data, 0, move |a, b| {
        a.wrapping_add(b).wrapping_add(*h.x).wrapping_sub(*p.0)
    })
}

// `k` is read again after the registration: the local gets another name,
// so that the read after it still sees the reference.
pub fn read_after(data: &[i32], k: &i32) -> i32 {
    let s = native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(*k));
    s.wrapping_mul(*k)
}

// A struct that is not `Copy`, behind a reference: `let params = *params;`
// would move out of a borrow, so the help is advice only.
pub fn not_copy(data: &[i32], params: &Params) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b.wrapping_mul(params.scale)))
}

// A closure without `move` that reads `*k` borrows the place `*k`: `move`
// alone would capture the reference `k` itself, so the value is read first.
pub fn borrowed_place(data: &[i32], k: &i32, kk: &&i32) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(*k).wrapping_sub(**kk).wrapping_add(b))
}
