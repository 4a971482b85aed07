// expect: rejected E0109
// Iteration the GPU side does not compile: a slice whose length is not
// known where it is used (a `const` of slice type; a slice that is one of
// two arrays of different lengths, handed to a helper), and an iterator
// over an array the core model does not have (`chunks`). Each is one
// E0109, with the forms that are compiled.
const PRIMES: [u32; 6] = [2, 3, 5, 7, 11, 13];
const TABLE: &[u32] = &[1, 2, 3];

fn total(xs: &[u32]) -> u32 {
    xs.iter().fold(0, |a, &b| a.wrapping_add(b))
}

pub fn from_a_slice_const(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| x ^ TABLE.iter().fold(0, |a, &b| a ^ b))
}

pub fn either(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| {
        let s: &[u32] = if x > 7 { &k } else { &PRIMES };
        x ^ total(s)
    })
}

pub fn chunked(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| PRIMES.chunks(2).map(|c| c[0]).fold(x, |a, b| a ^ b))
}
