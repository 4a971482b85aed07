// expect: admitted
// `reduce_by_key` and `scan_by_key` over tuples and structs: keys
// compared by the fields `same` reads, values folded whole, both at
// rustc's offsets.
#[derive(Clone, Copy)]
pub struct Stat {
    pub count: u32,
    pub sum: f64,
    pub max: f32,
}

/// Per (sensor, channel) run: a count, a sum and a maximum at once.
pub fn per_channel(keys: &[(u16, u8)], values: &[Stat]) -> (Vec<(u16, u8)>, Vec<Stat>) {
    native::reduce_by_key(keys, values, |a, b| a == b, |x, y| Stat {
        count: x.count + y.count,
        sum: x.sum + y.sum,
        max: x.max.max(y.max),
    })
}

/// A running (count, sum) pair per run of equal keys.
pub fn running(keys: &[i32], values: &[(u32, i64)]) -> Vec<(u32, i64)> {
    native::scan_by_key(keys, values, |a, b| a == b, |x, y| (x.0 + y.0, x.1 + y.1))
}
