// expect: W0201 transitive
// "Closer clockwise" on a circle of 8 in each segment: 0 < 3 < 6 but 6 < 0
// (a cycle), so no order sorts a segment by it.
use std::cmp::Ordering;

pub fn clockwise(data: &[u8], offsets: &[usize]) -> Vec<u8> {
    native::segmented_sort_by(data, offsets, |a, b| {
        let d = (b.wrapping_sub(*a)) % 8;
        if d == 0 {
            Ordering::Equal
        } else if d < 4 {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    })
}
