// The closure reads an immutable `static` (a global memory location, not a
// capture): reject (or admit deliberately) — there is no such global on the GPU
// unless the compiler emits it.
static BIAS: i32 = 11;

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(BIAS))
}
