// expect: admitted
// Every kind of scalar a closure may capture by value: `char`, `bool`,
// `i128` and narrow integers, laid out at rustc's offsets in the
// environment. Each operation is `max` or a `max` capped by the captures
// (associative and commutative).
pub fn by_char(data: &[i32], d: char) -> i32 {
    native::reduce(data, i32::MIN, move |a, b| a.max(b).min(d as i32 * 1000))
}

pub fn by_flag_and_wide(data: &[i32], take_max: bool, cap: i128, small: u8) -> i32 {
    native::reduce(data, i32::MIN, move |a, b| {
        let m = if take_max { a.max(b) } else { a.min(b) };
        (m as i128).min(cap + small as i128) as i32
    })
}
