// expect: clean
// A struct's fields folded each with an associative and commutative
// operation, and a tuple arg-min that breaks ties by index.
#[derive(Clone, Copy)]
pub struct Stats {
    pub lo: i32,
    pub hi: i32,
    pub count: u64,
}

pub fn stats(data: &[Stats]) -> Stats {
    native::reduce(data, Stats { lo: i32::MAX, hi: i32::MIN, count: 0 }, |a, b| Stats {
        lo: a.lo.min(b.lo),
        hi: a.hi.max(b.hi),
        count: a.count.wrapping_add(b.count),
    })
}

pub fn arg_min(data: &[(i64, u32)]) -> (i64, u32) {
    native::reduce(data, (i64::MAX, u32::MAX), |a, b| if b.0 < a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a })
}
