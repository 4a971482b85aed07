// expect: rejected E0109
// `checked_add` returns an `Option`: its discriminant and variant fields
// are enum operations the GPU lowering does not handle.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| match a.checked_add(b) {
        Some(s) => s,
        None => a,
    })
}
