// A fn item callback that itself calls a local helper: admit, compiling the
// helper with it.
#[inline(never)]
fn double(x: i32) -> i32 {
    x.wrapping_mul(2)
}

fn combine(a: i32, b: i32) -> i32 {
    a.wrapping_add(double(b))
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, combine)
}
