// expect: admitted
// Tuples and structs as elements of `reduce`, `transform`, `transform2` and
// `segmented_reduce` (tests/verdicts/composite_sorts.rs has the sorts):
// each one's layout is rustc's, measured (`(u8, (u16, i64), i8)` puts the
// inner pair first and the bytes last), and the thunk reads and writes it
// at those offsets, never its padding. Every reduce operation is
// associative and commutative.
#[derive(Clone, Copy)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub w: u32,
}

#[derive(Clone, Copy)]
#[repr(C)]
pub struct Body {
    pub id: u8,
    pub at: Point,
    pub mass: f64,
}

/// The least value, and of equal values the least index: an arg-min.
pub fn arg_min(data: &[(f32, u32)]) -> (f32, u32) {
    native::reduce(data, (f32::INFINITY, u32::MAX), |a, b| {
        if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) {
            b
        } else {
            a
        }
    })
}

/// A sum of weights and a bitwise union, field by field.
pub fn totals(data: &[Point]) -> Point {
    native::reduce(data, Point { x: 0.0, y: 0.0, w: 0 }, |a, b| Point {
        x: a.x.max(b.x),
        y: a.y.min(b.y),
        w: a.w.wrapping_add(b.w),
    })
}

pub fn norms(data: &[Point]) -> Vec<f32> {
    native::transform(data, |p| p.x * p.x + p.y * p.y)
}

pub fn pair_up(data: &[u32], k: u8) -> Vec<(u8, u32)> {
    native::transform(data, move |v| ((v as u8) ^ k, v.wrapping_mul(3)))
}

pub fn moments(data: &[Body], g: f64) -> Vec<(f64, u8)> {
    native::transform(data, move |b| (b.mass * b.at.x as f64 * g, b.id))
}

pub fn nested(data: &[(u8, (u16, i64), i8)]) -> (u8, (u16, i64), i8) {
    native::reduce(data, (0, (0, i64::MIN), -1), |a, b| {
        (a.0 ^ b.0, (a.1 .0 | b.1 .0, a.1 .1.max(b.1 .1)), a.2 & b.2)
    })
}

pub fn widen(data: &[(i16, f32)]) -> Vec<(f64, i64, u8)> {
    native::transform(data, |(a, b)| (b as f64, a as i64 * 3, (a & 0x7f) as u8))
}

pub fn weigh(points: &[Point], weights: &[f64]) -> Vec<(f64, u32)> {
    native::transform2(points, weights, |p, w| (p.x as f64 * w, p.w))
}

pub fn segment_extents(data: &[Point], offsets: &[usize]) -> Vec<Point> {
    native::segmented_reduce(data, offsets, Point { x: f32::NEG_INFINITY, y: f32::INFINITY, w: 0 }, |a, b| Point {
        x: a.x.max(b.x),
        y: a.y.min(b.y),
        w: a.w ^ b.w,
    })
}
