// A `move` closure capturing a `&[i32]` slice (a fat pointer) and indexing it
// with a bounds check: reject as a borrowed capture.
pub fn entry(data: &[i32], table: &[i32]) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let i = (b as u32 as usize) % table.len();
        a.wrapping_add(table[i])
    })
}
