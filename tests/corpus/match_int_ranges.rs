// A `match` on an i32 with literals, or-patterns, inclusive ranges and a
// wildcard (a `switchInt` plus range comparisons): admit.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let w = match b {
            0 => 0,
            1 | 2 | 3 => 1,
            4..=15 => 2,
            -100..=-1 => -1,
            i32::MIN..=-101 => -2,
            _ => 3,
        };
        a.wrapping_add(w)
    })
}
