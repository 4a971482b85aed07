// A `move` closure capturing an `(i32, i32)` tuple as a whole: reject as a
// non-scalar capture (2021 disjoint capture would split it only if fields were
// used separately through a place; here the whole tuple is passed on).
#[inline(never)]
fn apply(pair: (i32, i32), x: i32) -> i32 {
    x.wrapping_mul(pair.0).wrapping_add(pair.1)
}

pub fn entry(data: &[i32], pair: (i32, i32)) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(apply(pair, b)))
}
