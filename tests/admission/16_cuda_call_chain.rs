// Rejected (reaches CUDA transitively): closure -> level1 -> level2 ->
// cuCtxSynchronize; the diagnostic should report the whole chain.
extern "C" {
    fn cuCtxSynchronize() -> u32;
}

#[inline(never)]
fn level1(x: i32) -> i32 {
    x.wrapping_add(level2())
}

#[inline(never)]
fn level2() -> i32 {
    unsafe { cuCtxSynchronize() as i32 }
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| level1(a.wrapping_add(b)))
}
