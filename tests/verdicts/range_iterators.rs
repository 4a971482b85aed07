// expect: admitted
// Iterators over ranges as users write them: `fold`, `map`, `filter`,
// `sum`, `product`, `any`, `all`, `position`, `find`, `count`, `max`,
// `min`, `rev`, `step_by`, `zip`, `enumerate`, and `for` over `..=`,
// `.rev()` and `.step_by()`. Optimised MIR keeps calls of `core`'s generic
// functions and builds `core`'s own closures here; both run through the
// core model.
pub fn folded(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| (0..4u32).fold(x, |h, i| h.rotate_left(5) ^ i))
}

pub fn mapped_sum(data: &[u32], k: u32) -> Vec<u32> {
    native::transform(data, move |x| {
        (0..x % 8).map(|i| i.wrapping_mul(k)).fold(0u32, |a, b| a.wrapping_add(b))
    })
}

pub fn sums(data: &[u64]) -> Vec<u64> {
    native::transform(data, |x| (0..x % 64).sum::<u64>() + (1..=x % 10).product::<u64>())
}

pub fn filtered(data: &[i32]) -> Vec<i32> {
    native::transform(data, |x| {
        let n = (x % 50).abs();
        (0..n).filter(|i| i % 3 == 0).map(|i| i * 2).sum::<i32>() + (0..n).filter(|i| i % 7 == 1).count() as i32
    })
}

pub fn searches(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| {
        let n = x % 16;
        let any = (0..n).any(|i| i * i == x) as u32;
        let all = (0..n).all(|i| i < 100) as u32;
        let pos = (0..n).position(|i| i * 3 > x % 40).map_or(99, |p| p as u32);
        let found = (0..n).rev().find(|i| i % 5 == 2).unwrap_or(77);
        any + 2 * all + 4 * pos + 1000 * found
    })
}

pub fn extremes(data: &[i16]) -> Vec<i16> {
    native::transform(data, |x| {
        let r = -3..(x % 20);
        r.clone().max().unwrap_or(-100) ^ r.min().unwrap_or(-200)
    })
}

pub fn stepped(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| {
        let mut s = (0..x % 40).step_by(3).fold(0u32, |a, b| a ^ b.wrapping_mul(7));
        for i in (1..x % 30).step_by(4) {
            s = s.rotate_left(3) ^ i;
        }
        s
    })
}

pub fn loops(data: &[u8]) -> Vec<u32> {
    native::transform(data, |x| {
        let mut s = 0u32;
        for i in 0..=x % 9 {
            s = s.wrapping_mul(31) ^ i as u32;
        }
        for i in (0..x % 7).rev() {
            s = s.wrapping_add(i as u32 * 3);
        }
        for i in (2..=x % 5).rev() {
            s ^= i as u32;
        }
        s
    })
}

pub fn zipped(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| {
        (0..4u32).zip(4..8u32).fold(x, |a, (i, j)| a.wrapping_mul(i + 1) ^ j)
            ^ (0..x % 6).enumerate().fold(0, |a, (k, v)| a ^ (k as u32 * 7 + v))
    })
}

pub fn reduced(data: &[u64], k: u64) -> u64 {
    native::reduce(data, 0, move |a, b| a.max(b).max((0..k % 5).sum::<u64>()))
}
