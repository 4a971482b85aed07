// expect: rejected E0109
// An array built and destructured inside the callback: the rules admit
// it, and the trial lowering refuses the array fields with E0109.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let v = [a, b, 3];
        match v {
            [x, .., y] => x.wrapping_add(y),
        }
    })
}
