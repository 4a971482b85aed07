//! A thin, checked layer over the CUDA driver API (through cudarc's
//! dynamically loaded bindings). Every call's result is checked and turned
//! into a [`RuntimeError`] that names the call. Lifetimes tie modules and
//! buffers to the [`Gpu`] whose context they live in.

use crate::RuntimeError;
use cudarc::driver::{result, sys};
use std::ffi::{c_void, CString};
use std::marker::PhantomData;

fn check<T>(call: &'static str, r: Result<T, result::DriverError>) -> Result<T, RuntimeError> {
    r.map_err(|e| driver_error(call, e))
}

fn driver_error(call: &'static str, e: result::DriverError) -> RuntimeError {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "unknown".into());
    let message = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "no description".into());
    RuntimeError::Driver {
        call,
        code: e.0 as u32,
        name,
        message,
    }
}

/// Whether libcuda can be loaded; checked before any other driver call,
/// since cudarc panics when the library is absent.
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the candidate names.
    unsafe { sys::is_culib_present() }
}

fn driver_candidates() -> String {
    let mut names = cudarc::get_lib_name_candidates("cuda");
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names.join(", ")
}

fn has_symbol(name: &str) -> bool {
    // SAFETY: driver_present() was checked by Gpu::open; only looks the name up.
    unsafe { sys::culib().get::<*const c_void>(name.as_bytes()).is_ok() }
}

/// Whether `ptr` is page-locked host memory the driver knows
/// (`cuMemHostAlloc`, `cuMemHostRegister`): a copy from it in stream order
/// may still be reading it after the call returns. Asked with
/// `cuPointerGetAttributes`, which answers "unknown" for memory the driver
/// does not know instead of failing (a failed driver call is an error
/// compute-sanitizer reports).
pub fn is_page_locked(ptr: *const u8) -> bool {
    let mut kind: u32 = 0;
    let mut attribute = sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE;
    let mut data = [&mut kind as *mut u32 as *mut c_void];
    // SAFETY: one attribute, a u32, written to a local.
    let status = unsafe {
        sys::cuPointerGetAttributes(
            1,
            &mut attribute,
            data.as_mut_ptr(),
            ptr as sys::CUdeviceptr,
        )
    };
    status == sys::cudaError_enum::CUDA_SUCCESS
        && kind == sys::CUmemorytype::CU_MEMORYTYPE_HOST as u32
}

/// One device with its primary context current on this thread.
pub struct Gpu {
    device: sys::CUdevice,
    ctx: sys::CUcontext,
    pub name: String,
    pub multiprocessors: u32,
    pub compute_capability: (i32, i32),
}

impl Gpu {
    /// How many devices the driver reports.
    pub fn count() -> Result<usize, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::NoDriver {
                searched: driver_candidates(),
            });
        }
        if let Err(e) = result::init() {
            if e.0 == sys::cudaError_enum::CUDA_ERROR_NO_DEVICE {
                return Ok(0);
            }
            return Err(driver_error("cuInit", e));
        }
        Ok(check("cuDeviceGetCount", result::device::get_count())?.max(0) as usize)
    }

    pub fn open(ordinal: usize) -> Result<Gpu, RuntimeError> {
        if !driver_present() {
            return Err(RuntimeError::NoDriver {
                searched: driver_candidates(),
            });
        }
        if let Err(e) = result::init() {
            if e.0 == sys::cudaError_enum::CUDA_ERROR_NO_DEVICE {
                return Err(RuntimeError::NoDevice(
                    "the driver reports no CUDA-capable device".into(),
                ));
            }
            return Err(driver_error("cuInit", e));
        }
        let count = check("cuDeviceGetCount", result::device::get_count())?;
        if ordinal as i64 >= i64::from(count) {
            return Err(RuntimeError::NoDevice(format!(
                "device {ordinal} asked for, the driver reports {count}"
            )));
        }
        let device = check("cuDeviceGet", result::device::get(ordinal as i32))?;
        // SAFETY: `device` came from cuDeviceGet; the context is released in Drop.
        let ctx = check("cuDevicePrimaryCtxRetain", unsafe {
            result::primary_ctx::retain(device)
        })?;
        // SAFETY: ctx is a retained primary context.
        check("cuCtxSetCurrent", unsafe { result::ctx::set_current(ctx) })?;
        let name = check("cuDeviceGetName", result::device::get_name(device))?;
        let attribute = |attr| {
            // SAFETY: valid device, plain integer attribute.
            check("cuDeviceGetAttribute", unsafe {
                result::device::get_attribute(device, attr)
            })
        };
        use sys::CUdevice_attribute_enum as A;
        let multiprocessors = attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32;
        let major = attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attribute(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        Ok(Gpu {
            device,
            ctx,
            name,
            multiprocessors,
            compute_capability: (major, minor),
        })
    }

    /// Makes this device's primary context current on the calling thread
    /// (every thread that uses a `Gpu` it did not open must).
    ///
    /// Asks first which context is current (a read of the driver's
    /// thread-local state): a call on a thread that already has it, the
    /// usual case, sets nothing.
    pub fn make_current(&self) -> Result<(), RuntimeError> {
        if let Ok(Some(current)) = result::ctx::get_current() {
            if current == self.ctx {
                return Ok(());
            }
        }
        // SAFETY: ctx is the primary context retained in open(), released
        // only when this Gpu drops.
        check("cuCtxSetCurrent", unsafe {
            result::ctx::set_current(self.ctx)
        })
    }

    /// Loads a cubin that [`crate::cubin::read_cubin`] has accepted.
    pub fn load_module(&self, image: &[u8]) -> Result<Module<'_>, RuntimeError> {
        // SAFETY: the image was bounds-checked as an ELF file, so the driver
        // reads only inside it.
        let raw = check("cuModuleLoadData", unsafe {
            result::module::load_data(image.as_ptr() as *const c_void)
        })?;
        Ok(Module {
            raw,
            _gpu: PhantomData,
        })
    }

    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer<'_>, RuntimeError> {
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }
            .map_err(|e| self.allocation_error("cuMemAlloc", bytes, e))?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            stream: std::ptr::null_mut(),
            _gpu: PhantomData,
        })
    }

    /// A stream-ordered allocation (`cuMemAllocAsync`) from the device's
    /// pool: usable by work enqueued on `stream` after this call, freed in
    /// stream order on drop (on the stream [`DeviceBuffer::free_on`] last
    /// named), so work already enqueued that uses it finishes first.
    pub fn alloc_on<'s>(
        &'s self,
        bytes: usize,
        stream: &'s Stream,
    ) -> Result<DeviceBuffer<'s>, RuntimeError> {
        // SAFETY: `stream` is live for 's; the memory is freed in Drop on
        // a live stream of this context.
        let ptr = unsafe { result::malloc_async(stream.raw, bytes.max(1)) }
            .map_err(|e| self.allocation_error("cuMemAllocAsync", bytes, e))?;
        Ok(DeviceBuffer {
            ptr,
            bytes,
            stream: stream.raw,
            _gpu: PhantomData,
        })
    }

    /// An allocation that failed: out of memory names the bytes asked and
    /// free.
    fn allocation_error(
        &self,
        call: &'static str,
        bytes: usize,
        e: result::DriverError,
    ) -> RuntimeError {
        if e.0 == sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = result::mem_get_info().unwrap_or((0, 0));
            return RuntimeError::OutOfMemory {
                asked: bytes,
                free,
                total,
            };
        }
        driver_error(call, e)
    }

    /// Keeps what the device's memory pool frees for later allocations
    /// instead of returning it to the driver at each synchronisation (what
    /// CUB's and RAPIDS' allocators do): a stream-ordered allocation of a
    /// size seen before then costs no mapping.
    pub fn keep_pool_memory(&self) -> Result<(), RuntimeError> {
        // SAFETY: `device` came from cuDeviceGet.
        let pool = check("cuDeviceGetDefaultMemPool", unsafe {
            result::device::get_default_mem_pool(self.device)
        })?;
        let mut threshold: u64 = u64::MAX;
        // SAFETY: the release threshold is a u64 attribute.
        check("cuMemPoolSetAttribute", unsafe {
            result::mem_pool::set_attribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                &mut threshold as *mut u64 as *mut c_void,
            )
        })
    }

    /// A new non-blocking stream of this context.
    pub fn stream(&self) -> Result<Stream, RuntimeError> {
        let raw = check(
            "cuStreamCreate",
            result::stream::create(result::stream::StreamKind::NonBlocking),
        )?;
        Ok(Stream { raw, owned: true })
    }

    /// `bytes` of page-locked host memory (`cuMemHostAlloc`), which the
    /// copy engines read and write directly.
    pub fn alloc_host(&self, bytes: usize) -> Result<PinnedBuffer, RuntimeError> {
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_host(bytes.max(1), 0) }
            .map_err(|e| self.allocation_error("cuMemHostAlloc", bytes, e))?;
        Ok(PinnedBuffer {
            ptr: ptr as *mut u8,
            bytes,
        })
    }

    pub fn event(&self) -> Result<Event<'_>, RuntimeError> {
        self.event_with(sys::CUevent_flags::CU_EVENT_DEFAULT)
    }

    /// An event for ordering only (no timing: cheaper to record and wait).
    pub fn order_event(&self) -> Result<Event<'_>, RuntimeError> {
        self.event_with(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
    }

    fn event_with(&self, flags: sys::CUevent_flags) -> Result<Event<'_>, RuntimeError> {
        let raw = check("cuEventCreate", result::event::create(flags))?;
        Ok(Event {
            raw,
            _gpu: PhantomData,
        })
    }

    /// Waits for all work and surfaces any asynchronous (kernel) error.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        check("cuCtxSynchronize", result::ctx::synchronize())
    }

    /// `cuMemcpyDtoDAsync` of `bytes` between two device addresses, on
    /// `stream`.
    ///
    /// # Safety
    ///
    /// Both ranges lie inside allocations of this context that stay live
    /// until the stream has done the copy.
    pub unsafe fn copy_device_at(
        &self,
        stream: &Stream,
        dst: u64,
        src: u64,
        bytes: usize,
    ) -> Result<(), RuntimeError> {
        // SAFETY: the caller's contract.
        check("cuMemcpyDtoDAsync", unsafe {
            result::memcpy_dtod_async(dst, src, bytes, stream.raw)
        })
    }

    /// `cuMemcpyDtoDAsync` on `stream`.
    pub fn copy_device(
        &self,
        stream: &Stream,
        dst: &DeviceBuffer<'_>,
        src: &DeviceBuffer<'_>,
        bytes: usize,
    ) -> Result<(), RuntimeError> {
        if bytes > dst.bytes || bytes > src.bytes {
            return Err(RuntimeError::Usage(format!(
                "device copy of {bytes} bytes between buffers of {} and {}",
                src.bytes, dst.bytes
            )));
        }
        // SAFETY: both ranges lie inside live allocations (checked above).
        check("cuMemcpyDtoDAsync", unsafe {
            result::memcpy_dtod_async(dst.ptr, src.ptr, bytes, stream.raw)
        })
    }

    /// Launches `function` on `stream` with programmatic
    /// dependent launch allowed (`cuLaunchKernelEx`,
    /// `PROGRAMMATIC_STREAM_SERIALIZATION`): the kernel may start before the
    /// one before it on the stream has finished, and must wait for it
    /// (`griddepcontrol.wait`) before it reads what that kernel wrote, as
    /// CUB's merge sort agents do. What CUB's dispatch does for them.
    ///
    /// # Safety
    ///
    /// Every device address among `params` must point into a live
    /// allocation of this context with room for everything the kernel reads
    /// and writes through it for the launch's sizes (also among `params`),
    /// and stay allocated until the stream has finished the kernel: the
    /// driver checks none of it, and a wrong address is a write anywhere in
    /// device memory.
    pub unsafe fn launch_dependent(
        &self,
        stream: &Stream,
        function: &Function<'_>,
        grid: u32,
        block: u32,
        shared_bytes: u32,
        params: &[&[u8]],
    ) -> Result<(), RuntimeError> {
        let mut inline = [std::ptr::null_mut(); INLINE_PARAMS];
        let mut heap = Vec::new();
        let pointers = addresses(params, &mut inline, &mut heap);
        // SAFETY: zero is a valid bit pattern of the attribute value union.
        let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
        value.programmaticStreamSerializationAllowed = 1;
        let mut attribute = sys::CUlaunchAttribute {
            id: sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value,
        };
        let config = sys::CUlaunchConfig {
            gridDimX: grid,
            gridDimY: 1,
            gridDimZ: 1,
            blockDimX: block,
            blockDimY: 1,
            blockDimZ: 1,
            sharedMemBytes: shared_bytes,
            hStream: stream.raw,
            attrs: &mut attribute,
            numAttrs: 1,
        };
        // SAFETY: as for `launch`, and the caller's contract; the
        // configuration and attribute live for the call.
        let status = unsafe {
            sys::cuLaunchKernelEx(
                &config,
                function.raw,
                pointers.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        match status {
            sys::cudaError_enum::CUDA_SUCCESS => Ok(()),
            other => Err(driver_error("cuLaunchKernelEx", result::DriverError(other))),
        }
    }

    /// Launches `function` on `stream`. `params` are the kernel's
    /// parameter values in order, each as its bytes.
    ///
    /// # Safety
    ///
    /// Every device address among `params` must point into a live
    /// allocation of this context with room for everything the kernel reads
    /// and writes through it for the launch's sizes (also among `params`),
    /// and stay allocated until the stream has finished the kernel: the
    /// driver checks none of it, and a wrong address is a write anywhere in
    /// device memory.
    pub unsafe fn launch(
        &self,
        stream: &Stream,
        function: &Function<'_>,
        grid: u32,
        block: u32,
        shared_bytes: u32,
        params: &[&[u8]],
    ) -> Result<(), RuntimeError> {
        let mut inline = [std::ptr::null_mut(); INLINE_PARAMS];
        let mut heap = Vec::new();
        let pointers = addresses(params, &mut inline, &mut heap);
        // SAFETY: the parameter list was checked against the kernel's
        // (cuFuncGetParamInfo) when the function was resolved; each pointer
        // addresses at least that parameter's size in bytes; the addresses
        // they hold are the caller's contract.
        unsafe {
            result::launch_kernel(
                function.raw,
                (grid, 1, 1),
                (block, 1, 1),
                shared_bytes,
                stream.raw,
                pointers,
            )
        }
        .map_err(|e| driver_error("cuLaunchKernel", e))
    }
}

/// Parameters a launch passes without allocating: the driver's array of
/// their addresses is on the stack up to this many.
pub const INLINE_PARAMS: usize = 32;

/// The driver's parameter array (each parameter's address) for `params`:
/// in `inline` when they fit, else in `heap`.
fn addresses<'p>(
    params: &[&[u8]],
    inline: &'p mut [*mut c_void; INLINE_PARAMS],
    heap: &'p mut Vec<*mut c_void>,
) -> &'p mut [*mut c_void] {
    let address = |p: &&[u8]| p.as_ptr() as *mut c_void;
    if params.len() <= INLINE_PARAMS {
        for (slot, p) in inline.iter_mut().zip(params) {
            *slot = address(p);
        }
        &mut inline[..params.len()]
    } else {
        heap.extend(params.iter().map(address));
        heap
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        // SAFETY: retained in open(). Errors at teardown have no one to go to.
        let _ = unsafe { result::primary_ctx::release(self.device) };
    }
}

pub struct Module<'g> {
    raw: sys::CUmodule,
    _gpu: PhantomData<&'g Gpu>,
}

impl<'g> Module<'g> {
    /// Looks a kernel up; `Ok(None)` when the module has no such function.
    pub fn function(&self, name: &str) -> Result<Option<Function<'_>>, RuntimeError> {
        let cname = CString::new(name)
            .map_err(|_| RuntimeError::Usage(format!("kernel name {name:?} has a NUL")))?;
        // SAFETY: the module is loaded for this object's lifetime.
        match unsafe { result::module::get_function(self.raw, cname) } {
            Ok(raw) => Ok(Some(Function {
                raw,
                _module: PhantomData,
            })),
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_NOT_FOUND => Ok(None),
            Err(e) => Err(driver_error("cuModuleGetFunction", e)),
        }
    }
}

impl Drop for Module<'_> {
    fn drop(&mut self) {
        // SAFETY: loaded in load_module, unloaded once.
        let _ = unsafe { result::module::unload(self.raw) };
    }
}

pub struct Function<'m> {
    raw: sys::CUfunction,
    _module: PhantomData<&'m ()>,
}

/// Resource facts the driver reports for a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FunctionResources {
    pub max_threads_per_block: i32,
    pub registers: i32,
    pub local_bytes: i32,
    pub static_shared_bytes: i32,
}

impl Function<'_> {
    /// How many blocks of `block` threads fit on one multiprocessor at once.
    pub fn resident_blocks_per_sm(
        &self,
        block: u32,
        dynamic_shared: u32,
    ) -> Result<u32, RuntimeError> {
        // SAFETY: valid function handle.
        let blocks = check("cuOccupancyMaxActiveBlocksPerMultiprocessor", unsafe {
            result::occupancy::max_active_block_per_multiprocessor(
                self.raw,
                block as i32,
                dynamic_shared as usize,
            )
        })?;
        Ok(blocks.max(0) as u32)
    }

    /// Lets the kernel be launched with up to `bytes` of dynamic shared
    /// memory (above 48 KB a kernel must opt in).
    pub fn allow_dynamic_shared(&self, bytes: u32) -> Result<(), RuntimeError> {
        use sys::CUfunction_attribute_enum as F;
        // SAFETY: valid function handle.
        check("cuFuncSetAttribute", unsafe {
            result::function::set_function_attribute(
                self.raw,
                F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes as i32,
            )
        })
    }

    /// `(offset, size)` of the first `expected` parameters, from
    /// `cuFuncGetParamInfo` (CUDA 12.4+); fewer when the kernel has fewer;
    /// `None` when the driver lacks the call.
    ///
    /// Only indices that should exist are asked for: asking past the last
    /// parameter is how one would count them (CUDA 13.0 has no
    /// `cuFuncGetParamCount`), but that failing call is an API error that
    /// compute-sanitizer reports, and the runs must be sanitizer-clean.
    pub fn param_layout(&self, expected: usize) -> Result<Option<Vec<(u64, u64)>>, RuntimeError> {
        if !has_symbol("cuFuncGetParamInfo") {
            return Ok(None);
        }
        let mut layout = Vec::new();
        for index in 0..expected {
            let mut offset = 0usize;
            let mut size = 0usize;
            // SAFETY: valid function; out-pointers to locals.
            let status =
                unsafe { sys::cuFuncGetParamInfo(self.raw, index, &mut offset, &mut size) };
            match status {
                sys::cudaError_enum::CUDA_SUCCESS => layout.push((offset as u64, size as u64)),
                // Past the last parameter.
                sys::cudaError_enum::CUDA_ERROR_INVALID_VALUE => return Ok(Some(layout)),
                other => {
                    return Err(driver_error(
                        "cuFuncGetParamInfo",
                        result::DriverError(other),
                    ))
                }
            }
        }
        Ok(Some(layout))
    }

    pub fn resources(&self) -> Result<FunctionResources, RuntimeError> {
        use sys::CUfunction_attribute_enum as F;
        let get = |attr| {
            // SAFETY: valid function handle.
            check("cuFuncGetAttribute", unsafe {
                result::function::get_function_attribute(self.raw, attr)
            })
        };
        Ok(FunctionResources {
            max_threads_per_block: get(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            registers: get(F::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            local_bytes: get(F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            static_shared_bytes: get(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        })
    }
}

/// Device memory, freed on drop: at once ([`Gpu::alloc`]), or in the
/// order of the stream it was last given ([`Gpu::alloc_on`]).
pub struct DeviceBuffer<'g> {
    ptr: sys::CUdeviceptr,
    bytes: usize,
    /// Where the free is enqueued; null: `cuMemFree`.
    stream: sys::CUstream,
    _gpu: PhantomData<&'g Gpu>,
}

impl DeviceBuffer<'_> {
    /// The device address `offset` bytes in.
    pub fn address(&self, offset: usize) -> u64 {
        self.ptr + offset as u64
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Whether `len` bytes at `offset` lie inside the buffer: else a usage
    /// error naming the copy (`upload … into`, `download … from`).
    fn check_range(
        &self,
        copy: &str,
        preposition: &str,
        offset: usize,
        len: usize,
    ) -> Result<(), RuntimeError> {
        if offset.checked_add(len).is_none_or(|end| end > self.bytes) {
            return Err(RuntimeError::Usage(format!(
                "{copy} of {len} bytes at {offset} {preposition} a buffer of {}",
                self.bytes
            )));
        }
        Ok(())
    }

    /// Copies `data` to `offset` bytes in (synchronous).
    pub fn upload<T: Copy>(&self, offset: usize, data: &[T]) -> Result<(), RuntimeError> {
        self.check_range("upload", "into", offset, std::mem::size_of_val(data))?;
        // SAFETY: destination range checked above; source is a live slice.
        check("cuMemcpyHtoD", unsafe {
            result::memcpy_htod_sync(self.ptr + offset as u64, data)
        })
    }

    /// Copies `out.len()` elements from `offset` bytes in (synchronous).
    pub fn download<T: Copy>(&self, offset: usize, out: &mut [T]) -> Result<(), RuntimeError> {
        self.check_range("download", "from", offset, std::mem::size_of_val(out))?;
        // SAFETY: source range checked above; destination is a live slice.
        check("cuMemcpyDtoH", unsafe {
            result::memcpy_dtoh_sync(out, self.ptr + offset as u64)
        })
    }

    pub fn fill_bytes(&self, value: u8) -> Result<(), RuntimeError> {
        // SAFETY: the whole allocation.
        check("cuMemsetD8", unsafe {
            result::memset_d8_sync(self.ptr, value, self.bytes)
        })
    }

    /// Sets every byte to `value`, in `stream`'s order.
    pub fn fill_on(&self, stream: &Stream, value: u8) -> Result<(), RuntimeError> {
        // SAFETY: the whole allocation.
        check("cuMemsetD8Async", unsafe {
            result::memset_d8_async(self.ptr, value, self.bytes, stream.raw)
        })
    }

    /// Copies `data` to `offset` bytes in, in `stream`'s order. From
    /// pageable memory the driver has copied `data` when this returns; from
    /// page-locked memory the copy may still be running.
    ///
    /// # Safety
    ///
    /// When `data` is page-locked, it must not be written (or freed) before
    /// the stream has passed the copy.
    pub unsafe fn upload_on<T: Copy>(
        &self,
        stream: &Stream,
        offset: usize,
        data: &[T],
    ) -> Result<(), RuntimeError> {
        self.check_range("upload", "into", offset, std::mem::size_of_val(data))?;
        // SAFETY: destination range checked above; the source's lifetime is
        // the caller's contract.
        check("cuMemcpyHtoDAsync", unsafe {
            result::memcpy_htod_async(self.ptr + offset as u64, data, stream.raw)
        })
    }

    /// Copies `out.len()` elements from `offset` bytes in, in `stream`'s
    /// order (to pageable memory the driver returns when the copy is done).
    ///
    /// # Safety
    ///
    /// When `out` is page-locked, it must not be read, written or freed
    /// before the stream has passed the copy.
    pub unsafe fn download_on<T: Copy>(
        &self,
        stream: &Stream,
        offset: usize,
        out: &mut [T],
    ) -> Result<(), RuntimeError> {
        self.check_range("download", "from", offset, std::mem::size_of_val(out))?;
        // SAFETY: source range checked above; the destination's lifetime
        // is the caller's contract.
        check("cuMemcpyDtoHAsync", unsafe {
            result::memcpy_dtoh_async(out, self.ptr + offset as u64, stream.raw)
        })
    }

    /// Frees a stream-ordered allocation on `stream` instead of the one it
    /// was allocated on: the last stream that used it, once every use on
    /// other streams is ordered before that stream's later work.
    ///
    /// # Safety
    ///
    /// `stream` outlives this buffer, and every use of the buffer is
    /// ordered before what `stream` does next.
    pub unsafe fn free_on(&mut self, stream: &Stream) {
        if !self.stream.is_null() {
            self.stream = stream.raw;
        }
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        // SAFETY: allocated in Gpu::alloc or Gpu::alloc_on, freed once; a
        // stream-ordered one on a live stream (alloc_on's lifetime, or
        // free_on's contract). Errors at teardown have no one to go to.
        let _ = unsafe {
            if self.stream.is_null() {
                result::free_sync(self.ptr)
            } else {
                result::free_async(self.ptr, self.stream)
            }
        };
    }
}

/// A CUDA stream: work on it runs in the order it was enqueued.
pub struct Stream {
    raw: sys::CUstream,
    /// Created by us (destroyed on drop); the null stream is not.
    owned: bool,
}

impl Stream {
    /// The driver's handle, for a library that enqueues on it (NCCL).
    pub(crate) fn raw(&self) -> sys::CUstream {
        self.raw
    }
}

// SAFETY: a stream handle may be used from any thread of its context; the
// driver serialises what is enqueued on it.
unsafe impl Send for Stream {}
unsafe impl Sync for Stream {}

static NULL_STREAM: Stream = Stream {
    raw: std::ptr::null_mut(),
    owned: false,
};

impl Stream {
    /// The context's legacy default stream, which waits for and is waited
    /// for by every blocking stream.
    pub fn null() -> &'static Stream {
        &NULL_STREAM
    }

    /// Waits for everything enqueued so far; surfaces any asynchronous
    /// (kernel) error.
    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        // SAFETY: a live stream of the current context.
        check("cuStreamSynchronize", unsafe {
            result::stream::synchronize(self.raw)
        })
    }

    /// Makes later work on this stream wait until `event` (recorded on
    /// another stream) has completed.
    pub fn wait(&self, event: &Event<'_>) -> Result<(), RuntimeError> {
        // SAFETY: live stream and event.
        check("cuStreamWaitEvent", unsafe {
            result::stream::wait_event(
                self.raw,
                event.raw,
                sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
            )
        })
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned {
            // SAFETY: created in Gpu::stream, destroyed once; the driver
            // finishes its work first.
            let _ = unsafe { result::stream::destroy(self.raw) };
        }
    }
}

/// Page-locked host memory ([`Gpu::alloc_host`]), freed on drop.
pub struct PinnedBuffer {
    ptr: *mut u8,
    bytes: usize,
}

// SAFETY: plain host memory owned by this value.
unsafe impl Send for PinnedBuffer {}
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc, freed once.
        let _ = unsafe { result::free_host(self.ptr as *mut c_void) };
    }
}

pub struct Event<'g> {
    raw: sys::CUevent,
    _gpu: PhantomData<&'g Gpu>,
}

impl Event<'_> {
    /// Records on the default stream.
    pub fn record(&self) -> Result<(), RuntimeError> {
        self.record_on(Stream::null())
    }

    /// Records on `stream`: completes when the work enqueued before it has.
    pub fn record_on(&self, stream: &Stream) -> Result<(), RuntimeError> {
        // SAFETY: live event and stream.
        check("cuEventRecord", unsafe {
            result::event::record(self.raw, stream.raw)
        })
    }

    pub fn synchronize(&self) -> Result<(), RuntimeError> {
        // SAFETY: live event.
        check("cuEventSynchronize", unsafe {
            result::event::synchronize(self.raw)
        })
    }

    /// Milliseconds from `self` to `end` (both recorded and complete).
    pub fn elapsed_ms(&self, end: &Event<'_>) -> Result<f32, RuntimeError> {
        // SAFETY: live events.
        check("cuEventElapsedTime", unsafe {
            result::event::elapsed(self.raw, end.raw)
        })
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        // SAFETY: created in Gpu::event, destroyed once.
        let _ = unsafe { result::event::destroy(self.raw) };
    }
}

/// Sets the `bytes` bytes from device address `at` to zero, in `stream`'s
/// order (a kernel's output that it adds to, such as histogram's counts).
///
/// # Safety
///
/// `at..at + bytes` lies inside one live allocation until the stream has
/// passed the set.
pub unsafe fn zero_on(stream: &Stream, at: u64, bytes: usize) -> Result<(), RuntimeError> {
    if bytes == 0 {
        return Ok(());
    }
    // SAFETY: the caller's contract.
    check("cuMemsetD8Async", unsafe {
        result::memset_d8_async(at, 0, bytes, stream.raw)
    })
}
