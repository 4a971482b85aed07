//! The provider API that user code calls to hand a callback to a native CUDA
//! provider.
//!
//! Each function here is a *registration*: the compiler recognises calls to it
//! in MIR (see `frontend::registry`) and compiles the callback for the GPU.
//! On the host the bodies below run as they are, and are the CPU reference
//! that GPU results are compared against.
//!
//! [`gpu`] is the host API that runs the compiled callbacks on a device
//! (with the `gpu` feature). The frontend's bridge builds this crate as a
//! standalone rlib with plain `rustc` and no features: `lib.rs` and
//! `gpu.rs`, no dependencies.

#![no_std]

pub mod gpu;

/// Folds `data` with `op`, starting from `init`, in order.
///
/// The GPU provider is a tree reduction, so `op` must be associative (and,
/// because blocks combine in a fixed order, results are deterministic but may
/// differ from this sequential fold for non-associative `op`).
///
/// `#[inline(never)]` keeps the call visible in optimised MIR, where the
/// frontend finds registrations.
///
/// Generic over `T` so that rustc accepts callbacks the compiler will reject
/// (an `i64` callback, say) and the rejection is ours, with our diagnostic.
#[inline(never)]
pub fn reduce<T: Copy, F: Fn(T, T) -> T>(data: &[T], init: T, op: F) -> T {
    let mut acc = init;
    for &x in data {
        acc = op(acc, x);
    }
    acc
}

/// Like [`reduce`], but accepts an `FnMut` callback.
///
/// It exists so that user code with mutable callback state compiles on the
/// host; the compiler always rejects such callbacks for the GPU, since many
/// threads would race on the state.
#[inline(never)]
pub fn reduce_mut<T: Copy, F: FnMut(T, T) -> T>(data: &[T], init: T, mut op: F) -> T {
    let mut acc = init;
    for &x in data {
        acc = op(acc, x);
    }
    acc
}
