// expect: rejected E0105
// What `reduce_by_key` and `scan_by_key` cannot take: keys of a 128-bit
// integer, values of a struct that holds an array, and a `same` passed as
// a function rather than a closure (the two callbacks compile as one body
// of two closures).
pub fn wide(keys: &[u128], values: &[u32]) -> (Vec<u128>, Vec<u32>) {
    native::reduce_by_key(keys, values, |a, b| a == b, |x, y| x + y)
}

#[derive(Clone, Copy)]
pub struct Row {
    pub id: u32,
    pub cells: [f32; 4],
}

pub fn rows(keys: &[u32], values: &[Row]) -> Vec<Row> {
    native::scan_by_key(keys, values, |a, b| a == b, |x, _| x)
}

fn same_key(a: &u32, b: &u32) -> bool {
    a == b
}

pub fn named(keys: &[u32], values: &[u32]) -> Vec<u32> {
    native::scan_by_key(keys, values, same_key, |x, y| x + y)
}
