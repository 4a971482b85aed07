// The closure calls `fib`, a directly recursive helper: reject as recursion.
fn fib(n: u32) -> i32 {
    if n < 2 {
        n as i32
    } else {
        fib(n - 1).wrapping_add(fib(n - 2))
    }
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(fib((b & 15) as u32)))
}
