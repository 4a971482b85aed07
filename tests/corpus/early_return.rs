// A closure with explicit early `return`s on two paths: admit.
pub fn entry(data: &[i32], threshold: i32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        if b < 0 {
            return a;
        }
        if b > threshold {
            return a.wrapping_add(threshold);
        }
        a.wrapping_add(b)
    })
}
