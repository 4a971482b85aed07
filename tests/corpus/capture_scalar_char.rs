// A `move` closure capturing one `char` by value (cast `as u32`): char is a
// 4-byte scalar but not numeric; the compiler should reject or admit it deliberately.
pub fn entry(data: &[i32], c: char) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(c as u32 as i32))
}
