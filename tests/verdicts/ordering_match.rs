// expect: rejected E0109
// `Ord::cmp` gives an `Ordering`, an enum: matching on it reads a
// discriminant, which the GPU lowering does not handle.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| match a.cmp(&b) {
        core::cmp::Ordering::Less => b,
        _ => a,
    })
}
