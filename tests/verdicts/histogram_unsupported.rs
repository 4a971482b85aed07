// expect: rejected E0105
// What `histogram` cannot take: an element type no provider takes
// (`u128`), and a bin function whose target is known only at run time.
pub fn wide(data: &[u128]) -> Vec<u64> {
    native::histogram(data, 16, |x| (x >> 124) as usize)
}

pub fn chosen(data: &[i32], bin: fn(i32) -> usize) -> Vec<u64> {
    native::histogram(data, 16, bin)
}
