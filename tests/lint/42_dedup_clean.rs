// expect: clean
// Equal keys (floats' `==` included: NaN is the same as nothing, which
// keeps every NaN on the host and the GPU alike) and a composite's field.
pub fn plateaus(data: &[f32]) -> Vec<f32> {
    native::dedup_by(data, |a, b| a == b)
}

pub fn by_decade(data: &[u64], width: u64) -> Vec<u64> {
    native::dedup_by(data, move |a, b| *a / width.max(1) == *b / width.max(1))
}

pub fn first_of_key(data: &[(u32, f64)]) -> Vec<(u32, f64)> {
    native::dedup_by(data, |a, b| a.0 == b.0)
}
