// expect: admitted
// Pure core functions passed as the callback.
pub fn a(data: &[i32]) -> i32 {
    native::reduce(data, 0, i32::wrapping_add)
}

pub fn b(data: &[i32]) -> i32 {
    native::reduce(data, 0, core::cmp::max)
}

pub fn c(data: &[i32]) -> i32 {
    native::reduce(data, 0, i32::max)
}

pub fn d(data: &[i32]) -> i32 {
    native::reduce(data, 0, std::cmp::min::<i32>)
}
