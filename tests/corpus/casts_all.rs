// `as` casts of every kind: int<->int (widen, narrow, sign change),
// int<->float, float<->float, bool->int, char->u32, u8->char: admit if all
// cast kinds are supported (char is a local value here, not a capture).
pub fn entry(data: &[i32], f: f64) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let wide = b as i64;
        let narrow = (wide >> 8) as i16;
        let unsigned = narrow as u16;
        let signed = unsigned as i8;
        let fl = b as f32;
        let dbl = fl as f64 * f;
        let back = dbl as i32;
        let from_bool = (b > 0) as i32;
        let ch = (b & 0x7f) as u8 as char;
        let code = ch as u32;
        let us = a as usize;
        a.wrapping_add(signed as i32)
            .wrapping_add(back)
            .wrapping_add(from_bool)
            .wrapping_add(code as i32)
            .wrapping_add(us as i32)
    })
}
