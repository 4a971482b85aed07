//! NVRTC: compiling CUDA C++ source to PTX, LTOIR or cubin at run time.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;
use std::ptr;
use std::sync::OnceLock;

use serde::Serialize;

use crate::arch::Arch;
use crate::nvidia::{self, LibraryError, LoadedLibrary, NvidiaLibrary, Version};

type NvrtcResult = c_int;
type Program = *mut c_void;

struct Api {
    lib: LoadedLibrary,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvrtcResult,
    get_error_string: unsafe extern "C" fn(NvrtcResult) -> *const c_char,
    create_program: unsafe extern "C" fn(
        *mut Program,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> NvrtcResult,
    destroy_program: unsafe extern "C" fn(*mut Program) -> NvrtcResult,
    compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvrtcResult,
    get_ptx_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    get_ptx: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    get_cubin_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    get_cubin: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    get_ltoir_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    get_ltoir: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
    get_log_size: unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
    get_log: unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
}

fn api() -> Result<&'static Api, LibraryError> {
    static API: OnceLock<Result<Api, LibraryError>> = OnceLock::new();
    API.get_or_init(|| {
        let lib = nvidia::open(NvidiaLibrary::Nvrtc)?;
        // SAFETY: each signature below is copied from nvrtc.h (CUDA 13.0).
        unsafe {
            Ok(Api {
                version: lib.function("nvrtcVersion")?,
                get_error_string: lib.function("nvrtcGetErrorString")?,
                create_program: lib.function("nvrtcCreateProgram")?,
                destroy_program: lib.function("nvrtcDestroyProgram")?,
                compile_program: lib.function("nvrtcCompileProgram")?,
                get_ptx_size: lib.function("nvrtcGetPTXSize")?,
                get_ptx: lib.function("nvrtcGetPTX")?,
                get_cubin_size: lib.function("nvrtcGetCUBINSize")?,
                get_cubin: lib.function("nvrtcGetCUBIN")?,
                get_ltoir_size: lib.function("nvrtcGetLTOIRSize")?,
                get_ltoir: lib.function("nvrtcGetLTOIR")?,
                get_log_size: lib.function("nvrtcGetProgramLogSize")?,
                get_log: lib.function("nvrtcGetProgramLog")?,
                lib,
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// NVRTC's version.
pub fn version() -> Result<Version, NvrtcError> {
    let api = api()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    let code = unsafe { (api.version)(&mut major, &mut minor) };
    check(api, "nvrtcVersion", code, String::new())?;
    Ok(Version {
        major: major.max(0) as u32,
        minor: minor.max(0) as u32,
    })
}

/// Where NVRTC was loaded from.
pub fn library_path() -> Result<String, NvrtcError> {
    Ok(api()?.lib.origin.clone())
}

/// What NVRTC should produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum NvrtcTarget {
    /// PTX text for `compute_NN`.
    Ptx,
    /// LTOIR (`-dlto`) for `compute_NN`, for nvJitLink's `-lto`.
    Ltoir,
    /// A cubin for `sm_NN`.
    Cubin,
}

/// How to compile one CUDA C++ source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvrtcOptions {
    pub arch: Arch,
    pub target: NvrtcTarget,
    /// `-rdc=true`: relocatable device code, needed for anything that is
    /// linked with other inputs.
    pub relocatable: bool,
    /// `-G`: device debug information.
    pub debug: bool,
    /// `-lineinfo`: line tables without full debug information.
    pub lineinfo: bool,
    /// `-I` folders, searched in order.
    pub include_dirs: Vec<PathBuf>,
    /// Any further NVRTC options, passed as given after ours.
    pub extra: Vec<String>,
}

impl NvrtcOptions {
    /// Relocatable code for `arch` with no debug information, the CCCL headers
    /// on the include path when they are found.
    pub fn new(arch: Arch, target: NvrtcTarget) -> Self {
        NvrtcOptions {
            arch,
            target,
            relocatable: true,
            debug: false,
            lineinfo: false,
            include_dirs: nvidia::cccl_include_dir().into_iter().collect(),
            extra: Vec::new(),
        }
    }

    /// The NVRTC command-line options these settings stand for.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        match self.target {
            NvrtcTarget::Ptx => args.push(format!("-arch={}", self.arch.compute())),
            NvrtcTarget::Ltoir => {
                args.push(format!("-arch={}", self.arch.compute()));
                args.push("-dlto".to_string());
            }
            NvrtcTarget::Cubin => args.push(format!("-arch={}", self.arch.sm())),
        }
        if self.relocatable {
            args.push("-rdc=true".to_string());
        }
        if self.debug {
            args.push("-G".to_string());
        }
        if self.lineinfo {
            args.push("-lineinfo".to_string());
        }
        for dir in &self.include_dirs {
            args.push(format!("-I{}", dir.display()));
        }
        args.extend(self.extra.iter().cloned());
        args
    }
}

/// NVRTC's output for one source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvrtcOutput {
    pub target: NvrtcTarget,
    /// PTX text (without the trailing NUL), LTOIR or cubin bytes.
    pub bytes: Vec<u8>,
    /// The compile log (warnings); empty when NVRTC had nothing to say.
    pub log: String,
    /// The options the source was compiled with.
    pub options: Vec<String>,
}

/// A failed NVRTC call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NvrtcError {
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error("NVRTC could not compile `{name}` ({code})\noptions: {}\n{log}", options.join(" "))]
    Compile {
        name: String,
        code: String,
        options: Vec<String>,
        log: String,
    },
    #[error("NVRTC {call} failed: {code}{}", if log.is_empty() { String::new() } else { format!("\n{log}") })]
    Call {
        call: &'static str,
        code: String,
        log: String,
    },
    #[error("`{what}` contains a NUL byte, which NVRTC cannot take")]
    InteriorNul { what: String },
}

fn error_name(api: &Api, code: NvrtcResult) -> String {
    // SAFETY: nvrtcGetErrorString returns a static string or NULL.
    let text = unsafe { (api.get_error_string)(code) };
    if text.is_null() {
        return format!("NVRTC error {code}");
    }
    // SAFETY: non-null, NUL-terminated static string.
    unsafe { std::ffi::CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

fn check(api: &Api, call: &'static str, code: NvrtcResult, log: String) -> Result<(), NvrtcError> {
    if code == 0 {
        Ok(())
    } else {
        Err(NvrtcError::Call {
            call,
            code: error_name(api, code),
            log,
        })
    }
}

fn c_string(text: &str, what: &str) -> Result<CString, NvrtcError> {
    CString::new(text).map_err(|_| NvrtcError::InteriorNul {
        what: what.to_string(),
    })
}

/// Owns an `nvrtcProgram` and destroys it on every path.
struct ProgramGuard<'a> {
    api: &'a Api,
    program: Program,
}

impl Drop for ProgramGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the program was created by nvrtcCreateProgram and is
        // destroyed exactly once.
        unsafe {
            (self.api.destroy_program)(&mut self.program);
        }
    }
}

impl ProgramGuard<'_> {
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointer.
        if unsafe { (self.api.get_log_size)(self.program, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds `size` bytes, as NVRTC asked for.
        if unsafe { (self.api.get_log)(self.program, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        text_until_nul(&buf)
    }

    fn output(
        &self,
        size_call: (
            &'static str,
            unsafe extern "C" fn(Program, *mut usize) -> NvrtcResult,
        ),
        data_call: (
            &'static str,
            unsafe extern "C" fn(Program, *mut c_char) -> NvrtcResult,
        ),
    ) -> Result<Vec<u8>, NvrtcError> {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointer.
        let code = unsafe { (size_call.1)(self.program, &mut size) };
        check(self.api, size_call.0, code, self.log())?;
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds `size` bytes, as NVRTC asked for.
        let code = unsafe { (data_call.1)(self.program, buf.as_mut_ptr().cast()) };
        check(self.api, data_call.0, code, self.log())?;
        Ok(buf)
    }
}

pub(crate) fn text_until_nul(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim_end().to_string()
}

/// Compiles the CUDA C++ `source` (named `name` in messages) with `options`.
/// Errors carry NVRTC's log.
pub fn compile(
    name: &str,
    source: &str,
    options: &NvrtcOptions,
) -> Result<NvrtcOutput, NvrtcError> {
    let api = api()?;
    let args = options.to_args();
    let c_source = c_string(source, name)?;
    let c_name = c_string(name, "source name")?;
    let c_args = args
        .iter()
        .map(|a| c_string(a, a))
        .collect::<Result<Vec<_>, _>>()?;
    let arg_ptrs: Vec<*const c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
    let arg_count = c_int::try_from(arg_ptrs.len()).map_err(|_| NvrtcError::Call {
        call: "nvrtcCompileProgram",
        code: "too many options".to_string(),
        log: String::new(),
    })?;

    let mut program: Program = ptr::null_mut();
    // SAFETY: valid out-pointer, NUL-terminated strings, no headers.
    let code = unsafe {
        (api.create_program)(
            &mut program,
            c_source.as_ptr(),
            c_name.as_ptr(),
            0,
            ptr::null(),
            ptr::null(),
        )
    };
    check(api, "nvrtcCreateProgram", code, String::new())?;
    let guard = ProgramGuard { api, program };

    // SAFETY: valid program; `arg_ptrs` points into `c_args`, alive here.
    let code = unsafe { (api.compile_program)(guard.program, arg_count, arg_ptrs.as_ptr()) };
    let log = guard.log();
    if code != 0 {
        return Err(NvrtcError::Compile {
            name: name.to_string(),
            code: error_name(api, code),
            options: args,
            log,
        });
    }
    let bytes = match options.target {
        NvrtcTarget::Ptx => {
            let mut ptx = guard.output(
                ("nvrtcGetPTXSize", api.get_ptx_size),
                ("nvrtcGetPTX", api.get_ptx),
            )?;
            // The size NVRTC reports counts the terminating NUL.
            while ptx.last() == Some(&0) {
                ptx.pop();
            }
            ptx
        }
        NvrtcTarget::Ltoir => guard.output(
            ("nvrtcGetLTOIRSize", api.get_ltoir_size),
            ("nvrtcGetLTOIR", api.get_ltoir),
        )?,
        NvrtcTarget::Cubin => guard.output(
            ("nvrtcGetCUBINSize", api.get_cubin_size),
            ("nvrtcGetCUBIN", api.get_cubin),
        )?,
    };
    Ok(NvrtcOutput {
        target: options.target,
        bytes,
        log,
        options: args,
    })
}
