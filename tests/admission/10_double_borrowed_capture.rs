// Rejected (borrowed capture): `kr = &k` is captured by a non-`move` closure
// that borrows `kr` itself (`&kr`), so the environment field is `&&i32`.
pub fn entry(data: &[i32], k: i32) -> i32 {
    let kr = &k;
    native::reduce(data, 0, |a, b| {
        let r: &&i32 = &kr;
        a.wrapping_add(b).wrapping_add(**r)
    })
}
