// A `move` closure that names a parameter only in a dead `let _ = k;`: edition
// 2021 does not capture it (the environment is empty): admit.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let _ = k;
        a.wrapping_add(b)
    })
}
