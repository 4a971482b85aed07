// expect: rejected E0106
// A fn pointer made from a CUDA API and called inside the callback.
extern "C" {
    fn cuCtxSynchronize() -> u32;
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let f: unsafe extern "C" fn() -> u32 = cuCtxSynchronize;
        a.wrapping_add(b).wrapping_add(unsafe { f() } as i32)
    })
}
