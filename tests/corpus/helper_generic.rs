// A generic local helper instantiated with i32 (`pick::<i32>`): admit; the
// frontend must resolve the monomorphic instance.
#[inline(never)]
fn pick<T: PartialOrd + Copy>(a: T, b: T, larger: bool) -> T {
    if (a > b) == larger {
        a
    } else {
        b
    }
}

pub fn entry(data: &[i32], larger: bool) -> i32 {
    native::reduce(data, 0, move |a, b| pick::<i32>(a, b, larger))
}
