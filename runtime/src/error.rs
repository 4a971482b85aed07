//! Everything that can go wrong on the GPU side, each with what to do.

use manifest::{BundleError, Fingerprint};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Manifest { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Bundle { path: PathBuf, source: BundleError },
    #[error("{path}: not a usable cubin: {message}")]
    Cubin { path: PathBuf, message: String },
    #[error("{path}: kernel `{kernel}` of the manifest is not a function in the cubin (it has: {available})")]
    KernelMissing {
        path: PathBuf,
        kernel: String,
        available: String,
    },
    #[error(
        "no CUDA driver: libcuda.so could not be loaded (searched {searched}); \
         this needs a machine with an NVIDIA GPU and its driver"
    )]
    NoDriver { searched: String },
    #[error("the device is out of memory: {asked} bytes asked, {free} of {total} free")]
    OutOfMemory {
        asked: usize,
        free: usize,
        total: usize,
    },
    #[error("no CUDA device: {0}")]
    NoDevice(String),
    #[error("CUDA driver call {call} failed: {name} ({code}): {message}")]
    Driver {
        call: &'static str,
        code: u32,
        name: String,
        message: String,
    },
    #[error("the CUDA driver library lacks a function this runtime needs ({0}); a CUDA 13 driver is required")]
    DriverSymbol(String),
    #[error("kernel `{kernel}`: the cubin disagrees with the manifest: {what}")]
    AbiMismatch { kernel: String, what: String },
    #[error("kernel `{kernel}`: {what}")]
    Launch { kernel: String, what: String },
    #[error("bundle belongs to build {bundle}, but the manifest is of build {manifest}")]
    Fingerprint {
        bundle: Fingerprint,
        manifest: Fingerprint,
    },
    #[error("{0}")]
    Usage(String),
}
