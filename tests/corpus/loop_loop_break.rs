// A `loop` with `break value` in the closure (Collatz steps, bounded): admit.
pub fn entry(data: &[i32], max_steps: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let mut n = (b & 0xffff) as u32 | 1;
        let mut steps = 0i32;
        let s = loop {
            if n == 1 || steps >= max_steps {
                break steps;
            }
            n = if n % 2 == 0 { n / 2 } else { n.wrapping_mul(3).wrapping_add(1) };
            steps += 1;
        };
        a.wrapping_add(s)
    })
}
