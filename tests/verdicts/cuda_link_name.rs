// expect: rejected E0106
// The extern is renamed: CUDA is detected by the symbol it links to.
extern "C" {
    #[link_name = "cudaDeviceSynchronize"]
    fn wait() -> i32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.wrapping_add(b).wrapping_add(unsafe { wait() }))
}
