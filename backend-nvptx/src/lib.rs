//! The NVIDIA side of the compiler: the compile libraries loaded at run time
//! (NVRTC, libNVVM, nvJitLink), reading device-code containers, and linking
//! with options derived from what the inputs hold.
//!
//! Invariant: nothing in these modules links CUDA or LLVM; the NVIDIA
//! libraries are opened with `libloading` on first use, so everything here
//! runs (and is tested) on a machine with no GPU.
//!
//! - [`nvidia`]: finding and loading the libraries.
//! - [`nvrtc`]: CUDA C++ → PTX / LTOIR / cubin.
//! - [`nvvm`]: NVVM IR → PTX / LTOIR.
//! - [`nvjitlink`]: the raw linker.
//! - [`container`]: what a file is (PTX, LTOIR, cubin, fatbin, host object,
//!   static library, CUDA source) and what it holds.
//! - [`isolate`]: one nvJitLink job, in this process or in a child.
//! - [`link`]: [`LinkPlan`] → flags with reasons → cubin.
//! - [`symbols`]: what each input defines and references, read before the
//!   link (PTX text, cubin symbol tables, LTOIR through a probe link).
//! - [`versions`]: the toolchain's versions, asked of each library.

pub mod arch;
pub mod codegen;
pub mod container;
pub mod isolate;
pub mod link;
pub mod nvidia;
pub mod nvjitlink;
pub mod nvrtc;
pub mod nvvm;
pub mod symbols;
pub mod versions;

pub use arch::{Arch, ArchError};
pub use container::{describe, ContainerError, Description, Item, ItemKind};
pub use isolate::Isolation;
pub use link::{LinkError, LinkExplanation, LinkFailure, LinkInput, LinkOutput, LinkPlan, Linked};
pub use nvidia::LibraryError;
pub use versions::{toolchain_versions, ToolchainVersions};

/// Any error of this crate's NVIDIA layer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error(transparent)]
    Nvrtc(#[from] nvrtc::NvrtcError),
    #[error(transparent)]
    Nvvm(#[from] nvvm::NvvmError),
    #[error(transparent)]
    NvJitLink(#[from] nvjitlink::NvJitLinkError),
    #[error(transparent)]
    Container(#[from] ContainerError),
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error(transparent)]
    Arch(#[from] ArchError),
}
