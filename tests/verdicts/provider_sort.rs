// expect: admitted
// Comparators as `slice::sort_by` takes them: `cmp` on i64, `total_cmp`
// reversed on f64, `cmp` on a key of f32 with a capture, `Ordering` built by
// hand, and an fn item on u8.
use std::cmp::Ordering;

pub fn ascending(data: &[i64]) -> Vec<i64> {
    native::sort_by(data, |a, b| a.cmp(b))
}

pub fn descending_floats(data: &[f64]) -> Vec<f64> {
    native::sort_by(data, |a, b| b.total_cmp(a))
}

pub fn by_bucket(data: &[f32], width: f32) -> Vec<f32> {
    native::sort_by(data, move |a, b| ((a / width) as i32).cmp(&((b / width) as i32)))
}

pub fn odd_first(data: &[u32]) -> Vec<u32> {
    native::sort_by(data, |a, b| match (a % 2, b % 2) {
        (1, 0) => Ordering::Less,
        (0, 1) => Ordering::Greater,
        _ => Ordering::Equal,
    })
}

fn descending(a: &u8, b: &u8) -> Ordering {
    b.cmp(a)
}

pub fn reversed(data: &[u8]) -> Vec<u8> {
    native::sort_by(data, descending)
}
