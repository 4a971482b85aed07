//! Rust callbacks that call CUDA C++ device helpers from `mix.cu`:
//!
//!     driver build examples/ffi/ffi.rs --link examples/ffi/mix.cu -o out/ffi
//!
//! On the LTO route (the default) NVRTC compiles `mix.cu` to LTOIR and
//! nvJitLink inlines the helpers into the reduce kernel: its SASS has no
//! `CALL`. On the PTX route (`--no-lto`) they stay calls. Each operation
//! is associative and commutative, so the GPU's tree gives the host fold's
//! result.

mod device {
    unsafe extern "C" {
        pub safe fn rmir_mix32(x: u32, key: u32) -> u32;
        pub safe fn rmir_add_mod(a: u32, b: u32, m: u32) -> u32;
        #[link_name = "rmir_weight"]
        pub fn weight(x: f64, w: f32) -> f64;
    }
}

/// The element whose keyed hash is largest (ties: the larger element).
pub fn keyed_max(data: &[i32], key: u32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let (ha, hb) = (device::rmir_mix32(a as u32, key), device::rmir_mix32(b as u32, key));
        if ha > hb || (ha == hb && a >= b) {
            a
        } else {
            b
        }
    })
}

/// The sum of the elements' residues modulo a run-time `m`.
pub fn sum_mod(data: &[i32], m: u32) -> i32 {
    native::reduce(data, 0, move |a, b| device::rmir_add_mod(a as u32, b as u32, m) as i32)
}

/// The element of largest weight `x * w + 0.5` (ties: the larger element).
pub fn heaviest(data: &[i32], w: f32) -> i32 {
    native::reduce(data, 0, move |a, b| {
        let (wa, wb) = unsafe { (device::weight(a as f64, w), device::weight(b as f64, w)) };
        if wa > wb || (wa == wb && a >= b) {
            a
        } else {
            b
        }
    })
}
