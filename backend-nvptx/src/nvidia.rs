//! Finding and loading NVIDIA's compile libraries (NVRTC, nvJitLink,
//! libNVVM) at run time.
//!
//! Nothing here links against CUDA: the libraries are opened with
//! `libloading`, once per process, from the first place that has them:
//!
//! 1. the folder named by the environment variable `NVIDIA_LIB_DIR`;
//! 2. the project's wheel folder `<repo>/.nvidia/nvidia/cu13/lib`, where
//!    `<repo>` is this crate's workspace (known at compile time) or any
//!    folder above the running executable;
//! 3. the system toolkit (`/usr/local/cuda/lib64`, `/usr/local/cuda/nvvm/lib64`);
//! 4. the dynamic loader's default search path.
//!
//! A library found nowhere is an error that names the PyPI package to
//! install and the set-up command.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// Environment variable naming a folder that holds the NVIDIA libraries.
pub const LIB_DIR_ENV: &str = "NVIDIA_LIB_DIR";

/// The folder [`LIB_DIR_ENV`] names, as the process's toolchain read it
/// at the edge (`frontend::toolchain`).
fn lib_dir() -> Option<&'static Path> {
    frontend::toolchain::get().nvidia_lib_dir.as_deref()
}

/// The wheel folder, relative to the repository root.
const WHEEL_ROOT: &str = ".nvidia/nvidia/cu13";

/// One of the NVIDIA compile libraries this crate binds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum NvidiaLibrary {
    Nvrtc,
    NvJitLink,
    Nvvm,
}

impl NvidiaLibrary {
    /// The shared object's file name (CUDA 13 sonames).
    pub fn file_name(self) -> &'static str {
        match self {
            NvidiaLibrary::Nvrtc => "libnvrtc.so.13",
            NvidiaLibrary::NvJitLink => "libnvJitLink.so.13",
            NvidiaLibrary::Nvvm => "libnvvm.so.4",
        }
    }

    /// The PyPI wheel that ships it, pinned to the GPU machine's toolkit.
    pub fn pypi_package(self) -> &'static str {
        match self {
            NvidiaLibrary::Nvrtc => "nvidia-cuda-nvrtc==13.0.88",
            NvidiaLibrary::NvJitLink => "nvidia-nvjitlink==13.0.88",
            NvidiaLibrary::Nvvm => "nvidia-nvvm==13.0.88",
        }
    }

    /// Human name used in messages.
    pub fn display_name(self) -> &'static str {
        match self {
            NvidiaLibrary::Nvrtc => "NVRTC",
            NvidiaLibrary::NvJitLink => "nvJitLink",
            NvidiaLibrary::Nvvm => "libNVVM",
        }
    }

    /// Libraries this one opens by bare name at run time; they are loaded
    /// first from the same folder, so the loader finds them already open.
    fn companions(self) -> &'static [&'static str] {
        match self {
            NvidiaLibrary::Nvrtc => &["libnvrtc-builtins.so.13.0"],
            NvidiaLibrary::NvJitLink | NvidiaLibrary::Nvvm => &[],
        }
    }

    fn system_dirs(self) -> &'static [&'static str] {
        match self {
            NvidiaLibrary::Nvrtc | NvidiaLibrary::NvJitLink => {
                &["/usr/local/cuda/lib64", "/usr/local/cuda-13.0/lib64"]
            }
            // A system toolkit keeps libNVVM beside cicc, not in lib64.
            NvidiaLibrary::Nvvm => &[
                "/usr/local/cuda/nvvm/lib64",
                "/usr/local/cuda-13.0/nvvm/lib64",
            ],
        }
    }
}

impl fmt::Display for NvidiaLibrary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.display_name())
    }
}

/// Why a library (or one of its functions) could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LibraryError {
    /// No candidate location held a loadable copy.
    NotFound {
        library: NvidiaLibrary,
        /// Every place tried, with what went wrong there.
        attempts: Vec<(String, String)>,
    },
    /// The library loaded but lacks a function we bind.
    MissingSymbol {
        library: NvidiaLibrary,
        path: String,
        symbol: String,
        reason: String,
    },
}

impl fmt::Display for LibraryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LibraryError::NotFound { library, attempts } => {
                writeln!(
                    f,
                    "cannot load {} ({}); tried:",
                    library.file_name(),
                    library.display_name()
                )?;
                for (place, why) in attempts {
                    writeln!(f, "  {place}: {why}")?;
                }
                write!(
                    f,
                    "help: install the PyPI package `{}` (in this repository run `bash scripts/setup.sh`), \
                     or set {LIB_DIR_ENV} to a folder that holds {}",
                    library.pypi_package(),
                    library.file_name()
                )
            }
            LibraryError::MissingSymbol {
                library,
                path,
                symbol,
                reason,
            } => write!(
                f,
                "{} at {path} lacks the function `{symbol}` ({reason}); \
                 help: install the pinned `{}`",
                library.display_name(),
                library.pypi_package()
            ),
        }
    }
}

impl std::error::Error for LibraryError {}

/// An opened library, kept open for the life of the process by the binding
/// that owns it.
pub(crate) struct LoadedLibrary {
    pub(crate) library: NvidiaLibrary,
    /// Where it was loaded from (a path, or a bare name resolved by the loader).
    pub(crate) origin: String,
    handle: libloading::Library,
    /// Kept open for as long as `handle` (see [`NvidiaLibrary::companions`]).
    _companions: Vec<libloading::Library>,
}

impl LoadedLibrary {
    /// Resolves `name` to a function pointer of type `T`.
    ///
    /// # Safety
    /// `T` must be the exact C signature of the symbol `name`.
    pub(crate) unsafe fn function<T: Copy>(&self, name: &str) -> Result<T, LibraryError> {
        // SAFETY: the caller promises `T` matches the symbol; the pointer stays
        // valid because `self.handle` lives as long as the owning binding
        // (a process-wide `OnceLock`).
        unsafe {
            self.handle
                .get::<T>(name.as_bytes())
                .map(|symbol| *symbol)
                .map_err(|e| LibraryError::MissingSymbol {
                    library: self.library,
                    path: self.origin.clone(),
                    symbol: name.to_string(),
                    reason: e.to_string(),
                })
        }
    }
}

/// Repository roots that may hold the wheel folder: the workspace this crate
/// was built in, then every folder above the running executable.
pub fn repository_roots() -> Vec<PathBuf> {
    let mut roots = Vec::new();
    // CARGO_MANIFEST_DIR is backend-nvptx/; its parent is the workspace.
    if let Some(parent) = Path::new(env!("CARGO_MANIFEST_DIR")).parent() {
        roots.push(parent.to_path_buf());
    }
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1) {
            if dir.join(WHEEL_ROOT).is_dir() && !roots.iter().any(|r| r == dir) {
                roots.push(dir.to_path_buf());
            }
        }
    }
    roots
}

/// The first `<repo>/.nvidia/nvidia/cu13` folder that exists.
pub fn wheel_root() -> Option<PathBuf> {
    repository_roots()
        .into_iter()
        .map(|root| root.join(WHEEL_ROOT))
        .find(|dir| dir.is_dir())
}

/// The include folder holding CUB/Thrust/libcu++ (`nvidia-cuda-cccl`), to pass
/// to NVRTC as `-I`. Looks in the wheel folder, then the system toolkit.
pub fn cccl_include_dir() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = lib_dir() {
        // NVIDIA_LIB_DIR points at .../lib; headers sit beside it.
        if let Some(parent) = dir.parent() {
            candidates.push(parent.join("include/cccl"));
        }
    }
    for root in repository_roots() {
        candidates.push(root.join(WHEEL_ROOT).join("include/cccl"));
    }
    candidates.push(PathBuf::from("/usr/local/cuda/include/cccl"));
    candidates.push(PathBuf::from("/usr/local/cuda/include"));
    candidates
        .into_iter()
        .find(|dir| dir.join("cub/cub.cuh").is_file())
}

/// libdevice (`libdevice.10.bc`, NVIDIA's math library as LLVM bitcode,
/// shipped in the libNVVM wheel under `nvvm/libdevice/`): beside
/// `$NVIDIA_LIB_DIR`, in the wheel folder, or in the system toolkit. Every
/// place looked is listed when it is not found.
pub fn libdevice_path() -> Result<PathBuf, String> {
    const FILE: &str = "nvvm/libdevice/libdevice.10.bc";
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = lib_dir() {
        if let Some(parent) = dir.parent() {
            candidates.push(parent.join(FILE));
        }
    }
    for root in repository_roots() {
        candidates.push(root.join(WHEEL_ROOT).join(FILE));
    }
    candidates.push(PathBuf::from("/usr/local/cuda").join(FILE));
    match candidates.iter().find(|p| p.is_file()) {
        Some(p) => Ok(p.clone()),
        None => Err(format!(
            "libdevice (libdevice.10.bc, NVIDIA's math library) is not installed; looked in {}",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Every place `library` is looked for, in order. The last entry is the bare
/// file name, which the dynamic loader resolves on its own search path.
pub fn candidate_paths(library: NvidiaLibrary) -> Vec<PathBuf> {
    let file = library.file_name();
    let mut candidates = Vec::new();
    if let Some(dir) = lib_dir() {
        candidates.push(dir.join(file));
    }
    for root in repository_roots() {
        candidates.push(root.join(WHEEL_ROOT).join("lib").join(file));
    }
    for dir in library.system_dirs() {
        candidates.push(Path::new(dir).join(file));
    }
    candidates.push(PathBuf::from(file));
    candidates
}

/// Opens `library` from the first candidate location that loads.
pub(crate) fn open(library: NvidiaLibrary) -> Result<LoadedLibrary, LibraryError> {
    let mut attempts = Vec::new();
    for candidate in candidate_paths(library) {
        let bare = candidate.components().count() == 1;
        let place = if bare {
            format!("{} (default loader path)", candidate.display())
        } else {
            candidate.display().to_string()
        };
        if !bare && !candidate.is_file() {
            attempts.push((place, "not found".to_string()));
            continue;
        }
        let companions = match candidate.parent().filter(|_| !bare) {
            Some(dir) => library
                .companions()
                .iter()
                .map(|name| dir.join(name))
                .filter(|path| path.is_file())
                // SAFETY: as below.
                .filter_map(|path| unsafe { libloading::Library::new(path) }.ok())
                .collect(),
            None => Vec::new(),
        };
        // SAFETY: these are NVIDIA's own libraries; their initialisers only
        // set up internal state.
        match unsafe { libloading::Library::new(&candidate) } {
            Ok(handle) => {
                return Ok(LoadedLibrary {
                    library,
                    origin: candidate.display().to_string(),
                    handle,
                    _companions: companions,
                })
            }
            Err(e) => attempts.push((place, e.to_string())),
        }
    }
    Err(LibraryError::NotFound { library, attempts })
}

/// A `major.minor` version pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The NVVM IR and debug-metadata versions libNVVM accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct NvvmIrVersion {
    pub ir: Version,
    pub debug: Version,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_names_the_wheel_and_the_setup_command() {
        let err = LibraryError::NotFound {
            library: NvidiaLibrary::NvJitLink,
            attempts: vec![(
                "/nowhere/libnvJitLink.so.13".to_string(),
                "not found".to_string(),
            )],
        };
        assert_eq!(
            err.to_string(),
            "cannot load libnvJitLink.so.13 (nvJitLink); tried:\n  /nowhere/libnvJitLink.so.13: not found\n\
             help: install the PyPI package `nvidia-nvjitlink==13.0.88` (in this repository run \
             `bash scripts/setup.sh`), or set NVIDIA_LIB_DIR to a folder that holds libnvJitLink.so.13"
        );
    }

    #[test]
    fn the_search_order_is_env_then_wheel_then_system_then_loader() {
        let paths = candidate_paths(NvidiaLibrary::Nvvm);
        let wheel = paths
            .iter()
            .position(|p| p.ends_with(".nvidia/nvidia/cu13/lib/libnvvm.so.4"))
            .expect("wheel folder");
        let system = paths
            .iter()
            .position(|p| p.starts_with("/usr/local/cuda/nvvm/lib64"))
            .expect("system toolkit");
        assert!(wheel < system);
        assert_eq!(paths.last().unwrap(), Path::new("libnvvm.so.4"));
    }

    #[test]
    fn every_library_loads_from_this_checkout() {
        for library in [
            NvidiaLibrary::Nvrtc,
            NvidiaLibrary::NvJitLink,
            NvidiaLibrary::Nvvm,
        ] {
            let loaded = open(library).unwrap_or_else(|e| panic!("{e}"));
            assert!(
                loaded.origin.ends_with(library.file_name()),
                "{}",
                loaded.origin
            );
        }
    }
}
