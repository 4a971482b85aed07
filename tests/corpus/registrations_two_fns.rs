// Registrations in two different public functions, one admitted (by-value
// capture) and one rejected (borrowed capture): each is judged on its own.
pub fn sum_plus(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))
}

pub fn sum_borrowed(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(k))
}
