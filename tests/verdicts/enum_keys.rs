// expect: admitted
// Enums, `Ordering`, loops and the integer methods optimised MIR calls,
// inside `i32` reduces that select by a total order (the largest key, ties
// broken by the larger value): associative and commutative, so the GPU's
// tree gives the host's result bit for bit, and a key computed differently
// on the device changes which element wins.
use core::cmp::Ordering;

#[derive(Clone, Copy)]
#[repr(u16)]
enum Tag {
    Small(u8),
    Wide { hi: i16, lo: u16 },
    Marked = 40,
}

#[derive(Clone, Copy)]
struct Pair {
    a: i32,
    b: u32,
}

fn mix(x: u32) -> u32 {
    (x ^ (x >> 15)).wrapping_mul(0x2c1b_3c6d) ^ (x >> 7)
}

fn pick(a: i32, b: i32, ka: u32, kb: u32) -> i32 {
    match ka.cmp(&kb).then(a.cmp(&b)) {
        Ordering::Less => b,
        _ => a,
    }
}

fn tag(x: i32) -> Tag {
    match x.rem_euclid(3) {
        0 => Tag::Small(x as u8),
        1 => Tag::Wide { hi: (x >> 16) as i16, lo: x as u16 },
        _ => Tag::Marked,
    }
}

fn tagged(x: i32) -> u32 {
    let k = match tag(x) {
        Tag::Small(s) => s as u32 * 3,
        Tag::Wide { hi, lo } => (hi as i32 as u32) ^ ((lo as u32) << 5),
        Tag::Marked => (x.div_euclid(-7) as u32).wrapping_add(40),
    };
    mix(k)
}

fn optional(x: i32) -> u32 {
    let e = (x & 15) as u32;
    let p = match x.checked_pow(e) {
        Some(v) => v as u32 ^ 1,
        None => 7,
    };
    let q = match (x >> 3).checked_mul(x) {
        Some(v) if v > 0 => v as u32,
        Some(_) => 1,
        None => 2,
    };
    let r = if let Ok(v) = u8::try_from(x) { v as u32 + 3 } else { 0 };
    let (w, o) = x.overflowing_pow(e);
    mix(p ^ q.rotate_left(3) ^ r ^ w as u32 ^ o as u32)
}

fn looped(x: i32) -> u32 {
    let mut h = Pair { a: x, b: x as u32 };
    for i in 0..(x & 7) {
        h = Pair { a: h.a.wrapping_mul(31) ^ i, b: h.b.rotate_left(5) ^ i as u32 };
    }
    let mut n = (x as u32 % 97) + 1;
    let mut steps = 0u32;
    while n != 1 && steps < 200 {
        n = if n % 2 == 0 { n / 2 } else { 3 * n + 1 };
        steps += 1;
    }
    mix(h.a as u32 ^ h.b ^ steps << 20)
}

fn ordered(x: i32) -> u32 {
    let f = x as f32 * 0.25;
    let o = match f.partial_cmp(&3.0) {
        Some(Ordering::Less) => 1u32,
        Some(Ordering::Equal) => 2,
        Some(Ordering::Greater) => 3,
        None => 4,
    };
    mix(o ^ (f.total_cmp(&-2.5) as i32 as u32) << 3 ^ (x.cmp(&0) as i8 as u32) << 9)
}

pub fn by_tag(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, tagged(a), tagged(b)))
}

pub fn by_option(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, optional(a), optional(b)))
}

pub fn by_loop(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, looped(a), looped(b)))
}

pub fn by_order(data: &[i32]) -> i32 {
    native::reduce(data, i32::MIN, |a, b| pick(a, b, ordered(a), ordered(b)))
}
