//! Every transcendental `f32`/`f64` method of std that callbacks may call,
//! run by `Gpu::transform` (libdevice on the device) and by the host on the
//! same inputs: edge values (zeros, ±1, infinities, NaN, the smallest and
//! largest finite values, subnormals) and `--count` random ones per function
//! and type (uniform bit patterns and uniform values in the function's usual
//! range, half each). For each it prints the largest difference in units in
//! the last place (ulp) and where it was found, and how many results
//! disagree on being NaN. Exits 1 if a result's NaN-ness disagrees, or if
//! a correctly rounded operation (`sqrt`, `mul_add`) differs at all; the ulp
//! table itself is a measurement, not a pass/fail line.
//!
//! `ulp [--count N]` (default 1,000,000).

use native::gpu::{Error, Gpu};
use std::process::ExitCode;

/// A float type's bits as an integer line on which neighbours differ by one.
trait Bits: Copy + PartialEq + std::fmt::Debug {
    fn ordered(self) -> i128;
    fn is_nan(self) -> bool;
}

impl Bits for f32 {
    fn ordered(self) -> i128 {
        let b = self.to_bits();
        if b >> 31 == 1 {
            -((b & 0x7fff_ffff) as i128)
        } else {
            b as i128
        }
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

impl Bits for f64 {
    fn ordered(self) -> i128 {
        let b = self.to_bits();
        if b >> 63 == 1 {
            -((b & 0x7fff_ffff_ffff_ffff) as i128)
        } else {
            b as i128
        }
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

/// xorshift64*: reproducible inputs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn inputs32(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f32> {
    let mut v = vec![
        0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN,
        f32::MIN_POSITIVE, f32::MAX, f32::MIN, 1e-45, -1e-45, f32::EPSILON,
    ];
    let mut r = Rng(seed);
    for i in 0..n {
        v.push(if i % 2 == 0 {
            f32::from_bits(r.next() as u32)
        } else {
            (lo + (hi - lo) * r.unit()) as f32
        });
    }
    v
}

fn inputs64(n: usize, lo: f64, hi: f64, seed: u64) -> Vec<f64> {
    let mut v = vec![
        0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN,
        f64::MIN_POSITIVE, f64::MAX, f64::MIN, 5e-324, -5e-324, f64::EPSILON,
    ];
    let mut r = Rng(seed);
    for i in 0..n {
        v.push(if i % 2 == 0 {
            f64::from_bits(r.next())
        } else {
            lo + (hi - lo) * r.unit()
        });
    }
    v
}

/// One function's comparison.
struct Row {
    name: &'static str,
    ty: &'static str,
    inputs: usize,
    max_ulp: i128,
    worst: String,
    nan_mismatch: usize,
    exact: bool,
}

fn compare<X: std::fmt::Debug, T: Bits>(
    name: &'static str,
    ty: &'static str,
    xs: &[X],
    gpu: &[T],
    host: &[T],
    exact: bool,
) -> Row {
    let mut row = Row { name, ty, inputs: xs.len(), max_ulp: 0, worst: String::new(), nan_mismatch: 0, exact };
    for ((x, g), h) in xs.iter().zip(gpu).zip(host) {
        if g.is_nan() || h.is_nan() {
            if g.is_nan() != h.is_nan() {
                row.nan_mismatch += 1;
                if row.worst.is_empty() {
                    row.worst = format!("{x:?}: gpu {g:?}, host {h:?}");
                }
            }
            continue;
        }
        let d = (g.ordered() - h.ordered()).abs();
        if d > row.max_ulp {
            row.max_ulp = d;
            row.worst = format!("{x:?}: gpu {g:?}, host {h:?}");
        }
    }
    row
}

/// One line per function and type: a macro would give every call the same
/// call site, and the program finds each kernel by its call site.
fn measure(gpu: &Gpu, n: usize) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    let x32 = inputs32(n, 0.0, 1000000.0, 1);
    let g = gpu.transform(&x32, |x: f32| x.sqrt())?.to_vec()?;
    rows.push(compare("sqrt", "f32", &x32, &g, &x32.iter().map(|&x| x.sqrt()).collect::<Vec<f32>>(), true));
    let x64 = inputs64(n, 0.0, 1000000.0, 2);
    let g = gpu.transform(&x64, |x: f64| x.sqrt())?.to_vec()?;
    rows.push(compare("sqrt", "f64", &x64, &g, &x64.iter().map(|&x| x.sqrt()).collect::<Vec<f64>>(), true));
    let x32 = inputs32(n, -1000.0, 1000.0, 3);
    let g = gpu.transform(&x32, |x: f32| x.mul_add(x, 0.25))?.to_vec()?;
    rows.push(compare("mul_add", "f32", &x32, &g, &x32.iter().map(|&x| x.mul_add(x, 0.25)).collect::<Vec<f32>>(), true));
    let x64 = inputs64(n, -1000.0, 1000.0, 4);
    let g = gpu.transform(&x64, |x: f64| x.mul_add(x, 0.25))?.to_vec()?;
    rows.push(compare("mul_add", "f64", &x64, &g, &x64.iter().map(|&x| x.mul_add(x, 0.25)).collect::<Vec<f64>>(), true));
    let x32 = inputs32(n, -80.0, 80.0, 5);
    let g = gpu.transform(&x32, |x: f32| x.exp())?.to_vec()?;
    rows.push(compare("exp", "f32", &x32, &g, &x32.iter().map(|&x| x.exp()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -80.0, 80.0, 6);
    let g = gpu.transform(&x64, |x: f64| x.exp())?.to_vec()?;
    rows.push(compare("exp", "f64", &x64, &g, &x64.iter().map(|&x| x.exp()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -120.0, 120.0, 7);
    let g = gpu.transform(&x32, |x: f32| x.exp2())?.to_vec()?;
    rows.push(compare("exp2", "f32", &x32, &g, &x32.iter().map(|&x| x.exp2()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -120.0, 120.0, 8);
    let g = gpu.transform(&x64, |x: f64| x.exp2())?.to_vec()?;
    rows.push(compare("exp2", "f64", &x64, &g, &x64.iter().map(|&x| x.exp2()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -10.0, 10.0, 9);
    let g = gpu.transform(&x32, |x: f32| x.exp_m1())?.to_vec()?;
    rows.push(compare("exp_m1", "f32", &x32, &g, &x32.iter().map(|&x| x.exp_m1()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -10.0, 10.0, 10);
    let g = gpu.transform(&x64, |x: f64| x.exp_m1())?.to_vec()?;
    rows.push(compare("exp_m1", "f64", &x64, &g, &x64.iter().map(|&x| x.exp_m1()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, 0.0, 1000000.0, 11);
    let g = gpu.transform(&x32, |x: f32| x.ln())?.to_vec()?;
    rows.push(compare("ln", "f32", &x32, &g, &x32.iter().map(|&x| x.ln()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, 0.0, 1000000.0, 12);
    let g = gpu.transform(&x64, |x: f64| x.ln())?.to_vec()?;
    rows.push(compare("ln", "f64", &x64, &g, &x64.iter().map(|&x| x.ln()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -0.99, 100.0, 13);
    let g = gpu.transform(&x32, |x: f32| x.ln_1p())?.to_vec()?;
    rows.push(compare("ln_1p", "f32", &x32, &g, &x32.iter().map(|&x| x.ln_1p()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -0.99, 100.0, 14);
    let g = gpu.transform(&x64, |x: f64| x.ln_1p())?.to_vec()?;
    rows.push(compare("ln_1p", "f64", &x64, &g, &x64.iter().map(|&x| x.ln_1p()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, 0.0, 1000000.0, 15);
    let g = gpu.transform(&x32, |x: f32| x.log2())?.to_vec()?;
    rows.push(compare("log2", "f32", &x32, &g, &x32.iter().map(|&x| x.log2()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, 0.0, 1000000.0, 16);
    let g = gpu.transform(&x64, |x: f64| x.log2())?.to_vec()?;
    rows.push(compare("log2", "f64", &x64, &g, &x64.iter().map(|&x| x.log2()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, 0.0, 1000000.0, 17);
    let g = gpu.transform(&x32, |x: f32| x.log10())?.to_vec()?;
    rows.push(compare("log10", "f32", &x32, &g, &x32.iter().map(|&x| x.log10()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, 0.0, 1000000.0, 18);
    let g = gpu.transform(&x64, |x: f64| x.log10())?.to_vec()?;
    rows.push(compare("log10", "f64", &x64, &g, &x64.iter().map(|&x| x.log10()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, 0.0, 1000000.0, 19);
    let g = gpu.transform(&x32, |x: f32| x.log(3.0))?.to_vec()?;
    rows.push(compare("log(x, 3)", "f32", &x32, &g, &x32.iter().map(|&x| x.log(3.0)).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, 0.0, 1000000.0, 20);
    let g = gpu.transform(&x64, |x: f64| x.log(3.0))?.to_vec()?;
    rows.push(compare("log(x, 3)", "f64", &x64, &g, &x64.iter().map(|&x| x.log(3.0)).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -30.0, 30.0, 21);
    let g = gpu.transform(&x32, |x: f32| x.powi(7))?.to_vec()?;
    rows.push(compare("powi(x, 7)", "f32", &x32, &g, &x32.iter().map(|&x| x.powi(7)).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -30.0, 30.0, 22);
    let g = gpu.transform(&x64, |x: f64| x.powi(7))?.to_vec()?;
    rows.push(compare("powi(x, 7)", "f64", &x64, &g, &x64.iter().map(|&x| x.powi(7)).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -30.0, 30.0, 23);
    let g = gpu.transform(&x32, |x: f32| x.powi(-3))?.to_vec()?;
    rows.push(compare("powi(x, -3)", "f32", &x32, &g, &x32.iter().map(|&x| x.powi(-3)).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -30.0, 30.0, 24);
    let g = gpu.transform(&x64, |x: f64| x.powi(-3))?.to_vec()?;
    rows.push(compare("powi(x, -3)", "f64", &x64, &g, &x64.iter().map(|&x| x.powi(-3)).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -1000000.0, 1000000.0, 25);
    let g = gpu.transform(&x32, |x: f32| x.cbrt())?.to_vec()?;
    rows.push(compare("cbrt", "f32", &x32, &g, &x32.iter().map(|&x| x.cbrt()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -1000000.0, 1000000.0, 26);
    let g = gpu.transform(&x64, |x: f64| x.cbrt())?.to_vec()?;
    rows.push(compare("cbrt", "f64", &x64, &g, &x64.iter().map(|&x| x.cbrt()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -100.0, 100.0, 27);
    let g = gpu.transform(&x32, |x: f32| x.sin())?.to_vec()?;
    rows.push(compare("sin", "f32", &x32, &g, &x32.iter().map(|&x| x.sin()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -100.0, 100.0, 28);
    let g = gpu.transform(&x64, |x: f64| x.sin())?.to_vec()?;
    rows.push(compare("sin", "f64", &x64, &g, &x64.iter().map(|&x| x.sin()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -100.0, 100.0, 29);
    let g = gpu.transform(&x32, |x: f32| x.cos())?.to_vec()?;
    rows.push(compare("cos", "f32", &x32, &g, &x32.iter().map(|&x| x.cos()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -100.0, 100.0, 30);
    let g = gpu.transform(&x64, |x: f64| x.cos())?.to_vec()?;
    rows.push(compare("cos", "f64", &x64, &g, &x64.iter().map(|&x| x.cos()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -100.0, 100.0, 31);
    let g = gpu.transform(&x32, |x: f32| x.tan())?.to_vec()?;
    rows.push(compare("tan", "f32", &x32, &g, &x32.iter().map(|&x| x.tan()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -100.0, 100.0, 32);
    let g = gpu.transform(&x64, |x: f64| x.tan())?.to_vec()?;
    rows.push(compare("tan", "f64", &x64, &g, &x64.iter().map(|&x| x.tan()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -1.0, 1.0, 33);
    let g = gpu.transform(&x32, |x: f32| x.asin())?.to_vec()?;
    rows.push(compare("asin", "f32", &x32, &g, &x32.iter().map(|&x| x.asin()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -1.0, 1.0, 34);
    let g = gpu.transform(&x64, |x: f64| x.asin())?.to_vec()?;
    rows.push(compare("asin", "f64", &x64, &g, &x64.iter().map(|&x| x.asin()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -1.0, 1.0, 35);
    let g = gpu.transform(&x32, |x: f32| x.acos())?.to_vec()?;
    rows.push(compare("acos", "f32", &x32, &g, &x32.iter().map(|&x| x.acos()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -1.0, 1.0, 36);
    let g = gpu.transform(&x64, |x: f64| x.acos())?.to_vec()?;
    rows.push(compare("acos", "f64", &x64, &g, &x64.iter().map(|&x| x.acos()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -100.0, 100.0, 37);
    let g = gpu.transform(&x32, |x: f32| x.atan())?.to_vec()?;
    rows.push(compare("atan", "f32", &x32, &g, &x32.iter().map(|&x| x.atan()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -100.0, 100.0, 38);
    let g = gpu.transform(&x64, |x: f64| x.atan())?.to_vec()?;
    rows.push(compare("atan", "f64", &x64, &g, &x64.iter().map(|&x| x.atan()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -80.0, 80.0, 39);
    let g = gpu.transform(&x32, |x: f32| x.sinh())?.to_vec()?;
    rows.push(compare("sinh", "f32", &x32, &g, &x32.iter().map(|&x| x.sinh()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -80.0, 80.0, 40);
    let g = gpu.transform(&x64, |x: f64| x.sinh())?.to_vec()?;
    rows.push(compare("sinh", "f64", &x64, &g, &x64.iter().map(|&x| x.sinh()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -80.0, 80.0, 41);
    let g = gpu.transform(&x32, |x: f32| x.cosh())?.to_vec()?;
    rows.push(compare("cosh", "f32", &x32, &g, &x32.iter().map(|&x| x.cosh()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -80.0, 80.0, 42);
    let g = gpu.transform(&x64, |x: f64| x.cosh())?.to_vec()?;
    rows.push(compare("cosh", "f64", &x64, &g, &x64.iter().map(|&x| x.cosh()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -20.0, 20.0, 43);
    let g = gpu.transform(&x32, |x: f32| x.tanh())?.to_vec()?;
    rows.push(compare("tanh", "f32", &x32, &g, &x32.iter().map(|&x| x.tanh()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -20.0, 20.0, 44);
    let g = gpu.transform(&x64, |x: f64| x.tanh())?.to_vec()?;
    rows.push(compare("tanh", "f64", &x64, &g, &x64.iter().map(|&x| x.tanh()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -1000000.0, 1000000.0, 45);
    let g = gpu.transform(&x32, |x: f32| x.asinh())?.to_vec()?;
    rows.push(compare("asinh", "f32", &x32, &g, &x32.iter().map(|&x| x.asinh()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -1000000.0, 1000000.0, 46);
    let g = gpu.transform(&x64, |x: f64| x.asinh())?.to_vec()?;
    rows.push(compare("asinh", "f64", &x64, &g, &x64.iter().map(|&x| x.asinh()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, 1.0, 1000000.0, 47);
    let g = gpu.transform(&x32, |x: f32| x.acosh())?.to_vec()?;
    rows.push(compare("acosh", "f32", &x32, &g, &x32.iter().map(|&x| x.acosh()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, 1.0, 1000000.0, 48);
    let g = gpu.transform(&x64, |x: f64| x.acosh())?.to_vec()?;
    rows.push(compare("acosh", "f64", &x64, &g, &x64.iter().map(|&x| x.acosh()).collect::<Vec<f64>>(), false));
    let x32 = inputs32(n, -1.0, 1.0, 49);
    let g = gpu.transform(&x32, |x: f32| x.atanh())?.to_vec()?;
    rows.push(compare("atanh", "f32", &x32, &g, &x32.iter().map(|&x| x.atanh()).collect::<Vec<f32>>(), false));
    let x64 = inputs64(n, -1.0, 1.0, 50);
    let g = gpu.transform(&x64, |x: f64| x.atanh())?.to_vec()?;
    rows.push(compare("atanh", "f64", &x64, &g, &x64.iter().map(|&x| x.atanh()).collect::<Vec<f64>>(), false));
    let (a32, b32) = (inputs32(n, 0.0, 10.0, 100), inputs32(n, 0.0, 10.0, 101));
    let g = gpu.transform2(&a32, &b32, |a: f32, b: f32| a.powf(b))?.to_vec()?;
    let h: Vec<f32> = a32.iter().zip(&b32).map(|(&a, &b)| a.powf(b)).collect();
    rows.push(compare("powf", "f32", &pairs(&a32, &b32), &g, &h, false));
    let (a64, b64) = (inputs64(n, 0.0, 10.0, 102), inputs64(n, 0.0, 10.0, 103));
    let g = gpu.transform2(&a64, &b64, |a: f64, b: f64| a.powf(b))?.to_vec()?;
    let h: Vec<f64> = a64.iter().zip(&b64).map(|(&a, &b)| a.powf(b)).collect();
    rows.push(compare("powf", "f64", &pairs(&a64, &b64), &g, &h, false));
    let (a32, b32) = (inputs32(n, -100.0, 100.0, 104), inputs32(n, -100.0, 100.0, 105));
    let g = gpu.transform2(&a32, &b32, |a: f32, b: f32| a.atan2(b))?.to_vec()?;
    let h: Vec<f32> = a32.iter().zip(&b32).map(|(&a, &b)| a.atan2(b)).collect();
    rows.push(compare("atan2", "f32", &pairs(&a32, &b32), &g, &h, false));
    let (a64, b64) = (inputs64(n, -100.0, 100.0, 106), inputs64(n, -100.0, 100.0, 107));
    let g = gpu.transform2(&a64, &b64, |a: f64, b: f64| a.atan2(b))?.to_vec()?;
    let h: Vec<f64> = a64.iter().zip(&b64).map(|(&a, &b)| a.atan2(b)).collect();
    rows.push(compare("atan2", "f64", &pairs(&a64, &b64), &g, &h, false));
    let (a32, b32) = (inputs32(n, -1000000.0, 1000000.0, 108), inputs32(n, -1000000.0, 1000000.0, 109));
    let g = gpu.transform2(&a32, &b32, |a: f32, b: f32| a.hypot(b))?.to_vec()?;
    let h: Vec<f32> = a32.iter().zip(&b32).map(|(&a, &b)| a.hypot(b)).collect();
    rows.push(compare("hypot", "f32", &pairs(&a32, &b32), &g, &h, false));
    let (a64, b64) = (inputs64(n, -1000000.0, 1000000.0, 110), inputs64(n, -1000000.0, 1000000.0, 111));
    let g = gpu.transform2(&a64, &b64, |a: f64, b: f64| a.hypot(b))?.to_vec()?;
    let h: Vec<f64> = a64.iter().zip(&b64).map(|(&a, &b)| a.hypot(b)).collect();
    rows.push(compare("hypot", "f64", &pairs(&a64, &b64), &g, &h, false));
    Ok(rows)
}

fn pairs<T: Copy>(a: &[T], b: &[T]) -> Vec<(T, T)> {
    a.iter().copied().zip(b.iter().copied()).collect()
}

fn main() -> ExitCode {
    let mut n = 1_000_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().map(|v| v.parse::<usize>())) {
            ("--count", Some(Ok(v))) => n = v,
            _ => {
                eprintln!("usage: ulp [--count N]");
                return ExitCode::from(2);
            }
        }
    }
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("ulp: {e}");
            return ExitCode::FAILURE;
        }
    };
    let rows = match measure(&gpu, n) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("ulp: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("| method | type | inputs | largest ulp | NaN disagreements | where |");
    println!("|---|---|---|---|---|---|");
    let mut bad = Vec::new();
    for r in &rows {
        println!(
            "| `{}` | {} | {} | {} | {} | {} |",
            r.name, r.ty, r.inputs, r.max_ulp, r.nan_mismatch, r.worst
        );
        if r.nan_mismatch > 0 || (r.exact && r.max_ulp > 0) {
            bad.push(format!("{} {}", r.name, r.ty));
        }
    }
    if rows.is_empty() {
        eprintln!("ulp: nothing was measured");
        return ExitCode::FAILURE;
    }
    if !bad.is_empty() {
        eprintln!("ulp: {} disagree beyond the table's terms: {}", bad.len(), bad.join(", "));
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
