// expect: clean
// A float sum for a scan: associative within rounding, which the lint
// allows (16 ulps); the scans need no commutativity.
pub fn entry(data: &[f64]) -> Vec<f64> {
    native::inclusive_scan(data, |a, b| a + b)
}
