// expect: admitted
// Infinite initial values: optimised MIR spells them `-Inf_f64` and
// `+Inf_f32`, and every registration must still be found and admitted.
pub fn highest(data: &[f64]) -> f64 {
    native::reduce(data, f64::NEG_INFINITY, |a, b| a.max(b))
}

pub fn lowest(data: &[f32]) -> f32 {
    native::reduce(data, f32::INFINITY, |a, b| a.min(b))
}

pub fn running_low(data: &[f64]) -> Vec<f64> {
    native::exclusive_scan(data, f64::INFINITY, |a, b| a.min(b))
}
