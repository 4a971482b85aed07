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

/// Data a provider reads: a host slice (copied to the device for the call),
/// a [`DeviceVec`] or a [`DeviceSlice`] of one (read where it is).
pub trait Input<T> {
    #[doc(hidden)]
    fn source(&self) -> Source<'_, T>;
}

#[doc(hidden)]
pub enum Source<'a, T> {
    Host(&'a [T]),
    /// `len` elements from element `start` of a device allocation.
    Device {
        vec: &'a DeviceVec<T>,
        start: usize,
        len: usize,
    },
}

impl<T> Source<'_, T> {
    fn len(&self) -> usize {
        match self {
            Source::Host(s) => s.len(),
            Source::Device { len, .. } => *len,
        }
    }
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
        Source::Device {
            vec: self,
            start: 0,
            len: self.len,
        }
    }
}

impl<T> Input<T> for DeviceSlice<'_, T> {
    fn source(&self) -> Source<'_, T> {
        Source::Device {
            vec: self.vec,
            start: self.start,
            len: self.len,
        }
    }
}

/// Elements resident on a device ([`Gpu::upload`]); freed on drop.
pub struct DeviceVec<T> {
    len: usize,
    alloc: backend::Alloc,
    _t: PhantomData<T>,
}

/// A range of a [`DeviceVec`] ([`DeviceVec::slice`]): read in place, so its
/// first element may sit anywhere (not on a 16-byte boundary).
pub struct DeviceSlice<'a, T> {
    vec: &'a DeviceVec<T>,
    start: usize,
    len: usize,
}

impl<T> DeviceSlice<'_, T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: DeviceElement> DeviceVec<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements in `range`, read in place by a call.
    ///
    /// # Panics
    ///
    /// When the range is out of bounds, as slicing a `Vec` does.
    pub fn slice(&self, range: impl core::ops::RangeBounds<usize>) -> DeviceSlice<'_, T> {
        use core::ops::Bound;
        let start = match range.start_bound() {
            Bound::Included(&s) => s,
            Bound::Excluded(&s) => s + 1,
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&e) => e + 1,
            Bound::Excluded(&e) => e,
            Bound::Unbounded => self.len,
        };
        assert!(
            start <= end && end <= self.len,
            "range {start}..{end} out of bounds of a DeviceVec of {} elements",
            self.len
        );
        DeviceSlice {
            vec: self,
            start,
            len: end - start,
        }
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

/// What a call launched: its kernels in launch order, and where the
/// device read its first input ([`Gpu::last_launch`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Launch {
    /// `(kernel, grid, threads a block)` for each launch, in order; empty
    /// for a call that launched nothing (an empty input).
    pub kernels: Vec<(String, u32, u32)>,
    /// The device address of the first input's first element (a host
    /// input's is that of the device copy the call made).
    pub input_address: u64,
}

/// One CUDA device, opened once per process (later opens share it).
pub struct Gpu {
    device: backend::Device,
}

/// The element types the providers take: `i8`, `i16`, `i32`, `i64`, `u8`,
/// `u16`, `u32`, `u64`, `f32` and `f64`.
///
/// Sealed: implemented for exactly these types, which have no padding and
/// for which every bit pattern is a value, so their bytes may be copied to
/// the device and back:
///
/// ```no_run
/// # fn f(gpu: &native::gpu::Gpu) -> Result<(), native::gpu::Error> {
/// let d = gpu.upload(&[1.5f32, 2.0, 4.0])?;
/// let back: Vec<f32> = d.to_vec()?;
/// # Ok(())
/// # }
/// ```
///
/// A type outside it is refused at compile time:
///
/// ```compile_fail
/// # fn f(gpu: &native::gpu::Gpu) {
/// // `(u8, u32)` has three bytes of padding, which no call may read.
/// let _ = gpu.upload(&[(1u8, 2u32)]);
/// # }
/// ```
///
/// ```compile_fail
/// # fn f(gpu: &native::gpu::Gpu) {
/// // A `bool` written by the device could be neither 0 nor 1.
/// let _ = gpu.upload(&[true]);
/// # }
/// ```
pub trait DeviceElement: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The element type as the compiled kernels know it.
    #[doc(hidden)]
    const ELEMENT: ElementId;
}

mod sealed {
    pub trait Sealed {}
}

/// How the host API names an element type or a provider to its backend:
/// the compiler's own vocabulary with the `gpu` feature, nothing without
/// (the bridge builds this crate with plain rustc and no dependencies).
#[cfg(feature = "gpu")]
#[doc(hidden)]
pub type ElementId = runtime::host::Scalar;
#[cfg(not(feature = "gpu"))]
#[doc(hidden)]
pub type ElementId = ();
#[cfg(feature = "gpu")]
type ProviderId = runtime::host::Provider;
#[cfg(not(feature = "gpu"))]
type ProviderId = ();

#[cfg(feature = "gpu")]
macro_rules! id {
    (element $v:ident) => {
        runtime::host::Scalar::$v
    };
    (provider $v:ident) => {
        runtime::host::Provider::$v
    };
}
#[cfg(not(feature = "gpu"))]
macro_rules! id {
    ($kind:ident $v:ident) => {
        ()
    };
}

macro_rules! device_elements {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl DeviceElement for $t {
            const ELEMENT: ElementId = id!(element $v);
        }
    )*};
}

device_elements! {
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f32 => F32, f64 => F64,
}

/// A predicate's or a comparator's result type.
const BOOL: ElementId = id!(element Bool);

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

    /// What the last call on this thread that ran launched, where a host
    /// model of a provider's combining order needs it: a reduce's tree
    /// depends on its grid and on its input's alignment
    /// (docs/providers.md). `None` before any call ran.
    pub fn last_launch(&self) -> Option<Launch> {
        backend::last_launch()
    }

    /// Copies `data` to the device, for calls that read it there.
    pub fn upload<T: DeviceElement>(&self, data: &[T]) -> Result<DeviceVec<T>, Error> {
        // SAFETY: a `DeviceElement` has no padding: every byte of `data` is
        // initialised.
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
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let out: Vec<T> = self.run(
            site,
            id!(provider Reduce),
            &[T::ELEMENT, T::ELEMENT, T::ELEMENT],
            &[data.source()],
            None,
            Some(&init),
            &op,
            1,
        )?;
        out.first().copied().ok_or_else(|| Error {
            kind: ErrorKind::Mismatch,
            message: "the reduce kernel returned no value".into(),
        })
    }

    /// Every prefix of `data` folded with `op` ([`crate::inclusive_scan`]).
    /// `op` must be associative; the result is the same bits on every run.
    #[track_caller]
    #[inline(never)]
    pub fn inclusive_scan<T, D, F>(&self, data: &D, op: F) -> Result<Vec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let source = data.source();
        let n = source.len();
        let types = [T::ELEMENT, T::ELEMENT, T::ELEMENT];
        self.run::<T, T, F>(
            site,
            id!(provider InclusiveScan),
            &types,
            &[source],
            None,
            None,
            &op,
            n,
        )
    }

    /// Every prefix before an element, from `init` ([`crate::exclusive_scan`]).
    #[track_caller]
    #[inline(never)]
    pub fn exclusive_scan<T, D, F>(&self, data: &D, init: T, op: F) -> Result<Vec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let source = data.source();
        let n = source.len();
        let types = [T::ELEMENT, T::ELEMENT, T::ELEMENT];
        self.run(
            site,
            id!(provider ExclusiveScan),
            &types,
            &[source],
            None,
            Some(&init),
            &op,
            n,
        )
    }

    /// `op` of each element ([`crate::transform`]).
    #[track_caller]
    #[inline(never)]
    pub fn transform<T, U, D, F>(&self, data: &D, op: F) -> Result<Vec<U>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T) -> U,
    {
        let site = core::panic::Location::caller();
        let source = data.source();
        let n = source.len();
        self.run::<T, U, F>(
            site,
            id!(provider Transform),
            &[T::ELEMENT, U::ELEMENT],
            &[source],
            None,
            None,
            &op,
            n,
        )
    }

    /// `op` of each pair of elements ([`crate::transform2`]); the inputs
    /// must have one length.
    #[track_caller]
    #[inline(never)]
    pub fn transform2<T, U, V, DA, DB, F>(&self, a: &DA, b: &DB, op: F) -> Result<Vec<V>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        V: DeviceElement,
        DA: Input<T> + ?Sized,
        DB: Input<U> + ?Sized,
        F: Fn(T, U) -> V,
    {
        let site = core::panic::Location::caller();
        let (sa, sb) = (a.source(), b.source());
        if sa.len() != sb.len() {
            return Err(Error {
                kind: ErrorKind::Mismatch,
                message: std::format!(
                    "transform2: the inputs differ in length ({} and {})",
                    sa.len(),
                    sb.len()
                ),
            });
        }
        let n = sa.len();
        let types = [T::ELEMENT, U::ELEMENT, V::ELEMENT];
        // SAFETY of the erasure: the backend reads the second input with
        // the size checked against the compiled type.
        let sb = erase(sb);
        self.run::<T, V, F>(
            site,
            id!(provider Transform2),
            &types,
            &[sa, sb],
            None,
            None,
            &op,
            n,
        )
    }

    /// One fold from `init` per segment ([`crate::segmented_reduce`]):
    /// segment `i` is `data[offsets[i]..offsets[i+1]]`. Offsets that
    /// decrease or pass the end of the data are an error.
    #[track_caller]
    #[inline(never)]
    pub fn segmented_reduce<T, D, F>(
        &self,
        data: &D,
        offsets: &[usize],
        init: T,
        op: F,
    ) -> Result<Vec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let segments = offsets.len().saturating_sub(1);
        let types = [T::ELEMENT, T::ELEMENT, T::ELEMENT];
        self.run(
            site,
            id!(provider SegmentedReduce),
            &types,
            &[data.source()],
            Some(offsets),
            Some(&init),
            &op,
            segments,
        )
    }

    /// The elements `pred` keeps, in order ([`crate::select`]).
    #[track_caller]
    #[inline(never)]
    pub fn select<T, D, P>(&self, data: &D, pred: P) -> Result<Vec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        P: Fn(T) -> bool,
    {
        let site = core::panic::Location::caller();
        let source = data.source();
        let n = source.len();
        self.run::<T, T, P>(
            site,
            id!(provider Select),
            &[T::ELEMENT, BOOL],
            &[source],
            None,
            None,
            &pred,
            n,
        )
    }

    /// The elements stably sorted by `less`, a strict weak order
    /// ([`crate::sort_by`]); at most 2^32 - 1 of them.
    #[track_caller]
    #[inline(never)]
    pub fn sort_by<T, D, C>(&self, data: &D, less: C) -> Result<Vec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        C: Fn(T, T) -> bool,
    {
        let site = core::panic::Location::caller();
        let source = data.source();
        let n = source.len();
        let types = [T::ELEMENT, T::ELEMENT, BOOL];
        self.run::<T, T, C>(
            site,
            id!(provider SortBy),
            &types,
            &[source],
            None,
            None,
            &less,
            n,
        )
    }

    /// Runs `provider` for the call at `site` and returns up to `capacity`
    /// elements of its output.
    #[allow(clippy::too_many_arguments)]
    fn run<T, O, F>(
        &self,
        site: &core::panic::Location<'_>,
        provider: ProviderId,
        types: &[ElementId],
        inputs: &[Source<'_, T>],
        offsets: Option<&[usize]>,
        init: Option<&T>,
        op: &F,
        capacity: usize,
    ) -> Result<Vec<O>, Error> {
        let call = Call {
            file: site.file(),
            line: site.line(),
            column: site.column(),
            provider,
            types,
            closure_type: core::any::type_name::<F>(),
            closure_size: size_of::<F>(),
            closure_align: align_of::<F>(),
        };
        let mut out: Vec<O> = Vec::with_capacity(capacity);
        // SAFETY: `init` is one live T, `op` a live F, the inputs live for
        // the call, and `out` has room for `capacity` elements of O; the
        // backend checks every type against the compiled ones before it
        // reads or writes them as such, and writes at most the room given.
        unsafe {
            let init = init
                .map(|v| core::slice::from_raw_parts(v as *const T as *const u8, size_of::<T>()));
            let closure = op as *const F as *const u8;
            let room = capacity * size_of::<O>();
            let written = backend::run(
                &self.device,
                &call,
                inputs,
                offsets,
                init,
                closure,
                out.as_mut_ptr() as *mut u8,
                room,
            )?;
            if size_of::<O>() == 0 || written % size_of::<O>() != 0 || written > room {
                return Err(Error {
                    kind: ErrorKind::Mismatch,
                    message: std::format!(
                        "the kernel returned {written} bytes for elements of {} bytes",
                        size_of::<O>()
                    ),
                });
            }
            out.set_len(written / size_of::<O>());
        }
        Ok(out)
    }
}

/// A second input's source with its element type erased to the first's
/// (the backend reads it by the compiled type's size).
fn erase<U, T>(s: Source<'_, U>) -> Source<'_, T> {
    match s {
        // SAFETY: only the address and the length are read, as bytes of
        // the compiled element size.
        Source::Host(h) => {
            Source::Host(unsafe { core::slice::from_raw_parts(h.as_ptr() as *const T, h.len()) })
        }
        Source::Device { vec, start, len } => Source::Device {
            // SAFETY: as above; DeviceVec<U> and DeviceVec<T> have one layout.
            vec: unsafe { &*(vec as *const DeviceVec<U> as *const DeviceVec<T>) },
            start,
            len,
        },
    }
}

/// The facts of one call that identify its kernel.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
struct Call<'a> {
    file: &'a str,
    line: u32,
    column: u32,
    provider: ProviderId,
    /// The callback's parameter and result types, in order.
    types: &'a [ElementId],
    closure_type: &'a str,
    closure_size: usize,
    closure_align: usize,
}

#[cfg(feature = "gpu")]
mod backend {
    use super::{Call, Error, ErrorKind, Source};
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

    pub fn last_launch() -> Option<super::Launch> {
        host::last_launch().map(|r| super::Launch {
            kernels: r.kernels,
            input_address: r.input_address,
        })
    }

    /// # Safety
    ///
    /// As `runtime::host::Device::run`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run<T>(
        d: &Device,
        call: &Call<'_>,
        inputs: &[Source<'_, T>],
        offsets: Option<&[usize]>,
        init: Option<&[u8]>,
        closure: *const u8,
        out: *mut u8,
        room: usize,
    ) -> Result<usize, Error> {
        let info = host::CallInfo {
            file: call.file,
            line: call.line,
            column: call.column,
            provider: call.provider,
            types: call.types,
            closure_type: call.closure_type,
            closure_size: call.closure_size,
            closure_align: call.closure_align,
        };
        let inputs: super::Vec<host::Input<'_>> = inputs
            .iter()
            .map(|s| match s {
                Source::Host(h) => host::Input::Host {
                    ptr: h.as_ptr() as *const u8,
                    len: h.len(),
                },
                Source::Device { vec, start, len } => host::Input::Device {
                    alloc: &vec.alloc,
                    start: *start,
                    len: *len,
                },
            })
            .collect();
        let request = host::Request {
            inputs: &inputs,
            offsets,
            init,
            closure,
        };
        // SAFETY: forwarded from the caller.
        unsafe { d.run(&info, &request, out, room) }.map_err(convert)
    }
}

#[cfg(not(feature = "gpu"))]
mod backend {
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

    pub fn last_launch() -> Option<super::Launch> {
        None
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
    /// Nothing is read or written.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run<T>(
        _: &Device,
        _: &Call<'_>,
        _: &[Source<'_, T>],
        _: Option<&[usize]>,
        _: Option<&[u8]>,
        _: *const u8,
        _: *mut u8,
        _: usize,
    ) -> Result<usize, Error> {
        Err(unavailable())
    }
}
