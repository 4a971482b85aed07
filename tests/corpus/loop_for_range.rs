// A `for i in 0..n` loop in the closure: at opt-level 0 the MIR calls
// `Iterator::next` on a `Range<i32>` (an `Option` discriminant switch); admit if
// the frontend supports range loops, else reject as unsupported MIR.
pub fn entry(data: &[i32], n: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let mut acc = a;
        for i in 0..n {
            acc = acc.wrapping_add(b.wrapping_mul(i));
        }
        acc
    })
}
