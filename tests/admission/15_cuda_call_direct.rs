// Rejected (reaches CUDA): the closure calls the CUDA driver API
// `cuCtxSynchronize` directly.
extern "C" {
    fn cuCtxSynchronize() -> u32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let status = unsafe { cuCtxSynchronize() };
        a.wrapping_add(b).wrapping_add(status as i32)
    })
}
