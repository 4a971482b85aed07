//! nvJitLink: linking PTX, LTOIR, cubins, fatbins, host objects and static
//! libraries into one cubin (or, with `-lto -ptx`, PTX).
//!
//! Bound through the versioned entry points (`__nvJitLinkCreate_13_0`, …)
//! that nvJitLink.h's inline wrappers call, so a library of another major
//! version is refused at load time instead of misbehaving.

use std::ffi::{c_char, c_uint, c_void, CString};
use std::ptr;
use std::sync::OnceLock;

use serde::Serialize;

use crate::nvidia::{self, LibraryError, LoadedLibrary, NvidiaLibrary, Version};
use crate::nvrtc::text_until_nul;

type NvJitLinkResult = c_uint;
type Handle = *mut c_void;

/// The kind of an nvJitLink input (`nvJitLinkInputType` in nvJitLink.h,
/// CUDA 13.0: CUBIN=1, PTX=2, LTOIR=3, FATBIN=4, OBJECT=5, LIBRARY=6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum InputType {
    Cubin = 1,
    Ptx = 2,
    Ltoir = 3,
    Fatbin = 4,
    Object = 5,
    Library = 6,
}

impl InputType {
    /// The C enumerator's name.
    pub fn c_name(self) -> &'static str {
        match self {
            InputType::Cubin => "NVJITLINK_INPUT_CUBIN",
            InputType::Ptx => "NVJITLINK_INPUT_PTX",
            InputType::Ltoir => "NVJITLINK_INPUT_LTOIR",
            InputType::Fatbin => "NVJITLINK_INPUT_FATBIN",
            InputType::Object => "NVJITLINK_INPUT_OBJECT",
            InputType::Library => "NVJITLINK_INPUT_LIBRARY",
        }
    }
}

/// `nvJitLinkResult` names, indexed by value (nvJitLink.h, CUDA 13.0).
const RESULT_NAMES: [&str; 19] = [
    "NVJITLINK_SUCCESS",
    "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
    "NVJITLINK_ERROR_MISSING_ARCH",
    "NVJITLINK_ERROR_INVALID_INPUT",
    "NVJITLINK_ERROR_PTX_COMPILE",
    "NVJITLINK_ERROR_NVVM_COMPILE",
    "NVJITLINK_ERROR_INTERNAL",
    "NVJITLINK_ERROR_THREADPOOL",
    "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
    "NVJITLINK_ERROR_FINALIZE",
    "NVJITLINK_ERROR_NULL_INPUT",
    "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
    "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
    "NVJITLINK_ERROR_ARCH_MISMATCH",
    "NVJITLINK_ERROR_OUTDATED_LIBRARY",
    "NVJITLINK_ERROR_MISSING_FATBIN",
    "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
    "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
    "NVJITLINK_ERROR_LTO_NOT_ENABLED",
];

fn result_name(code: NvJitLinkResult) -> String {
    RESULT_NAMES
        .get(code as usize)
        .map(|s| s.to_string())
        .unwrap_or_else(|| format!("nvJitLink error {code}"))
}

struct Api {
    lib: LoadedLibrary,
    version: unsafe extern "C" fn(*mut c_uint, *mut c_uint) -> NvJitLinkResult,
    create: unsafe extern "C" fn(*mut Handle, u32, *const *const c_char) -> NvJitLinkResult,
    destroy: unsafe extern "C" fn(*mut Handle) -> NvJitLinkResult,
    add_data: unsafe extern "C" fn(
        Handle,
        c_uint,
        *const c_void,
        usize,
        *const c_char,
    ) -> NvJitLinkResult,
    complete: unsafe extern "C" fn(Handle) -> NvJitLinkResult,
    cubin_size: unsafe extern "C" fn(Handle, *mut usize) -> NvJitLinkResult,
    cubin: unsafe extern "C" fn(Handle, *mut c_void) -> NvJitLinkResult,
    ptx_size: unsafe extern "C" fn(Handle, *mut usize) -> NvJitLinkResult,
    ptx: unsafe extern "C" fn(Handle, *mut c_char) -> NvJitLinkResult,
    error_log_size: unsafe extern "C" fn(Handle, *mut usize) -> NvJitLinkResult,
    error_log: unsafe extern "C" fn(Handle, *mut c_char) -> NvJitLinkResult,
    info_log_size: unsafe extern "C" fn(Handle, *mut usize) -> NvJitLinkResult,
    info_log: unsafe extern "C" fn(Handle, *mut c_char) -> NvJitLinkResult,
}

fn api() -> Result<&'static Api, LibraryError> {
    static API: OnceLock<Result<Api, LibraryError>> = OnceLock::new();
    API.get_or_init(|| {
        let lib = nvidia::open(NvidiaLibrary::NvJitLink)?;
        // SAFETY: each signature below is copied from nvJitLink.h (CUDA 13.0).
        unsafe {
            Ok(Api {
                version: lib.function("nvJitLinkVersion")?,
                create: lib.function("__nvJitLinkCreate_13_0")?,
                destroy: lib.function("__nvJitLinkDestroy_13_0")?,
                add_data: lib.function("__nvJitLinkAddData_13_0")?,
                complete: lib.function("__nvJitLinkComplete_13_0")?,
                cubin_size: lib.function("__nvJitLinkGetLinkedCubinSize_13_0")?,
                cubin: lib.function("__nvJitLinkGetLinkedCubin_13_0")?,
                ptx_size: lib.function("__nvJitLinkGetLinkedPtxSize_13_0")?,
                ptx: lib.function("__nvJitLinkGetLinkedPtx_13_0")?,
                error_log_size: lib.function("__nvJitLinkGetErrorLogSize_13_0")?,
                error_log: lib.function("__nvJitLinkGetErrorLog_13_0")?,
                info_log_size: lib.function("__nvJitLinkGetInfoLogSize_13_0")?,
                info_log: lib.function("__nvJitLinkGetInfoLog_13_0")?,
                lib,
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// nvJitLink's version.
pub fn version() -> Result<Version, NvJitLinkError> {
    let api = api()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: valid out-pointers.
    let code = unsafe { (api.version)(&mut major, &mut minor) };
    if code != 0 {
        return Err(NvJitLinkError::Call {
            call: "nvJitLinkVersion",
            code: result_name(code),
            subject: String::new(),
            error_log: String::new(),
        });
    }
    Ok(Version { major, minor })
}

/// Where nvJitLink was loaded from.
pub fn library_path() -> Result<String, NvJitLinkError> {
    Ok(api()?.lib.origin.clone())
}

/// A failed nvJitLink call, with nvJitLink's error log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NvJitLinkError {
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error("nvJitLink {call} failed: {code}{}{}",
        if subject.is_empty() { String::new() } else { format!(" ({subject})") },
        if error_log.is_empty() { String::new() } else { format!("\n{error_log}") })]
    Call {
        call: &'static str,
        code: String,
        /// The input or options involved.
        subject: String,
        error_log: String,
    },
    #[error("`{what}` contains a NUL byte, which nvJitLink cannot take")]
    InteriorNul { what: String },
}

impl NvJitLinkError {
    /// nvJitLink's error log, if the failure came with one.
    pub fn error_log(&self) -> &str {
        match self {
            NvJitLinkError::Call { error_log, .. } => error_log,
            _ => "",
        }
    }
}

/// One nvJitLink link: create with options, add inputs, complete, read
/// the result.
pub struct Linker {
    api: &'static Api,
    handle: Handle,
    options: Vec<String>,
    /// The inputs' names as given to nvJitLinkAddData. nvJitLink keeps the
    /// pointer and reads the name again in `nvJitLinkComplete` (for its
    /// logs), so each must live as long as the handle: freeing it when `add`
    /// returned was a use-after-free (valgrind: "Invalid read … block
    /// free'd … in Linker::add"; the log named inputs `m\u{fffd}U`).
    names: Vec<CString>,
    /// The warnings of a link's error log (`warning: Function too large,
    /// generated debug information may not be accurate.` under `-g`), which
    /// do not fail it: [`Linker::info_log`] ends with them.
    warnings: String,
}

// SAFETY: an nvJitLink handle is independent of other handles and is only
// used through `&mut self` or `&self` reads of its finished state.
unsafe impl Send for Linker {}

impl Drop for Linker {
    fn drop(&mut self) {
        // SAFETY: created by nvJitLinkCreate, destroyed once.
        unsafe {
            (self.api.destroy)(&mut self.handle);
        }
    }
}

impl Linker {
    /// Creates a linker with `options` (must include `-arch=sm_NN`).
    pub fn new(options: &[String]) -> Result<Self, NvJitLinkError> {
        let api = api()?;
        let c_opts = options
            .iter()
            .map(|o| {
                CString::new(o.as_str())
                    .map_err(|_| NvJitLinkError::InteriorNul { what: o.clone() })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let ptrs: Vec<*const c_char> = c_opts.iter().map(|o| o.as_ptr()).collect();
        let mut handle: Handle = ptr::null_mut();
        // SAFETY: valid out-pointer; `ptrs` points into `c_opts`, alive here.
        let code = unsafe { (api.create)(&mut handle, ptrs.len() as u32, ptrs.as_ptr()) };
        if code != 0 {
            // nvJitLink may hand back a handle that holds the error log; the
            // temporary linker destroys it when dropped.
            let error_log = if handle.is_null() {
                String::new()
            } else {
                Linker {
                    api,
                    handle,
                    options: Vec::new(),
                    names: Vec::new(),
                    warnings: String::new(),
                }
                .error_log()
            };
            return Err(NvJitLinkError::Call {
                call: "nvJitLinkCreate",
                code: result_name(code),
                subject: format!("options: {}", options.join(" ")),
                error_log,
            });
        }
        Ok(Linker {
            api,
            handle,
            options: options.to_vec(),
            names: Vec::new(),
            warnings: String::new(),
        })
    }

    /// The options this linker was created with.
    pub fn options(&self) -> &[String] {
        &self.options
    }

    /// Adds one input of `kind`; `name` appears in nvJitLink's logs.
    pub fn add(&mut self, kind: InputType, bytes: &[u8], name: &str) -> Result<(), NvJitLinkError> {
        let c_name = CString::new(name).map_err(|_| NvJitLinkError::InteriorNul {
            what: name.to_string(),
        })?;
        // nvJitLink reads PTX up to a NUL byte whatever size it is given
        // (measured: without one it reads past the buffer), so PTX that
        // lacks one gets one appended.
        let terminated;
        let bytes = if kind == InputType::Ptx && bytes.last() != Some(&0) {
            terminated = [bytes, &[0]].concat();
            &terminated[..]
        } else {
            bytes
        };
        // Moving a CString does not move its heap buffer, so the pointer
        // stays valid while `self.names` holds it.
        let name_ptr = c_name.as_ptr();
        self.names.push(c_name);
        // SAFETY: `bytes` is valid for its length; nvJitLink copies it.
        // `name_ptr` lives as long as the handle (see `names`).
        let code = unsafe {
            (self.api.add_data)(
                self.handle,
                kind as c_uint,
                bytes.as_ptr().cast(),
                bytes.len(),
                name_ptr,
            )
        };
        if code != 0 {
            return Err(NvJitLinkError::Call {
                call: "nvJitLinkAddData",
                code: result_name(code),
                subject: format!("input `{name}` as {}", kind.c_name()),
                error_log: self.error_log(),
            });
        }
        Ok(())
    }

    /// Links everything added so far. An error log fails the link even when
    /// nvJitLink reports success: it returns NVJITLINK_SUCCESS and a cubin
    /// after logging `Multiple definition` errors (measured with 13.0 on
    /// `b.ptx` given twice). A log of warnings only does not.
    pub fn complete(&mut self) -> Result<(), NvJitLinkError> {
        // SAFETY: valid handle.
        let code = unsafe { (self.api.complete)(self.handle) };
        let error_log = self.error_log();
        let only_warnings = error_log
            .lines()
            .filter(|l| !l.trim().is_empty())
            .all(|l| l.trim_start().starts_with("warning"));
        if code == 0 && only_warnings {
            self.warnings = error_log;
            return Ok(());
        }
        if code != 0 || !error_log.trim().is_empty() {
            return Err(NvJitLinkError::Call {
                call: "nvJitLinkComplete",
                code: if code != 0 {
                    result_name(code)
                } else {
                    "NVJITLINK_SUCCESS with errors in its log".to_string()
                },
                subject: format!("options: {}", self.options.join(" ")),
                error_log,
            });
        }
        Ok(())
    }

    /// The linked cubin (after [`Linker::complete`]).
    pub fn cubin(&self) -> Result<Vec<u8>, NvJitLinkError> {
        self.read(
            ("nvJitLinkGetLinkedCubinSize", self.api.cubin_size),
            "nvJitLinkGetLinkedCubin",
            |h, p| unsafe { (self.api.cubin)(h, p.cast()) },
        )
    }

    /// The linked PTX (after [`Linker::complete`] with `-lto -ptx`), without
    /// the trailing NUL.
    pub fn ptx(&self) -> Result<Vec<u8>, NvJitLinkError> {
        let mut ptx = self.read(
            ("nvJitLinkGetLinkedPtxSize", self.api.ptx_size),
            "nvJitLinkGetLinkedPtx",
            |h, p| unsafe { (self.api.ptx)(h, p) },
        )?;
        while ptx.last() == Some(&0) {
            ptx.pop();
        }
        Ok(ptx)
    }

    fn read(
        &self,
        size_call: (
            &'static str,
            unsafe extern "C" fn(Handle, *mut usize) -> NvJitLinkResult,
        ),
        data_call: &'static str,
        fetch: impl Fn(Handle, *mut c_char) -> NvJitLinkResult,
    ) -> Result<Vec<u8>, NvJitLinkError> {
        let mut size = 0usize;
        // SAFETY: valid handle and out-pointer.
        let code = unsafe { (size_call.1)(self.handle, &mut size) };
        if code != 0 {
            return Err(NvJitLinkError::Call {
                call: size_call.0,
                code: result_name(code),
                subject: String::new(),
                error_log: self.error_log(),
            });
        }
        let mut buf = vec![0u8; size];
        // `fetch` writes exactly `size` bytes, as nvJitLink reported.
        let code = fetch(self.handle, buf.as_mut_ptr().cast());
        if code != 0 {
            return Err(NvJitLinkError::Call {
                call: data_call,
                code: result_name(code),
                subject: String::new(),
                error_log: self.error_log(),
            });
        }
        Ok(buf)
    }

    /// nvJitLink's error log (empty when none).
    pub fn error_log(&self) -> String {
        self.log(self.api.error_log_size, self.api.error_log)
    }

    /// nvJitLink's info log (empty when none).
    pub fn info_log(&self) -> String {
        let mut log = self.log(self.api.info_log_size, self.api.info_log);
        log.push_str(&self.warnings);
        log
    }

    fn log(
        &self,
        size_fn: unsafe extern "C" fn(Handle, *mut usize) -> NvJitLinkResult,
        log_fn: unsafe extern "C" fn(Handle, *mut c_char) -> NvJitLinkResult,
    ) -> String {
        let mut size = 0usize;
        // SAFETY: valid handle and out-pointer.
        if unsafe { size_fn(self.handle, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds the `size` bytes nvJitLink asked for.
        if unsafe { log_fn(self.handle, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        text_until_nul(&buf)
    }
}
