// The closure calls a CUDA runtime API (`cudaDeviceSynchronize`) declared in an
// `extern "C"` block: reject as a call that reaches CUDA.
extern "C" {
    fn cudaDeviceSynchronize() -> i32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let err = unsafe { cudaDeviceSynchronize() };
        if err != 0 {
            a
        } else {
            a.wrapping_add(b)
        }
    })
}
