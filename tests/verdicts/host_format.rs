// expect: admitted
// Formatting in host code (`panic!` with arguments, `format!`) is MIR
// outside the supported subset, but no callback reaches it.
pub fn check(x: i32) {
    if x < 0 {
        panic!("negative: {}", x);
    }
}

pub fn name(x: i32) -> String {
    format!("v{}", x)
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b))
}
