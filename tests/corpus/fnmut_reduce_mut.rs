// An `FnMut` closure keeping a running maximum in its (moved) environment,
// through `native::reduce_mut`: reject as mutable state.
pub fn entry(data: &[i32]) -> i32 {
    let mut seen_max = i32::MIN;
    native::reduce_mut(data, 0, move |a, b| {
        if b > seen_max {
            seen_max = b;
        }
        a.wrapping_add(seen_max)
    })
}
