// expect: admitted
// A 128-bit product shifted down by 64: the LTO route prints the wide
// constants LLVM folds (`i128 18446744073709551616`).
pub fn entry(data: &[i32], k: u64) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let wide = (b as u32 as u128) * (k as u128);
        a.wrapping_add((wide >> 64) as i32)
    })
}
