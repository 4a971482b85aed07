// The closure calls `is_even`, which is mutually recursive with `is_odd`:
// reject as recursion, naming the cycle.
fn is_even(n: u32) -> bool {
    if n == 0 {
        true
    } else {
        is_odd(n - 1)
    }
}

fn is_odd(n: u32) -> bool {
    if n == 0 {
        false
    } else {
        is_even(n - 1)
    }
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| if is_even((b & 7) as u32) { a.wrapping_add(b) } else { a })
}
