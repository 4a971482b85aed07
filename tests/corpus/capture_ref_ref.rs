// A `move` closure capturing a `&&i32`: reject as a borrowed capture, with the
// double reference in the note.
pub fn entry(data: &[i32], k: i32) -> i32 {
    let r = &k;
    let rr = &r;
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(**rr))
}
