// expect: rejected E0105
// A generic function that registers a callback, which no code of the
// crate calls with concrete types: its callback's types are parameters,
// and the GPU code is made per instance, of which there is none. One
// located error, not one per rule the parameter trips.
pub fn total<T: Copy + Send + Sync + std::ops::Add<Output = T>>(data: &[T], zero: T) -> T {
    native::reduce(data, zero, |a, b| a + b)
}
