// expect: admitted
// The correctly rounded and bit-level float methods users call, in maps (no
// fold order to worry about). At opt-level 3 rustc's MIR calls intrinsics
// (`sqrtf64`, `floorf32`, `fmaf64`, `round_ties_even_f32`) or spells the
// classification as compares; both levels must give the same verdict. The
// inputs are scaled so that halves (2.5, -0.5) reach the roundings, and
// divided by zero so that infinities and NaNs reach the classification.
pub fn rounded(data: &[f64]) -> Vec<f64> {
    native::transform(data, |x| {
        let x = x * 0.25;
        x.abs().sqrt() + x.floor() + x.ceil() + x.round() * 8.0 + x.trunc() * 64.0
            + x.round_ties_even() * 512.0
            + x.fract()
    })
}

pub fn fused(a: &[f32], b: &[f32]) -> Vec<f32> {
    native::transform2(a, b, |x, y| {
        let x = x * 0.5;
        x.mul_add(y, 1.5).copysign(y) + x.round() * 4096.0 + x.round_ties_even()
    })
}

pub fn classes(data: &[f64]) -> Vec<u32> {
    native::transform(data, |x| {
        let y = if x > 300.0 { x / 0.0 } else if x < -300.0 { (x + x.abs()) / 0.0 } else { x };
        (y.is_nan() as u32)
            | (y.is_finite() as u32) << 1
            | (y.is_infinite() as u32) << 2
            | (y.is_sign_negative() as u32) << 3
            | (y.is_sign_positive() as u32) << 4
    })
}

pub fn classes32(data: &[f32]) -> Vec<u8> {
    native::transform(data, |x| {
        let y = if x > 300.0 { -x / 0.0 } else if x < -300.0 { (x + x.abs()) / 0.0 } else { x };
        (y.is_finite() as u8) + 2 * (y.is_infinite() as u8) + 4 * (y.is_nan() as u8)
    })
}

pub fn bits(data: &[f32]) -> Vec<u32> {
    native::transform(data, |x| (x.to_bits() ^ 0x8000_0000).rotate_left(1))
}

pub fn from_bits(data: &[u64]) -> Vec<f64> {
    native::transform(data, |b| -f64::from_bits(((b & 0x3ff) << 52) | (b & 0xf_ffff)).abs())
}

pub fn angles(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x| x.to_degrees() + x.to_radians().signum())
}

pub fn angles64(data: &[f64]) -> Vec<f64> {
    native::transform(data, |x| x.to_radians() - x.to_degrees())
}
