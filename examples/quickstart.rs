// Quickstart: four callbacks the compiler admits (sum, captured xor, min/max,
// helper call). examples/borrowed_capture.rs shows one it rejects.

/// A local helper the GPU callback calls; it is compiled along with it.
/// Picks the value closer to zero (the larger on a tie, -1 against 1), a
/// selection by a total order: associative and commutative.
#[inline(never)]
fn closer_to_zero(a: i32, b: i32) -> i32 {
    // `wrapping_abs` then `as u32` gives |i32::MIN| = 2^31 without overflow.
    let (ma, mb) = (a.wrapping_abs() as u32, b.wrapping_abs() as u32);
    if mb < ma || (mb == ma && b > a) {
        b
    } else {
        a
    }
}

/// Admitted: a plain sum (wrapping, so the GPU's tree order gives the same result).
pub fn sum(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b))
}

/// Admitted: a captured scalar, moved into the closure's environment by value.
/// The `^ k` after every step makes the fold order-dependent (not associative),
/// so the GPU's tree order and the host's sequential fold may disagree.
pub fn keyed_sum(data: &[i32], k: i32) -> i32 {
    native::reduce(data, 0, move |a, b| a.wrapping_add(b) ^ k)
}

/// Admitted: the largest element, or a captured floor if that is larger.
pub fn floored_max(data: &[i32], floor: i32) -> i32 {
    native::reduce(data, i32::MIN, move |a, b| a.max(b).max(floor))
}

/// Admitted: a callback that calls a local helper function.
pub fn nearest_zero(data: &[i32]) -> i32 {
    native::reduce(data, i32::MAX, |a, b| closer_to_zero(a, b))
}
