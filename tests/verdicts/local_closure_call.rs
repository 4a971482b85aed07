// expect: admitted
// A closure that calls a capture-free closure defined inside its own body
// (no capture of a closure; a local closure call): admit if local closure
// bodies are followed like helpers, else reject as unsupported.
pub fn entry(data: &[i32]) -> i32 {
    native::reduce(data, 0, |a, b| {
        let sq = |x: i32| x.wrapping_mul(x);
        a.wrapping_add(sq(b))
    })
}
