// expect: admitted
// Host code that no callback reaches must never fail the file: an
// anonymous constant's body (an enum discriminant `A = 1 + 1`, an array
// length `[u8; 2 + 1]` in a signature), zero-size allocations (`""`,
// `b""`, an empty static), and a closure that is never built and captures
// a zero-size local. The callback passes its value through
// `std::hint::black_box`.
#[derive(Clone, Copy)]
pub enum Level {
    Low = 1 + 1,
    High = 7,
}

static EMPTY: [u8; 0] = [];

pub fn lengths(x: [u8; 2 + 1]) -> usize {
    x.len() + EMPTY.len() + "".len() + b"".len()
}

pub fn unit_capture() -> usize {
    let unit = ();
    let f = || &unit;
    let _ = f;
    0
}

pub fn level(v: Level) -> i32 {
    v as i32
}

pub fn largest(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| std::hint::black_box(a).max(b))
}
