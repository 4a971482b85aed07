// expect: W0201 transitive
// "Closer clockwise" on a circle of 8: 0 < 3 < 6 but 6 < 0 (a cycle), so
// no order sorts by it.
pub fn entry(data: &[u8]) -> Vec<u8> {
    native::sort_by(data, |a, b| (b.wrapping_sub(a) % 8) > 0 && (b.wrapping_sub(a) % 8) < 4)
}
