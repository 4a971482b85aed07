//! The GPU host API: run a registration's compiled callback on a device,
//! with the program's own data and the closure's captured values.
//!
//! ```ignore
//! use native::gpu::{Error, Gpu};
//!
//! let gpu = Gpu::open(0)?;
//! let r: i32 = gpu.reduce(&data, 0, move |a, b| a.wrapping_add(b).wrapping_add(k))?;
//! ```
//!
//! Each method is a registration, like [`crate::reduce`]: the compiler
//! recognises the call in MIR and compiles its callback into a kernel that
//! `driver cargo build` embeds in the program. At run time the call finds
//! that kernel by its source location (`#[track_caller]`), checks the
//! element type and the closure's type, size and alignment against what was
//! compiled, and launches it with the closure's own bytes as the
//! environment: nothing is recompiled when captured values change. Any
//! mismatch is an [`Error`], never another kernel and never the CPU.
//!
//! Built without the `gpu` feature (as the compiler's bridge builds this
//! crate, to type-check and read user code), every call returns an
//! [`ErrorKind::Unavailable`] error.

extern crate std;

use core::fmt;
use core::marker::PhantomData;
use core::mem::{align_of, size_of, size_of_val};
use std::string::String;
use std::vec::Vec;

/// What went wrong, to match on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No CUDA driver, or no such device.
    NoDevice,
    /// No kernel was compiled for this call (a crate not built with
    /// `driver cargo build`, or a stale binary).
    NotCompiled,
    /// A kernel exists for this call site, but a fact of the call differs
    /// from what was compiled (element type, closure type, size, alignment).
    Mismatch,
    /// The builds embedded in the program cannot be read or loaded.
    Artifacts,
    /// The driver failed a call.
    Device,
    /// This build of `native` has no GPU backend (the `gpu` feature is off).
    Unavailable,
}

/// A GPU call that did not run, with what to do about it.
#[derive(Debug, Clone)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// Data a provider reads: a host slice (copied to the device for the call)
/// or a [`DeviceVec`] (read where it is).
pub trait Input<T> {
    #[doc(hidden)]
    fn source(&self) -> Source<'_, T>;
}

#[doc(hidden)]
pub enum Source<'a, T> {
    Host(&'a [T]),
    Device(&'a DeviceVec<T>),
}

impl<T> Input<T> for [T] {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T> Input<T> for Vec<T> {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T, const N: usize> Input<T> for [T; N] {
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T> Input<T> for DeviceVec<T> {
    fn source(&self) -> Source<'_, T> {
        Source::Device(self)
    }
}

/// Elements resident on a device ([`Gpu::upload`]); freed on drop.
pub struct DeviceVec<T> {
    len: usize,
    alloc: backend::Alloc,
    _t: PhantomData<T>,
}

impl<T: Copy> DeviceVec<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies the elements back to the host.
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        let mut out: Vec<T> = Vec::with_capacity(self.len);
        let bytes = self.len * size_of::<T>();
        // SAFETY: the buffer's bytes were uploaded from `len` values of T
        // (Gpu::upload), so they are valid T values; `out` has capacity.
        unsafe {
            let dst = core::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, bytes);
            backend::download(&self.alloc, dst)?;
            out.set_len(self.len);
        }
        Ok(out)
    }
}

/// One CUDA device, opened once per process (later opens share it).
pub struct Gpu {
    device: backend::Device,
}

impl Gpu {
    /// Opens device `ordinal`. A clear [`Error`] without a driver or device.
    pub fn open(ordinal: usize) -> Result<Gpu, Error> {
        Ok(Gpu {
            device: backend::open(ordinal)?,
        })
    }

    /// The device's name, as the driver reports it.
    pub fn name(&self) -> &str {
        backend::name(&self.device)
    }

    /// Copies `data` to the device, for calls that read it there.
    pub fn upload<T: Copy>(&self, data: &[T]) -> Result<DeviceVec<T>, Error> {
        // SAFETY: T is Copy; its bytes are read as they are (elements are
        // scalars, which have no padding).
        let bytes =
            unsafe { core::slice::from_raw_parts(data.as_ptr() as *const u8, size_of_val(data)) };
        Ok(DeviceVec {
            len: data.len(),
            alloc: backend::upload(&self.device, bytes)?,
            _t: PhantomData,
        })
    }

    /// Folds `data` with `op` from `init` on the GPU: the registration
    /// [`crate::reduce`] runs on the CPU. `op` must be associative and
    /// commutative; the combining order is the provider's, fixed for a
    /// given length (deterministic).
    #[track_caller]
    #[inline(never)]
    pub fn reduce<T, D, F>(&self, data: &D, init: T, op: F) -> Result<T, Error>
    where
        T: Copy + 'static,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let call = Call {
            file: site.file(),
            line: site.line(),
            column: site.column(),
            element: core::any::type_name::<T>(),
            element_size: size_of::<T>(),
            closure_type: core::any::type_name::<F>(),
            closure_size: size_of::<F>(),
            closure_align: align_of::<F>(),
        };
        // SAFETY: `init` is one live T, `op` a live F, and the input's
        // elements live for the call; the backend checks T against the
        // compiled element type before reading them as such.
        let out = unsafe {
            let init = core::slice::from_raw_parts(&init as *const T as *const u8, size_of::<T>());
            let closure = &op as *const F as *const u8;
            backend::reduce(&self.device, &call, data.source(), init, closure)?
        };
        if out.len() != size_of::<T>() {
            return Err(Error {
                kind: ErrorKind::Mismatch,
                message: std::format!(
                    "the kernel returned {} bytes for a {}",
                    out.len(),
                    call.element
                ),
            });
        }
        // SAFETY: the backend checked that T is the compiled element type,
        // a scalar of this size; the bytes are one value of it.
        Ok(unsafe { core::ptr::read_unaligned(out.as_ptr() as *const T) })
    }
}

/// The facts of one call that identify its kernel.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
struct Call<'a> {
    file: &'a str,
    line: u32,
    column: u32,
    element: &'a str,
    element_size: usize,
    closure_type: &'a str,
    closure_size: usize,
    closure_align: usize,
}

#[cfg(feature = "gpu")]
mod backend {
    use super::std::vec::Vec;
    use super::{Call, DeviceVec, Error, ErrorKind, Source};
    use runtime::host::{self, HostError, HostErrorKind};

    pub type Device = &'static host::Device;
    pub type Alloc = host::DeviceAlloc;

    fn convert(e: HostError) -> Error {
        let kind = match e.kind {
            HostErrorKind::NoDevice => ErrorKind::NoDevice,
            HostErrorKind::NotCompiled => ErrorKind::NotCompiled,
            HostErrorKind::Mismatch => ErrorKind::Mismatch,
            HostErrorKind::Artifacts => ErrorKind::Artifacts,
            HostErrorKind::Device => ErrorKind::Device,
        };
        Error {
            kind,
            message: e.message,
        }
    }

    pub fn open(ordinal: usize) -> Result<Device, Error> {
        host::Device::open(ordinal).map_err(convert)
    }

    pub fn name(d: &Device) -> &str {
        &d.name
    }

    pub fn upload(d: &Device, bytes: &[u8]) -> Result<Alloc, Error> {
        d.upload(bytes).map_err(convert)
    }

    pub fn download(a: &Alloc, out: &mut [u8]) -> Result<(), Error> {
        a.download(out).map_err(convert)
    }

    /// # Safety
    ///
    /// As `runtime::host::Device::reduce`.
    pub unsafe fn reduce<T>(
        d: &Device,
        call: &Call<'_>,
        source: Source<'_, T>,
        init: &[u8],
        closure: *const u8,
    ) -> Result<Vec<u8>, Error> {
        let info = host::CallInfo {
            file: call.file,
            line: call.line,
            column: call.column,
            element: call.element,
            element_size: call.element_size,
            closure_type: call.closure_type,
            closure_size: call.closure_size,
            closure_align: call.closure_align,
        };
        let input = match source {
            Source::Host(s) => host::Input::Host {
                ptr: s.as_ptr() as *const u8,
                len: s.len(),
            },
            Source::Device(v) => device_input(v),
        };
        // SAFETY: forwarded from the caller.
        unsafe { d.reduce(&info, input, init, closure) }.map_err(convert)
    }

    fn device_input<T>(v: &DeviceVec<T>) -> host::Input<'_> {
        host::Input::Device {
            alloc: &v.alloc,
            len: v.len,
        }
    }
}

#[cfg(not(feature = "gpu"))]
mod backend {
    use super::std::vec::Vec;
    use super::{Call, Error, ErrorKind, Source};

    pub struct Device;
    pub struct Alloc;

    fn unavailable() -> Error {
        Error {
            kind: ErrorKind::Unavailable,
            message: "this build of `native` has no GPU backend: depend on it with \
                      `features = [\"gpu\"]` and build with `driver cargo build`"
                .into(),
        }
    }

    pub fn open(_: usize) -> Result<Device, Error> {
        Err(unavailable())
    }

    pub fn name(_: &Device) -> &str {
        ""
    }

    pub fn upload(_: &Device, _: &[u8]) -> Result<Alloc, Error> {
        Err(unavailable())
    }

    pub fn download(_: &Alloc, _: &mut [u8]) -> Result<(), Error> {
        Err(unavailable())
    }

    /// # Safety
    ///
    /// Nothing is read.
    pub unsafe fn reduce<T>(
        _: &Device,
        _: &Call<'_>,
        _: Source<'_, T>,
        _: &[u8],
        _: *const u8,
    ) -> Result<Vec<u8>, Error> {
        Err(unavailable())
    }
}
