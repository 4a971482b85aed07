//! Many captures of mixed widths.

use native::gpu::{Error, Gpu};

/// Captures that rustc reorders: `u8, u16, u32, f64, i8, i64, u16` sit
/// at offsets 24, 20, 16, 0, 25, 8, 22 of the closure.
#[allow(clippy::too_many_arguments)]
pub fn scrambled(
    gpu: &Gpu,
    data: &[i32],
    a: u8,
    b: u16,
    c: u32,
    d: f64,
    e: i8,
    f: i64,
    g: u16,
) -> Result<i32, Error> {
    gpu.reduce(data, 0, move |x, y| {
        let bias = ((a as i32) ^ ((b as i32) << 3) ^ (c as i32) ^ (d as i32))
            .wrapping_add(e as i32)
            .wrapping_sub((f >> 7) as i32)
            ^ (g as i32);
        x.wrapping_add(y).wrapping_add(bias)
    })
}

#[allow(clippy::too_many_arguments)]
pub fn scrambled_cpu(
    data: &[i32],
    a: u8,
    b: u16,
    c: u32,
    d: f64,
    e: i8,
    f: i64,
    g: u16,
) -> i32 {
    native::reduce(data, 0, move |x, y| {
        let bias = ((a as i32) ^ ((b as i32) << 3) ^ (c as i32) ^ (d as i32))
            .wrapping_add(e as i32)
            .wrapping_sub((f >> 7) as i32)
            ^ (g as i32);
        x.wrapping_add(y).wrapping_add(bias)
    })
}

/// A second `mix` in the crate (MIR names the two `keyed::mix` and
/// `wide::mix`): the high half of a wide capture added per element.
pub fn mix(gpu: &Gpu, data: &[i32], k: i64) -> Result<i32, Error> {
    gpu.reduce(data, 0, move |a, b| {
        a.wrapping_add(b).wrapping_add((k >> 32) as i32)
    })
}

pub fn mix_cpu(data: &[i32], k: i64) -> i32 {
    native::reduce(data, 0, move |a, b| {
        a.wrapping_add(b).wrapping_add((k >> 32) as i32)
    })
}

/// A reading of a sensor: a struct of a module file, whose paths MIR
/// prints two ways (`keyed::wide::Reading` in a chain's type, `Reading`
/// in a closure's header).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reading {
    pub sensor: u32,
    pub level: f32,
}

native::gpu::device_element!(Reading { sensor: u32, level: f32 });

/// Where the loudest reading is (the last of equal ones) and the reading:
/// an `enumerate` chain over structs.
pub fn loudest(gpu: &Gpu, readings: &[Reading]) -> Result<Option<(usize, Reading)>, Error> {
    gpu.par_iter(readings)
        .enumerate()
        .max_by(|a: &(usize, Reading), b: &(usize, Reading)| a.1.level.total_cmp(&b.1.level))
}
