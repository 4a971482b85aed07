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
    /// The driver failed a call, or a kernel failed (surfacing at the next
    /// wait).
    Device,
    /// A device allocation did not fit: the message names the bytes asked
    /// and free.
    OutOfMemory,
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

    /// How many elements a call reads.
    fn len(&self) -> usize {
        self.source().len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }
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

impl<'a, T> Source<'a, T> {
    fn len(&self) -> usize {
        match self {
            Source::Host(s) => s.len(),
            Source::Device { len, .. } => *len,
        }
    }

    /// The input with its element type erased, as a call hands it to the
    /// backend.
    fn erase(&self) -> Data<'a> {
        match *self {
            Source::Host(s) => Data::Host {
                ptr: s.as_ptr() as *const u8,
                len: s.len(),
                _borrow: PhantomData,
            },
            Source::Device { vec, start, len } => Data::Device {
                alloc: &vec.alloc,
                start,
                len,
            },
        }
    }
}

/// A call's input, its element type erased: the backend reads it as
/// elements of the compiled type's size, through the pointer (a
/// composite's padding is never read as a value).
#[derive(Clone, Copy)]
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
enum Data<'a> {
    /// `len` elements at `ptr`, borrowed for `'a`.
    Host {
        ptr: *const u8,
        len: usize,
        _borrow: PhantomData<&'a ()>,
    },
    /// `len` elements from element `start` of a device allocation.
    Device {
        alloc: &'a backend::Alloc,
        start: usize,
        len: usize,
    },
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

/// Where an `_into` call writes: a [`DeviceVec`], or a [`DeviceSliceMut`]
/// of one. Its length must be the number of results the call writes.
pub trait Output<T> {
    #[doc(hidden)]
    fn target(&mut self) -> Target<'_, T>;
}

#[doc(hidden)]
pub struct Target<'a, T> {
    vec: &'a DeviceVec<T>,
    start: usize,
    len: usize,
}

impl<T> Output<T> for DeviceVec<T> {
    fn target(&mut self) -> Target<'_, T> {
        Target {
            vec: self,
            start: 0,
            len: self.len,
        }
    }
}

impl<T> Output<T> for DeviceSliceMut<'_, T> {
    fn target(&mut self) -> Target<'_, T> {
        Target {
            vec: self.vec,
            start: self.start,
            len: self.len,
        }
    }
}

/// Elements resident on a device: uploaded ([`Gpu::upload`]), allocated
/// ([`Gpu::alloc`]) or the result of a call; freed on drop, after the
/// work already enqueued that uses them.
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

/// A range of a [`DeviceVec`] that an `_into` call writes
/// ([`DeviceVec::slice_mut`]).
pub struct DeviceSliceMut<'a, T> {
    vec: &'a mut DeviceVec<T>,
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

impl<T> DeviceSliceMut<'_, T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// `(start, end)` of `range` in `0..len`; panics out of bounds, as slicing
/// a `Vec` does.
fn bounds(range: impl core::ops::RangeBounds<usize>, len: usize) -> (usize, usize) {
    use core::ops::Bound;
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e + 1,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(
        start <= end && end <= len,
        "range {start}..{end} out of bounds of a DeviceVec of {len} elements"
    );
    (start, end)
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
        let (start, end) = bounds(range, self.len);
        DeviceSlice {
            vec: self,
            start,
            len: end - start,
        }
    }

    /// The elements in `range`, for an `_into` call to write.
    ///
    /// # Panics
    ///
    /// When the range is out of bounds, as slicing a `Vec` does.
    pub fn slice_mut(
        &mut self,
        range: impl core::ops::RangeBounds<usize>,
    ) -> DeviceSliceMut<'_, T> {
        let (start, end) = bounds(range, self.len);
        DeviceSliceMut {
            vec: self,
            start,
            len: end - start,
        }
    }

    /// Element `i` (in range), copied to the host once the calls that
    /// write it are done.
    fn get(&self, i: usize) -> Result<T, Error> {
        let mut value = core::mem::MaybeUninit::<T>::uninit();
        // SAFETY: room for one T; the bytes copied are a T written by an
        // upload or a kernel of this element type, and every bit pattern
        // of a `DeviceElement`'s scalars is a value.
        unsafe {
            backend::download(
                &self.alloc,
                i * size_of::<T>(),
                value.as_mut_ptr() as *mut u8,
                size_of::<T>(),
            )?;
            Ok(value.assume_init())
        }
    }

    /// Copies the elements to a new `Vec` on the host, once the calls
    /// that write them are done (an error of one surfaces here).
    pub fn to_vec(&self) -> Result<Vec<T>, Error> {
        let mut out = Vec::new();
        self.to_vec_into(&mut out)?;
        Ok(out)
    }

    /// Copies the elements into `out`, replacing what it held and reusing
    /// its allocation: a `Vec` kept between calls is written at the copy
    /// engines' speed, where a new one first faults in its pages.
    pub fn to_vec_into(&self, out: &mut Vec<T>) -> Result<(), Error> {
        out.clear();
        let fresh = out.capacity() < self.len;
        out.reserve(self.len);
        if fresh {
            // New memory is faulted in by a plain write first, as a C++
            // `std::vector<T>(n)` is zeroed before its copy: page faults
            // inside the driver's copy from its staging buffer cost more.
            // SAFETY: `len` elements of spare capacity.
            unsafe { core::ptr::write_bytes(out.as_mut_ptr(), 0, self.len) };
        }
        // SAFETY: the spare capacity holds `len` elements; the bytes
        // copied into it are `len` values of T written by uploads or
        // kernels of this element type, and every bit pattern of a
        // `DeviceElement`'s scalars is a value (its padding holds none).
        unsafe {
            backend::download(
                &self.alloc,
                0,
                out.as_mut_ptr() as *mut u8,
                self.len * size_of::<T>(),
            )?;
            out.set_len(self.len);
        }
        Ok(())
    }

    /// Copies the elements into `out`, which must have the same length (a
    /// [`HostBuffer`] is written at the page-locked copy speed).
    pub fn copy_to(&self, out: &mut [T]) -> Result<(), Error> {
        if out.len() != self.len {
            return Err(length_error("copy_to", self.len, out.len()));
        }
        // SAFETY: `out` is borrowed for the copy, which is done when this
        // returns; every bit pattern of a `DeviceElement`'s scalars is a
        // value.
        unsafe {
            backend::download(
                &self.alloc,
                0,
                out.as_mut_ptr() as *mut u8,
                size_of_val(out),
            )
        }
    }

    /// Replaces the elements with `data`, which must have the same length,
    /// after the calls already enqueued that use them.
    pub fn copy_from(&mut self, data: &[T]) -> Result<(), Error> {
        if data.len() != self.len {
            return Err(length_error("copy_from", self.len, data.len()));
        }
        // SAFETY: `data` is borrowed until the copy has read it.
        unsafe { backend::upload_into(&self.alloc, bytes_of(data)) }
    }
}

fn length_error(what: &str, device: usize, host: usize) -> Error {
    Error {
        kind: ErrorKind::Mismatch,
        message: std::format!("{what}: the DeviceVec has {device} elements, the host slice {host}"),
    }
}

/// Where `data`'s bytes are and how many: a composite's padding among them
/// is not initialised, so they are never a `&[u8]`.
fn bytes_of<T>(data: &[T]) -> (*const u8, usize) {
    (data.as_ptr() as *const u8, size_of_val(data))
}

/// Where one value's bytes are and how many (an initial value, which the
/// backend reads by the compiled type's scalars, never its padding).
fn value_of<T>(value: &T) -> (*const u8, usize) {
    bytes_of(core::slice::from_ref(value))
}

/// A point in a stream's order that the GPU stamps with the time it is
/// reached ([`Gpu::mark`]): a CUDA event with timing.
///
/// ```no_run
/// use native::gpu::Gpu;
/// let gpu = Gpu::open(0)?;
/// let x = gpu.upload(&vec![1.0f32; 1 << 20])?;
/// let before = gpu.mark()?;
/// let y = gpu.transform(&x, |v: f32| v * 2.0)?;
/// let after = gpu.mark()?;
/// println!("the transform took {:?} on the GPU", before.elapsed(&after)?);
/// # drop(y);
/// # Ok::<(), native::gpu::Error>(())
/// ```
pub struct Mark {
    event: backend::Mark,
}

impl Mark {
    /// The GPU time from this mark to `later`, once both are reached (it
    /// waits for them; an error of a call before either surfaces here).
    /// Marks of every stream of one device share its clock, so intervals
    /// of two streams can be compared: whether a copy on one ran while a
    /// kernel ran on another. An error when `later` was reached first, or
    /// is of another device.
    pub fn elapsed(&self, later: &Mark) -> Result<core::time::Duration, Error> {
        let ms = backend::elapsed_ms(&self.event, &later.event)?;
        if ms < 0.0 {
            return Err(Error {
                kind: ErrorKind::Mismatch,
                message: std::format!("the later mark was reached {:.3} ms before this one", -ms),
            });
        }
        Ok(core::time::Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
}

/// Page-locked host memory ([`Gpu::alloc_host`]): copies to and from it
/// run at the copy engines' speed, and may run while the program goes on
/// ([`Gpu::upload_async`], [`Gpu::download_async`]). Its elements are
/// reached through [`HostBuffer::as_slice`] and
/// [`HostBuffer::as_mut_slice`], which first wait for such a copy; it is
/// freed after it.
pub struct HostBuffer<T> {
    len: usize,
    alloc: backend::Host,
    _t: PhantomData<T>,
}

// SAFETY: the buffer is owned host memory of `len` T values; the copies
// that use it are tracked by `alloc` under its own lock.
unsafe impl<T: Send> Send for HostBuffer<T> {}
unsafe impl<T: Sync> Sync for HostBuffer<T> {}

impl<T: DeviceElement> HostBuffer<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The elements, once a copy into them is done (its error, or an
    /// earlier call's, surfaces here).
    pub fn as_slice(&self) -> Result<&[T], Error> {
        backend::host_wait(&self.alloc)?;
        // SAFETY: `len` T values, zeroed at allocation (a value of every
        // element type) or written by copies of this element type, which
        // are done; borrowed for as long as `self`, so no copy starts.
        Ok(unsafe {
            core::slice::from_raw_parts(backend::host_ptr(&self.alloc) as *const T, self.len)
        })
    }

    /// The elements, to write, once every copy from or into them is done.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T], Error> {
        backend::host_wait(&self.alloc)?;
        // SAFETY: as for `as_slice`, borrowed mutably.
        Ok(unsafe {
            core::slice::from_raw_parts_mut(backend::host_ptr(&self.alloc) as *mut T, self.len)
        })
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

/// One CUDA device and one of its streams. The device is opened once per
/// process (later opens share it); calls on one `Gpu` are enqueued on its
/// stream and return without waiting for the device, except where the host
/// needs a value (a reduce's result, a select's length, a copy to the
/// host).
pub struct Gpu {
    device: backend::Device,
    /// The stream: 0 for the device's default one ([`Gpu::open`]), another
    /// for [`Gpu::stream`].
    lane: usize,
}

/// The element types the providers take: the scalars `i8`, `i16`, `i32`,
/// `i64`, `u8`, `u16`, `u32`, `u64`, `f32` and `f64`; tuples of one to
/// four elements (`(f32, u32)`, `((f32, f32), u8)`); and structs of
/// elements declared with [`device_element!`](crate::device_element).
/// Which providers a composite (a tuple or a struct) may be handed to is
/// the compiler's to say, at build time.
///
/// Sealed: implemented for exactly these. Every bit pattern of each of
/// their scalars is a value, so what a kernel writes may be read back; a
/// composite's padding bytes (`(u8, u32)` has three) are copied as they
/// are and never read as values (copies go through pointers, never
/// through byte slices). A composite's layout is rustc's, measured where
/// the type is (`size_of`, `align_of`, `offset_of!`), and checked against
/// the compiled one at every call.
///
/// ```no_run
/// # fn f(gpu: &native::gpu::Gpu) -> Result<(), native::gpu::Error> {
/// let d = gpu.upload(&[1.5f32, 2.0, 4.0])?;
/// let back: Vec<f32> = d.to_vec()?;
/// let pairs = gpu.upload(&[(1u8, 2u32), (3, 4)])?;
/// let back: Vec<(u8, u32)> = pairs.to_vec()?;
/// # Ok(())
/// # }
/// ```
///
/// `bool` and `char` are no elements, alone or inside a tuple or a struct:
///
/// ```compile_fail
/// # fn f(gpu: &native::gpu::Gpu) {
/// // A `bool` written by the device could be neither 0 nor 1.
/// let _ = gpu.upload(&[true]);
/// # }
/// ```
///
/// ```compile_fail
/// # fn f(gpu: &native::gpu::Gpu) {
/// let _ = gpu.upload(&[(1.0f32, true)]);
/// # }
/// ```
///
/// ```compile_fail
/// # fn f(gpu: &native::gpu::Gpu) {
/// let _ = gpu.upload(&[(1u32, 'x')]);
/// # }
/// ```
pub trait DeviceElement: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The element type as the compiled kernels know it.
    #[doc(hidden)]
    const ELEMENT: ElementId;
}

mod sealed {
    /// # Safety
    ///
    /// Every bit pattern of the type's bytes outside its padding is a
    /// value (what a kernel writes is read back as one), and its
    /// `DeviceElement::ELEMENT` states its size, alignment and fields as
    /// rustc laid them out.
    pub unsafe trait Sealed {}
}

/// What [`device_element!`](crate::device_element) expands to uses; not
/// an API.
///
/// A tuple's and a struct's `ELEMENT` are their layouts as rustc made
/// them, fields flattened depth-first in declaration order:
///
/// ```
/// #[derive(Clone, Copy)]
/// struct Point { x: f32, y: f32 }
/// native::gpu::device_element!(Point { x: f32, y: f32 });
/// #[derive(Clone, Copy)]
/// struct Tagged { tag: u8, at: Point, pair: (u8, u32) }
/// native::gpu::device_element!(Tagged { tag: u8, at: Point, pair: (u8, u32) });
///
/// # #[cfg(feature = "gpu")] {
/// use core::mem::{align_of, offset_of, size_of};
/// use native::gpu::{DeviceElement, __private::{ElementType, Scalar}};
///
/// // In field order, at the offsets rustc chose (measured, never assumed).
/// let pair = <(u8, u32)>::ELEMENT;
/// let (a, b) = (offset_of!((u8, u32), 0), offset_of!((u8, u32), 1));
/// assert_eq!(pair.scalars(), [(a, Scalar::U8), (b, Scalar::U32)]);
/// assert_eq!((pair.size(), pair.align()), (8, 4));
/// assert_eq!(pair.name(), "(u8, u32)");
///
/// // rustc puts this one's u32 first.
/// type Triple = (u8, u32, u8);
/// let (a, b, c) = (offset_of!(Triple, 0), offset_of!(Triple, 1), offset_of!(Triple, 2));
/// assert!(b < a);
/// assert_eq!(Triple::ELEMENT.scalars(), [(a, Scalar::U8), (b, Scalar::U32), (c, Scalar::U8)]);
///
/// let tagged = Tagged::ELEMENT;
/// let (at, pair) = (offset_of!(Tagged, at), offset_of!(Tagged, pair));
/// assert_eq!(
///     tagged.scalars(),
///     [
///         (offset_of!(Tagged, tag), Scalar::U8),
///         (at + offset_of!(Point, x), Scalar::F32),
///         (at + offset_of!(Point, y), Scalar::F32),
///         (pair + offset_of!((u8, u32), 0), Scalar::U8),
///         (pair + offset_of!((u8, u32), 1), Scalar::U32),
///     ]
/// );
/// assert_eq!((tagged.size(), tagged.align()), (size_of::<Tagged>(), align_of::<Tagged>()));
/// assert!(tagged.name().ends_with("Tagged"));
/// assert!(matches!(f64::ELEMENT, ElementType::Scalar(Scalar::F64)));
/// # }
/// ```
#[doc(hidden)]
pub mod __private {
    pub use super::sealed::Sealed;
    #[cfg(feature = "gpu")]
    pub use runtime::host::{CompositeField, CompositeType, ElementType, Scalar};

    /// Names the type of `_value`: `let _: PhantomData<T> = type_of(&x)`
    /// holds only when `x` is a `T` (no coercion passes a `PhantomData`).
    pub fn type_of<T>(_value: &T) -> core::marker::PhantomData<T> {
        core::marker::PhantomData
    }

    /// Compiles only for a `DeviceElement`.
    pub fn is_element<T: super::DeviceElement>() {}
}

/// How the host API names an element type or a provider to its backend:
/// the compiler's own vocabulary with the `gpu` feature, nothing without
/// (the bridge builds this crate with plain rustc and no dependencies).
#[cfg(feature = "gpu")]
#[doc(hidden)]
pub type ElementId = runtime::host::ElementType;
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
        runtime::host::ElementType::Scalar(runtime::host::Scalar::$v)
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

/// The `ELEMENT` of a composite `$t` whose fields (`0`, `x`) have the
/// element types `$fty`: its layout measured here (offsets, size and
/// alignment are rustc's for this program), each field's type its own
/// `ELEMENT`, so nesting needs nothing more. `()` without the `gpu`
/// feature (decided when `native` is built, not where this expands).
#[cfg(feature = "gpu")]
#[doc(hidden)]
#[macro_export]
macro_rules! __native_composite_element {
    ($t:ty { $($field:tt : $fty:ty),+ }) => {
        $crate::gpu::__private::ElementType::Composite(&$crate::gpu::__private::CompositeType {
            name: ::core::any::type_name::<$t>,
            size: ::core::mem::size_of::<$t>(),
            align: ::core::mem::align_of::<$t>(),
            fields: &[$($crate::gpu::__private::CompositeField {
                offset: ::core::mem::offset_of!($t, $field),
                ty: <$fty as $crate::gpu::DeviceElement>::ELEMENT,
            }),+],
        })
    };
}
#[cfg(not(feature = "gpu"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __native_composite_element {
    ($t:ty { $($field:tt : $fty:ty),+ }) => {
        ()
    };
}

/// Makes structs [`DeviceElement`]s: each `Path { field: Type, … }`
/// (several separated by `;`) lists every field of a `#[derive(Clone,
/// Copy)]` struct with named fields (`#[repr(C)]` or Rust's own layout,
/// which is measured) with its type, itself an element (a scalar, a tuple,
/// or a struct declared so), so structs nest. Invoke it where the fields
/// are visible.
///
/// ```no_run
/// use native::gpu::{device_element, Error, Gpu};
///
/// #[derive(Clone, Copy, Debug, PartialEq)]
/// #[repr(C)]
/// pub struct Point { pub x: f32, pub y: f32 }
///
/// #[derive(Clone, Copy)]
/// struct Particle { at: Point, speed: (f32, f32), id: u32 }
///
/// device_element!(
///     Point { x: f32, y: f32 };
///     Particle { at: Point, speed: (f32, f32), id: u32 };
/// );
///
/// # fn f(gpu: &Gpu) -> Result<(), Error> {
/// let points = gpu.upload(&[Point { x: 1.0, y: 2.0 }, Point { x: 3.0, y: 4.0 }])?;
/// let back: Vec<Point> = points.to_vec()?;
/// # Ok(())
/// # }
/// ```
///
/// The list is checked against the struct when it compiles: a field left
/// out, one it does not have, or a type that is not the field's is an
/// error, as is a field that is no element.
///
/// ```compile_fail
/// #[derive(Clone, Copy)]
/// struct Point { x: f32, y: f32 }
/// native::gpu::device_element!(Point { x: f32 });
/// ```
///
/// ```compile_fail
/// #[derive(Clone, Copy)]
/// struct Point { x: f32, y: f32 }
/// native::gpu::device_element!(Point { x: f32, y: u32 });
/// ```
///
/// ```compile_fail
/// #[derive(Clone, Copy)]
/// struct Flagged { x: f32, set: bool }
/// native::gpu::device_element!(Flagged { x: f32, set: bool });
/// ```
///
/// A `#[repr(packed)]` struct is refused where a field is not aligned (a
/// kernel could not read it):
///
/// ```compile_fail
/// #[derive(Clone, Copy)]
/// #[repr(C, packed)]
/// struct Packed { tag: u8, x: f32 }
/// native::gpu::device_element!(Packed { tag: u8, x: f32 });
/// ```
#[macro_export]
macro_rules! device_element {
    ($($name:path { $($field:ident : $fty:ty),+ $(,)? });+ $(;)?) => {$(
        // SAFETY: every field is an element (checked below), whose bits
        // outside padding are all values; `ELEMENT` is measured here.
        unsafe impl $crate::gpu::__private::Sealed for $name {}
        impl $crate::gpu::DeviceElement for $name {
            const ELEMENT: $crate::gpu::ElementId =
                $crate::__native_composite_element!($name { $($field: $fty),+ });
        }
        const _: () = {
            // Each field of the type listed and an element itself, and
            // every field of the struct listed (a struct expression names
            // them all: no `..`). Never called.
            #[allow(dead_code)]
            fn fields_are_listed(value: $name) -> $name {
                $(
                    let _: ::core::marker::PhantomData<$fty> =
                        $crate::gpu::__private::type_of(&value.$field);
                    $crate::gpu::__private::is_element::<$fty>();
                )+
                $name { $($field: value.$field),+ }
            }
            $(::core::assert!(
                ::core::mem::offset_of!($name, $field) % ::core::mem::align_of::<$fty>() == 0
                    && ::core::mem::align_of::<$fty>() <= ::core::mem::align_of::<$name>(),
                ::core::concat!(
                    "field `", ::core::stringify!($field), "` of `", ::core::stringify!($name),
                    "` is not aligned for `", ::core::stringify!($fty),
                    "`: a packed struct (no kernel could read it), or not the field's type"
                ),
            );)+
        };
    )+};
}

#[doc(inline)]
pub use crate::device_element;

macro_rules! device_elements {
    ($($t:ty => $v:ident),* $(,)?) => {$(
        // SAFETY: an integer or a float: every bit pattern is a value.
        unsafe impl sealed::Sealed for $t {}
        impl DeviceElement for $t {
            const ELEMENT: ElementId = id!(element $v);
        }
    )*};
}

device_elements! {
    i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f32 => F32, f64 => F64,
    // partition_point's indices (64 bits on every target the kernels
    // serve); no provider takes them as elements.
    usize => Usize,
}

/// Tuples of elements, `(A,)` to `(A, B, C, D)`.
macro_rules! tuple_elements {
    ($(($($t:ident . $i:tt),+))+) => {$(
        // SAFETY: every field is an element; `ELEMENT` is measured.
        unsafe impl<$($t: DeviceElement),+> sealed::Sealed for ($($t,)+) {}
        impl<$($t: DeviceElement),+> DeviceElement for ($($t,)+) {
            const ELEMENT: ElementId = __native_composite_element!(($($t,)+) { $($i: $t),+ });
        }
    )+};
}

tuple_elements! {
    (A.0)
    (A.0, B.1)
    (A.0, B.1, C.2)
    (A.0, B.1, C.2, D.3)
}

/// A predicate's or a comparator's result type.
const BOOL: ElementId = id!(element Bool);
/// A chain's count.
const U64: ElementId = id!(element U64);
/// A histogram's bin.
const USIZE: ElementId = id!(element Usize);

impl Gpu {
    /// Opens device `ordinal`. A clear [`Error`] without a driver or device.
    ///
    /// Every `Gpu` of one device opened this way shares the device's
    /// default stream: calls from any thread run in the order they were
    /// made. [`Gpu::stream`] gives a stream of its own.
    pub fn open(ordinal: usize) -> Result<Gpu, Error> {
        Ok(Gpu {
            device: backend::open(ordinal)?,
            lane: 0,
        })
    }

    /// Another stream of the same device: its calls run in their own
    /// order, beside the other streams' (a copy on one while a kernel
    /// runs on another). Data written by a call on one stream and read on
    /// another is ordered for you: the reading call waits for the writing
    /// one, and nothing is freed while a stream still uses it.
    pub fn stream(&self) -> Result<Gpu, Error> {
        Ok(Gpu {
            device: self.device,
            lane: backend::lane(&self.device)?,
        })
    }

    /// Waits for every call made on this stream so far. A kernel's error
    /// surfaces at a wait (here, or at a host read: [`DeviceVec::to_vec`],
    /// a reduce's value), naming the call sites it may come from.
    pub fn synchronize(&self) -> Result<(), Error> {
        backend::synchronize(&self.device, self.lane)
    }

    /// A mark in this stream's order, timed by the GPU: it is reached once
    /// every call made on this stream before it is done, and the GPU stamps
    /// the time then. [`Mark::elapsed`] measures GPU time between two
    /// marks, of this stream or of another of the same device, as CUDA's
    /// events do. Returns without waiting.
    pub fn mark(&self) -> Result<Mark, Error> {
        Ok(Mark {
            event: backend::mark(&self.device, self.lane)?,
        })
    }

    /// The device's free and total memory in bytes. Memory a call freed
    /// stays with the device's pool for later calls, so it is not counted
    /// free.
    pub fn memory(&self) -> Result<(usize, usize), Error> {
        backend::memory(&self.device)
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

    /// Copies `data` to the device, for calls that read it there. From a
    /// [`HostBuffer`] the copy runs at the page-locked speed.
    pub fn upload<T: DeviceElement>(&self, data: &[T]) -> Result<DeviceVec<T>, Error> {
        // SAFETY: `data` is borrowed until the copy has read it.
        let alloc = unsafe { backend::upload(&self.device, self.lane, bytes_of(data))? };
        Ok(DeviceVec {
            len: data.len(),
            alloc,
            _t: PhantomData,
        })
    }

    /// `len` zeroed elements on the device (an `_into` call's output).
    pub fn alloc<T: DeviceElement>(&self, len: usize) -> Result<DeviceVec<T>, Error> {
        let bytes = byte_len::<T>(len)?;
        Ok(DeviceVec {
            len,
            alloc: backend::alloc(&self.device, self.lane, bytes)?,
            _t: PhantomData,
        })
    }

    /// Copies `host` to the device without waiting: the copy runs in this
    /// stream's order, and `host` is not written before it is done
    /// ([`HostBuffer::as_mut_slice`] waits).
    pub fn upload_async<T: DeviceElement>(
        &self,
        host: &HostBuffer<T>,
    ) -> Result<DeviceVec<T>, Error> {
        Ok(DeviceVec {
            len: host.len,
            alloc: backend::upload_async(&self.device, self.lane, &host.alloc)?,
            _t: PhantomData,
        })
    }

    /// Copies `data` into `host` (of the same length) without waiting: the
    /// copy runs in this stream's order, after the calls that write `data`,
    /// and `host`'s elements are reached once it is done
    /// ([`HostBuffer::as_slice`] waits).
    pub fn download_async<T: DeviceElement>(
        &self,
        data: &DeviceVec<T>,
        host: &mut HostBuffer<T>,
    ) -> Result<(), Error> {
        if data.len != host.len {
            return Err(length_error("download_async", data.len, host.len));
        }
        backend::download_async(&self.device, self.lane, &data.alloc, &host.alloc)
    }

    /// `len` zeroed elements of page-locked host memory.
    pub fn alloc_host<T: DeviceElement>(&self, len: usize) -> Result<HostBuffer<T>, Error> {
        let bytes = byte_len::<T>(len)?;
        Ok(HostBuffer {
            len,
            alloc: backend::alloc_host(&self.device, bytes)?,
            _t: PhantomData,
        })
    }

    /// A copy of `data` on the device, made by the device.
    pub fn copy<T: DeviceElement, D: Input<T> + ?Sized>(
        &self,
        data: &D,
    ) -> Result<DeviceVec<T>, Error> {
        match data.source() {
            Source::Host(h) => self.upload(h),
            Source::Device { vec, start, len } => {
                let out = self.alloc::<T>(len)?;
                let size = size_of::<T>();
                backend::copy(
                    &self.device,
                    self.lane,
                    (&vec.alloc, start * size),
                    (&out.alloc, 0),
                    len * size,
                )?;
                Ok(out)
            }
        }
    }

    /// Folds `data` with `op` from `init` on the GPU: the registration
    /// [`crate::reduce`] runs on the CPU. `op` must be associative and
    /// commutative; the combining order is the provider's, fixed for a
    /// given length (deterministic). Waits for the value.
    #[track_caller]
    #[inline(never)]
    pub fn reduce<T, D, F>(&self, data: &D, init: T, op: F) -> Result<T, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        self.reduce_at(core::panic::Location::caller(), data, init, &op)
    }

    /// [`Gpu::reduce`] of the call at `site`.
    fn reduce_at<T, D, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        init: T,
        op: &F,
    ) -> Result<T, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let mut value = core::mem::MaybeUninit::<T>::uninit();
        let call = self.call::<F>(site, id!(provider Reduce), &[T::ELEMENT; 3]);
        // SAFETY: `value` has room for one T; the backend checks the
        // element type against the compiled one before it writes it.
        let written = unsafe {
            backend::run(
                &self.device,
                self.lane,
                &call,
                &[data.source().erase()],
                None,
                None,
                Some(value_of(&init)),
                op as *const F as *const u8,
                backend::Out::Value(value.as_mut_ptr() as *mut u8, size_of::<T>()),
            )?
        };
        match written {
            backend::Done::Value(n) if n == size_of::<T>() => {
                // SAFETY: the kernel wrote one T (a DeviceElement: every
                // bit pattern of its scalars is a value).
                Ok(unsafe { value.assume_init() })
            }
            _ => Err(Error {
                kind: ErrorKind::Mismatch,
                message: "the reduce kernel returned no value".into(),
            }),
        }
    }

    /// Every prefix of `data` folded with `op` ([`crate::inclusive_scan`]).
    /// `op` must be associative; the result is the same bits on every run.
    #[track_caller]
    #[inline(never)]
    pub fn inclusive_scan<T, D, F>(&self, data: &D, op: F) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        self.inclusive_scan_at(core::panic::Location::caller(), data, None, &op)
    }

    /// [`Gpu::inclusive_scan`] of the call at `site`, from `seed` where one
    /// is given (a shard's carry, [`GpuSet::inclusive_scan`]).
    fn inclusive_scan_at<T, D, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        seed: Option<&T>,
        op: &F,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let call = self.call::<F>(site, id!(provider InclusiveScan), &[T::ELEMENT; 3]);
        self.fresh(
            &call,
            &[data.source().erase()],
            None,
            seed.map(value_of),
            op,
        )
    }

    /// [`Gpu::inclusive_scan`] into `out`, which has `data`'s length.
    #[track_caller]
    #[inline(never)]
    pub fn inclusive_scan_into<T, D, O, F>(&self, data: &D, out: &mut O, op: F) -> Result<(), Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        O: Output<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let call = self.call::<F>(site, id!(provider InclusiveScan), &[T::ELEMENT; 3]);
        self.into(
            &call,
            &[data.source().erase()],
            None,
            None,
            &op,
            out.target(),
        )
    }

    /// Every prefix before an element, from `init` ([`crate::exclusive_scan`]).
    #[track_caller]
    #[inline(never)]
    pub fn exclusive_scan<T, D, F>(&self, data: &D, init: T, op: F) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        self.exclusive_scan_at(core::panic::Location::caller(), data, init, &op)
    }

    /// [`Gpu::exclusive_scan`] of the call at `site`.
    fn exclusive_scan_at<T, D, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        init: T,
        op: &F,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let call = self.call::<F>(site, id!(provider ExclusiveScan), &[T::ELEMENT; 3]);
        self.fresh(
            &call,
            &[data.source().erase()],
            None,
            Some(value_of(&init)),
            op,
        )
    }

    /// [`Gpu::exclusive_scan`] into `out`, which has `data`'s length.
    #[track_caller]
    #[inline(never)]
    pub fn exclusive_scan_into<T, D, O, F>(
        &self,
        data: &D,
        out: &mut O,
        init: T,
        op: F,
    ) -> Result<(), Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        O: Output<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let call = self.call::<F>(site, id!(provider ExclusiveScan), &[T::ELEMENT; 3]);
        self.into(
            &call,
            &[data.source().erase()],
            None,
            Some(value_of(&init)),
            &op,
            out.target(),
        )
    }

    /// `op` of each element ([`crate::transform`]).
    #[track_caller]
    #[inline(never)]
    pub fn transform<T, U, D, F>(&self, data: &D, op: F) -> Result<DeviceVec<U>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T) -> U,
    {
        self.transform_at(core::panic::Location::caller(), data, &op)
    }

    /// [`Gpu::transform`] of the call at `site`.
    fn transform_at<T, U, D, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        op: &F,
    ) -> Result<DeviceVec<U>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T) -> U,
    {
        let call = self.call::<F>(site, id!(provider Transform), &[T::ELEMENT, U::ELEMENT]);
        self.fresh(&call, &[data.source().erase()], None, None, op)
    }

    /// [`Gpu::transform`] into `out`, which has `data`'s length.
    #[track_caller]
    #[inline(never)]
    pub fn transform_into<T, U, D, O, F>(&self, data: &D, out: &mut O, op: F) -> Result<(), Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        D: Input<T> + ?Sized,
        O: Output<U> + ?Sized,
        F: Fn(T) -> U,
    {
        let site = core::panic::Location::caller();
        let call = self.call::<F>(site, id!(provider Transform), &[T::ELEMENT, U::ELEMENT]);
        self.into(
            &call,
            &[data.source().erase()],
            None,
            None,
            &op,
            out.target(),
        )
    }

    /// `op` of each pair of elements ([`crate::transform2`]); the inputs
    /// must have one length.
    #[track_caller]
    #[inline(never)]
    pub fn transform2<T, U, V, DA, DB, F>(
        &self,
        a: &DA,
        b: &DB,
        op: F,
    ) -> Result<DeviceVec<V>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        V: DeviceElement,
        DA: Input<T> + ?Sized,
        DB: Input<U> + ?Sized,
        F: Fn(T, U) -> V,
    {
        self.transform2_at(core::panic::Location::caller(), a, b, &op)
    }

    /// [`Gpu::transform2`] of the call at `site`.
    fn transform2_at<T, U, V, DA, DB, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        a: &DA,
        b: &DB,
        op: &F,
    ) -> Result<DeviceVec<V>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        V: DeviceElement,
        DA: Input<T> + ?Sized,
        DB: Input<U> + ?Sized,
        F: Fn(T, U) -> V,
    {
        let (sa, sb) = pair(a.source(), b.source())?;
        let call = self.call::<F>(
            site,
            id!(provider Transform2),
            &[T::ELEMENT, U::ELEMENT, V::ELEMENT],
        );
        self.fresh(&call, &[sa, sb], None, None, op)
    }

    /// [`Gpu::transform2`] into `out`, which has the inputs' length.
    #[track_caller]
    #[inline(never)]
    pub fn transform2_into<T, U, V, DA, DB, O, F>(
        &self,
        a: &DA,
        b: &DB,
        out: &mut O,
        op: F,
    ) -> Result<(), Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        V: DeviceElement,
        DA: Input<T> + ?Sized,
        DB: Input<U> + ?Sized,
        O: Output<V> + ?Sized,
        F: Fn(T, U) -> V,
    {
        let site = core::panic::Location::caller();
        let (sa, sb) = pair(a.source(), b.source())?;
        let call = self.call::<F>(
            site,
            id!(provider Transform2),
            &[T::ELEMENT, U::ELEMENT, V::ELEMENT],
        );
        self.into(&call, &[sa, sb], None, None, &op, out.target())
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
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        self.segmented_reduce_at(core::panic::Location::caller(), data, offsets, init, &op)
    }

    /// [`Gpu::segmented_reduce`] of the call at `site`.
    fn segmented_reduce_at<T, D, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        offsets: &[usize],
        init: T,
        op: &F,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let call = self.call::<F>(site, id!(provider SegmentedReduce), &[T::ELEMENT; 3]);
        self.fresh(
            &call,
            &[data.source().erase()],
            Some(offsets),
            Some(value_of(&init)),
            op,
        )
    }

    /// [`Gpu::segmented_reduce`] into `out`, which has one element per
    /// segment (`offsets.len() - 1`).
    #[track_caller]
    #[inline(never)]
    pub fn segmented_reduce_into<T, D, O, F>(
        &self,
        data: &D,
        offsets: &[usize],
        out: &mut O,
        init: T,
        op: F,
    ) -> Result<(), Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        O: Output<T> + ?Sized,
        F: Fn(T, T) -> T,
    {
        let site = core::panic::Location::caller();
        let call = self.call::<F>(site, id!(provider SegmentedReduce), &[T::ELEMENT; 3]);
        self.into(
            &call,
            &[data.source().erase()],
            Some(offsets),
            Some(value_of(&init)),
            &op,
            out.target(),
        )
    }

    /// The elements `pred` keeps, in order ([`crate::select`]). Waits for
    /// the count of kept elements (the result's length).
    #[track_caller]
    #[inline(never)]
    pub fn select<T, D, P>(&self, data: &D, pred: P) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        P: Fn(T) -> bool,
    {
        self.select_at(core::panic::Location::caller(), data, &pred)
    }

    /// [`Gpu::select`] of the call at `site`.
    fn select_at<T, D, P>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        pred: &P,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        P: Fn(T) -> bool,
    {
        let call = self.call::<P>(site, id!(provider Select), &[T::ELEMENT, BOOL]);
        self.fresh(&call, &[data.source().erase()], None, None, pred)
    }

    /// The elements with each run of consecutive ones that `same` finds the
    /// same reduced to its first, in order, as [`Vec::dedup_by`]
    /// ([`crate::dedup_by`]): `same(a, b)` of each element and the one
    /// before it, an equivalence. Waits for the count of kept elements
    /// (the result's length).
    #[track_caller]
    #[inline(never)]
    pub fn dedup_by<T, D, E>(&self, data: &D, same: E) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        E: Fn(&T, &T) -> bool,
    {
        self.dedup_by_at(core::panic::Location::caller(), data, &same)
    }

    /// [`Gpu::dedup_by`] of the call at `site`.
    fn dedup_by_at<T, D, E>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        same: &E,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        E: Fn(&T, &T) -> bool,
    {
        let call = self.call::<E>(site, id!(provider DedupBy), &[T::ELEMENT, T::ELEMENT, BOOL]);
        self.fresh(&call, &[data.source().erase()], None, None, same)
    }

    /// The elements for which `pred` holds and those for which it does
    /// not, each in order, as [`Iterator::partition`] splits them
    /// ([`crate::partition`]): one pass, each half in a new allocation.
    /// Waits for the count of kept elements (the halves' lengths).
    #[track_caller]
    #[inline(never)]
    pub fn partition<T, D, P>(
        &self,
        data: &D,
        pred: P,
    ) -> Result<(DeviceVec<T>, DeviceVec<T>), Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        P: Fn(&T) -> bool,
    {
        self.partition_at(core::panic::Location::caller(), data, &pred)
    }

    /// [`Gpu::partition`] of the call at `site`.
    fn partition_at<T, D, P>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        pred: &P,
    ) -> Result<(DeviceVec<T>, DeviceVec<T>), Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        P: Fn(&T) -> bool,
    {
        let call = self.call::<P>(site, id!(provider Partition), &[T::ELEMENT, BOOL]);
        match self.run_new(&call, &[data.source().erase()], (None, None), None, pred)? {
            backend::Done::Split((kept, k), (rejected, r)) => Ok((
                DeviceVec {
                    len: k,
                    alloc: kept,
                    _t: PhantomData,
                },
                DeviceVec {
                    len: r,
                    alloc: rejected,
                    _t: PhantomData,
                },
            )),
            _ => Err(Error {
                kind: ErrorKind::Mismatch,
                message: "the partition returned no two device results".into(),
            }),
        }
    }

    /// For each query, the index of the first element of `sorted` for
    /// which `pred(element, query)` fails, as [`slice::partition_point`]
    /// finds it ([`crate::partition_point`]): one binary search a query,
    /// its probes the standard library's. `sorted` must be partitioned by
    /// the predicate for every query (all the elements for which it holds
    /// first), as `partition_point` requires.
    #[track_caller]
    #[inline(never)]
    pub fn partition_point<T, Q, DS, DQ, P>(
        &self,
        sorted: &DS,
        queries: &DQ,
        pred: P,
    ) -> Result<DeviceVec<usize>, Error>
    where
        T: DeviceElement,
        Q: DeviceElement,
        DS: Input<T> + ?Sized,
        DQ: Input<Q> + ?Sized,
        P: Fn(&T, &Q) -> bool,
    {
        let site = core::panic::Location::caller();
        let call = self.call::<P>(
            site,
            id!(provider PartitionPoint),
            &[T::ELEMENT, Q::ELEMENT, BOOL],
        );
        self.fresh(
            &call,
            &[sorted.source().erase(), queries.source().erase()],
            None,
            None,
            &pred,
        )
    }

    /// `a` and `b`, each sorted by `compare`, a total order, merged into
    /// one sorted by it, stably ([`crate::merge_by`]): of equal elements,
    /// `a`'s first. The kernel calls the compiled comparator as "less
    /// than", as [`Gpu::sort_by`]'s.
    #[track_caller]
    #[inline(never)]
    pub fn merge_by<T, DA, DB, C>(&self, a: &DA, b: &DB, compare: C) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        DA: Input<T> + ?Sized,
        DB: Input<T> + ?Sized,
        C: Fn(&T, &T) -> core::cmp::Ordering,
    {
        let site = core::panic::Location::caller();
        let call = self.call::<C>(site, id!(provider MergeBy), &[T::ELEMENT, T::ELEMENT, BOOL]);
        let inputs = [a.source().erase(), b.source().erase()];
        self.fresh(&call, &inputs, None, None, &compare)
    }

    /// For each run of consecutive keys that `same` finds equal, its last
    /// key and the `op`-fold of its values, in order
    /// ([`crate::reduce_by_key`]): `same(a, b)` is asked of a key and the
    /// one after it, as [`slice::chunk_by`] asks. `same` must be an
    /// equivalence and `op` associative (the GPU folds a run in a tree, in
    /// index order). One pass (CUB's reduce-by-key), each result in a new
    /// allocation; waits for the count of runs (their lengths). At most
    /// 2^31 - 1 elements.
    #[track_caller]
    #[inline(never)]
    pub fn reduce_by_key<K, V, DK, DV, E, F>(
        &self,
        keys: &DK,
        values: &DV,
        same: E,
        op: F,
    ) -> Result<(DeviceVec<K>, DeviceVec<V>), Error>
    where
        K: DeviceElement,
        V: DeviceElement,
        DK: Input<K> + ?Sized,
        DV: Input<V> + ?Sized,
        E: Fn(&K, &K) -> bool,
        F: Fn(V, V) -> V,
    {
        let site = core::panic::Location::caller();
        let inputs = [keys.source().erase(), values.source().erase()];
        match self.run_by_key::<K, V, E, F>(site, id!(provider ReduceByKey), &inputs, same, op)? {
            backend::Done::Split((keys, k), (folds, f)) => Ok((
                DeviceVec {
                    len: k,
                    alloc: keys,
                    _t: PhantomData,
                },
                DeviceVec {
                    len: f,
                    alloc: folds,
                    _t: PhantomData,
                },
            )),
            _ => Err(Error {
                kind: ErrorKind::Mismatch,
                message: "reduce_by_key returned no two device results".into(),
            }),
        }
    }

    /// The inclusive `op`-scan of `values`, restarting at each run of
    /// consecutive keys that `same` finds equal ([`crate::scan_by_key`]),
    /// as [`Gpu::reduce_by_key`] finds the runs; the same laws. One pass
    /// (CUB's scan-by-key); at most 2^31 - 1 elements.
    #[track_caller]
    #[inline(never)]
    pub fn scan_by_key<K, V, DK, DV, E, F>(
        &self,
        keys: &DK,
        values: &DV,
        same: E,
        op: F,
    ) -> Result<DeviceVec<V>, Error>
    where
        K: DeviceElement,
        V: DeviceElement,
        DK: Input<K> + ?Sized,
        DV: Input<V> + ?Sized,
        E: Fn(&K, &K) -> bool,
        F: Fn(V, V) -> V,
    {
        let site = core::panic::Location::caller();
        let inputs = [keys.source().erase(), values.source().erase()];
        device_vec(self.run_by_key::<K, V, E, F>(
            site,
            id!(provider ScanByKey),
            &inputs,
            same,
            op,
        )?)
    }

    /// How many elements `bin` maps to each of `bins` bins
    /// ([`crate::histogram`]); an index at or past `bins` is not counted.
    #[track_caller]
    #[inline(never)]
    pub fn histogram<T, D, F>(&self, data: &D, bins: usize, bin: F) -> Result<DeviceVec<u64>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T) -> usize,
    {
        self.histogram_at(core::panic::Location::caller(), data, bins, &bin)
    }

    /// [`Gpu::histogram`] of the call at `site`.
    fn histogram_at<T, D, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        bins: usize,
        bin: &F,
    ) -> Result<DeviceVec<u64>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        F: Fn(T) -> usize,
    {
        let call = self.call::<F>(site, id!(provider Histogram), &[T::ELEMENT, USIZE]);
        let sizes = (None, Some(bins));
        device_vec(self.run_new(&call, &[data.source().erase()], sizes, None, bin)?)
    }

    /// The elements stably sorted by `compare`, a total order, as
    /// [`slice::sort_by`] ([`crate::sort_by`]); at most 2^32 - 1 of them.
    /// The kernel calls the compiled comparator as "less than":
    /// `compare(&a, &b) == Ordering::Less` (the thunk ABI's `(T, T) ->
    /// bool`, which the call's types name).
    #[track_caller]
    #[inline(never)]
    pub fn sort_by<T, D, C>(&self, data: &D, compare: C) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        C: Fn(&T, &T) -> core::cmp::Ordering,
    {
        self.sort_at(core::panic::Location::caller(), data, &compare)
    }

    /// Each segment of the elements stably sorted by `compare`, a total
    /// order ([`crate::segmented_sort_by`]): segment `i` is
    /// `data[offsets[i]..offsets[i+1]]`, and the elements outside every
    /// segment stay where they are. At most 2^32 - 1 elements and 2^32 - 3
    /// segments; offsets that decrease or pass the end of the data are an
    /// error. The kernel calls the compiled comparator as "less than", as
    /// [`Gpu::sort_by`]'s.
    #[track_caller]
    #[inline(never)]
    pub fn segmented_sort_by<T, D, C>(
        &self,
        data: &D,
        offsets: &[usize],
        compare: C,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
        C: Fn(&T, &T) -> core::cmp::Ordering,
    {
        let site = core::panic::Location::caller();
        let call = self.call::<C>(
            site,
            id!(provider SegmentedSortBy),
            &[T::ELEMENT, T::ELEMENT, BOOL],
        );
        self.fresh(
            &call,
            &[data.source().erase()],
            Some(offsets),
            None,
            &compare,
        )
    }

    /// The elements stably sorted by `key`, as [`slice::sort_by_key`]
    /// ([`crate::sort_by_key`]): an integer, `bool` or `char` of each, or a
    /// tuple of up to four; at most 2^32 - 1 of them. From the size where
    /// it pays, a radix sort: of the elements on their key fields where
    /// the key is proved to be the element's own fields (`|p| p.id`), else
    /// of the keys, each computed once by the compiled key function and
    /// carrying its element (`|x| x >> 4`). Below it, or for a key a radix
    /// sort cannot rank (`u128`), the merge sort, which calls the key
    /// function twice for each comparison, as "less than": `key(&a) <
    /// key(&b)`.
    #[track_caller]
    #[inline(never)]
    pub fn sort_by_key<T, K, D, F>(&self, data: &D, key: F) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        K: Ord,
        D: Input<T> + ?Sized,
        F: Fn(&T) -> K,
    {
        self.sort_at(core::panic::Location::caller(), data, &key)
    }

    /// The elements in ascending order, stably, as [`slice::sort`]
    /// ([`crate::sort`]): an integer type's own order; at most 2^32 - 1 of
    /// them. The kernel is `sort_by`'s with the comparator `|a, b|
    /// a.cmp(b)`, which the compiler supplies.
    #[track_caller]
    #[inline(never)]
    pub fn sort<T, D>(&self, data: &D) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement + Ord,
        D: Input<T> + ?Sized,
    {
        self.sort_natural(core::panic::Location::caller(), data)
    }

    /// The elements in ascending order, as [`slice::sort_unstable`]
    /// ([`crate::sort_unstable`]); for integers, what [`Gpu::sort`] gives,
    /// by the same kernel.
    #[track_caller]
    #[inline(never)]
    pub fn sort_unstable<T, D>(&self, data: &D) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement + Ord,
        D: Input<T> + ?Sized,
    {
        self.sort_natural(core::panic::Location::caller(), data)
    }

    /// `sort` and `sort_unstable` at `site`: the comparator is the
    /// compiler's, with no environment (an empty one, `()`).
    fn sort_natural<T, D>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement + Ord,
        D: Input<T> + ?Sized,
    {
        self.sort_at(site, data, &())
    }

    /// The sort of the call at `site` whose callback is `C`: `sort_by`'s
    /// comparator, `sort_by_key`'s key function, or `()` for the element
    /// type's own order (the kernel's "less than" is the compiler's).
    fn sort_at<T, D, C>(
        &self,
        site: &'static core::panic::Location<'static>,
        data: &D,
        callback: &C,
    ) -> Result<DeviceVec<T>, Error>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
    {
        let call = self.call::<C>(site, id!(provider SortBy), &[T::ELEMENT, T::ELEMENT, BOOL]);
        self.fresh(&call, &[data.source().erase()], None, None, callback)
    }

    /// Runs a by-key call at `site` on `inputs` (its keys and values) into
    /// new allocations: its two closures go to the kernel as one
    /// [`ByKey`].
    fn run_by_key<K: DeviceElement, V: DeviceElement, E, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        provider: ProviderId,
        inputs: &[Data<'_>],
        same: E,
        op: F,
    ) -> Result<backend::Done, Error> {
        let callbacks = ByKey { same, op };
        let call = self.call::<ByKey<E, F>>(site, provider, &[K::ELEMENT, V::ELEMENT, V::ELEMENT]);
        self.run_new(&call, inputs, (None, None), None, &callbacks)
    }

    /// The facts of the call at `site` that identify its kernel.
    fn call<'t, F>(
        &self,
        site: &'static core::panic::Location<'static>,
        provider: ProviderId,
        types: &'t [ElementId],
    ) -> Call<'t> {
        Call {
            file: site.file(),
            line: site.line(),
            column: site.column(),
            provider,
            types,
            closure_type: core::any::type_name::<F>(),
            closure_size: size_of::<F>(),
            closure_align: align_of::<F>(),
        }
    }

    /// Runs `call` into new device allocations: what it produced.
    fn run_new<F>(
        &self,
        call: &Call<'_>,
        inputs: &[Data<'_>],
        (offsets, bins): (Option<&[usize]>, Option<usize>),
        init: Option<(*const u8, usize)>,
        op: &F,
    ) -> Result<backend::Done, Error> {
        // SAFETY: `init` is one live value and `op` a live F; the backend
        // checks every type against the compiled ones before it reads or
        // writes them as such.
        unsafe {
            backend::run(
                &self.device,
                self.lane,
                call,
                inputs,
                offsets,
                bins,
                init,
                op as *const F as *const u8,
                backend::Out::New,
            )
        }
    }

    /// Runs `call` into a new device allocation of `O` elements.
    fn fresh<O, F>(
        &self,
        call: &Call<'_>,
        inputs: &[Data<'_>],
        offsets: Option<&[usize]>,
        init: Option<(*const u8, usize)>,
        op: &F,
    ) -> Result<DeviceVec<O>, Error> {
        device_vec(self.run_new(call, inputs, (offsets, None), init, op)?)
    }

    /// Runs `call` into `out`.
    fn into<O, F>(
        &self,
        call: &Call<'_>,
        inputs: &[Data<'_>],
        offsets: Option<&[usize]>,
        init: Option<(*const u8, usize)>,
        op: &F,
        out: Target<'_, O>,
    ) -> Result<(), Error> {
        // SAFETY: as for `fresh`; the output is a live allocation of ours,
        // whose range the backend checks.
        unsafe {
            backend::run(
                &self.device,
                self.lane,
                call,
                inputs,
                offsets,
                None,
                init,
                op as *const F as *const u8,
                backend::Out::Into(&out.vec.alloc, out.start, out.len),
            )?
        };
        Ok(())
    }
}

/// A parallel iterator over a device input, in rayon's shape:
/// [`Gpu::par_iter`], then `map`, `filter` and `enumerate` stages (an
/// `enumerate` before any `filter`, as rayon's), then one terminal
/// (`sum`, `product`, `reduce`, `min`, `max`, `min_by`, `max_by`,
/// `min_by_key`, `max_by_key`, `count`, `any`, `all`, or `collect` into a
/// [`DeviceVec`]).
///
/// The whole chain runs as **one fused kernel**: the compiler sees every
/// closure of the chain where the terminal is called, and compiles them as
/// one callback whose environment is the chain's own bytes ([`Map`],
/// [`Filter`] and [`Enumerate`] are `#[repr(C)]`, the closures inside in
/// rustc's layout); the input is read once and nothing between the stages
/// is stored. An `enumerate`'s index is each element's position, which the
/// kernel hands the stages.
///
/// ```ignore
/// let n: usize = gpu.par_iter(&x).filter(move |v: &f32| *v > t).count()?;
/// let s: f32 = gpu.par_iter(&x).map(move |v: f32| v * g).sum()?;
/// ```
///
/// A terminal waits for its value (`collect`, for its length). Where several elements are equally
/// minimal (`min_by`, `min_by_key`, `min`) the first is returned, and the
/// last of equally maximal ones (`max*`), as [`Iterator`]'s methods do,
/// whatever order the GPU combines them in. `sum`, `product` and `reduce`
/// combine in a tree: their operation must be associative and commutative
/// (floats: the result is the same bits on every run of one size, but may
/// differ from a sequential fold's).
#[must_use = "a chain runs when its terminal is called"]
pub struct ParIter<'g, T, S = ()> {
    gpu: &'g Gpu,
    source: Source<'g, T>,
    stages: S,
}

/// A `map` stage: `f` of what `prev` yields.
#[repr(C)]
pub struct Map<S, F, U> {
    prev: S,
    f: F,
    _u: PhantomData<fn() -> U>,
}

/// A `filter` stage: what `prev` yields and `p` keeps.
#[repr(C)]
pub struct Filter<S, P> {
    prev: S,
    p: P,
}

/// An `enumerate` stage: what `prev` yields, each with its element's
/// index in the input, `(usize, item)`. It holds no closure: its bytes are
/// `prev`'s.
#[repr(C)]
pub struct Enumerate<S> {
    prev: S,
}

/// What a chain hands its kernel: its stages and its terminal's closure
/// (`()` when the terminal takes none), in this `#[repr(C)]` layout, which
/// the compiler computes from the closures' own.
#[repr(C)]
#[doc(hidden)]
pub struct Chain<S, C> {
    stages: S,
    terminal: C,
}

/// What a `reduce_by_key` or `scan_by_key` call hands its kernel: its
/// two closures, in this `#[repr(C)]` layout, which the compiler computes
/// from theirs (as a chain's).
#[repr(C)]
#[doc(hidden)]
pub struct ByKey<E, F> {
    same: E,
    op: F,
}

/// The item type a chain's stages yield from elements `T`, and whether
/// they read an element's index (an `enumerate`: its kernel passes each
/// element's index to the stages).
#[doc(hidden)]
pub trait Stages<T> {
    type Item;
    const INDEXED: bool;
}

impl<T> Stages<T> for () {
    type Item = T;
    const INDEXED: bool = false;
}

impl<T, S: Stages<T>, F: Fn(S::Item) -> U, U> Stages<T> for Map<S, F, U> {
    type Item = U;
    const INDEXED: bool = S::INDEXED;
}

impl<T, S: Stages<T>, P: Fn(&S::Item) -> bool> Stages<T> for Filter<S, P> {
    type Item = S::Item;
    const INDEXED: bool = S::INDEXED;
}

impl<T, S: Stages<T>> Stages<T> for Enumerate<S> {
    type Item = (usize, S::Item);
    const INDEXED: bool = true;
}

/// Stages that yield one item for every element, in order (no `filter`):
/// the ones an `enumerate` may follow, as rayon's `enumerate` needs an
/// indexed iterator. Its index is then the element's position in the input.
#[doc(hidden)]
pub trait Indexed {}

impl Indexed for () {}
impl<S: Indexed, F, U> Indexed for Map<S, F, U> {}
impl<S: Indexed> Indexed for Enumerate<S> {}

impl Gpu {
    /// A parallel iterator over `data`: see [`ParIter`].
    pub fn par_iter<'g, T, D>(&'g self, data: &'g D) -> ParIter<'g, T, ()>
    where
        T: DeviceElement,
        D: Input<T> + ?Sized,
    {
        ParIter {
            gpu: self,
            source: data.source(),
            stages: (),
        }
    }
}

impl<'g, T, S> ParIter<'g, T, S>
where
    T: DeviceElement,
    S: Stages<T>,
{
    /// Each item mapped by `f`.
    pub fn map<U, F>(self, f: F) -> ParIter<'g, T, Map<S, F, U>>
    where
        F: Fn(S::Item) -> U,
    {
        ParIter {
            gpu: self.gpu,
            source: self.source,
            stages: Map {
                prev: self.stages,
                f,
                _u: PhantomData,
            },
        }
    }

    /// The items `p` keeps.
    pub fn filter<P>(self, p: P) -> ParIter<'g, T, Filter<S, P>>
    where
        P: Fn(&S::Item) -> bool,
    {
        ParIter {
            gpu: self.gpu,
            source: self.source,
            stages: Filter {
                prev: self.stages,
                p,
            },
        }
    }

    /// Each item with its index, `(i, item)`, as [`Iterator::enumerate`]:
    /// `i` is the position in the input of the element it came from. As
    /// rayon's, only before any `filter` (whose items have no position):
    /// `enumerate().filter(…)` is fine, `filter(…).enumerate()` does not
    /// compile.
    ///
    /// ```no_run
    /// # use native::gpu::{DeviceVec, Error, Gpu};
    /// # fn f(gpu: &Gpu, x: &DeviceVec<f32>, t: f32) -> Result<(), Error> {
    /// // The index of the least value (the first of equal ones).
    /// let at: Option<(usize, f32)> =
    ///     gpu.par_iter(x).enumerate().min_by(|a: &(usize, f32), b: &(usize, f32)| a.1.total_cmp(&b.1))?;
    /// // Where the values pass a threshold, in order.
    /// let hits: DeviceVec<usize> = gpu
    ///     .par_iter(x)
    ///     .enumerate()
    ///     .filter(move |p: &(usize, f32)| p.1 > t)
    ///     .map(|p: (usize, f32)| p.0)
    ///     .collect()?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// After a `filter` an item has no position to give:
    ///
    /// ```compile_fail,E0599
    /// # use native::gpu::{DeviceVec, Error, Gpu};
    /// # fn f(gpu: &Gpu, x: &DeviceVec<f32>, t: f32) -> Result<(), Error> {
    /// let n = gpu.par_iter(x).filter(move |v: &f32| *v > t).enumerate().count()?;
    /// # Ok(())
    /// # }
    /// ```
    pub fn enumerate(self) -> ParIter<'g, T, Enumerate<S>>
    where
        S: Indexed,
    {
        ParIter {
            gpu: self.gpu,
            source: self.source,
            stages: Enumerate { prev: self.stages },
        }
    }
}

impl<'g, T, S> ParIter<'g, T, S>
where
    T: DeviceElement,
    S: Stages<T>,
    S::Item: DeviceElement,
{
    /// The sum of the items, as [`Iterator::sum`] (no items: its empty
    /// sum); integers overflow as the build's `+` does.
    #[track_caller]
    #[inline(never)]
    pub fn sum(self) -> Result<S::Item, Error>
    where
        S::Item: core::iter::Sum<S::Item>,
    {
        let site = core::panic::Location::caller();
        let v = self.run(site, id!(provider ChainReduce), S::Item::ELEMENT, None, ())?;
        Ok(v.unwrap_or_else(|| core::iter::empty::<S::Item>().sum()))
    }

    /// The product of the items, as [`Iterator::product`].
    #[track_caller]
    #[inline(never)]
    pub fn product(self) -> Result<S::Item, Error>
    where
        S::Item: core::iter::Product<S::Item>,
    {
        let site = core::panic::Location::caller();
        let v = self.run(site, id!(provider ChainReduce), S::Item::ELEMENT, None, ())?;
        Ok(v.unwrap_or_else(|| core::iter::empty::<S::Item>().product()))
    }

    /// `op` folded over the items from `init`: `init` alone when there are
    /// none. `op` must be associative and commutative.
    #[track_caller]
    #[inline(never)]
    pub fn reduce<F>(self, init: S::Item, op: F) -> Result<S::Item, Error>
    where
        F: Fn(S::Item, S::Item) -> S::Item,
    {
        let site = core::panic::Location::caller();
        let v = self.run(
            site,
            id!(provider ChainReduce),
            S::Item::ELEMENT,
            Some(init),
            op,
        )?;
        Ok(v.unwrap_or(init))
    }

    /// How many items there are.
    #[track_caller]
    #[inline(never)]
    pub fn count(self) -> Result<usize, Error> {
        let site = core::panic::Location::caller();
        let v = self.run(site, id!(provider ChainReduce), U64, Some(0u64), ())?;
        Ok(v.unwrap_or(0) as usize)
    }

    /// Whether `p` holds for any item (`false` for none).
    #[track_caller]
    #[inline(never)]
    pub fn any<P>(self, p: P) -> Result<bool, Error>
    where
        P: Fn(S::Item) -> bool,
    {
        let site = core::panic::Location::caller();
        let v = self.run(site, id!(provider ChainReduce), BOOL, Some(false), p)?;
        Ok(v.unwrap_or(false))
    }

    /// Whether `p` holds for every item (`true` for none).
    #[track_caller]
    #[inline(never)]
    pub fn all<P>(self, p: P) -> Result<bool, Error>
    where
        P: Fn(S::Item) -> bool,
    {
        let site = core::panic::Location::caller();
        let v = self.run(site, id!(provider ChainReduce), BOOL, Some(true), p)?;
        Ok(v.unwrap_or(true))
    }

    /// The least item (the first of equal ones), `None` for none.
    #[track_caller]
    #[inline(never)]
    pub fn min(self) -> Result<Option<S::Item>, Error>
    where
        S::Item: Ord,
    {
        let site = core::panic::Location::caller();
        self.run(site, id!(provider ChainPick), S::Item::ELEMENT, None, ())
    }

    /// The greatest item (the last of equal ones), `None` for none.
    #[track_caller]
    #[inline(never)]
    pub fn max(self) -> Result<Option<S::Item>, Error>
    where
        S::Item: Ord,
    {
        let site = core::panic::Location::caller();
        self.run(site, id!(provider ChainPick), S::Item::ELEMENT, None, ())
    }

    /// The least item by `compare` (the first of equal ones), as
    /// [`Iterator::min_by`].
    #[track_caller]
    #[inline(never)]
    pub fn min_by<C>(self, compare: C) -> Result<Option<S::Item>, Error>
    where
        C: Fn(&S::Item, &S::Item) -> core::cmp::Ordering,
    {
        let site = core::panic::Location::caller();
        self.run(
            site,
            id!(provider ChainPick),
            S::Item::ELEMENT,
            None,
            compare,
        )
    }

    /// The greatest item by `compare` (the last of equal ones), as
    /// [`Iterator::max_by`].
    #[track_caller]
    #[inline(never)]
    pub fn max_by<C>(self, compare: C) -> Result<Option<S::Item>, Error>
    where
        C: Fn(&S::Item, &S::Item) -> core::cmp::Ordering,
    {
        let site = core::panic::Location::caller();
        self.run(
            site,
            id!(provider ChainPick),
            S::Item::ELEMENT,
            None,
            compare,
        )
    }

    /// The item with the least key (the first of equal ones), as
    /// [`Iterator::min_by_key`]; `K` an integer, `bool` or `char`.
    #[track_caller]
    #[inline(never)]
    pub fn min_by_key<K, F>(self, key: F) -> Result<Option<S::Item>, Error>
    where
        K: Ord,
        F: Fn(&S::Item) -> K,
    {
        let site = core::panic::Location::caller();
        self.run(site, id!(provider ChainPick), S::Item::ELEMENT, None, key)
    }

    /// The item with the greatest key (the last of equal ones), as
    /// [`Iterator::max_by_key`].
    #[track_caller]
    #[inline(never)]
    pub fn max_by_key<K, F>(self, key: F) -> Result<Option<S::Item>, Error>
    where
        K: Ord,
        F: Fn(&S::Item) -> K,
    {
        let site = core::panic::Location::caller();
        self.run(site, id!(provider ChainPick), S::Item::ELEMENT, None, key)
    }

    /// The items, in order, in a new device vector (a `filter` keeps as
    /// many as it keeps). Waits for their count (the result's length).
    #[track_caller]
    #[inline(never)]
    pub fn collect(self) -> Result<DeviceVec<S::Item>, Error> {
        let site = core::panic::Location::caller();
        let chain = Chain {
            stages: self.stages,
            terminal: (),
        };
        let types = chain_types::<T, S>(S::Item::ELEMENT);
        let call =
            self.gpu
                .call::<Chain<S, ()>>(site, id!(provider ChainCollect), types.as_slice());
        self.gpu
            .fresh(&call, &[self.source.erase()], None, None, &chain)
    }

    /// Runs the chain with `terminal` on the kernel compiled for `site`:
    /// the value it ends with, `None` when it kept nothing (and had no
    /// `init`). `R` is the value's type: the items', `u64` for a count,
    /// `bool` for `any`/`all`.
    fn run<R: Copy, C>(
        self,
        site: &'static core::panic::Location<'static>,
        provider: ProviderId,
        value: ElementId,
        init: Option<R>,
        terminal: C,
    ) -> Result<Option<R>, Error> {
        let chain = Chain {
            stages: self.stages,
            terminal,
        };
        let types = chain_types::<T, S>(value);
        let call = self
            .gpu
            .call::<Chain<S, C>>(site, provider, types.as_slice());
        let mut out = core::mem::MaybeUninit::<R>::uninit();
        // SAFETY: `init` is one live R, `chain` a live Chain<S, C>, `out`
        // has room for one R; the backend checks the types against the
        // compiled ones before it reads or writes them as such.
        let done = unsafe {
            backend::run(
                &self.gpu.device,
                self.gpu.lane,
                &call,
                &[self.source.erase()],
                None,
                None,
                init.as_ref().map(value_of),
                &chain as *const Chain<S, C> as *const u8,
                backend::Out::Value(out.as_mut_ptr() as *mut u8, size_of::<R>()),
            )?
        };
        match done {
            backend::Done::Value(0) => Ok(None),
            // SAFETY: the kernel wrote one R (a DeviceElement, u64 or a
            // bool it wrote as 0 or 1).
            backend::Done::Value(n) if n == size_of::<R>() => {
                Ok(Some(unsafe { out.assume_init() }))
            }
            _ => Err(Error {
                kind: ErrorKind::Mismatch,
                message: "the chain's kernel returned no value".into(),
            }),
        }
    }
}

/// The element types a chain's call states, as its compiled signature has
/// them: the input's, the index's where the stages read it (`(T, usize) ->
/// R`), and the value's.
fn chain_types<T: DeviceElement, S: Stages<T>>(value: ElementId) -> ChainTypes {
    match S::INDEXED {
        true => ChainTypes([T::ELEMENT, USIZE, value], 3),
        false => ChainTypes([T::ELEMENT, value, value], 2),
    }
}

/// Up to three element types, the first `.1` of them stated.
struct ChainTypes([ElementId; 3], usize);

impl ChainTypes {
    fn as_slice(&self) -> &[ElementId] {
        &self.0[..self.1]
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        backend::release_lane(&self.device, self.lane);
    }
}

/// The bytes of `len` elements of T, or an error when they overflow.
/// What a call run into a new allocation produced, as a `DeviceVec<O>`.
fn device_vec<O>(done: backend::Done) -> Result<DeviceVec<O>, Error> {
    match done {
        backend::Done::Device(Some(alloc), len) => Ok(DeviceVec {
            len,
            alloc,
            _t: PhantomData,
        }),
        _ => Err(Error {
            kind: ErrorKind::Mismatch,
            message: "the call returned no device result".into(),
        }),
    }
}

fn byte_len<T>(len: usize) -> Result<usize, Error> {
    len.checked_mul(size_of::<T>()).ok_or_else(|| Error {
        kind: ErrorKind::OutOfMemory,
        message: std::format!(
            "{len} elements of {} bytes do not fit in memory",
            size_of::<T>()
        ),
    })
}

/// transform2's inputs, of one length, their element types erased (the
/// backend reads each by its compiled type's size).
fn pair<'a, T, U>(a: Source<'a, T>, b: Source<'a, U>) -> Result<(Data<'a>, Data<'a>), Error> {
    if a.len() != b.len() {
        return Err(Error {
            kind: ErrorKind::Mismatch,
            message: std::format!(
                "transform2: the inputs differ in length ({} and {})",
                a.len(),
                b.len()
            ),
        });
    }
    Ok((a.erase(), b.erase()))
}

/// The facts of one call that identify its kernel.
#[cfg_attr(not(feature = "gpu"), allow(dead_code))]
struct Call<'a> {
    file: &'static str,
    line: u32,
    column: u32,
    provider: ProviderId,
    /// The callback's parameter and result types, in order.
    types: &'a [ElementId],
    closure_type: &'static str,
    closure_size: usize,
    closure_align: usize,
}

#[cfg(feature = "gpu")]
mod backend {
    use super::{Call, Data, Error, ErrorKind};
    use runtime::host::{self, HostBytes, HostError, HostErrorKind};

    pub type Device = &'static host::Device;
    pub type Alloc = host::DeviceAlloc;
    pub type Host = host::HostAlloc;
    pub type Mark = host::MarkEvent;

    /// Where a call's result goes.
    pub enum Out<'a> {
        Value(*mut u8, usize),
        New,
        Into(&'a Alloc, usize, usize),
    }

    /// What a call produced: a value's bytes, or device elements (in a new
    /// allocation, or in the `Out::Into` one).
    pub enum Done {
        Value(usize),
        Device(Option<Alloc>, usize),
        /// Two results, each with its length: partition's halves,
        /// reduce_by_key's keys and folds.
        Split((Alloc, usize), (Alloc, usize)),
    }

    fn convert(e: HostError) -> Error {
        let kind = match e.kind {
            HostErrorKind::NoDevice => ErrorKind::NoDevice,
            HostErrorKind::NotCompiled => ErrorKind::NotCompiled,
            HostErrorKind::Mismatch => ErrorKind::Mismatch,
            HostErrorKind::Artifacts => ErrorKind::Artifacts,
            HostErrorKind::Device => ErrorKind::Device,
            HostErrorKind::OutOfMemory => ErrorKind::OutOfMemory,
        };
        Error {
            kind,
            message: e.message,
        }
    }

    pub fn open(ordinal: usize) -> Result<Device, Error> {
        host::Device::open(ordinal).map_err(convert)
    }

    pub fn lane(d: &Device) -> Result<usize, Error> {
        d.lane().map_err(convert)
    }

    pub fn release_lane(d: &Device, lane: usize) {
        d.release_lane(lane)
    }

    pub fn synchronize(d: &Device, lane: usize) -> Result<(), Error> {
        d.synchronize(lane).map_err(convert)
    }

    pub fn name(d: &Device) -> &str {
        &d.name
    }

    /// # Safety
    ///
    /// `len` live bytes at `ptr`, not written until this returns.
    pub unsafe fn upload(
        d: &Device,
        lane: usize,
        (ptr, len): (*const u8, usize),
    ) -> Result<Alloc, Error> {
        // SAFETY: the caller's contract.
        unsafe { d.upload(lane, HostBytes { ptr, len }) }.map_err(convert)
    }

    /// # Safety
    ///
    /// As [`upload`].
    pub unsafe fn upload_into(a: &Alloc, (ptr, len): (*const u8, usize)) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { a.upload(0, HostBytes { ptr, len }) }.map_err(convert)
    }

    pub fn alloc(d: &Device, lane: usize, bytes: usize) -> Result<Alloc, Error> {
        d.alloc(lane, bytes).map_err(convert)
    }

    pub fn alloc_host(d: &Device, bytes: usize) -> Result<Host, Error> {
        let h = d.alloc_host(bytes).map_err(convert)?;
        // SAFETY: `bytes` writable bytes of our own allocation.
        unsafe { core::ptr::write_bytes(h.as_ptr(), 0, bytes) };
        Ok(h)
    }

    pub fn host_ptr(h: &Host) -> *mut u8 {
        h.as_ptr()
    }

    pub fn host_wait(h: &Host) -> Result<(), Error> {
        h.wait().map_err(convert)
    }

    pub fn memory(d: &Device) -> Result<(usize, usize), Error> {
        d.memory().map_err(convert)
    }

    pub fn upload_async(d: &Device, lane: usize, h: &Host) -> Result<Alloc, Error> {
        d.upload_async(lane, h).map_err(convert)
    }

    pub fn mark(d: &Device, lane: usize) -> Result<Mark, Error> {
        d.mark(lane).map_err(convert)
    }

    pub fn elapsed_ms(a: &Mark, b: &Mark) -> Result<f32, Error> {
        a.elapsed_ms(b).map_err(convert)
    }

    pub fn download_async(d: &Device, lane: usize, a: &Alloc, h: &Host) -> Result<(), Error> {
        d.download_async(lane, a, h).map_err(convert)
    }

    pub fn copy(
        d: &Device,
        lane: usize,
        src: (&Alloc, usize),
        dst: (&Alloc, usize),
        bytes: usize,
    ) -> Result<(), Error> {
        d.copy(lane, src, dst, bytes).map_err(convert)
    }

    pub type Comms = host::Comms;

    /// One move of a sort's exchange: `(allocation, byte offset, lane)`
    /// of each side, and the bytes.
    pub type Move<'a> = ((&'a Alloc, usize, usize), (&'a Alloc, usize, usize), usize);

    pub fn device_count() -> Result<usize, Error> {
        host::device_count().map_err(convert)
    }

    pub fn ordinal(d: &Device) -> usize {
        d.ordinal
    }

    pub fn alloc_ordinal(a: &Alloc) -> usize {
        a.device().ordinal
    }

    pub fn exchange(
        comms: &mut Option<Comms>,
        devices: &[Device],
        moves: &[Move<'_>],
    ) -> Result<(), Error> {
        let moves: super::Vec<host::Move<'_>> = moves
            .iter()
            .map(|&(from, to, bytes)| host::Move { from, to, bytes })
            .collect();
        host::exchange(comms, devices, &moves).map_err(convert)
    }

    /// # Safety
    ///
    /// `len` writable bytes at `out`, used by nothing else until this
    /// returns.
    pub unsafe fn download(
        a: &Alloc,
        offset: usize,
        out: *mut u8,
        len: usize,
    ) -> Result<(), Error> {
        // SAFETY: the caller's contract.
        unsafe { a.download(offset, out, len) }.map_err(convert)
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
    pub unsafe fn run(
        d: &Device,
        lane: usize,
        call: &Call<'_>,
        inputs: &[Data<'_>],
        offsets: Option<&[usize]>,
        bins: Option<usize>,
        init: Option<(*const u8, usize)>,
        closure: *const u8,
        out: Out<'_>,
    ) -> Result<Done, Error> {
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
        fn input<'a>(s: &Data<'a>) -> host::Input<'a> {
            match *s {
                Data::Host { ptr, len, .. } => host::Input::Host { ptr, len },
                Data::Device { alloc, start, len } => host::Input::Device { alloc, start, len },
            }
        }
        // A call has one or two inputs: held on the stack.
        let (one, two, more);
        let inputs: &[host::Input<'_>] = match inputs {
            [a] => {
                one = [input(a)];
                &one
            }
            [a, b] => {
                two = [input(a), input(b)];
                &two
            }
            _ => {
                more = inputs.iter().map(input).collect::<super::Vec<_>>();
                &more
            }
        };
        let request = host::Request {
            inputs,
            offsets,
            bins,
            init: init.map(|(ptr, len)| HostBytes { ptr, len }),
            closure,
        };
        let output = match out {
            Out::Value(ptr, room) => host::Output::Value { ptr, room },
            Out::New => host::Output::New,
            Out::Into(alloc, start, len) => host::Output::Into { alloc, start, len },
        };
        // SAFETY: forwarded from the caller.
        let produced = unsafe { d.run(lane, &info, &request, output) }.map_err(convert)?;
        Ok(match produced {
            host::Produced::Value(n) => Done::Value(n),
            host::Produced::Device { alloc, len } => Done::Device(alloc, len),
            host::Produced::Split { first, second } => Done::Split(first, second),
        })
    }
}

#[cfg(not(feature = "gpu"))]
mod backend {
    use super::{Call, Data, Error, ErrorKind};

    #[derive(Clone, Copy)]
    pub struct Device;
    pub struct Alloc;
    pub struct Host;
    pub struct Mark;

    #[allow(dead_code)]
    pub enum Out<'a> {
        Value(*mut u8, usize),
        New,
        Into(&'a Alloc, usize, usize),
    }

    #[allow(dead_code)]
    pub enum Done {
        Value(usize),
        Device(Option<Alloc>, usize),
        Split((Alloc, usize), (Alloc, usize)),
    }

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

    pub fn lane(_: &Device) -> Result<usize, Error> {
        Err(unavailable())
    }

    pub fn release_lane(_: &Device, _: usize) {}

    pub fn synchronize(_: &Device, _: usize) -> Result<(), Error> {
        Err(unavailable())
    }

    pub fn last_launch() -> Option<super::Launch> {
        None
    }

    pub fn name(_: &Device) -> &str {
        ""
    }

    /// # Safety
    ///
    /// Nothing is read.
    pub unsafe fn upload(_: &Device, _: usize, _: (*const u8, usize)) -> Result<Alloc, Error> {
        Err(unavailable())
    }

    /// # Safety
    ///
    /// Nothing is read.
    pub unsafe fn upload_into(_: &Alloc, _: (*const u8, usize)) -> Result<(), Error> {
        Err(unavailable())
    }

    pub fn alloc(_: &Device, _: usize, _: usize) -> Result<Alloc, Error> {
        Err(unavailable())
    }

    pub fn alloc_host(_: &Device, _: usize) -> Result<Host, Error> {
        Err(unavailable())
    }

    pub fn host_ptr(_: &Host) -> *mut u8 {
        core::ptr::NonNull::<u64>::dangling().as_ptr() as *mut u8
    }

    pub fn host_wait(_: &Host) -> Result<(), Error> {
        Err(unavailable())
    }

    pub fn memory(_: &Device) -> Result<(usize, usize), Error> {
        Err(unavailable())
    }

    pub fn upload_async(_: &Device, _: usize, _: &Host) -> Result<Alloc, Error> {
        Err(unavailable())
    }

    pub fn mark(_: &Device, _: usize) -> Result<Mark, Error> {
        Err(unavailable())
    }

    pub fn elapsed_ms(_: &Mark, _: &Mark) -> Result<f32, Error> {
        Err(unavailable())
    }

    pub fn download_async(_: &Device, _: usize, _: &Alloc, _: &Host) -> Result<(), Error> {
        Err(unavailable())
    }

    pub fn copy(
        _: &Device,
        _: usize,
        _: (&Alloc, usize),
        _: (&Alloc, usize),
        _: usize,
    ) -> Result<(), Error> {
        Err(unavailable())
    }

    pub struct Comms;

    pub type Move<'a> = ((&'a Alloc, usize, usize), (&'a Alloc, usize, usize), usize);

    pub fn device_count() -> Result<usize, Error> {
        Err(unavailable())
    }

    pub fn ordinal(_: &Device) -> usize {
        0
    }

    pub fn alloc_ordinal(_: &Alloc) -> usize {
        0
    }

    pub fn exchange(_: &mut Option<Comms>, _: &[Device], _: &[Move<'_>]) -> Result<(), Error> {
        Err(unavailable())
    }

    /// # Safety
    ///
    /// Nothing is written.
    pub unsafe fn download(_: &Alloc, _: usize, _: *mut u8, _: usize) -> Result<(), Error> {
        Err(unavailable())
    }

    /// # Safety
    ///
    /// Nothing is read or written.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn run(
        _: &Device,
        _: usize,
        _: &Call<'_>,
        _: &[Data<'_>],
        _: Option<&[usize]>,
        _: Option<usize>,
        _: Option<(*const u8, usize)>,
        _: *const u8,
        _: Out<'_>,
    ) -> Result<Done, Error> {
        Err(unavailable())
    }
}

mod set;
pub use set::{GpuSet, Sharded};
