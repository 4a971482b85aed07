// Admitted: the closure calls a local helper fn that calls a second local
// helper fn; both helpers must be compiled with the callback. (The result is
// a minimum: associative and commutative, as the reduce provider requires.)
#[inline(never)]
fn combine(a: i32, b: i32) -> i32 {
    keep_smaller(a, b)
}

#[inline(never)]
fn keep_smaller(x: i32, y: i32) -> i32 {
    if x <= y {
        x
    } else {
        y
    }
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| combine(a, b))
}
