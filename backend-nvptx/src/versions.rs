//! The versions and locations of the three loaded NVIDIA libraries, asked of
//! each library's binding.

use serde::Serialize;

use crate::nvidia::{NvvmIrVersion, Version};

/// Versions and locations of the loaded toolchain, for the artifact manifest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ToolchainVersions {
    pub nvrtc: Version,
    pub nvrtc_path: String,
    pub nvjitlink: Version,
    pub nvjitlink_path: String,
    pub nvvm: Version,
    pub nvvm_ir: NvvmIrVersion,
    pub nvvm_path: String,
}

/// Loads all three libraries and asks each for its version.
pub fn toolchain_versions() -> Result<ToolchainVersions, crate::Error> {
    Ok(ToolchainVersions {
        nvrtc: crate::nvrtc::version()?,
        nvrtc_path: crate::nvrtc::library_path()?,
        nvjitlink: crate::nvjitlink::version()?,
        nvjitlink_path: crate::nvjitlink::library_path()?,
        nvvm: crate::nvvm::version()?,
        nvvm_ir: crate::nvvm::ir_version()?,
        nvvm_path: crate::nvvm::library_path()?,
    })
}
