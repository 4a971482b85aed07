// expect: rejected E0105
// `sort` of elements the GPU has no order for: tuples and `char` are `Ord`
// on the host, but the GPU sorts integers by their own order only; the
// help says to convert the elements on the host.
pub fn pairs(data: &[(u8, u8)]) -> Vec<(u8, u8)> {
    native::sort(data)
}

pub fn letters(data: &[char]) -> Vec<char> {
    native::sort_unstable(data)
}
