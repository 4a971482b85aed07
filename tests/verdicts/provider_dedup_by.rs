// expect: admitted
// `dedup_by`: each run of consecutive elements that `same` finds the same
// reduced to its first. The thunk takes both elements by value and hands
// the body references, the later element first, as `Vec::dedup_by` does.
pub fn runs(data: &[i32]) -> Vec<i32> {
    native::dedup_by(data, |a, b| a == b)
}

/// Runs of readings within the same bucket of a captured width.
pub fn buckets(data: &[u64], width: u64) -> Vec<u64> {
    native::dedup_by(data, move |a, b| *a / width == *b / width)
}

/// Floats: `==` (NaN is never the same as anything, so every NaN stays).
pub fn plateaus(data: &[f64]) -> Vec<f64> {
    native::dedup_by(data, |a, b| a == b)
}

/// Narrow integers travel widened through the thunk and back.
pub fn bytes(data: &[u8]) -> Vec<u8> {
    native::dedup_by(data, |a, b| a.eq_ignore_ascii_case(b))
}
