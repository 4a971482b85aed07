// expect: admitted
// std's transcendental float methods, through libdevice (`__nv_expf`, …):
// as intrinsics (`expf32`, `powif64`) and as std's C functions
// (`std::sys::cmath::hypotf`, `core::num::libm::cbrt`) in optimised MIR.
pub fn single(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x| {
        x.exp() + x.exp2() + x.exp_m1() + x.ln() + x.log2() + x.log10() + x.log(3.0)
            + x.powf(1.5) + x.powi(3) + x.sin() + x.cos() + x.tan() + x.hypot(2.0)
            + x.atan2(0.5) + x.asin() + x.acos() + x.atan() + x.sinh() + x.cosh() + x.tanh()
    })
}

pub fn double(data: &[f64]) -> Vec<f64> {
    native::transform(data, |x| {
        x.cbrt() + x.ln_1p() + x.asinh() + x.acosh() + x.atanh() + x.powi(-2) + x.exp() * x.sin()
    })
}
