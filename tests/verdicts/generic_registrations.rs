// expect: admitted
// Generic functions that register a callback, called with concrete types:
// the GPU code is made for each instance (`largest_of::<u32>`,
// `largest_of::<f64>`), whether rustc inlines the generic function into
// its caller or calls it, and a generic fn item passed as the callback
// (`larger::<i32>`). Each reduce operation is `max` (associative).
fn larger<T: PartialOrd + Copy>(a: T, b: T) -> T {
    if a > b {
        a
    } else {
        b
    }
}

pub fn largest_of<T: Copy + PartialOrd + Send + Sync>(data: &[T], lowest: T) -> T {
    native::reduce(data, lowest, |a, b| if a > b { a } else { b })
}

#[inline(never)]
pub fn scaled<T: Copy + std::ops::Mul<Output = T> + Send + Sync>(data: &[T], k: T) -> Vec<T> {
    native::transform(data, move |x| x * k)
}

pub fn largest_both(data: &[u32], f: &[f64]) -> (u32, f64) {
    (largest_of(data, 0), largest_of(f, f64::MIN))
}

pub fn scaled_i16(data: &[i16], k: i16) -> Vec<i16> {
    scaled(data, k)
}

pub fn largest_by_fn_item(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, larger::<i32>)
}
