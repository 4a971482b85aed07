//! libNVVM: compiling NVVM IR (text or bitcode) to PTX or, with `-gen-lto`,
//! to LTOIR.
//!
//! libNVVM 13.x accepts LLVM 7.0.1-style IR (typed pointers) for targets
//! before Blackwell (`compute_90`) and LLVM 20-era IR for `compute_100`+.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;
use std::sync::OnceLock;

use crate::arch::Arch;
use crate::nvidia::{self, LibraryError, LoadedLibrary, NvidiaLibrary, NvvmIrVersion, Version};
use crate::nvrtc::text_until_nul;

type NvvmResult = c_int;
type Program = *mut c_void;

struct Api {
    lib: LoadedLibrary,
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> NvvmResult,
    ir_version: unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int, *mut c_int) -> NvvmResult,
    get_error_string: unsafe extern "C" fn(NvvmResult) -> *const c_char,
    create_program: unsafe extern "C" fn(*mut Program) -> NvvmResult,
    destroy_program: unsafe extern "C" fn(*mut Program) -> NvvmResult,
    add_module: unsafe extern "C" fn(Program, *const c_char, usize, *const c_char) -> NvvmResult,
    lazy_add_module:
        unsafe extern "C" fn(Program, *const c_char, usize, *const c_char) -> NvvmResult,
    compile_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvvmResult,
    verify_program: unsafe extern "C" fn(Program, c_int, *const *const c_char) -> NvvmResult,
    get_result_size: unsafe extern "C" fn(Program, *mut usize) -> NvvmResult,
    get_result: unsafe extern "C" fn(Program, *mut c_char) -> NvvmResult,
    get_log_size: unsafe extern "C" fn(Program, *mut usize) -> NvvmResult,
    get_log: unsafe extern "C" fn(Program, *mut c_char) -> NvvmResult,
}

fn api() -> Result<&'static Api, LibraryError> {
    static API: OnceLock<Result<Api, LibraryError>> = OnceLock::new();
    API.get_or_init(|| {
        let lib = nvidia::open(NvidiaLibrary::Nvvm)?;
        // SAFETY: each signature below is copied from nvvm.h (CUDA 13.0).
        unsafe {
            Ok(Api {
                version: lib.function("nvvmVersion")?,
                ir_version: lib.function("nvvmIRVersion")?,
                get_error_string: lib.function("nvvmGetErrorString")?,
                create_program: lib.function("nvvmCreateProgram")?,
                destroy_program: lib.function("nvvmDestroyProgram")?,
                add_module: lib.function("nvvmAddModuleToProgram")?,
                lazy_add_module: lib.function("nvvmLazyAddModuleToProgram")?,
                compile_program: lib.function("nvvmCompileProgram")?,
                verify_program: lib.function("nvvmVerifyProgram")?,
                get_result_size: lib.function("nvvmGetCompiledResultSize")?,
                get_result: lib.function("nvvmGetCompiledResult")?,
                get_log_size: lib.function("nvvmGetProgramLogSize")?,
                get_log: lib.function("nvvmGetProgramLog")?,
                lib,
            })
        }
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// A failed libNVVM call. `log` is libNVVM's program log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NvvmError {
    #[error(transparent)]
    Library(#[from] LibraryError),
    #[error("libNVVM {call} failed: {code}{}{}",
        if subject.is_empty() { String::new() } else { format!(" ({subject})") },
        if log.is_empty() { String::new() } else { format!("\n{log}") })]
    Call {
        call: &'static str,
        code: String,
        /// The module name or the options involved.
        subject: String,
        log: String,
    },
    #[error("`{what}` contains a NUL byte, which libNVVM cannot take")]
    InteriorNul { what: String },
    /// A callback calls a libdevice function and libdevice cannot be read.
    #[error("{message}")]
    Libdevice { message: String },
}

fn error_name(api: &Api, code: NvvmResult) -> String {
    // SAFETY: returns a static string or NULL.
    let text = unsafe { (api.get_error_string)(code) };
    if text.is_null() {
        return format!("NVVM error {code}");
    }
    // SAFETY: non-null, NUL-terminated static string.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .into_owned()
}

/// libNVVM's version.
pub fn version() -> Result<Version, NvvmError> {
    let api = api()?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: valid out-pointers.
    let code = unsafe { (api.version)(&mut major, &mut minor) };
    if code != 0 {
        return Err(NvvmError::Call {
            call: "nvvmVersion",
            code: error_name(api, code),
            subject: String::new(),
            log: String::new(),
        });
    }
    Ok(Version {
        major: major.max(0) as u32,
        minor: minor.max(0) as u32,
    })
}

/// The NVVM IR and debug metadata versions libNVVM expects.
pub fn ir_version() -> Result<NvvmIrVersion, NvvmError> {
    let api = api()?;
    let (mut a, mut b, mut c, mut d) = (0, 0, 0, 0);
    // SAFETY: valid out-pointers.
    let code = unsafe { (api.ir_version)(&mut a, &mut b, &mut c, &mut d) };
    if code != 0 {
        return Err(NvvmError::Call {
            call: "nvvmIRVersion",
            code: error_name(api, code),
            subject: String::new(),
            log: String::new(),
        });
    }
    let v = |major: c_int, minor: c_int| Version {
        major: major.max(0) as u32,
        minor: minor.max(0) as u32,
    };
    Ok(NvvmIrVersion {
        ir: v(a, b),
        debug: v(c, d),
    })
}

/// Where libNVVM was loaded from.
pub fn library_path() -> Result<String, NvvmError> {
    Ok(api()?.lib.origin.clone())
}

/// What libNVVM produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NvvmOutput {
    /// PTX text (without trailing NUL) or LTOIR bytes (with `-gen-lto`).
    pub bytes: Vec<u8>,
    /// The program log (warnings); may be empty.
    pub log: String,
}

/// One libNVVM program: add modules, then verify and/or compile.
pub struct NvvmProgram {
    api: &'static Api,
    program: Program,
    modules: Vec<String>,
    /// The text modules, by name: a log line naming one of their lines
    /// (`callbacks.ll (13, 29): parse expected type`) is shown with it.
    texts: Vec<(String, String)>,
}

// SAFETY: a libNVVM program is only touched through `&mut self` or `&self`
// calls that libNVVM documents as safe on distinct programs from distinct
// threads; one program is never used from two threads at once without `&mut`.
unsafe impl Send for NvvmProgram {}

impl Drop for NvvmProgram {
    fn drop(&mut self) {
        // SAFETY: created by nvvmCreateProgram, destroyed once.
        unsafe {
            (self.api.destroy_program)(&mut self.program);
        }
    }
}

fn c_options(options: &[String]) -> Result<Vec<CString>, NvvmError> {
    options
        .iter()
        .map(|o| CString::new(o.as_str()).map_err(|_| NvvmError::InteriorNul { what: o.clone() }))
        .collect()
}

impl NvvmProgram {
    pub fn new() -> Result<Self, NvvmError> {
        let api = api()?;
        let mut program: Program = ptr::null_mut();
        // SAFETY: valid out-pointer.
        let code = unsafe { (api.create_program)(&mut program) };
        if code != 0 {
            return Err(NvvmError::Call {
                call: "nvvmCreateProgram",
                code: error_name(api, code),
                subject: String::new(),
                log: String::new(),
            });
        }
        Ok(NvvmProgram {
            api,
            program,
            modules: Vec::new(),
            texts: Vec::new(),
        })
    }

    /// Adds a module of NVVM IR, as LLVM bitcode or text.
    pub fn add_module(&mut self, name: &str, ir: &[u8]) -> Result<(), NvvmError> {
        self.add(name, ir, false)
    }

    /// Adds a module whose functions are only kept when referenced (a library
    /// such as libdevice).
    pub fn add_lazy_module(&mut self, name: &str, ir: &[u8]) -> Result<(), NvvmError> {
        self.add(name, ir, true)
    }

    fn add(&mut self, name: &str, ir: &[u8], lazy: bool) -> Result<(), NvvmError> {
        let c_name = CString::new(name).map_err(|_| NvvmError::InteriorNul {
            what: name.to_string(),
        })?;
        let (call, f) = if lazy {
            ("nvvmLazyAddModuleToProgram", self.api.lazy_add_module)
        } else {
            ("nvvmAddModuleToProgram", self.api.add_module)
        };
        // SAFETY: `ir` is valid for `ir.len()` bytes; libNVVM copies it.
        let code = unsafe { f(self.program, ir.as_ptr().cast(), ir.len(), c_name.as_ptr()) };
        if code != 0 {
            return Err(NvvmError::Call {
                call,
                code: error_name(self.api, code),
                subject: name.to_string(),
                log: self.log(),
            });
        }
        self.modules.push(name.to_string());
        if !ir.starts_with(b"BC") {
            if let Ok(text) = std::str::from_utf8(ir) {
                self.texts.push((name.to_string(), text.to_string()));
            }
        }
        Ok(())
    }

    /// `log` with the module line each of its `NAME (LINE, COL): …` lines
    /// names, quoted under it.
    fn with_lines(&self, log: String) -> String {
        let mut out = String::with_capacity(log.len());
        for l in log.lines() {
            out.push_str(l);
            out.push('\n');
            let quoted = self.texts.iter().find_map(|(name, text)| {
                let rest = l.strip_prefix(name.as_str())?.strip_prefix(" (")?;
                let (line, rest) = rest.split_once(", ")?;
                let (col, _) = rest.split_once("):")?;
                let line: usize = line.parse().ok()?;
                let col: usize = col.parse().ok()?;
                let source = text.lines().nth(line.checked_sub(1)?)?;
                let shown: String = source.chars().take(300).collect();
                Some(format!(
                    "  | {shown}\n  | {}^\n",
                    " ".repeat(col.saturating_sub(1).min(300))
                ))
            });
            if let Some(q) = quoted {
                out.push_str(&q);
            }
        }
        out
    }

    /// The program log so far.
    pub fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointer.
        if unsafe { (self.api.get_log_size)(self.program, &mut size) } != 0 || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        // SAFETY: `buf` holds the `size` bytes libNVVM asked for.
        if unsafe { (self.api.get_log)(self.program, buf.as_mut_ptr().cast()) } != 0 {
            return String::new();
        }
        text_until_nul(&buf)
    }

    /// Checks the modules against NVVM IR's rules; returns the log.
    pub fn verify(&self, options: &[String]) -> Result<String, NvvmError> {
        let c_opts = c_options(options)?;
        let ptrs: Vec<*const c_char> = c_opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: valid program; `ptrs` points into `c_opts`, alive here.
        let code =
            unsafe { (self.api.verify_program)(self.program, ptrs.len() as c_int, ptrs.as_ptr()) };
        let log = self.log();
        if code != 0 {
            let log = self.with_lines(log);
            return Err(NvvmError::Call {
                call: "nvvmVerifyProgram",
                code: error_name(self.api, code),
                subject: self.subject(options),
                log,
            });
        }
        Ok(log)
    }

    /// Compiles with `options` (e.g. `-arch=compute_90 -gen-lto`).
    pub fn compile(&mut self, options: &[String]) -> Result<NvvmOutput, NvvmError> {
        let c_opts = c_options(options)?;
        let ptrs: Vec<*const c_char> = c_opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: valid program; `ptrs` points into `c_opts`, alive here.
        let code =
            unsafe { (self.api.compile_program)(self.program, ptrs.len() as c_int, ptrs.as_ptr()) };
        let log = self.with_lines(self.log());
        let fail = |call, code| NvvmError::Call {
            call,
            code: error_name(self.api, code),
            subject: self.subject(options),
            log: log.clone(),
        };
        if code != 0 {
            return Err(fail("nvvmCompileProgram", code));
        }
        let mut size = 0usize;
        // SAFETY: valid program and out-pointer.
        let code = unsafe { (self.api.get_result_size)(self.program, &mut size) };
        if code != 0 {
            return Err(fail("nvvmGetCompiledResultSize", code));
        }
        let mut bytes = vec![0u8; size];
        // SAFETY: `bytes` holds the `size` bytes libNVVM asked for.
        let code = unsafe { (self.api.get_result)(self.program, bytes.as_mut_ptr().cast()) };
        if code != 0 {
            return Err(fail("nvvmGetCompiledResult", code));
        }
        // PTX results end in a NUL that is not part of the text.
        if !options.iter().any(|o| o == "-gen-lto") {
            while bytes.last() == Some(&0) {
                bytes.pop();
            }
        }
        Ok(NvvmOutput { bytes, log })
    }

    fn subject(&self, options: &[String]) -> String {
        format!(
            "modules: {}; options: {}",
            self.modules.join(", "),
            options.join(" ")
        )
    }
}

/// Options for LTOIR generation for `arch` (`-arch=compute_NN -gen-lto`),
/// with `-g` when `debug` (libNVVM requires `-opt=0` with `-g`).
pub fn ltoir_options(arch: Arch, debug: bool) -> Vec<String> {
    // `-fma=0`: libNVVM contracts `fmul` + `fadd` into `fma` by default,
    // which rounds once instead of twice; Rust does not contract, so the
    // GPU result would differ from the host's in the last bit (the PTX
    // route's LLVM NVPTX backend does not contract without `contract`
    // flags either).
    let mut options = vec![
        format!("-arch={}", arch.compute()),
        "-gen-lto".to_string(),
        "-fma=0".to_string(),
    ];
    if debug {
        options.push("-g".to_string());
        options.push("-opt=0".to_string());
    }
    options
}

/// Whether NVVM IR text calls a libdevice function (`@__nv_expf`).
pub fn calls_libdevice(ir: &[u8]) -> bool {
    ir.windows(6).any(|w| w == b"@__nv_")
}

/// Adds libdevice lazily (only the functions the module calls are kept)
/// when the module calls one of its functions.
fn add_libdevice_if_called(program: &mut NvvmProgram, ir: &[u8]) -> Result<(), NvvmError> {
    if !calls_libdevice(ir) {
        return Ok(());
    }
    let path = crate::nvidia::libdevice_path().map_err(|m| NvvmError::Libdevice { message: m })?;
    let bitcode = std::fs::read(&path).map_err(|e| NvvmError::Libdevice {
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    program.add_lazy_module("libdevice.10.bc", &bitcode)
}

/// PTX from NVVM IR (`-arch=compute_NN -fma=0`): what libNVVM itself makes
/// of a module, to check what it kept (its debug information, say).
pub fn compile_to_ptx(name: &str, ir: &[u8], arch: Arch) -> Result<NvvmOutput, NvvmError> {
    let mut program = NvvmProgram::new()?;
    program.add_module(name, ir)?;
    add_libdevice_if_called(&mut program, ir)?;
    let options = vec![format!("-arch={}", arch.compute()), "-fma=0".to_string()];
    program.verify(&options)?;
    program.compile(&options)
}

/// Compiles one NVVM IR module to LTOIR for `arch`.
pub fn compile_to_ltoir(
    name: &str,
    ir: &[u8],
    arch: Arch,
    debug: bool,
) -> Result<NvvmOutput, NvvmError> {
    let mut program = NvvmProgram::new()?;
    program.add_module(name, ir)?;
    add_libdevice_if_called(&mut program, ir)?;
    let options = ltoir_options(arch, debug);
    program.verify(&options)?;
    program.compile(&options)
}
