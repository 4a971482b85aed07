// expect: admitted
// `reduce` over element types other than i32: a captured byte mask, an fn
// item over i64, a float maximum.
pub fn masked(data: &[u8], mask: u8) -> u8 {
    native::reduce(data, 0, move |a, b| (a | b) & mask)
}

fn wide_max(a: i64, b: i64) -> i64 {
    a.max(b)
}

pub fn widest(data: &[i64]) -> i64 {
    native::reduce(data, i64::MIN, wide_max)
}

pub fn peak(data: &[f32]) -> f32 {
    native::reduce(data, f32::MIN, |a, b| a.max(b))
}
