// expect: admitted
// `for` over a range and `while`: optimised MIR inlines `Range::next` (an
// `Option` of the index, switched on), so the loop is plain control flow.
pub fn hash(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| {
        let mut h = x;
        for i in 0..4u32 {
            h = h.rotate_left(5) ^ i.wrapping_mul(0x9e37_79b9);
        }
        h
    })
}

pub fn collatz(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| {
        let (mut n, mut steps) = (x % 1000 + 1, 0u32);
        while n != 1 && steps < 500 {
            n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
            steps += 1;
        }
        steps
    })
}
