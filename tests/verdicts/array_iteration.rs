// expect: rejected E0109
// Iteration over arrays and slices inside callbacks: `.iter()` of a `const`
// table with `any` and with `enumerate().map().sum()`, `for v in ARRAY`,
// `.iter().fold` of a captured array, and a helper that iterates. Each is
// one E0109 whose help shows the loop over indices that is compiled
// (tests/verdicts/const_tables.rs), with none of the pointer constructs
// `core`'s iterators are made of.
const PRIMES: [u32; 6] = [2, 3, 5, 7, 11, 13];
const W: [f32; 4] = [0.1, 0.2, 0.3, 0.4];

pub fn divisible(data: &[u32]) -> Vec<u32> {
    native::select(data, |x: u32| PRIMES.iter().any(|&p| x % p == 0))
}

pub fn weighted(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x: f32| W.iter().enumerate().map(|(i, w)| w * x * i as f32).sum::<f32>())
}

pub fn mixed(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| {
        let mut acc = 0u32;
        for p in PRIMES {
            acc = acc.wrapping_add(x.wrapping_mul(p));
        }
        acc
    })
}

pub fn folded(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| k.iter().fold(x, |a, &b| a ^ b))
}

fn smallest_factor(x: u32) -> u32 {
    PRIMES.iter().copied().find(|p| x % p == 0).unwrap_or(x)
}

pub fn through_a_helper(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| smallest_factor(x))
}
