// A `while` loop in the closure (integer log2 of |b|): admit; the CFG has a
// back edge.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let mut x = b.unsigned_abs();
        let mut log = 0;
        while x > 1 {
            x >>= 1;
            log += 1;
        }
        a.wrapping_add(log)
    })
}
