// `assert!` and `debug_assert!` inside the callback (a conditional panic; the
// debug one only exists with debug assertions): admit, lowering the panic to
// a trap.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        assert!(b != k, "data must not contain k");
        debug_assert!(a >= i32::MIN);
        a.wrapping_add(b)
    })
}
