// expect: admitted
// An array built and destructured inside the callback: its elements are
// written as the array's fields, and the slice pattern reads the first and
// the last (`a + b`, associative).
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let v = [a, 0, b];
        match v {
            [x, .., y] => x.wrapping_add(y),
        }
    })
}
