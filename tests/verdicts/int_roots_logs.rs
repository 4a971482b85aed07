// expect: admitted
// Integer square roots and logarithms: optimised MIR calls
// `core::num::int_sqrt::u32` and, where it does not inline them,
// `ilog10`/`checked_ilog10`, and inlines `checked_ilog2` as a transmute to
// `Option<NonZero<u32>>` (zero is `None`) and `ctlz_nonzero`. Each is
// lowered as the host computes it; a value ≤ 0 panics (traps) or is
// `None` as in Rust.
pub fn roots(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| x.isqrt())
}

pub fn roots_wide(data: &[u64]) -> Vec<u64> {
    native::transform(data, |x| x.isqrt() ^ x.max(1).ilog2() as u64 ^ x.max(1).ilog10() as u64)
}

pub fn signed_roots(data: &[i64]) -> Vec<i64> {
    native::transform(data, |x| x.max(0).isqrt() + x.checked_isqrt().unwrap_or(-1))
}

pub fn logs(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| x.checked_ilog2().unwrap_or(99) + x.checked_ilog10().unwrap_or(77))
}

pub fn short_logs(data: &[u16]) -> Vec<u32> {
    native::transform(data, |x| x.max(1).ilog10() + x.checked_ilog10().unwrap_or(7))
}

pub fn signed_logs(data: &[i32]) -> Vec<u32> {
    native::transform(data, |x| x.checked_ilog10().unwrap_or(50) + x.checked_ilog2().unwrap_or(60))
}
