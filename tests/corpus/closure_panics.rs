// A closure that panics explicitly with `panic!` on one path and
// `unreachable!` on another: admit (the panic becomes a trap), or reject if
// panics with formatted messages are unsupported.
pub fn entry(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        if b == k {
            panic!("sentinel value in data");
        }
        match b & 3 {
            0 | 1 => a.wrapping_add(b),
            2 | 3 => a ^ b,
            _ => unreachable!(),
        }
    })
}
