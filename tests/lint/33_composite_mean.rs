// expect: W0201 associative
// An arg-min that also averages the values it passes over: the average
// of a tuple's first field regroups with the tree.
pub fn entry(data: &[(f32, u32)]) -> (f32, u32) {
    native::reduce(data, (0.0, u32::MAX), |a, b| ((a.0 + b.0) * 0.5, a.1.min(b.1)))
}
