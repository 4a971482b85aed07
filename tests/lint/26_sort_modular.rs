// expect: W0201 transitive
// "Closer clockwise" on a circle of 8: 0 < 3 < 6 but 6 < 0 (a cycle), so
// no order sorts by it.
use std::cmp::Ordering;

pub fn entry(data: &[u8]) -> Vec<u8> {
    native::sort_by(data, |a, b| {
        let d = b.wrapping_sub(*a) % 8;
        if d > 0 && d < 4 {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    })
}
