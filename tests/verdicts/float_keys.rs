// expect: admitted
// Float methods inside `i32` reduces that select by a total order (the
// largest key, ties broken by the larger value): associative and
// commutative, so the GPU's tree gives the host's result bit for bit, and a
// key computed differently on the device changes which element wins. The
// inputs are scaled so that halves reach the roundings and divided by zero
// so that infinities and NaNs reach the classification.

fn mix(x: u32) -> u32 {
    (x ^ (x >> 15)).wrapping_mul(0x2c1b_3c6d) ^ (x >> 7)
}

fn pick(a: i32, b: i32, ka: u32, kb: u32) -> i32 {
    if kb > ka || (kb == ka && b > a) {
        b
    } else {
        a
    }
}

fn rounded(x: i32) -> u32 {
    let h = x as f64 * 0.25;
    let r = h.round() * 4.0 + h.round_ties_even() * 64.0 + h.floor() + h.ceil() * 8.0 + h.trunc();
    mix(r as i32 as u32)
}

fn rounded32(x: i32) -> u32 {
    let h = x as f32 * 0.5;
    mix((h.round() * 3.0 + h.round_ties_even() * 1024.0 + h.fract()).to_bits())
}

fn classified(x: i32) -> u32 {
    let f = x as f64;
    let y = if x > 300 { f / 0.0 } else if x < -300 { (f + f.abs()) / 0.0 } else { f };
    let c = (y.is_nan() as u32)
        | (y.is_finite() as u32) << 1
        | (y.is_infinite() as u32) << 2
        | (y.is_sign_negative() as u32) << 3
        | (y.is_sign_positive() as u32) << 4;
    mix(c ^ (x as u32).wrapping_mul(32))
}

fn bit_level(x: i32) -> u32 {
    let f = x as f32 * 0.1;
    let g = f64::from_bits(((x as u64 & 0x3ff) << 52) | (x as u64 & 0xf_ffff));
    mix(f.to_bits().rotate_left(7) ^ (g.to_bits() >> 20) as u32)
}

fn math(x: i32) -> u32 {
    let f = x as f64 * 0.37;
    let v = f.abs().sqrt() + f.mul_add(1.5, -2.25).copysign(-f) + f.to_degrees() - f.to_radians();
    mix((v.to_bits() >> 12) as u32 ^ v.to_bits() as u32)
}

pub fn by_rounding(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, rounded(a), rounded(b)))
}

pub fn by_rounding32(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, rounded32(a), rounded32(b)))
}

pub fn by_class(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, classified(a), classified(b)))
}

pub fn by_bits(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, bit_level(a), bit_level(b)))
}

pub fn by_math(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, math(a), math(b)))
}
