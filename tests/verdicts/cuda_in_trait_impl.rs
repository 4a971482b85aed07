// expect: rejected E0106
// A trait method on `i32` reaches CUDA: the chain names `<i32 as Settle>::settle`
// and the span points into the method.
extern "C" {
    fn cuCtxSynchronize() -> u32;
}

trait Settle {
    fn settle(self, o: i32) -> i32;
}

impl Settle for i32 {
    fn settle(self, o: i32) -> i32 {
        unsafe { cuCtxSynchronize() };
        self.wrapping_add(o)
    }
}

pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| a.settle(b))
}
