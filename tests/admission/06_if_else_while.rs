// Admitted: control flow in the closure body: an `if`/`else` and a `while`
// loop (a back edge in the CFG). The maximum, with its lowest `limit` bits
// cleared: monotone and idempotent, so the operation stays associative and
// commutative, as the reduce provider requires.
pub fn entry(data: &[i32], limit: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let mut x = if a > b { a } else { b };
        let mut bit = 0;
        while bit < limit && bit < 31 {
            x &= !(1 << bit);
            bit += 1;
        }
        x
    })
}
