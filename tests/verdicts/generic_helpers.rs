// expect: admitted
// Generic helpers called from callbacks: optimised MIR keeps the calls of
// the instances it does not inline (`lerp::<i16>`), and their bodies call
// `core`'s operator traits on the type parameter (`<T as Sub>::sub`); the
// frontend makes each instance's body, with the operators rustc would
// inline. Trait default methods (`Self`), `Into`, `Default`, `From`,
// `Ord::cmp`, and helpers called with several types.
use std::cmp::Ordering;
use std::ops::{Add, Div, Mul, Neg, Rem, Shl, Sub};

fn lerp<T: Copy + Add<Output = T> + Sub<Output = T> + Mul<Output = T>>(a: T, b: T, t: T) -> T {
    a + (b - a) * t
}

fn larger<T: PartialOrd + Copy>(a: T, b: T) -> T {
    if a > b {
        a
    } else {
        b
    }
}

fn ops<T>(a: T, b: T) -> T
where
    T: Copy + Div<Output = T> + Rem<Output = T> + Neg<Output = T> + Shl<u32, Output = T>,
    T: Ord + Default + From<u8>,
{
    let d = if b == T::default() { T::from(1u8) } else { b };
    let m = (a / d) % d;
    match a.cmp(&b) {
        Ordering::Less => -m << 1,
        Ordering::Equal => m,
        Ordering::Greater => std::cmp::max(-m, m << 2),
    }
}

trait Thrice: Copy + Add<Output = Self> {
    fn twice(self) -> Self {
        self + self
    }
    fn thrice(self) -> Self {
        self.twice() + self
    }
}

impl Thrice for i32 {}
impl Thrice for f64 {}

fn widen<T: Into<i64>>(x: T) -> i64 {
    let y: i64 = x.into();
    y.wrapping_mul(3) ^ y
}

pub fn lerp_i16(data: &[i16]) -> Vec<i16> {
    native::transform(data, |x| lerp(x, 3, 2))
}

pub fn lerp_f32(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x| lerp(x, 0.5, 0.25))
}

pub fn largest(data: &[f32]) -> f32 {
    native::reduce(data, f32::MIN, |a, b| larger(a, b))
}

pub fn largest_i32(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| larger(a, b).max(larger(b, a)))
}

pub fn operators(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| ops(x, 7) ^ ops(x, 0))
}

pub fn operators_i64(data: &[i64]) -> Vec<i64> {
    native::transform(data, |x| ops(x, -5))
}

pub fn default_methods(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| x.thrice())
}

pub fn default_methods_f64(data: &[f64]) -> Vec<f64> {
    native::transform(data, |x| x.thrice())
}

pub fn widened(data: &[u32]) -> Vec<i64> {
    native::transform(data, |x| widen(x) ^ widen(x as u8))
}
