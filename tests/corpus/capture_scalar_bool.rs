// A `move` closure capturing one `bool` by value and branching on it: admit
// (bool is a scalar capture).
pub fn entry(data: &[i32], use_max: bool) -> i32 {
    native::reduce(data, 0, move |a, b| if use_max { a.max(b) } else { a.min(b) })
}
