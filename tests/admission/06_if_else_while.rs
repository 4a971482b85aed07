// Admitted: control flow in the closure body: an `if`/`else` and a `while`
// loop (a back edge in the CFG).
pub fn entry(data: &[i32], limit: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let mut x = if a > b { a.wrapping_sub(b) } else { b.wrapping_sub(a) };
        let mut steps = 0;
        while x > limit && steps < 8 {
            x >>= 1;
            steps += 1;
        }
        x.wrapping_add(steps)
    })
}
