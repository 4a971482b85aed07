// expect: clean
// The element with the largest keyed hash, ties broken by value: a
// selection by a total order, associative and commutative.
fn hash(x: i32, key: u32) -> u32 {
    (x as u32 ^ key).wrapping_mul(0x9E37_79B1).rotate_left(5)
}

pub fn entry(data: &[i32], key: u32) -> i32 {
    native::reduce(data, i32::MIN, move |a, b| {
        let (ha, hb) = (hash(a, key), hash(b, key));
        if ha > hb || (ha == hb && a >= b) { a } else { b }
    })
}
