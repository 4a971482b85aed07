// A `move` closure using `pair.0` and `pair.1` of a tuple: edition 2021
// captures the two i32 fields separately (disjoint captures), so both
// captures are scalars: admit.
pub fn entry(data: &[i32], pair: (i32, i32)) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b.wrapping_mul(pair.0)).wrapping_add(pair.1))
}
