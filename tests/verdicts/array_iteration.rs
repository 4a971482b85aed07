// expect: admitted
// Iteration over arrays the callback owns, as users write it: `.iter()` of
// a `const` table and of a captured array with `fold`, `sum`, `product`,
// `any`, `all`, `position`, `copied().find`, `max`, `min`, `zip`,
// `enumerate`, `map`, `filter().count()`, `rev`, `take`; an array by value
// (`into_iter()`) with `fold`, `rev`, `map`, `filter().count()`; `for` over
// `&k`, `k.iter()` and an array by value; a slice borrowed from an array,
// indexed and measured; helpers taking slices (`&[u32]`, compiled once per
// lengths); and a helper that iterates. Optimised MIR borrows each
// array as a slice: `frontend::slices` gives the slice the array's length,
// and the core model runs what `core` keeps.
const PRIMES: [u32; 6] = [2, 3, 5, 7, 11, 13];
const W: [f32; 4] = [0.1, 0.2, 0.3, 0.4];

pub fn divisible(data: &[u32]) -> Vec<u32> {
    native::select(data, |x: u32| PRIMES.iter().any(|&p| x % p == 0))
}

pub fn coprime(data: &[u32]) -> Vec<u32> {
    native::select(data, |x: u32| PRIMES.iter().all(|&p| x % p != 0))
}

pub fn weighted(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x: f32| W.iter().enumerate().map(|(i, w)| w * x * i as f32).sum::<f32>())
}

pub fn dotted(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x: f32| W.iter().zip(W.iter()).map(|(a, b)| a * b * x).sum::<f32>())
}

pub fn by_value(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| {
        let mut acc = 0u32;
        for p in PRIMES {
            acc = acc.wrapping_add(x.wrapping_mul(p));
        }
        acc
    })
}

pub fn by_value_adapters(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| {
        let a = PRIMES.into_iter().fold(x, |a, p| a.rotate_left(p) ^ p);
        let b = [1u32, 2, 3].into_iter().rev().fold(0u32, |a, i| a.wrapping_mul(7) ^ i);
        let c = PRIMES.into_iter().map(|p| p ^ x).fold(0u32, |a, b| a.wrapping_add(b));
        let d = PRIMES.into_iter().filter(|&p| p < x % 16).count() as u32;
        let e = PRIMES.iter().copied().filter(|&p| p > x % 16).count() as u32;
        let mut f = 0u32;
        for v in [x] {
            f ^= v;
        }
        a ^ b ^ c ^ (d << 8) ^ (e << 16) ^ f
    })
}

pub fn folded(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| k.iter().fold(x, |a, &b| a ^ b) ^ k.iter().rev().fold(0u32, |a, &b| a.wrapping_mul(31) ^ b))
}

pub fn sums(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| {
        x.wrapping_add(k.iter().sum::<u32>()) ^ PRIMES.iter().product::<u32>() ^ PRIMES.iter().take(3).sum::<u32>()
    })
}

pub fn searched(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| {
        let at = PRIMES.iter().position(|&p| p > x % 16).map_or(99, |i| i as u32);
        let f = PRIMES.iter().copied().find(|p| x % p == 0).unwrap_or(1);
        at * 1000 + f + PRIMES.iter().filter(|&&p| p < x % 16).count() as u32
    })
}

pub fn extremes(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x: f32| W.iter().copied().fold(f32::MIN, f32::max) * x)
}

pub fn extremes_int(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| k.iter().copied().max().unwrap_or(x) ^ *k.iter().min().unwrap_or(&x))
}

pub fn loops(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| {
        let mut a = x;
        for v in &k {
            a ^= *v;
        }
        for v in k.iter() {
            a = a.wrapping_add(*v);
        }
        a
    })
}

pub fn slice_indexed(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| {
        let s: &[u32] = &k;
        s[x as usize % 3] ^ s.len() as u32
    })
}

/// A helper taking slices: compiled once per lengths it is called with.
#[inline(never)]
fn total(xs: &[u32]) -> u32 {
    xs.iter().fold(0u32, |a, &b| a.wrapping_add(b)) ^ xs.len() as u32
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

pub fn slice_helpers(data: &[u32], k: [u32; 3]) -> Vec<u32> {
    native::transform(data, move |x: u32| x ^ total(&k) ^ total(&PRIMES) ^ total(&[x, 1]))
}

pub fn slice_dot(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x: f32| dot(&W, &[x, 1.0, x, 2.0]))
}

fn smallest_factor(x: u32) -> u32 {
    PRIMES.iter().copied().find(|p| x % p == 0).unwrap_or(x)
}

pub fn through_a_helper(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x: u32| smallest_factor(x))
}
