//! Callbacks written as Rust users write them, run by `Gpu` and by the
//! host over the same inputs, compared bit for bit (a NaN equals any NaN:
//! the GPU's NaN payloads are its own).
//!
//! Each callback calls a helper of this file, and the host runs the same
//! helper, so both sides run one source: generic helpers instantiated at
//! several types, the `core` operator traits they use (`+`, `/`, `%`,
//! `<<`, `-x`, `<`, `cmp`, `Default`, `From`, `Into`), trait default
//! methods, closures handed to generic and `impl Fn` helpers (capturing by
//! value and by reference, `FnMut` state, a closure returned by a helper),
//! aggregates captured whole (arrays, tuples, structs of the file with and
//! without `#[repr(C)]`, nested, and a closure), read at rustc's offsets,
//! and iterators over ranges (`fold`, `map`, `filter`, `sum`, `product`,
//! `any`, `all`, `position`, `find`, `count`, `max`, `min`, `rev`,
//! `step_by`, `zip`, `enumerate`, `for` over `..=`) with the `Option`
//! methods that take closures, which run through the core model, and over
//! arrays (a `const` table's and a captured array's `.iter()` with the same
//! adapters, `for` over `&k` and over an array by value, a `&[u32]`
//! borrowed from an array, indexed and measured).
//! Every `reduce` operation is associative and commutative.
//!
//! `callbacks [--count N] [--no-overflowing]` (default 1,000,000 random
//! inputs besides the edge values; `--no-overflowing` leaves out the checks
//! whose edge values overflow, for a dev-profile build, where they panic).
//! Prints one line per check; exits 1 if any result differs.

use native::gpu::{DeviceElement, Error, Gpu};
use std::cmp::Ordering;
use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Rem, Shl, Sub};
use std::process::ExitCode;

// ---------------------------------------------------------------------------
// The helpers the callbacks call.

fn lerp<T: Copy + Add<Output = T> + Sub<Output = T> + Mul<Output = T>>(a: T, b: T, t: T) -> T {
    a + (b - a) * t
}

fn larger<T: PartialOrd + Copy>(a: T, b: T) -> T {
    if a > b {
        a
    } else {
        b
    }
}

fn ops<T>(a: T, b: T) -> T
where
    T: Copy + Div<Output = T> + Rem<Output = T> + Neg<Output = T> + Shl<u32, Output = T>,
    T: Ord + Default + From<u8>,
{
    let d = if b == T::default() { T::from(1u8) } else { b };
    let m = (a / d) % d;
    let n = -m;
    match a.cmp(&b) {
        Ordering::Less => n << 1,
        Ordering::Equal => m,
        Ordering::Greater => std::cmp::max(n, m << 2),
    }
}

trait Thrice: Copy + Add<Output = Self> {
    fn twice(self) -> Self {
        self + self
    }
    fn thrice(self) -> Self {
        self.twice() + self
    }
}

impl Thrice for i32 {}
impl Thrice for f64 {}

fn apply<F: Fn(i32) -> i32>(f: F, x: i32) -> i32 {
    f(x).wrapping_add(f(x.wrapping_add(1)))
}

fn apply_impl(f: impl Fn(i32) -> i32, x: i32) -> i32 {
    f(x).wrapping_mul(3).wrapping_add(f(x.wrapping_sub(1)))
}

fn twice_mut<F: FnMut(i32) -> i32>(mut f: F, x: i32) -> i32 {
    let y = f(x);
    f(y)
}

fn compose<F: Fn(i32) -> i32, G: Fn(i32) -> i32>(f: F, g: G) -> impl Fn(i32) -> i32 {
    move |x| g(f(x))
}

fn widen<T: Into<i64>>(x: T) -> i64 {
    let y: i64 = x.into();
    y.wrapping_mul(3).wrapping_add(y >> 7)
}

fn pick<F: Fn(i32, i32) -> bool>(better: F, a: i32, b: i32) -> i32 {
    if better(a, b) {
        a
    } else {
        b
    }
}

fn masked<F: Fn(i32) -> i32>(f: F, x: i32) -> i32 {
    f(x)
}

const MIX: [u32; 16] = [
    0x9e37_79b9, 0x7f4a_7c15, 0xf39c_c060, 0x5ced_c834, 0x2545_f491, 0x4f6c_dd1d, 0x8bad_f00d,
    0xdead_beef, 0x0bad_c0de, 0x1bad_b002, 0xfeed_face, 0xcafe_babe, 0xc001_d00d, 0x0d15_ea5e,
    0xabad_1dea, 0x8bad_f00d,
];

const WEIGHTS: [f64; 4] = [0.25, 0.5, 1.5, -2.0];

// The bodies of the callbacks, shared by the GPU and the host.

/// Integer roots and logarithms, with their `None` and zero cases.
fn roots_logs(x: u64) -> u64 {
    x.isqrt() ^ (x.max(1).ilog2() as u64) << 8 ^ (x.max(1).ilog10() as u64) << 16
}

fn roots_logs_32(x: u32) -> u32 {
    x.isqrt() ^ x.checked_ilog2().unwrap_or(99) << 16 ^ x.checked_ilog10().unwrap_or(77) << 24
}

fn roots_logs_signed(x: i64) -> i64 {
    x.checked_isqrt().unwrap_or(-1) ^ (x.checked_ilog10().unwrap_or(50) as i64) << 40
}

/// A hash through a lookup table in a `const` item.
fn hashed(x: u32) -> u32 {
    let mut h = x;
    for i in 0..4 {
        h = h.rotate_left(7) ^ MIX[((h >> (i * 4)) & 15) as usize];
    }
    h
}

/// A polynomial whose coefficients are a `const` table (Horner's rule).
fn weighted(x: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..WEIGHTS.len() {
        s = s * x + WEIGHTS[i];
    }
    s
}


fn by_ref(x: i32, k: i32) -> i32 {
    let g = |y: i32| y.wrapping_mul(k) ^ x;
    apply(g, x)
}

fn by_value(x: i32, k: i32) -> i32 {
    apply(move |y| y ^ k, x).wrapping_add(apply_impl(move |y| y.wrapping_sub(k), x))
}

fn counter(x: i32, k: i32) -> i32 {
    let mut calls = 0;
    let r = twice_mut(
        |y| {
            calls += 1;
            y.wrapping_add(k)
        },
        x,
    );
    r.wrapping_add(calls)
}

fn composed(x: i32, k: i32, m: i32) -> i32 {
    compose(move |a: i32| a ^ k, move |b: i32| b.wrapping_mul(m))(x)
}

fn mixed(x: f64, s: f32, o: u8) -> f64 {
    let f = move |v: f64| v * s as f64 + o as f64;
    f(x) + apply(|i| i + o as i32, 3) as f64
}

/// A generic function that registers: the GPU code is made for each
/// element type it is called with, and the program finds the kernel by its
/// call site and types.
/// A struct rustc reorders (the `f64` first), with a `bool`.
#[derive(Clone, Copy)]
struct Affine {
    scale: f32,
    on: bool,
    shift: f64,
}

impl Affine {
    fn apply(self, x: f64) -> f64 {
        if self.on {
            x * self.scale as f64 + self.shift
        } else {
            -x
        }
    }
}

/// Declaration order, with padding.
#[derive(Clone, Copy)]
#[repr(C)]
struct Window {
    lo: u8,
    hi: u64,
    mid: u16,
}

/// Nested aggregates: a struct, an array and a tuple with a `char`.
#[derive(Clone, Copy)]
struct Scene {
    view: Window,
    gains: [f32; 3],
    tag: (i8, char),
}

fn table_of(x: u32, w: [u32; 4]) -> u32 {
    x.wrapping_mul(w[(x % 4) as usize])
}

fn window_of(x: u64, w: Window) -> u64 {
    x.clamp(w.lo as u64, w.hi.max(w.lo as u64)).wrapping_add(w.mid as u64)
}

fn scene_of(x: f32, s: Scene) -> f32 {
    let g = s.gains[(x.to_bits() % 3) as usize];
    x * g + s.view.mid as f32 + s.tag.0 as f32 + (s.tag.1 as u32 & 0xff) as f32
}

fn iter_fold(x: u32) -> u32 {
    (0..4u32).fold(x, |h, i| h.rotate_left(5) ^ i)
}

fn iter_map_sum(x: u32, k: u32) -> u32 {
    (0..x % 8).map(|i| i.wrapping_mul(k)).fold(0u32, |a, b| a.wrapping_add(b))
}

fn iter_sums(x: u64) -> u64 {
    (0..x % 64).sum::<u64>() + (1..=x % 10).product::<u64>()
}

fn iter_filtered(x: i32) -> i32 {
    let n = (x % 50).abs();
    (0..n).filter(|i| i % 3 == 0).map(|i| i * 2).sum::<i32>() + (0..n).filter(|i| i % 7 == 1).count() as i32
}

fn iter_searches(x: u32) -> u32 {
    let n = x % 16;
    let any = (0..n).any(|i| i * i == x) as u32;
    let all = (0..n).all(|i| i < 10) as u32;
    let pos = (0..n).position(|i| i * 3 > x % 40).map_or(99, |p| p as u32);
    let found = (0..n).rev().find(|i| i % 5 == 2).unwrap_or(77);
    any + 2 * all + 4 * pos + 1000 * found
}

fn iter_extremes(x: i16) -> i16 {
    let r = -3..(x % 20);
    r.clone().max().unwrap_or(-100) ^ r.min().unwrap_or(-200)
}

fn iter_stepped(x: u32) -> u32 {
    let mut s = (0..x % 40).step_by(3).fold(0u32, |a, b| a ^ b.wrapping_mul(7));
    for i in (1..x % 30).step_by(4) {
        s = s.rotate_left(3) ^ i;
    }
    s
}

fn iter_stepped_wide(x: u64) -> u64 {
    let mut s = (x % 1000..x % 5000).step_by(7).fold(0u64, |a, b| a.rotate_left(1) ^ b);
    for i in (-20..(x % 40) as i32).step_by(3) {
        s = s.wrapping_mul(3) ^ i as u64;
    }
    for i in (0..(x % 200) as u8).step_by(300) {
        s ^= i as u64 + 1;
    }
    s ^ (0..x % 50).step_by(5).filter(|v| v % 2 == 1).fold(0, |n, _| n + 1)
}

fn iter_loops(x: u8) -> u32 {
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
}

fn iter_zipped(x: u32) -> u32 {
    (0..4u32).zip(4..8u32).fold(x, |a, (i, j)| a.wrapping_mul(i + 1) ^ j)
        ^ (0..x % 6).enumerate().fold(0, |a, (k, v)| a ^ (k as u32 * 7 + v))
}

fn option_methods(x: u32) -> u32 {
    let third = Some(x).filter(|v| v % 3 == 0).map_or(7, |v| v / 3);
    let r: Result<u32, u32> = if x % 2 == 0 { Ok(x) } else { Err(x) };
    let halved = r.map(|v| v / 2).unwrap_or_else(|e| e.wrapping_mul(3));
    let small = x.checked_sub(1000).is_some_and(|v| v < 5000) as u32;
    third ^ halved ^ small ^ x.checked_div(x % 5).map_or_else(|| 11, |q| q + 1)
}

const PRIMES: [u32; 6] = [2, 3, 5, 7, 11, 13];
const W: [f32; 4] = [0.1, 0.2, 0.3, 0.4];

fn table_searches(x: u32) -> u32 {
    let any = PRIMES.iter().any(|&p| x % p == 0) as u32;
    let all = PRIMES.iter().all(|&p| x % p != 0) as u32;
    let at = PRIMES.iter().position(|&p| p > x % 16).map_or(99, |i| i as u32);
    let found = PRIMES.iter().copied().find(|p| x % p == 0).unwrap_or(1);
    let below = PRIMES.iter().filter(|&&p| p < x % 16).count() as u32;
    any + 2 * all + 4 * at + 1000 * found + 100_000 * below
}

fn table_folds(x: u32, k: [u32; 3]) -> u32 {
    k.iter().fold(x, |a, &b| a ^ b)
        ^ k.iter().rev().fold(0u32, |a, &b| a.wrapping_mul(31) ^ b)
        ^ x.wrapping_add(k.iter().sum::<u32>())
        ^ PRIMES.iter().product::<u32>()
        ^ PRIMES.iter().take(3).sum::<u32>()
        ^ k.iter().copied().max().unwrap_or(x)
        ^ *k.iter().min().unwrap_or(&x)
        ^ PRIMES.into_iter().rev().fold(x, |a, p| a.rotate_left(p) ^ p)
        ^ (PRIMES.into_iter().filter(|&p| p < x % 16).count() as u32) << 20
}

fn table_loops(x: u32, k: [u32; 3]) -> u32 {
    let mut a = x;
    for v in &k {
        a ^= *v;
    }
    for v in k.iter() {
        a = a.wrapping_add(*v);
    }
    for p in PRIMES {
        a = a.rotate_left(p) ^ p;
    }
    let s: &[u32] = &k;
    a ^ s[x as usize % 3] ^ s.len() as u32
}

fn table_weights(x: f32) -> f32 {
    W.iter().enumerate().map(|(i, w)| w * x * i as f32).sum::<f32>()
        + W.iter().zip(W.iter()).map(|(a, b)| a * b * x).sum::<f32>()
        + W.iter().copied().fold(f32::MIN, f32::max) * x
}

fn largest_of<T: DeviceElement + PartialOrd>(gpu: &Gpu, data: &[T], lowest: T) -> Result<T, Error> {
    gpu.reduce(data, lowest, |a, b| if a > b { a } else { b })
}

fn scaled<T: DeviceElement + Mul<Output = T> + Add<Output = T>>(gpu: &Gpu, data: &[T], k: T) -> Result<Vec<T>, Error> {
    gpu.transform(data, move |x| x * k + x)?.to_vec()
}

/// A helper taking the callback as an `impl Fn`: rustc inlines it, and the
/// closures handed to it register at its own call.
fn reduce_with(gpu: &Gpu, data: &[i32], init: i32, op: impl Fn(i32, i32) -> i32) -> Result<i32, Error> {
    gpu.reduce(data, init, op)
}

/// A closure made by a factory: `min(max(a, b), cap)` is associative.
fn capped(cap: i32) -> impl Fn(i32, i32) -> i32 {
    move |a, b| a.max(b).min(cap)
}

// ---------------------------------------------------------------------------
// Inputs and comparison.

/// xorshift64*: reproducible inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

fn ints<T: Copy>(n: usize, edges: &[T], seed: u64, from: impl Fn(u64) -> T) -> Vec<T> {
    let mut r = Rng(seed);
    let mut v = edges.to_vec();
    v.extend((0..n).map(|_| from(r.next())));
    v
}

fn floats(n: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng(seed);
    let mut v = vec![0.0, -0.0, 1.0, -1.0, 0.5, f64::MAX, f64::MIN, f64::MIN_POSITIVE, 5e-324];
    v.extend((0..n).map(|_| (r.next() >> 11) as f64 / (1u64 << 40) as f64 - 4096.0));
    v
}

/// Bit-for-bit equality, any NaN equal to any NaN.
trait Same: Copy + Debug {
    fn same(self, other: Self) -> bool;
}

macro_rules! same_int {
    ($($t:ty),*) => {$(impl Same for $t { fn same(self, other: Self) -> bool { self == other } })*};
}
same_int!(i16, i32, i64, u8, u32, u64);

impl Same for f32 {
    fn same(self, other: f32) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

impl Same for f64 {
    fn same(self, other: f64) -> bool {
        self.to_bits() == other.to_bits() || (self.is_nan() && other.is_nan())
    }
}

/// One check's outcome: its name, how many results, how many differ, the
/// first difference.
struct Line {
    name: &'static str,
    results: usize,
    wrong: usize,
    first: String,
}

fn compare<X: Debug, T: Same>(name: &'static str, xs: &[X], gpu: &[T], host: &[T]) -> Line {
    let mut line = Line { name, results: host.len(), wrong: 0, first: String::new() };
    if gpu.len() != host.len() {
        line.wrong = host.len().max(1);
        line.first = format!("{} results on the GPU, {} on the host", gpu.len(), host.len());
        return line;
    }
    for ((x, g), h) in xs.iter().zip(gpu).zip(host) {
        if !g.same(*h) {
            line.wrong += 1;
            if line.first.is_empty() {
                line.first = format!("{x:?}: gpu {g:?}, host {h:?}");
            }
        }
    }
    line
}

fn compare_one<T: Same>(name: &'static str, gpu: T, host: T) -> Line {
    compare(name, &["the whole input"], &[gpu], &[host])
}

// ---------------------------------------------------------------------------
// The checks: one call site per callback (the program finds each kernel by
// its call site).

fn run(gpu: &Gpu, n: usize, all: bool) -> Result<Vec<Line>, Error> {
    let mut lines = Vec::new();
    let i32s = ints(n, &[0, 1, -1, 7, -7, i32::MIN, i32::MAX, i32::MIN + 1], 1, |r| r as i32);
    let i16s = ints(n, &[0, 1, -1, i16::MIN, i16::MAX], 2, |r| r as i16);
    let i64s = ints(n, &[0, 1, -1, i64::MIN, i64::MAX], 3, |r| r as i64);
    let u32s = ints(n, &[0, 1, u32::MAX], 4, |r| r as u32);
    let f64s = floats(n, 5);
    let f32s: Vec<f32> = f64s.iter().map(|&x| x as f32).collect();
    let (k, m, s, o) = (0x5bd1_e995_u32 as i32, -3, 0.75f32, 9u8);
    let u64s = ints(
        n,
        &[0, 1, 2, 3, 4, 8, 9, 10, 99, 100, (1 << 32) - 1, 1 << 32, (1 << 52) + 1, u64::MAX, u64::MAX - 1, 18446744065119617025, 18446744065119617024],
        6,
        |r| r >> (r % 64),
    );

    // Checks whose edge values overflow by design (wrapping in release;
    // in the dev profile the host panics as the GPU traps): `all` only.
    if all {
        let g = gpu.transform(&i16s, |x| lerp(x, 3, 2))?.to_vec()?;
        let h: Vec<i16> = i16s.iter().map(|&x| lerp(x, 3, 2)).collect();
        lines.push(compare("lerp::<i16>", &i16s, &g, &h));
        let g = gpu.transform(&f32s, |x| lerp(x, 0.5, 0.25))?.to_vec()?;
        let h: Vec<f32> = f32s.iter().map(|&x| lerp(x, 0.5, 0.25)).collect();
        lines.push(compare("lerp::<f32>", &f32s, &g, &h));
        let g = gpu.transform(&i64s, |x| lerp(x, -9, 5))?.to_vec()?;
        let h: Vec<i64> = i64s.iter().map(|&x| lerp(x, -9, 5)).collect();
        lines.push(compare("lerp::<i64>", &i64s, &g, &h));

        let g = gpu.reduce(&f32s, f32::MIN, |a, b| larger(a, b))?;
        let h = f32s.iter().fold(f32::MIN, |a, &b| larger(a, b));
        lines.push(compare_one("reduce larger::<f32>", g, h));
        let g = gpu.reduce(&i32s, i32::MIN, |a, b| pick(|x, y| x > y, a, b))?;
        let h = i32s.iter().fold(i32::MIN, |a, &b| pick(|x, y| x > y, a, b));
        lines.push(compare_one("reduce pick(max)", g, h));
        let g = gpu.reduce(&i32s, 0, move |a, b| masked(|y| y & m, a) ^ masked(|y| y & m, b))?;
        let h = i32s.iter().fold(0, |a, &b| masked(|y| y & m, a) ^ masked(|y| y & m, b));
        lines.push(compare_one("reduce masked xor", g, h));

        let g = gpu.transform(&i32s, |x| ops(x, 7) ^ ops(x, 0))?.to_vec()?;
        let h: Vec<i32> = i32s.iter().map(|&x| ops(x, 7) ^ ops(x, 0)).collect();
        lines.push(compare("ops::<i32> (/ % - << cmp Default From)", &i32s, &g, &h));
        let g = gpu.transform(&i64s, |x| ops(x, -5))?.to_vec()?;
        let h: Vec<i64> = i64s.iter().map(|&x| ops(x, -5)).collect();
        lines.push(compare("ops::<i64>", &i64s, &g, &h));

        let g = gpu.transform(&i32s, |x| x.thrice())?.to_vec()?;
        let h: Vec<i32> = i32s.iter().map(|&x| x.thrice()).collect();
        lines.push(compare("<i32 as Thrice>::thrice (default methods)", &i32s, &g, &h));
        let g = gpu.transform(&f64s, |x| x.thrice())?.to_vec()?;
        let h: Vec<f64> = f64s.iter().map(|&x| x.thrice()).collect();
        lines.push(compare("<f64 as Thrice>::thrice", &f64s, &g, &h));

        let g = gpu.transform(&i32s, move |x| by_ref(x, k))?.to_vec()?;
        let h: Vec<i32> = i32s.iter().map(|&x| by_ref(x, k)).collect();
        lines.push(compare("closure capturing by reference, to a generic helper", &i32s, &g, &h));
        let g = gpu.transform(&i32s, move |x| by_value(x, k))?.to_vec()?;
        let h: Vec<i32> = i32s.iter().map(|&x| by_value(x, k)).collect();
        lines.push(compare("move closures, to generic and impl Fn helpers", &i32s, &g, &h));
        let g = gpu.transform(&i32s, move |x| counter(x, k))?.to_vec()?;
        let h: Vec<i32> = i32s.iter().map(|&x| counter(x, k)).collect();
        lines.push(compare("FnMut closure with state", &i32s, &g, &h));
        let g = gpu.transform(&i32s, move |x| composed(x, k, m))?.to_vec()?;
        let h: Vec<i32> = i32s.iter().map(|&x| composed(x, k, m)).collect();
        lines.push(compare("closure returned by a helper", &i32s, &g, &h));
        let g = gpu.transform(&f64s, move |x| mixed(x, s, o))?.to_vec()?;
        let h: Vec<f64> = f64s.iter().map(|&x| mixed(x, s, o)).collect();
        lines.push(compare("closures over f32 and u8 captures", &f64s, &g, &h));

        let g = largest_of(gpu, &i32s, i32::MIN)?;
        let h = i32s.iter().fold(i32::MIN, |a, &b| if a > b { a } else { b });
        lines.push(compare_one("generic registering fn, i32", g, h));
        let g = largest_of(gpu, &f64s, f64::MIN)?;
        let h = f64s.iter().fold(f64::MIN, |a, &b| if a > b { a } else { b });
        lines.push(compare_one("generic registering fn, f64", g, h));
        let g = scaled(gpu, &u32s, 3)?;
        let h: Vec<u32> = u32s.iter().map(|&x| x.wrapping_mul(3).wrapping_add(x)).collect();
        lines.push(compare("generic registering fn with a capture, u32", &u32s, &g, &h));
        let g = scaled(gpu, &f32s, 0.5)?;
        let h: Vec<f32> = f32s.iter().map(|&x| x * 0.5 + x).collect();
        lines.push(compare("generic registering fn with a capture, f32", &f32s, &g, &h));

        let op = move |a: i32, b: i32| a.max(b).min(k);
        let g = gpu.reduce(&i32s, i32::MIN, op)?;
        let h = i32s.iter().fold(i32::MIN, |a, &b| a.max(b).min(k));
        lines.push(compare_one("closure bound by let", g, h));
        let g = gpu.reduce(&i32s, i32::MIN, capped(m))?;
        let h = i32s.iter().fold(i32::MIN, |a, &b| capped(m)(a, b));
        lines.push(compare_one("closure made by a factory", g, h));
        let g = reduce_with(gpu, &i32s, i32::MIN, move |a, b| a.max(b).min(k))?;
        let h = i32s.iter().fold(i32::MIN, |a, &b| a.max(b).min(k));
        lines.push(compare_one("closure handed to an impl Fn helper", g, h));
        let g = reduce_with(gpu, &i32s, i32::MAX, |a, b| a.min(b))?;
        let h = i32s.iter().fold(i32::MAX, |a, &b| a.min(b));
        lines.push(compare_one("another closure to the same helper", g, h));

        let g = gpu.transform(&u64s, |x| roots_logs(x))?.to_vec()?;
        let h: Vec<u64> = u64s.iter().map(|&x| roots_logs(x)).collect();
        lines.push(compare("isqrt, ilog2, ilog10 of u64", &u64s, &g, &h));
        let g = gpu.transform(&u32s, |x| roots_logs_32(x))?.to_vec()?;
        let h: Vec<u32> = u32s.iter().map(|&x| roots_logs_32(x)).collect();
        lines.push(compare("isqrt, checked_ilog2, checked_ilog10 of u32", &u32s, &g, &h));
        let g = gpu.transform(&i64s, |x| roots_logs_signed(x))?.to_vec()?;
        let h: Vec<i64> = i64s.iter().map(|&x| roots_logs_signed(x)).collect();
        lines.push(compare("checked_isqrt, checked_ilog10 of i64", &i64s, &g, &h));

        let g = gpu.transform(&u32s, |x| hashed(x))?.to_vec()?;
        let h: Vec<u32> = u32s.iter().map(|&x| hashed(x)).collect();
        lines.push(compare("lookup table in a const item", &u32s, &g, &h));
        let g = gpu.transform(&f64s, |x| weighted(x))?.to_vec()?;
        let h: Vec<f64> = f64s.iter().map(|&x| weighted(x)).collect();
        lines.push(compare("float table in a const item", &f64s, &g, &h));

        let g = gpu.transform(&u32s, |x| widen(x) ^ widen(x as u8))?.to_vec()?;
        let h: Vec<i64> = u32s.iter().map(|&x| widen(x) ^ widen(x as u8)).collect();
        lines.push(compare("widen::<u32>, widen::<u8> (Into)", &u32s, &g, &h));
    }

    let weights = [3, 0x9e37_79b9, 7, u32::MAX];
    let g = gpu.transform(&u32s, move |x| table_of(x, weights))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| table_of(x, weights)).collect();
    lines.push(compare("captured array [u32; 4], indexed at run time", &u32s, &g, &h));
    let bounds = (-1_000_000_007_i64, 1 << 40);
    let g = gpu.transform(&i64s, move |x| {
        let b = bounds;
        x.clamp(b.0.min(b.1), b.0.max(b.1))
    })?.to_vec()?;
    let h: Vec<i64> = i64s.iter().map(|&x| x.clamp(bounds.0.min(bounds.1), bounds.0.max(bounds.1))).collect();
    lines.push(compare("captured tuple (i64, i64)", &i64s, &g, &h));
    for a in [Affine { scale: 0.75, on: true, shift: -2.5 }, Affine { scale: 3.0, on: false, shift: 1.0 }] {
        let g = gpu.transform(&f64s, move |x| a.apply(x))?.to_vec()?;
        let h: Vec<f64> = f64s.iter().map(|&x| a.apply(x)).collect();
        lines.push(compare("captured struct, reordered, with a bool", &f64s, &g, &h));
    }
    let w = Window { lo: 17, hi: 1 << 50, mid: 40_000 };
    let g = gpu.transform(&u64s, move |x| window_of(x, w))?.to_vec()?;
    let h: Vec<u64> = u64s.iter().map(|&x| window_of(x, w)).collect();
    lines.push(compare("captured #[repr(C)] struct", &u64s, &g, &h));
    let scene = Scene { view: w, gains: [0.5, -1.25, 3.0], tag: (-7, '𝄞') };
    let g = gpu.transform(&f32s, move |x| scene_of(x, scene))?.to_vec()?;
    let h: Vec<f32> = f32s.iter().map(|&x| scene_of(x, scene)).collect();
    lines.push(compare("captured nested struct, array and tuple", &f32s, &g, &h));
    let shift = 13u8;
    let mix = move |v: u32| v.rotate_left(shift as u32) ^ (k as u32);
    let g = gpu.transform(&u32s, move |x| {
        let f = mix;
        f(x)
    })?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| mix(x)).collect();
    lines.push(compare("captured closure", &u32s, &g, &h));
    let g = gpu.reduce(&u32s, 0, move |a, b| a.max(b).min(mix(7)))?;
    let h = u32s.iter().fold(0, |a, &b| a.max(b).min(mix(7)));
    lines.push(compare_one("reduce capped by a captured closure", g, h));
    // A closure inside the callback capturing several fields of one value
    // (rustc's MIR text prints one of them; the frontend recovers the rest).
    let t = (3u8, k as u64 | 0x9e37, 7u16);
    let fields = move |x: u64| {
        let t = t;
        let by_ref = (1u32..4u32).fold(t.1, |acc, i| acc.wrapping_mul(t.0 as u64 | 1).wrapping_add(t.1 ^ i as u64));
        let more = (0u32..3u32).fold(x, |acc, i| acc.wrapping_add(t.0 as u64).wrapping_add(t.1 >> i).wrapping_add(t.2 as u64 ^ x));
        let by_value = (0u32..3u32).fold(x, move |acc, i| acc.wrapping_add(t.0 as u64).wrapping_add(t.1 >> i).wrapping_add(t.2 as u64 ^ x));
        by_ref ^ more ^ by_value.rotate_left(7)
    };
    let g = gpu.transform(&u64s, fields)?.to_vec()?;
    let h: Vec<u64> = u64s.iter().map(|&x| fields(x)).collect();
    lines.push(compare("closure capturing fields of one value", &u64s, &g, &h));

    let u8s = ints(n, &[0, 1, 2, 5, 8, 9, 255], 7, |r| r as u8);
    let g = gpu.transform(&u32s, |x| iter_fold(x))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| iter_fold(x)).collect();
    lines.push(compare("(0..4).fold", &u32s, &g, &h));
    let g = gpu.transform(&u32s, move |x| iter_map_sum(x, k as u32))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| iter_map_sum(x, k as u32)).collect();
    lines.push(compare("(0..n).map(..).fold", &u32s, &g, &h));
    let g = gpu.transform(&u64s, |x| iter_sums(x))?.to_vec()?;
    let h: Vec<u64> = u64s.iter().map(|&x| iter_sums(x)).collect();
    lines.push(compare("sum, product over .. and ..=", &u64s, &g, &h));
    let g = gpu.transform(&i32s, |x| iter_filtered(x))?.to_vec()?;
    let h: Vec<i32> = i32s.iter().map(|&x| iter_filtered(x)).collect();
    lines.push(compare("filter, map, sum, count", &i32s, &g, &h));
    let g = gpu.transform(&u32s, |x| iter_searches(x))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| iter_searches(x)).collect();
    lines.push(compare("any, all, position, rev().find", &u32s, &g, &h));
    let g = gpu.transform(&i16s, |x| iter_extremes(x))?.to_vec()?;
    let h: Vec<i16> = i16s.iter().map(|&x| iter_extremes(x)).collect();
    lines.push(compare("clone, max, min of a range", &i16s, &g, &h));
    let g = gpu.transform(&u32s, |x| iter_stepped(x))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| iter_stepped(x)).collect();
    lines.push(compare("step_by: fold and for", &u32s, &g, &h));
    let g = gpu.transform(&u64s, |x| iter_stepped_wide(x))?.to_vec()?;
    let h: Vec<u64> = u64s.iter().map(|&x| iter_stepped_wide(x)).collect();
    lines.push(compare("step_by over u64, i32, u8 (a step past the end)", &u64s, &g, &h));
    let g = gpu.transform(&u8s, |x| iter_loops(x))?.to_vec()?;
    let h: Vec<u32> = u8s.iter().map(|&x| iter_loops(x)).collect();
    lines.push(compare("for over ..=, .rev(), (..=).rev()", &u8s, &g, &h));
    let g = gpu.transform(&u32s, |x| iter_zipped(x))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| iter_zipped(x)).collect();
    lines.push(compare("zip, enumerate", &u32s, &g, &h));
    let g = gpu.transform(&u32s, |x| option_methods(x))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| option_methods(x)).collect();
    lines.push(compare("Option/Result methods taking closures", &u32s, &g, &h));
    let g = gpu.transform(&u32s, |x| table_searches(x))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| table_searches(x)).collect();
    lines.push(compare("const table: any, all, position, copied().find, filter().count", &u32s, &g, &h));
    let kk = [3, 0x9e37, 7];
    let g = gpu.transform(&u32s, move |x| table_folds(x, kk))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| table_folds(x, kk)).collect();
    lines.push(compare("array iter: fold, rev, sum, product, take, max, min, into_iter", &u32s, &g, &h));
    let g = gpu.transform(&u32s, move |x| table_loops(x, kk))?.to_vec()?;
    let h: Vec<u32> = u32s.iter().map(|&x| table_loops(x, kk)).collect();
    lines.push(compare("for over &k, k.iter(), an array by value; &[u32]", &u32s, &g, &h));
    let g = gpu.transform(&f32s, |x| table_weights(x))?.to_vec()?;
    let h: Vec<f32> = f32s.iter().map(|&x| table_weights(x)).collect();
    lines.push(compare("f32 table: enumerate, zip, map, sum, fold(f32::max)", &f32s, &g, &h));
    let g = gpu.reduce(&u64s, 0, move |a, b| a.max(b).max((0..(k as u64) % 5).sum::<u64>()))?;
    let h = u64s.iter().fold(0, |a, &b| a.max(b).max((0..(k as u64) % 5).sum::<u64>()));
    lines.push(compare_one("reduce with a sum over a range", g, h));
    Ok(lines)
}

fn main() -> ExitCode {
    let usage = "usage: callbacks [--count N] [--no-overflowing]";
    let mut n = 1_000_000;
    let mut all = true;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--count" => match args.next().map(|v| v.parse()) {
                Some(Ok(v)) => n = v,
                _ => {
                    eprintln!("callbacks: --count takes a number\n{usage}");
                    return ExitCode::from(2);
                }
            },
            "--no-overflowing" => all = false,
            _ => {
                eprintln!("callbacks: unknown argument `{a}`\n{usage}");
                return ExitCode::from(2);
            }
        }
    }
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("callbacks: {e}");
            return ExitCode::FAILURE;
        }
    };
    let lines = match run(&gpu, n, all) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("callbacks: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut wrong = 0;
    for l in &lines {
        println!("{:<56} {:>9} results, {} differ {}", l.name, l.results, l.wrong, l.first);
        wrong += usize::from(l.wrong > 0);
    }
    if lines.is_empty() {
        eprintln!("callbacks: nothing was checked");
        return ExitCode::FAILURE;
    }
    if wrong > 0 {
        eprintln!("callbacks: {wrong} of {} checks differ", lines.len());
        return ExitCode::FAILURE;
    }
    println!("callbacks: {} checks, every result the same on the GPU and the host", lines.len());
    ExitCode::SUCCESS
}
