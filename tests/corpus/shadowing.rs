// Repeated `let` shadowing of the same name inside the closure: admit; the
// `debug` lines name several locals `x`.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let x = b;
        let x = x.wrapping_mul(k);
        let x = x ^ a;
        let a = x.wrapping_add(1);
        a
    })
}
