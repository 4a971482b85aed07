// An exhaustive `match` on a u8 (no wildcard arm) over a cast of the element:
// admit; the MIR has a `switchInt` with an `otherwise` arm rustc proves dead.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let tag = match (b & 0xff) as u8 {
            0..=63 => 1,
            64..=127 => 2,
            128..=191 => 3,
            192..=255 => 4,
        };
        a.wrapping_add(tag)
    })
}
