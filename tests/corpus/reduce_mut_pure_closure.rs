// A pure, capture-free closure registered through `native::reduce_mut`: the
// closure is `Fn`, but the registration asks for `FnMut`; the compiler decides
// (the body has no writes).
pub fn entry(data: &[i32]) -> i32 {
    native::reduce_mut(data, 0, |a, b| a.wrapping_add(b))
}
