// Three registrations in one function (sum, max, and a captured xor), with
// different closures: admit all three as separate callbacks.
pub fn entry(data: &[i32], k: i32) -> (i32, i32, i32) {
    let sum = native::reduce(data, 0, |a, b| a.wrapping_add(b));
    let max = native::reduce(data, i32::MIN, |a, b| a.max(b));
    let mix = native::reduce(data, 0, move |a, b| (a ^ b).wrapping_add(k));
    (sum, max, mix)
}
