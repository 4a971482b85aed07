// link: lib/cuda_named.cu
// expect: rejected
// A CUDA driver API name stays E0106, even though a device library defines
// a function of that name.
extern "C" {
    fn cuCtxSynchronize() -> u32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(unsafe { cuCtxSynchronize() } as i32))
}
