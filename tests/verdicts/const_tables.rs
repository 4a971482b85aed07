// expect: admitted
// Lookup tables in `const` items, indexed inside callbacks: optimised MIR
// names the item (`_8 = const TABLE;`) instead of copying its value, and
// the frontend folds it to the array it is (`[const 1_u32, …]`): a table
// for a hash, a table of float weights, and a reduce capped below by a
// table entry (`max` with a constant: associative).
const MIX: [u32; 16] = [
    0x9e37_79b9, 0x7f4a_7c15, 0xf39c_c060, 0x5ced_c834, 0x2545_f491, 0x4f6c_dd1d, 0x8bad_f00d,
    0xdead_beef, 0x0bad_c0de, 0x1bad_b002, 0xfeed_face, 0xcafe_babe, 0xc001_d00d, 0x0d15_ea5e,
    0xabad_1dea, 0x8bad_f00d,
];

const WEIGHTS: [f32; 4] = [0.25, 0.5, 1.5, -2.0];

pub fn hashed(data: &[u32]) -> Vec<u32> {
    native::transform(data, |x| {
        let mut h = x;
        for i in 0..4 {
            h = h.rotate_left(7) ^ MIX[((h >> (i * 4)) & 15) as usize];
        }
        h
    })
}

pub fn weighted(data: &[f32]) -> Vec<f32> {
    native::transform(data, |x| {
        let mut s = 0.0f32;
        for i in 0..WEIGHTS.len() {
            s = s * x + WEIGHTS[i];
        }
        s
    })
}

pub fn largest_mixed(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| a.max(b).max(MIX[0] as i32 >> 31))
}
