// expect: W0201 symmetric
// "Not above the one before" is no equivalence: it holds of (1, 2) and
// not of (2, 1).
pub fn rising(data: &[u16]) -> Vec<u16> {
    native::dedup_by(data, |a, b| a <= b)
}
