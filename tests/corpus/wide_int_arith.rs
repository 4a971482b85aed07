// i128/u64 arithmetic inside an i32 callback (a widening multiply-high):
// admit; the lowering must handle 128-bit integers.
pub fn entry(data: &[i32], k: u64) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let p = (b as i128).wrapping_mul(k as i128);
        a.wrapping_add((p >> 32) as i32)
    })
}
