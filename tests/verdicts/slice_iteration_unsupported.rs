// expect: rejected E0109
// Iteration the GPU side does not compile: over a slice whose length is
// not known where it is iterated (a helper's `&[u32]` parameter), and an
// iterator over an array the core model does not have (`chunks`). Each is
// one E0109 at the call, with the forms that are compiled.
const PRIMES: [u32; 6] = [2, 3, 5, 7, 11, 13];

fn total(xs: &[u32]) -> u32 {
    xs.iter().fold(0, |a, &b| a.wrapping_add(b))
}

pub fn summed(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| x ^ total(&k))
}

pub fn chunked(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| PRIMES.chunks(2).map(|c| c[0]).fold(x, |a, b| a ^ b))
}
