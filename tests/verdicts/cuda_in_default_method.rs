// expect: rejected E0106
// A CUDA runtime call hidden in a trait's default method, reached through
// the method's instance for `i32`: the call chain shows the way in.
extern "C" {
    fn cudaDeviceSynchronize() -> i32;
}

pub trait Settle {
    fn settle(&self) -> i32 {
        unsafe { cudaDeviceSynchronize() }
    }
}

impl Settle for i32 {}

pub fn settled(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| x + x.settle())
}
