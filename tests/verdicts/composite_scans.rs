// expect: admitted
// Tuples and structs as elements of the scans: a running arg-max over
// `(f32, u32)` pairs, a running extent of points (a 12-byte struct, whose
// look-back descriptors hold its words after a status), a running sum of
// a nested tuple rustc reorders. Every operation is associative.
#[derive(Clone, Copy)]
pub struct Extent {
    pub lo: f32,
    pub hi: f32,
    pub count: u32,
}

/// The greatest value so far, and of equal values the first index.
pub fn running_arg_max(data: &[(f32, u32)]) -> Vec<(f32, u32)> {
    native::inclusive_scan(data, |a, b| if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) { b } else { a })
}

/// The extent of the values before each one, from an empty extent.
pub fn extents_before(data: &[Extent]) -> Vec<Extent> {
    let empty = Extent { lo: f32::INFINITY, hi: f32::NEG_INFINITY, count: 0 };
    native::exclusive_scan(data, empty, |a, b| Extent {
        lo: a.lo.min(b.lo),
        hi: a.hi.max(b.hi),
        count: a.count.wrapping_add(b.count),
    })
}

/// Wrapping sums, field by field, of a tuple whose `u64` rustc puts first.
pub fn running_totals(data: &[(u8, u64, i16)]) -> Vec<(u8, u64, i16)> {
    native::inclusive_scan(data, |a, b| (a.0.wrapping_add(b.0), a.1.wrapping_add(b.1), a.2.wrapping_add(b.2)))
}
