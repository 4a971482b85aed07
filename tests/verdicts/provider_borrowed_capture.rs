// expect: rejected E0101
// The capture rules are every provider's: a borrowed capture is refused for
// a scan and a select as for a reduce.
pub fn shifted(data: &[i32], k: i32) -> Vec<i32> {
    native::inclusive_scan(data, |a, b| a.wrapping_add(b).wrapping_add(k))
}

pub fn above(data: &[f32], lo: f32) -> Vec<f32> {
    native::select(data, |x| x > lo)
}
