//! The run-time side of `native::gpu`: the builds embedded in the program,
//! found by the registration call's site, launched on a device.
//!
//! `driver cargo build` links every Cargo target's compiled callbacks into
//! the program's `rmir_artifacts` section (`manifest::embed`). The first
//! call reads them all, checks each as `gpu-run` checks a build on disk
//! (manifest, cubin containers, kernels present), and indexes callbacks by
//! call site: the file, line and column that `#[track_caller]` reports. A
//! call is launched only when its site, element type, closure type (where
//! the build predicted it) and closure size and alignment all match what
//! was compiled; otherwise it is an error that says which fact differs. It
//! never launches another kernel and never falls back to the CPU.
//!
//! Devices are opened once per process and kept (their primary context,
//! loaded modules and workspace), so a call costs a lookup, a copy of the
//! closure's captured fields, the launch and the result's copy back.

use crate::build::{Build, Loaded, ResolvedKernel};
use crate::dispatch::{self, Job, Scratch};
use crate::gpu::{DeviceBuffer, Event, Gpu, PinnedBuffer, Stream};
use crate::nccl::{self, Nccl};
use crate::RuntimeError;
use manifest::{Callback, Element, Kernel};
pub use manifest::{Provider, Scalar};
use std::collections::{BTreeMap, HashMap};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// Why a call did not run, as `native::gpu::Error` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostErrorKind {
    /// No driver or no such device.
    NoDevice,
    /// No kernel was compiled for this call site.
    NotCompiled,
    /// A kernel exists for the site, but a fact of the call differs.
    Mismatch,
    /// The embedded builds cannot be read.
    Artifacts,
    /// The driver failed a call.
    Device,
    /// A device allocation did not fit.
    OutOfMemory,
}

#[derive(Debug, Clone)]
pub struct HostError {
    pub kind: HostErrorKind,
    pub message: String,
}

impl std::fmt::Display for HostError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for HostError {}

fn error(kind: HostErrorKind, message: impl Into<String>) -> HostError {
    HostError {
        kind,
        message: message.into(),
    }
}

fn device_error(e: RuntimeError) -> HostError {
    let kind = match e {
        RuntimeError::NoDriver { .. } | RuntimeError::NoDevice(_) => HostErrorKind::NoDevice,
        RuntimeError::Manifest { .. }
        | RuntimeError::Cubin { .. }
        | RuntimeError::KernelMissing { .. }
        | RuntimeError::AbiMismatch { .. } => HostErrorKind::Artifacts,
        RuntimeError::OutOfMemory { .. } => HostErrorKind::OutOfMemory,
        _ => HostErrorKind::Device,
    };
    error(kind, e.to_string())
}

/// The facts of one call that the lookup checks.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    /// `Location::file()` of the call: kept (not copied) by an error that
    /// surfaces at a later wait.
    pub file: &'static str,
    pub line: u32,
    pub column: u32,
    /// The registration's provider.
    pub provider: Provider,
    /// The callback's parameter types and its result, in order (`[T, T, T]`
    /// for reduce, `[T, bool]` for select): each a sealed element trait's
    /// constant (`native::gpu::DeviceElement`).
    pub types: &'a [ElementType],
    /// `type_name::<F>()`, `size_of::<F>()`, `align_of::<F>()`.
    pub closure_type: &'a str,
    pub closure_size: usize,
    pub closure_align: usize,
}

impl CallInfo<'_> {
    fn site(&self) -> Site {
        Site {
            file: self.file,
            line: self.line,
            column: self.column,
        }
    }
}

/// An element type as a call states it (`native::gpu::DeviceElement`'s
/// constant): a scalar, or a tuple or struct of elements with the layout
/// the program's rustc gave it. Built in constants: it borrows `'static`
/// data only.
#[derive(Debug, Clone, Copy)]
pub enum ElementType {
    Scalar(Scalar),
    Composite(&'static CompositeType),
}

/// A tuple's or a struct's layout, measured by the program's own rustc
/// (`size_of`, `align_of`, `offset_of!`), never assumed: rustc may reorder
/// fields (rustc 1.95 puts the u32 of `(u8, u32, u8)` at 0, its u8s at
/// 4 and 5).
#[derive(Debug)]
pub struct CompositeType {
    /// `core::any::type_name` of the type, for messages only (the compiler
    /// spells types its own way, so names are never compared). A function:
    /// `type_name` is no `const fn` on stable Rust.
    pub name: fn() -> &'static str,
    pub size: usize,
    pub align: usize,
    /// Every field in declaration order.
    pub fields: &'static [CompositeField],
}

/// One field of a [`CompositeType`]: its offset from the start of the
/// value, and its type (itself composite for a nested tuple or struct).
#[derive(Debug, Clone, Copy)]
pub struct CompositeField {
    pub offset: usize,
    pub ty: ElementType,
}

impl ElementType {
    /// The type as Rust spells it (`i32`, `(f32, u32)`, `app::Point`).
    pub fn name(&self) -> &'static str {
        match self {
            ElementType::Scalar(s) => s.name(),
            ElementType::Composite(c) => (c.name)(),
        }
    }

    pub fn size(&self) -> usize {
        match self {
            ElementType::Scalar(s) => s.size() as usize,
            ElementType::Composite(c) => c.size,
        }
    }

    pub fn align(&self) -> usize {
        match self {
            ElementType::Scalar(s) => s.align() as usize,
            ElementType::Composite(c) => c.align,
        }
    }

    /// Every scalar of the value with its offset from the start, in field
    /// order, nested tuples and structs flattened depth-first: what
    /// `vocab::Element::scalars` gives for the compiled type.
    pub fn scalars(&self) -> Vec<(usize, Scalar)> {
        let mut out = Vec::new();
        self.scalars_at(0, &mut out);
        out
    }

    fn scalars_at(&self, base: usize, out: &mut Vec<(usize, Scalar)>) {
        match self {
            ElementType::Scalar(s) => out.push((base, *s)),
            ElementType::Composite(c) => {
                for f in c.fields {
                    f.ty.scalars_at(base + f.offset, out);
                }
            }
        }
    }

    /// Whether values of this type are what a kernel compiled for
    /// `compiled` reads and writes: the same scalar, or a composite of the
    /// same size and alignment whose scalars lie at the same offsets, in
    /// the same order. Names are not compared.
    pub fn fits(&self, compiled: &Element) -> bool {
        match (self, compiled) {
            (ElementType::Scalar(s), Element::Scalar(c)) => s == c,
            (ElementType::Composite(t), Element::Composite(l)) => {
                t.size as u64 == l.size
                    && t.align as u64 == l.align
                    && self
                        .scalars()
                        .into_iter()
                        .map(|(at, s)| (at as u64, s))
                        .eq(compiled.scalars())
            }
            _ => false,
        }
    }

    /// "`i32`", or "`(f32, u32)` of 8 bytes aligned to 4 (f32 at 0, u32 at
    /// 4)", for messages.
    fn describe(&self) -> String {
        match self {
            ElementType::Scalar(s) => format!("`{s}`"),
            ElementType::Composite(c) => describe_layout(
                (c.name)(),
                c.size as u64,
                c.align as u64,
                self.scalars().into_iter().map(|(at, s)| (at as u64, s)),
            ),
        }
    }
}

/// A compiled element as [`ElementType::describe`] writes a call's.
fn describe_element(e: &Element) -> String {
    match e {
        Element::Scalar(s) => format!("`{s}`"),
        Element::Composite(l) => describe_layout(&l.name, l.size, l.align, e.scalars()),
    }
}

fn describe_layout(
    name: &str,
    size: u64,
    align: u64,
    scalars: impl IntoIterator<Item = (u64, Scalar)>,
) -> String {
    let leaves: Vec<String> = scalars
        .into_iter()
        .map(|(at, s)| format!("{s} at {at}"))
        .collect();
    format!(
        "`{name}` of {size} bytes aligned to {align} ({})",
        leaves.join(", ")
    )
}

/// Host memory a copy or a call reads: `len` bytes at `ptr`, one value or
/// several of an element type. Reached through the pointer only, never as
/// a `&[u8]`: a composite's padding bytes are not initialised.
#[derive(Debug, Clone, Copy)]
pub struct HostBytes {
    pub ptr: *const u8,
    pub len: usize,
}

impl HostBytes {
    /// The bytes as the driver's copies take them: possibly uninitialised,
    /// never read here.
    ///
    /// # Safety
    ///
    /// `len` bytes at `ptr` are live (when `len` > 0) and not written for
    /// `'a`.
    unsafe fn as_uninit<'a>(self) -> &'a [MaybeUninit<u8>] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: the caller's contract; `MaybeUninit<u8>` has no invalid
        // values, so padding bytes may be among them.
        unsafe { std::slice::from_raw_parts(self.ptr.cast::<MaybeUninit<u8>>(), self.len) }
    }
}

/// `len` writable bytes at `ptr`, as the driver's copies take them.
///
/// # Safety
///
/// `len` bytes at `ptr` are live and neither read nor written by anything
/// else for `'a` (when `len` > 0).
unsafe fn uninit_mut<'a>(ptr: *mut u8, len: usize) -> &'a mut [MaybeUninit<u8>] {
    if len == 0 {
        return &mut [];
    }
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<u8>>(), len) }
}

/// Where a call was made.
#[derive(Debug, Clone, Copy)]
struct Site {
    file: &'static str,
    line: u32,
    column: u32,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

// ---------------------------------------------------------------------------
// The embedded builds.

#[repr(C, align(8))]
struct Aligned([u8; 24]);

/// This crate's own record in the section, so that the section (and its
/// `__start_`/`__stop_` symbols) exists in every program that links it.
#[used]
#[link_section = "rmir_artifacts"]
static PLACEHOLDER: Aligned = Aligned(manifest::embed::PLACEHOLDER);

#[cfg(target_os = "linux")]
fn section() -> &'static [u8] {
    extern "C" {
        #[link_name = "__start_rmir_artifacts"]
        static START: u8;
        #[link_name = "__stop_rmir_artifacts"]
        static STOP: u8;
    }
    let start = &raw const START;
    let stop = &raw const STOP;
    let len = (stop as usize).saturating_sub(start as usize);
    // Keep the placeholder referenced from the reader as well.
    std::hint::black_box(&PLACEHOLDER);
    // SAFETY: the linker defines both symbols around the section's bytes,
    // which are immutable for the life of the program.
    unsafe { std::slice::from_raw_parts(start, len) }
}

#[cfg(not(target_os = "linux"))]
fn section() -> &'static [u8] {
    &[]
}

/// Every embedded build, and each callback by call site.
pub struct Registry {
    pub builds: Vec<Build>,
    /// By `(line, column)`, then file: a lookup allocates nothing.
    sites: HashMap<(u32, u32), Vec<SiteEntry>>,
}

/// A callback compiled for a call site: its file, and where its build
/// holds it, found once when the registry is read so that a call indexes
/// instead of searching the build's callbacks and kernels (hundreds in a
/// program).
struct SiteEntry {
    file: String,
    build: usize,
    /// Its index in the build's `callbacks`.
    callback: usize,
    /// The index of its first kernel in the build's `kernels`
    /// (`Manifest::kernel_for`); none is an error at the call.
    kernel: Option<usize>,
}

impl Registry {
    /// Reads a section's records (`manifest::embed`) and checks every build.
    pub fn from_section(bytes: &[u8]) -> Result<Registry, HostError> {
        let records =
            manifest::embed::read_section(bytes).map_err(|m| error(HostErrorKind::Artifacts, m))?;
        let mut builds: Vec<Build> = Vec::new();
        for record in &records {
            let build = Build::from_record(record).map_err(device_error)?;
            // The same target linked twice (through two paths) is one build.
            if builds
                .iter()
                .any(|b| b.manifest.fingerprint == build.manifest.fingerprint)
            {
                continue;
            }
            builds.push(build);
        }
        let mut sites: HashMap<(u32, u32), Vec<SiteEntry>> = HashMap::new();
        for (i, b) in builds.iter().enumerate() {
            for (ci, c) in b.manifest.callbacks.iter().enumerate() {
                if let Some(s) = &c.site {
                    sites
                        .entry((s.line, s.column))
                        .or_default()
                        .push(SiteEntry {
                            file: s.file.clone(),
                            build: i,
                            callback: ci,
                            kernel: b.manifest.kernel_index_for(c.registration),
                        });
                }
            }
        }
        Ok(Registry { builds, sites })
    }

    /// The program's own embedded builds, read once.
    pub fn embedded() -> Result<&'static Registry, HostError> {
        static REGISTRY: OnceLock<Result<Registry, HostError>> = OnceLock::new();
        REGISTRY
            .get_or_init(|| Registry::from_section(section()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// How many callbacks the program carries, for messages.
    pub fn callbacks(&self) -> usize {
        self.builds.iter().map(|b| b.manifest.callbacks.len()).sum()
    }

    /// The build, callback and kernel compiled for `call`, every fact
    /// checked.
    pub fn find(&self, call: &CallInfo<'_>) -> Result<(usize, &Callback, &Kernel), HostError> {
        self.find_indexed(call)
            .map(|found| (found.build, found.callback, found.kernel))
    }

    /// [`Registry::find`], with the kernel's index in its build's manifest.
    fn find_indexed(&self, call: &CallInfo<'_>) -> Result<Found<'_>, HostError> {
        // Every build's callback at this site and file; no allocation
        // unless the call is refused.
        let candidates = self
            .sites
            .get(&(call.line, call.column))
            .into_iter()
            .flatten()
            .filter(|e| e.file == call.file);
        let mut reasons = Vec::new();
        let mut seen = false;
        for entry in candidates {
            seen = true;
            let build = &self.builds[entry.build];
            let callback = &build.manifest.callbacks[entry.callback];
            if let Err(why) = check_call(callback, call) {
                reasons.push(why);
                continue;
            }
            let index = entry.kernel.ok_or_else(|| {
                error(
                    HostErrorKind::Artifacts,
                    format!(
                        "{}: registration {} has no kernel",
                        build.manifest_path.display(),
                        callback.registration
                    ),
                )
            })?;
            return Ok(Found {
                build: entry.build,
                callback,
                index,
                kernel: &build.manifest.kernels[index],
            });
        }
        if !seen {
            let what = if self.builds.is_empty() {
                "the program carries no compiled callbacks: build it with `driver cargo build`"
                    .to_string()
            } else {
                format!(
                    "the program carries {} compiled callbacks from {}, none for this call \
                     (was this crate built with `driver cargo build`, and is the binary \
                     up to date?)",
                    self.callbacks(),
                    self.builds
                        .iter()
                        .map(|b| b.manifest_path.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(error(
                HostErrorKind::NotCompiled,
                format!(
                    "no GPU kernel was compiled for the call at {} (closure `{}`): {what}",
                    call.site(),
                    call.closure_type
                ),
            ));
        }
        Err(error(
            HostErrorKind::Mismatch,
            format!(
                "the GPU kernel compiled for the call at {} does not fit this call: {}; \
                 rebuild with `driver cargo build`",
                call.site(),
                reasons.join("; ")
            ),
        ))
    }
}

fn check_call(callback: &Callback, call: &CallInfo<'_>) -> Result<(), String> {
    let Some(site) = &callback.site else {
        return Err("it has no call site".into());
    };
    if call.provider != callback.provider {
        return Err(format!(
            "it was compiled for `{}`, the call is `{}`",
            callback.provider, call.provider
        ));
    }
    let signature = &callback.signature;
    let compiled = || signature.params.iter().chain([&signature.ret]);
    let arity = signature.params.len() + 1 == call.types.len();
    let fits = arity && compiled().zip(call.types).all(|(e, t)| t.fits(e));
    if !fits {
        let called: Vec<&str> = call.types.iter().map(ElementType::name).collect();
        let mut message = format!(
            "it was compiled for a callback of type `{}`, the call's types are ({})",
            callback.signature,
            called.join(", ")
        );
        // Where a composite differs, both layouts: their names may read
        // the same while rustc laid them out otherwise.
        let mut differing: Vec<(Vec<String>, String, String)> = Vec::new();
        for (i, (e, t)) in compiled().zip(call.types).enumerate() {
            let composite =
                matches!(e, Element::Composite(_)) || matches!(t, ElementType::Composite(_));
            if !arity || !composite || t.fits(e) {
                continue;
            }
            let position = if i < signature.params.len() {
                format!("parameter {}", i + 1)
            } else {
                "the result".to_string()
            };
            let (was, is) = (describe_element(e), t.describe());
            match differing.iter_mut().find(|(_, w, c)| *w == was && *c == is) {
                Some((positions, _, _)) => positions.push(position),
                None => differing.push((vec![position], was, is)),
            }
        }
        for (positions, was, is) in differing {
            message.push_str(&format!(
                "; {}: compiled for {was}; the call's element is {is}",
                positions.join(", ")
            ));
        }
        return Err(message);
    }
    if !site.closure_matches(call.closure_type) {
        return Err(format!(
            "it was compiled for a closure `{}::…::{}`, the call passes `{}`",
            site.crate_name.as_deref().unwrap_or("…"),
            site.closure_suffix.as_deref().unwrap_or("…"),
            call.closure_type
        ));
    }
    let env = &callback.env;
    if call.closure_size as u64 != env.size || call.closure_align as u64 != env.align {
        return Err(format!(
            "its environment is {} bytes aligned to {}, the closure is {} bytes aligned to {}",
            env.size, env.align, call.closure_size, call.closure_align
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Devices.

/// One stream of a device and what its calls need besides their inputs
/// and outputs. A device has at least one (lane 0, every `Gpu::open`'s);
/// `Device::lane` adds more, which are kept for the process and reused.
struct Lane {
    stream: &'static Stream,
    scratch: Option<Scratch<'static>>,
    /// Whether a [`Device::lane`] handle holds it (lane 0: always).
    held: bool,
    /// The calls launched since the last wait on this stream, for the
    /// message of an error that surfaces at the next wait.
    pending: Pending,
    /// The room of the last call's environment bytes, which the next call
    /// reuses.
    env: Vec<u8>,
}

/// Calls launched since a stream's last wait.
#[derive(Default)]
struct Pending {
    count: usize,
    first: Option<Site>,
    last: Option<Site>,
}

impl Pending {
    fn push(&mut self, site: Site) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(site);
        } else {
            self.last = Some(site);
        }
    }

    /// Which calls an error surfacing now may come from.
    fn describe(&self) -> String {
        match (self.count, &self.first, &self.last) {
            (0, _, _) => "no call launched since the last wait".into(),
            (1, Some(f), _) => format!("the call at {f}"),
            (n, Some(f), Some(l)) => {
                format!(
                    "one of the {n} calls since the last wait (the first at {f}, the last at {l})"
                )
            }
            (n, _, _) => format!("one of {n} calls since the last wait"),
        }
    }
}

/// Everything a device holds, behind its lock.
struct State {
    gpu: &'static Gpu,
    /// Per build (by its index in the registry), once loaded: its modules
    /// (kept for the process) and resolved kernels.
    loaded: Vec<Option<&'static BTreeMap<String, ResolvedKernel<'static>>>>,
    /// Per build and main kernel (by their indices), once called: the
    /// kernels a call launches, in the manifest's order (found once, not at
    /// every call).
    launches: Vec<Vec<Option<&'static [&'static ResolvedKernel<'static>]>>>,
    lanes: Vec<Lane>,
}

/// A call's build, callback and main kernel (its index in the build's
/// manifest).
struct Found<'r> {
    build: usize,
    callback: &'r Callback,
    index: usize,
    kernel: &'r Kernel,
}

// SAFETY: the CUDA driver API may be called from any thread once the
// context is current; every use of a `State` is under its device's mutex,
// and `Device::lock` makes the context current on the calling thread first.
unsafe impl Send for State {}

impl State {
    /// Waits for lane `lane`'s stream; an error names the calls it may
    /// come from.
    fn wait(&mut self, lane: usize) -> Result<(), HostError> {
        let l = &mut self.lanes[lane];
        let result = l.stream.synchronize();
        let pending = std::mem::take(&mut l.pending);
        result.map_err(|e| {
            error(
                HostErrorKind::Device,
                format!("the GPU failed running {}: {e}", pending.describe()),
            )
        })
    }

    /// Orders the next use of `alloc` on lane `lane` after every use so
    /// far (on whatever lane made it): uses of one allocation form one
    /// sequence across streams, and its free goes to the last one's.
    fn order(&self, alloc: &DeviceAlloc, lane: usize) -> Result<(), HostError> {
        let from = alloc.lane.load(Ordering::Relaxed);
        if from != lane {
            let event = self.gpu.order_event().map_err(device_error)?;
            event
                .record_on(self.lanes[from].stream)
                .map_err(device_error)?;
            self.lanes[lane].stream.wait(&event).map_err(device_error)?;
            alloc.lane.store(lane, Ordering::Relaxed);
            let stream: *const Stream = self.lanes[lane].stream;
            alloc.stream.store(stream.cast_mut(), Ordering::Relaxed);
        }
        Ok(())
    }

    /// A new stream-ordered allocation of `bytes` on lane `lane`.
    fn alloc(
        &self,
        device: &'static Device,
        lane: usize,
        bytes: usize,
    ) -> Result<DeviceAlloc, HostError> {
        let buffer = self
            .gpu
            .alloc_on(bytes, self.lanes[lane].stream)
            .map_err(device_error)?;
        Ok(DeviceAlloc {
            device,
            buffer: Some(buffer),
            bytes,
            lane: AtomicUsize::new(lane),
            stream: AtomicPtr::new((self.lanes[lane].stream as *const Stream).cast_mut()),
        })
    }
}

thread_local! {
    /// Whether this thread holds a device's lock ([`Device::lock`]).
    static HOLDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A device's locked state; unlocking clears this thread's [`HOLDING`].
struct Locked<'a>(std::sync::MutexGuard<'a, State>);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(false));
    }
}

impl std::ops::Deref for Locked<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.0
    }
}

impl std::ops::DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.0
    }
}

/// One device, opened once per process.
pub struct Device {
    pub ordinal: usize,
    pub name: String,
    /// For making the context current outside the lock; everything else
    /// goes through `state`.
    gpu: &'static Gpu,
    state: Mutex<State>,
}

// SAFETY: outside the mutex, `gpu` is only used to make its context
// current (`cuCtxSetCurrent`), which the driver allows from any thread.
unsafe impl Sync for Device {}
unsafe impl Send for Device {}

/// Device memory of ours (`native::gpu::DeviceVec`), allocated in stream
/// order and freed on drop in the order of the last stream that used it:
/// never while work that reads or writes it is still enqueued.
pub struct DeviceAlloc {
    device: &'static Device,
    buffer: Option<DeviceBuffer<'static>>,
    pub bytes: usize,
    /// The lane of its last use (changed only under the device's lock).
    lane: AtomicUsize,
    /// That lane's stream (lanes live for the process), where the drop
    /// enqueues the free without the device's lock: an allocation may be
    /// dropped while its device's lock is held (a call's staging copy of
    /// a host input, an error's early return), and the lock is not
    /// reentrant.
    stream: AtomicPtr<Stream>,
}

// SAFETY: as for `State`: the buffer is only touched under the device's
// lock, with the context current.
unsafe impl Send for DeviceAlloc {}
unsafe impl Sync for DeviceAlloc {}

impl DeviceAlloc {
    pub fn device(&self) -> &'static Device {
        self.device
    }

    /// The device address of the first byte.
    pub fn address(&self) -> u64 {
        self.buffer.as_ref().map_or(0, |b| b.address(0))
    }

    /// Whether `len` bytes at `offset` lie inside this allocation: else a
    /// mismatch naming the copy (`a download … from`, `an upload … into`).
    fn check_range(
        &self,
        copy: &str,
        preposition: &str,
        offset: usize,
        len: usize,
    ) -> Result<(), HostError> {
        if offset.checked_add(len).is_none_or(|end| end > self.bytes) {
            return Err(error(
                HostErrorKind::Mismatch,
                format!(
                    "{copy} of {len} bytes at {offset} {preposition} {} bytes",
                    self.bytes
                ),
            ));
        }
        Ok(())
    }

    /// Copies `len` bytes from `offset` bytes in to `out` on the host,
    /// once the work enqueued before that writes them is done. Through a
    /// pointer: the bytes may become a composite's, padding included.
    ///
    /// # Safety
    ///
    /// `out` has `len` writable bytes, neither read nor written by anything
    /// else until this returns.
    pub unsafe fn download(
        &self,
        offset: usize,
        out: *mut u8,
        len: usize,
    ) -> Result<(), HostError> {
        self.check_range("a download", "from", offset, len)?;
        let mut state = self.device.lock()?;
        let lane = self.lane.load(Ordering::Relaxed);
        if let Some(b) = self.buffer.as_ref().filter(|_| len > 0) {
            let stream = state.lanes[lane].stream;
            // SAFETY: the caller's contract; the range was checked above,
            // and `out` is waited for below, before this returns.
            let copied = unsafe { b.download_on(stream, offset, uninit_mut(out, len)) };
            copied.map_err(|e| wait_error(&mut state, lane, e))?;
        }
        state.wait(lane)
    }

    /// Copies `data` to `offset` bytes in, in the order of the stream
    /// that last used this memory.
    ///
    /// # Safety
    ///
    /// `data`'s bytes are live, and not written until this returns.
    pub unsafe fn upload(&self, offset: usize, data: HostBytes) -> Result<(), HostError> {
        self.check_range("an upload", "into", offset, data.len)?;
        let mut state = self.device.lock()?;
        let lane = self.lane.load(Ordering::Relaxed);
        // SAFETY: the caller's contract.
        unsafe { stage(&mut state, lane, self, offset, data) }
    }
}

/// Enqueues a copy of `data` into `alloc` on `lane`; waits when `data` is
/// page-locked (the copy would otherwise read it after this returns, while
/// the caller may write it), not when it is pageable (the driver has
/// copied it before returning).
///
/// # Safety
///
/// `data`'s bytes are live, and not written until this returns.
unsafe fn stage(
    state: &mut State,
    lane: usize,
    alloc: &DeviceAlloc,
    offset: usize,
    data: HostBytes,
) -> Result<(), HostError> {
    let Some(buffer) = alloc.buffer.as_ref().filter(|_| data.len > 0) else {
        return Ok(());
    };
    let stream = state.lanes[lane].stream;
    // SAFETY: the caller's contract; a page-locked source is waited for
    // below.
    let copied = unsafe { buffer.upload_on(stream, offset, data.as_uninit()) };
    copied.map_err(|e| after_pending(state, lane, e))?;
    if crate::gpu::is_page_locked(data.ptr) {
        state.wait(lane)?;
    }
    Ok(())
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        if let Some(mut buffer) = self.buffer.take() {
            // SAFETY: `stream` is a lane's, leaked for the process; every
            // use of the buffer is ordered on that lane (State::order), so
            // the free is enqueued after them. The driver is thread-safe:
            // only the context must be current.
            unsafe { buffer.free_on(&*self.stream.load(Ordering::Relaxed)) };
            let _ = self.device.gpu.make_current();
            drop(buffer);
        }
    }
}

/// Page-locked host memory (`native::gpu::HostBuffer`), freed on drop.
/// A copy to or from it may still run after the call that enqueued it
/// returns: the copy's event is kept here, and every access waits for it
/// ([`HostAlloc::wait`]), as does the free.
pub struct HostAlloc {
    device: &'static Device,
    buffer: PinnedBuffer,
    /// The last copy enqueued that reads or writes it: its lane and the
    /// event recorded after it.
    pending: Mutex<Option<(usize, Event<'static>)>>,
}

// SAFETY: the event is only used under `pending`'s lock (and the device's
// context made current), the memory is plain host memory.
unsafe impl Send for HostAlloc {}
unsafe impl Sync for HostAlloc {}

impl HostAlloc {
    pub fn as_ptr(&self) -> *mut u8 {
        self.buffer.as_ptr()
    }

    pub fn bytes(&self) -> usize {
        self.buffer.bytes()
    }

    /// Waits for the copy that reads or writes this memory, if one is
    /// enqueued: afterwards the host may read and write it.
    pub fn wait(&self) -> Result<(), HostError> {
        // Taken out first: the device's lock is never asked for while this
        // one is held (`enqueue` takes them in the other order).
        let taken = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let Some((lane, event)) = taken else {
            return Ok(());
        };
        self.device.wait_event(lane, &event)
    }

    /// Orders a copy about to be enqueued on `lane` after the one pending
    /// (on another lane), then records its event once enqueued.
    fn enqueue(
        &self,
        state: &mut State,
        lane: usize,
        copy: impl FnOnce(&mut State) -> Result<(), HostError>,
    ) -> Result<(), HostError> {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((from, event)) = pending.as_ref() {
            if *from != lane {
                state.lanes[lane].stream.wait(event).map_err(device_error)?;
            }
        }
        copy(state)?;
        let event = state.gpu.order_event().map_err(device_error)?;
        event
            .record_on(state.lanes[lane].stream)
            .map_err(device_error)?;
        *pending = Some((lane, event));
        Ok(())
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // The memory is freed only after the copies that use it.
        let _ = self.wait();
    }
}

/// A timed point in a lane's order (`native::gpu::Mark`): an event with
/// timing, recorded when made; the GPU stamps it when the lane reaches it.
pub struct MarkEvent {
    device: &'static Device,
    lane: usize,
    event: Event<'static>,
}

// SAFETY: the event is only waited on, read and destroyed with the
// device's context made current (`elapsed_ms`, `drop`).
unsafe impl Send for MarkEvent {}
unsafe impl Sync for MarkEvent {}

impl MarkEvent {
    /// Milliseconds of GPU time from this mark to `later`, once the lanes
    /// have reached both (negative when `later` was reached first). Marks
    /// of one device share its clock, whatever their lanes.
    pub fn elapsed_ms(&self, later: &MarkEvent) -> Result<f32, HostError> {
        if !std::ptr::eq(self.device, later.device) {
            return Err(error(
                HostErrorKind::Mismatch,
                format!(
                    "the marks are of two devices ({} and {}): only marks of one device share a clock",
                    self.device.ordinal, later.device.ordinal
                ),
            ));
        }
        self.device.wait_event(self.lane, &self.event)?;
        later.device.wait_event(later.lane, &later.event)?;
        self.event.elapsed_ms(&later.event).map_err(device_error)
    }
}

impl Drop for MarkEvent {
    fn drop(&mut self) {
        // The event is destroyed (after this) with its context current.
        let _ = self.device.gpu.make_current();
    }
}

/// One input of a call.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    /// Host memory: `len` elements at `ptr`.
    Host { ptr: *const u8, len: usize },
    /// `len` elements from element `start` of one of our device allocations.
    Device {
        alloc: &'a DeviceAlloc,
        start: usize,
        len: usize,
    },
}

impl Input<'_> {
    fn len(&self) -> usize {
        match self {
            Input::Host { len, .. } | Input::Device { len, .. } => *len,
        }
    }
}

/// Where a call's result goes.
pub enum Output<'a> {
    /// A reduce's value, or a chain fold's or pick's: `room` bytes at `ptr`
    /// on the host.
    Value { ptr: *mut u8, room: usize },
    /// A new device allocation of the call's own.
    New,
    /// `len` elements from element `start` of an allocation of ours (the
    /// `_into` forms).
    Into {
        alloc: &'a DeviceAlloc,
        start: usize,
        len: usize,
    },
}

/// What a call produced.
pub enum Produced {
    /// Bytes of a reduce's or a chain's value written to the host; 0 for a
    /// chain with no value (nothing kept, no initial value).
    Value(usize),
    /// Elements of the result on the device: in a new allocation, or
    /// (`None`) in the `Output::Into` one.
    Device {
        alloc: Option<DeviceAlloc>,
        len: usize,
    },
    /// Two results, each in a new allocation with its length: partition's
    /// elements its predicate keeps, then those it rejects;
    /// reduce_by_key's last key of each run, then each run's fold.
    Split {
        first: (DeviceAlloc, usize),
        second: (DeviceAlloc, usize),
    },
}

/// What a call hands its provider besides the callback's types.
pub struct Request<'a> {
    /// The data (and, for transform2, the second input).
    pub inputs: &'a [Input<'a>],
    /// Segment boundaries (segmented reduce).
    pub offsets: Option<&'a [usize]>,
    /// The number of bins (histogram).
    pub bins: Option<usize>,
    /// The initial value, for providers that take one (a chain's fold: one
    /// `R`, or none): only its scalars are read, at the compiled type's
    /// offsets, never its padding.
    pub init: Option<HostBytes>,
    /// The closure object.
    pub closure: *const u8,
}

/// What the last call on this thread launched: its kernels in launch
/// order, each with its grid and block, and where the device read the
/// first input. A call's combining order depends on these (a reduce's on
/// its grid and the input's alignment), so a host model of that order
/// reads them here.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchReport {
    /// `(kernel, grid, threads a block)`, in launch order; none for a call
    /// that launched nothing (an empty input).
    pub kernels: Vec<(String, u32, u32)>,
    /// The device address of the first input's first element.
    pub input_address: u64,
}

/// The last launch on this thread, as the manifest's names: recording it
/// allocates nothing once the vector has grown.
struct LastLaunch {
    ran: bool,
    kernels: Vec<(&'static str, u32, u32)>,
    input_address: u64,
}

thread_local! {
    static LAST_LAUNCH: std::cell::RefCell<LastLaunch> = const {
        std::cell::RefCell::new(LastLaunch {
            ran: false,
            kernels: Vec::new(),
            input_address: 0,
        })
    };
}

/// The [`LaunchReport`] of the last call on this thread that ran (`None`
/// before any did).
pub fn last_launch() -> Option<LaunchReport> {
    LAST_LAUNCH.with(|l| {
        let l = l.borrow();
        l.ran.then(|| LaunchReport {
            kernels: l
                .kernels
                .iter()
                .map(|&(k, g, b)| (k.to_string(), g, b))
                .collect(),
            input_address: l.input_address,
        })
    })
}

impl Device {
    /// Opens device `ordinal` (once per process; later calls share it).
    pub fn open(ordinal: usize) -> Result<&'static Device, HostError> {
        static DEVICES: OnceLock<Mutex<HashMap<usize, &'static Device>>> = OnceLock::new();
        let devices = DEVICES.get_or_init(|| Mutex::new(HashMap::new()));
        let mut devices = devices.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = devices.get(&ordinal) {
            return Ok(d);
        }
        let gpu: &'static Gpu = Box::leak(Box::new(Gpu::open(ordinal).map_err(device_error)?));
        gpu.keep_pool_memory().map_err(device_error)?;
        let stream: &'static Stream = Box::leak(Box::new(gpu.stream().map_err(device_error)?));
        let device: &'static Device = Box::leak(Box::new(Device {
            ordinal,
            name: gpu.name.clone(),
            gpu,
            state: Mutex::new(State {
                gpu,
                loaded: Vec::new(),
                launches: Vec::new(),
                lanes: vec![Lane {
                    stream,
                    scratch: None,
                    held: true,
                    pending: Pending::default(),
                    env: Vec::new(),
                }],
            }),
        }));
        devices.insert(ordinal, device);
        Ok(device)
    }

    /// The device's state, with its context current on this thread. A
    /// second lock on a thread that holds one is an error, not a hang (the
    /// mutex is not reentrant: nothing done under the lock may lock again).
    fn lock(&self) -> Result<Locked<'_>, HostError> {
        if HOLDING.with(|h| h.replace(true)) {
            return Err(error(
                HostErrorKind::Device,
                "internal error: the device's lock was asked for twice on one thread",
            ));
        }
        let guard = Locked(self.state.lock().unwrap_or_else(|p| p.into_inner()));
        guard.gpu.make_current().map_err(device_error)?;
        Ok(guard)
    }

    /// A lane of its own: a stream whose work may run beside other lanes'.
    /// Give it back with [`Device::release_lane`].
    pub fn lane(&self) -> Result<usize, HostError> {
        let mut state = self.lock()?;
        if let Some(i) = state.lanes.iter().position(|l| !l.held) {
            state.lanes[i].held = true;
            return Ok(i);
        }
        let stream: &'static Stream =
            Box::leak(Box::new(state.gpu.stream().map_err(device_error)?));
        state.lanes.push(Lane {
            stream,
            scratch: None,
            held: true,
            pending: Pending::default(),
            env: Vec::new(),
        });
        Ok(state.lanes.len() - 1)
    }

    /// Returns a lane for reuse (its stream keeps what is enqueued; the
    /// allocations it last used are freed in its order).
    pub fn release_lane(&self, lane: usize) {
        if lane == 0 {
            return;
        }
        if let Ok(mut state) = self.lock() {
            if let Some(l) = state.lanes.get_mut(lane) {
                l.held = false;
            }
        }
    }

    /// Waits for everything enqueued on `lane`; a kernel's error surfaces
    /// here, naming the calls it may come from.
    pub fn synchronize(&self, lane: usize) -> Result<(), HostError> {
        self.lock()?.wait(lane)
    }

    /// Waits for `event`, recorded on `lane`: an error of a call before it
    /// surfaces here, naming the calls of the lane it may come from.
    fn wait_event(&self, lane: usize, event: &Event<'_>) -> Result<(), HostError> {
        self.gpu.make_current().map_err(device_error)?;
        match event.synchronize() {
            Ok(()) => Ok(()),
            Err(e) => Err(wait_error(&mut *self.lock()?, lane, e)),
        }
    }

    /// A timed mark in `lane`'s order, recorded now (it returns without
    /// waiting).
    pub fn mark(&'static self, lane: usize) -> Result<MarkEvent, HostError> {
        let state = self.lock()?;
        let event = state.gpu.event().map_err(device_error)?;
        event
            .record_on(state.lanes[lane].stream)
            .map_err(device_error)?;
        Ok(MarkEvent {
            device: self,
            lane,
            event,
        })
    }

    /// A new allocation of `bytes`, zeroed in `lane`'s order.
    pub fn alloc(&'static self, lane: usize, bytes: usize) -> Result<DeviceAlloc, HostError> {
        let state = self.lock()?;
        let alloc = state.alloc(self, lane, bytes)?;
        if let Some(b) = alloc.buffer.as_ref().filter(|_| bytes > 0) {
            b.fill_on(state.lanes[lane].stream, 0)
                .map_err(device_error)?;
        }
        Ok(alloc)
    }

    /// The device's free and total memory in bytes (`cuMemGetInfo`); the
    /// pool keeps what calls freed, so this is what is left beside it.
    pub fn memory(&self) -> Result<(usize, usize), HostError> {
        let _state = self.lock()?;
        cudarc::driver::result::mem_get_info()
            .map_err(|e| error(HostErrorKind::Device, format!("cuMemGetInfo failed: {e:?}")))
    }

    /// `bytes` of page-locked host memory.
    pub fn alloc_host(&'static self, bytes: usize) -> Result<HostAlloc, HostError> {
        let state = self.lock()?;
        Ok(HostAlloc {
            device: self,
            buffer: state.gpu.alloc_host(bytes).map_err(device_error)?,
            pending: Mutex::new(None),
        })
    }

    /// Copies `host` to a new device allocation in `lane`'s order, without
    /// waiting: `host` is not written before the copy has read it
    /// ([`HostAlloc::wait`]).
    pub fn upload_async(
        &'static self,
        lane: usize,
        host: &HostAlloc,
    ) -> Result<DeviceAlloc, HostError> {
        let mut state = self.lock()?;
        let alloc = state.alloc(self, lane, host.bytes())?;
        host.enqueue(&mut state, lane, |state| {
            let (Some(b), true) = (alloc.buffer.as_ref(), host.bytes() > 0) else {
                return Ok(());
            };
            let data = HostBytes {
                ptr: host.as_ptr(),
                len: host.bytes(),
            };
            // SAFETY: `host` holds `bytes` bytes (a composite's padding
            // among them, hence no `&[u8]`), and is neither written nor
            // freed before the event recorded after this copy.
            let copied = unsafe { b.upload_on(state.lanes[lane].stream, 0, data.as_uninit()) };
            copied.map_err(|e| after_pending(state, lane, e))
        })?;
        Ok(alloc)
    }

    /// Copies the first `host.bytes()` bytes of `alloc` into `host` in
    /// `lane`'s order, after the calls that write them, without waiting:
    /// `host` is not read, written or freed before the copy is done
    /// ([`HostAlloc::wait`]).
    pub fn download_async(
        &self,
        lane: usize,
        alloc: &DeviceAlloc,
        host: &HostAlloc,
    ) -> Result<(), HostError> {
        if alloc.bytes < host.bytes() {
            return Err(error(
                HostErrorKind::Mismatch,
                format!(
                    "a copy of {} device bytes into {} host bytes",
                    alloc.bytes,
                    host.bytes()
                ),
            ));
        }
        if !std::ptr::eq(alloc.device, self) {
            return Err(error(
                HostErrorKind::Mismatch,
                format!(
                    "the data lives on device {}, the copy runs on device {}",
                    alloc.device.ordinal, self.ordinal
                ),
            ));
        }
        let mut state = self.lock()?;
        state.order(alloc, lane)?;
        host.enqueue(&mut state, lane, |state| {
            let (Some(b), true) = (alloc.buffer.as_ref(), host.bytes() > 0) else {
                return Ok(());
            };
            // SAFETY: `host` holds `bytes` bytes, and is neither read,
            // written nor freed before the event recorded after this copy.
            let out = unsafe { uninit_mut(host.as_ptr(), host.bytes()) };
            let copied = unsafe { b.download_on(state.lanes[lane].stream, 0, out) };
            copied.map_err(|e| after_pending(state, lane, e))
        })
    }

    /// Copies `data` to a new device allocation, in `lane`'s order.
    ///
    /// # Safety
    ///
    /// `data`'s bytes are live, and not written until this returns.
    pub unsafe fn upload(
        &'static self,
        lane: usize,
        data: HostBytes,
    ) -> Result<DeviceAlloc, HostError> {
        let mut state = self.lock()?;
        let alloc = state.alloc(self, lane, data.len)?;
        // SAFETY: the caller's contract.
        unsafe { stage(&mut state, lane, &alloc, 0, data)? };
        Ok(alloc)
    }

    /// Copies `bytes` bytes between two allocations of this device, in
    /// `lane`'s order.
    pub fn copy(
        &self,
        lane: usize,
        (src, src_offset): (&DeviceAlloc, usize),
        (dst, dst_offset): (&DeviceAlloc, usize),
        bytes: usize,
    ) -> Result<(), HostError> {
        let inside = |a: &DeviceAlloc, o: usize| o.checked_add(bytes).is_some_and(|e| e <= a.bytes);
        if !inside(src, src_offset) || !inside(dst, dst_offset) {
            return Err(error(
                HostErrorKind::Mismatch,
                format!(
                    "a copy of {bytes} bytes from {src_offset} of {} into {dst_offset} of {}",
                    src.bytes, dst.bytes
                ),
            ));
        }
        let state = self.lock()?;
        state.order(src, lane)?;
        state.order(dst, lane)?;
        if bytes == 0 {
            return Ok(());
        }
        let (Some(s), Some(d)) = (src.buffer.as_ref(), dst.buffer.as_ref()) else {
            return Ok(());
        };
        // SAFETY: both ranges were checked inside their allocations, which
        // are freed in this lane's order (ordered above), after the copy.
        unsafe {
            state.gpu.copy_device_at(
                state.lanes[lane].stream,
                d.address(dst_offset),
                s.address(src_offset),
                bytes,
            )
        }
        .map_err(device_error)
    }

    /// Runs the provider compiled for `call` on `request` in `lane`'s
    /// order, the closure's captured fields read at the manifest's
    /// offsets, into `output`. Returns once the work is enqueued, except
    /// where the host needs a value from the device: a reduce's or a
    /// chain's result (written to `Output::Value`) and the count of a
    /// select's kept elements or of a chain's collected values, which it
    /// waits for.
    ///
    /// A chain (`call.types` `[T, R]`) reads `T`s and writes its value, an
    /// `R` (1 byte for a `bool`), to `Output::Value`; its `request.init` is
    /// one `R` or, for a fold from the first value kept (and always for a
    /// pick), `None`. `Produced::Value(0)` says it has no value (nothing
    /// kept, no initial value): nothing was written. A chain's collect
    /// (`chain_collect`, no `init`) takes `Output::New` alone, as a select
    /// does: it returns `Produced::Device` with a new allocation of room for
    /// `len` values of `R` and the number kept.
    ///
    /// # Safety
    ///
    /// `request.closure` points to a live closure of `call.closure_size`
    /// bytes; a host input's `ptr` to `len` live elements of the type
    /// `call.types` gives its position; `init` to one live value of its
    /// type; an `Output::Value`'s `ptr` has `room` writable bytes. Each
    /// type in `call.types` states its layout truly (`native::gpu`'s sealed
    /// trait measures it): host memory is read by it, through pointers.
    pub unsafe fn run(
        &'static self,
        lane: usize,
        call: &CallInfo<'_>,
        request: &Request<'_>,
        output: Output<'_>,
    ) -> Result<Produced, HostError> {
        let registry = Registry::embedded()?;
        let found = registry.find_indexed(call)?;
        let (b, callback, kernel) = (found.build, found.callback, found.kernel);
        let provider = callback.provider;
        let signature = &callback.signature;
        let mismatch = |what: String| {
            error(
                HostErrorKind::Mismatch,
                format!("the call at {}: {what}", call.site()),
            )
        };
        let element = signature.element().size() as usize;
        // partition_point's second input is its queries.
        let wanted_inputs = match provider {
            Provider::Transform2
            | Provider::PartitionPoint
            | Provider::MergeBy
            | Provider::ReduceByKey
            | Provider::ScanByKey => 2,
            _ => 1,
        };
        if request.inputs.len() != wanted_inputs {
            return Err(mismatch(format!(
                "{} inputs for a {} kernel",
                request.inputs.len(),
                provider.name()
            )));
        }
        let len = request.inputs[0].len();
        let any_lengths = matches!(provider, Provider::PartitionPoint | Provider::MergeBy);
        if !any_lengths && request.inputs.iter().any(|i| i.len() != len) {
            return Err(mismatch("the inputs differ in length".into()));
        }
        let bins = match (provider, request.bins) {
            (Provider::Histogram, Some(bins)) => bins as u64,
            (Provider::Histogram, None) => {
                return Err(mismatch("no number of bins for a histogram kernel".into()))
            }
            (_, Some(_)) => {
                return Err(mismatch(format!(
                    "a number of bins for a {} kernel, which takes none",
                    provider.name()
                )))
            }
            (_, None) => 0,
        };
        // A chain's initial value is one of its values (`R`, the callback's
        // result), and its fold may have none.
        let record = manifest::provider::result_record(provider, signature);
        let init_element = match provider {
            Provider::ChainReduce => &signature.ret,
            _ => signature.element(),
        };
        let init_size = init_element.size() as usize;
        let init = match (provider.takes_init(), request.init) {
            // SAFETY: the caller's contract: one live value of the type
            // `call.types` states, which find() checked has the compiled
            // type's scalars.
            (true, Some(v)) if v.len == init_size => unsafe { value_scalars(init_element, v) },
            // An inclusive scan's optional seed (a shard's carry).
            // SAFETY: as above.
            (false, Some(v)) if provider == Provider::InclusiveScan && v.len == init_size => unsafe {
                value_scalars(init_element, v)
            },
            (false, None) => Vec::new(),
            (true, None) if provider == Provider::ChainReduce => Vec::new(),
            (_, v) => {
                let takes = if provider.takes_init() {
                    format!("one of {init_size} bytes")
                } else {
                    "none".to_string()
                };
                return Err(mismatch(format!(
                    "an initial value of {} bytes for a {} kernel, which takes {takes}",
                    v.map_or(0, |v| v.len),
                    provider.name(),
                )));
            }
        };
        // Segment boundaries: in order and inside the data.
        let mut offsets64: Vec<u64> = Vec::new();
        let mut longest = 0u64;
        let segmented = matches!(
            provider,
            Provider::SegmentedReduce | Provider::SegmentedSortBy
        );
        if segmented {
            let offsets = request
                .offsets
                .ok_or_else(|| mismatch("no segment offsets".into()))?;
            for (i, w) in offsets.windows(2).enumerate() {
                if w[0] > w[1] || w[1] > len {
                    return Err(mismatch(format!(
                        "segment {i} is {}..{}, out of order or past the {len} elements",
                        w[0], w[1]
                    )));
                }
                longest = longest.max((w[1] - w[0]) as u64);
            }
            if offsets.len() == 1 && offsets[0] > len {
                return Err(mismatch(format!(
                    "offset {} is past the {len} elements",
                    offsets[0]
                )));
            }
            offsets64 = offsets.iter().map(|&o| o as u64).collect();
        }
        let count = match provider {
            Provider::SegmentedReduce => offsets64.len().saturating_sub(1) as u64,
            // An index a query, a count a bin.
            Provider::PartitionPoint => request.inputs[1].len() as u64,
            Provider::Histogram => bins,
            // Every element of both inputs.
            Provider::MergeBy => (len + request.inputs[1].len()) as u64,
            _ if record.is_some() => 1,
            _ => len as u64,
        };
        // Select and chain_collect write up to `len` elements (values of R
        // for chain_collect); every other provider exactly `count` results
        // (a reduce's, a chain fold's or pick's one value to the host).
        let out_bytes = dispatch::output_bytes(provider, signature, count) as usize;
        let out_size = dispatch::output_bytes(provider, signature, 1) as usize;
        match (&output, record) {
            (Output::Value { room, .. }, Some(record)) if *room as u64 >= record.value => {}
            (Output::Value { room, .. }, Some(record)) => {
                return Err(mismatch(format!(
                    "room for {room} bytes, the result of a {} call takes {}",
                    provider.name(),
                    record.value
                )))
            }
            (Output::New, None) => {}
            (
                Output::Into {
                    alloc,
                    start,
                    len: n,
                },
                None,
            ) => {
                if provider.counts_results() {
                    return Err(mismatch(format!(
                        "the result of a {} call has no length before it runs: it goes to a \
                         new allocation, not into one of {n} elements",
                        provider.name()
                    )));
                }
                if *n as u64 != count {
                    return Err(mismatch(format!(
                        "the output has {n} elements, the call writes {count}"
                    )));
                }
                if !std::ptr::eq(alloc.device, self) {
                    return Err(mismatch(format!(
                        "the output lives on device {}, the call runs on device {}",
                        alloc.device.ordinal, self.ordinal
                    )));
                }
                if (start + n) * out_size > alloc.bytes {
                    return Err(mismatch(format!(
                        "elements {start}..{} of an allocation of {} bytes",
                        start + n,
                        alloc.bytes
                    )));
                }
            }
            _ => {
                return Err(mismatch(format!(
                    "no place for the result of a {} call",
                    provider.name()
                )))
            }
        }
        let mut state = self.lock()?;
        let state = &mut *state;
        let gpu = state.gpu;
        // The environment: the closure's captured fields, copied at their
        // offsets into zeroed bytes (padding is never read), in the room
        // the lane's last call left.
        let mut env = std::mem::take(&mut state.lanes[lane].env);
        env.clear();
        env.resize(callback.env.size as usize, 0);
        for f in &callback.env.fields {
            let (at, n) = (f.offset as usize, f.size as usize);
            // SAFETY: find() checked size_of::<F>() == env.size, and the
            // manifest's layout keeps every field inside it (EnvLayout::check);
            // the field is a captured scalar, initialised by the closure.
            unsafe {
                std::ptr::copy_nonoverlapping(request.closure.add(at), env[at..].as_mut_ptr(), n)
            };
        }
        let builds = registry.builds.len();
        state.loaded.resize(builds, None);
        state.launches.resize_with(builds, Vec::new);
        let resolved: &'static BTreeMap<_, _> = match state.loaded[b] {
            Some(resolved) => resolved,
            None => {
                let build = &registry.builds[b];
                let loaded: &'static Loaded<'static> =
                    Box::leak(Box::new(Loaded::load(gpu, build).map_err(device_error)?));
                let resolved = loaded.resolve(&build.manifest).map_err(device_error)?;
                let resolved = Box::leak(Box::new(resolved));
                state.loaded[b] = Some(resolved);
                resolved
            }
        };
        let manifest_kernels = &registry.builds[b].manifest.kernels;
        let launches = &mut state.launches[b];
        launches.resize(manifest_kernels.len(), None);
        let kernels: &'static [&'static ResolvedKernel<'static>] = match launches[found.index] {
            Some(kernels) => kernels,
            None => {
                let kernels = manifest_kernels
                    .iter()
                    .filter(|k| {
                        k.registration == kernel.registration
                            && (k.variant == kernel.variant
                                || k.variant == manifest::Variant::Plain)
                    })
                    .map(|k| {
                        resolved.get(&k.name).ok_or_else(|| {
                            error(
                                HostErrorKind::Artifacts,
                                format!("kernel `{}` was not resolved", k.name),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let kernels: &'static [_] = Box::leak(kernels.into_boxed_slice());
                launches[found.index] = Some(kernels);
                kernels
            }
        };
        let stream = state.lanes[lane].stream;
        if state.lanes[lane].scratch.is_none() {
            let all = registry
                .builds
                .iter()
                .flat_map(|b| b.manifest.kernels.iter());
            state.lanes[lane].scratch = Some(Scratch::new(gpu, stream, all).map_err(device_error)?);
        }
        // Each input where the device reads it: ours in place, ordered
        // after its earlier uses; a host input in an allocation of this
        // call's, freed in stream order after it.
        let sizes = [
            element,
            signature
                .params
                .get(1)
                .map_or(element, |s| s.size() as usize),
        ];
        let mut addresses = [0u64; 2];
        let mut staged: Vec<DeviceAlloc> = Vec::new();
        for (i, input) in request.inputs.iter().enumerate() {
            addresses[i] = match *input {
                Input::Device { alloc, start, len } => {
                    if !std::ptr::eq(alloc.device, self) {
                        return Err(mismatch(format!(
                            "the data lives on device {}, the call runs on device {}",
                            alloc.device.ordinal, self.ordinal
                        )));
                    }
                    if (start + len) * sizes[i] > alloc.bytes {
                        return Err(mismatch(format!(
                            "elements {start}..{} of an allocation of {} bytes",
                            start + len,
                            alloc.bytes
                        )));
                    }
                    state.order(alloc, lane)?;
                    alloc.address() + (start * sizes[i]) as u64
                }
                Input::Host { ptr, len } => {
                    let host = HostBytes {
                        ptr,
                        len: len * sizes[i],
                    };
                    let alloc = state.alloc(self, lane, host.len)?;
                    // SAFETY: the caller's contract: `len` elements at
                    // `ptr`, read through the pointer (padding included).
                    unsafe { stage(state, lane, &alloc, 0, host)? };
                    let address = alloc.address();
                    staged.push(alloc);
                    address
                }
            };
        }
        let mut job = Job {
            input: addresses[0],
            input2: addresses[1],
            len: len as u64,
            len2: match provider {
                Provider::PartitionPoint | Provider::MergeBy => request.inputs[1].len() as u64,
                _ => 0,
            },
            bins,
            init,
            env,
            sort_bits: callback.sort.as_ref().map_or(0, |s| s.key_bits()),
            sort_key_size: callback
                .sort
                .as_ref()
                .map_or(0, |s| s.sorted_key_bytes(callback.signature.element())),
            sort: dispatch::SortPick::from_env().map_err(device_error)?,
            ..Job::default()
        };
        if segmented {
            let bytes: Vec<u8> = offsets64.iter().flat_map(|o| o.to_le_bytes()).collect();
            let alloc = state.alloc(self, lane, bytes.len())?;
            let host = HostBytes {
                ptr: bytes.as_ptr(),
                len: bytes.len(),
            };
            // SAFETY: `bytes` lives until after the copy (pageable: copied
            // before stage returns).
            unsafe { stage(state, lane, &alloc, 0, host)? };
            job.offsets = alloc.address();
            staged.push(alloc);
            job.segments = offsets64.len().saturating_sub(1) as u64;
            job.longest_segment = longest;
            if provider == Provider::SegmentedSortBy {
                job.host_offsets = offsets64;
            }
        }
        let mut fresh = None;
        job.output = match &output {
            Output::Into { alloc, start, .. } => {
                state.order(alloc, lane)?;
                alloc.address() + (start * out_size) as u64
            }
            Output::New => {
                let alloc = state.alloc(self, lane, out_bytes)?;
                let address = alloc.address();
                fresh = Some(alloc);
                address
            }
            // A reduce's or a chain's result goes to the workspace.
            Output::Value { .. } => 0,
        };
        // Partition's rejected elements: as many as the kept ones may be;
        // reduce_by_key's folds, a value a run.
        let mut second = None;
        if provider == Provider::Partition {
            let alloc = state.alloc(self, lane, out_bytes)?;
            job.rejected = alloc.address();
            second = Some(alloc);
        }
        if provider == Provider::ReduceByKey {
            let alloc = state.alloc(self, lane, len * signature.ret.size() as usize)?;
            job.output2 = alloc.address();
            second = Some(alloc);
        }
        let scratch = state.lanes[lane].scratch.as_mut().expect("created above");
        // SAFETY: the inputs are live device buffers of `len` elements (a
        // host input was staged above), the offsets hold `segments + 1`
        // u64s, the output has room for what the provider writes, and each
        // is freed in this stream's order, after the launches.
        let launched = unsafe { dispatch::run(scratch, signature, kernels, &job) };
        let launched = launched.map_err(|e| after_pending(state, lane, e))?;
        state.lanes[lane].env = std::mem::take(&mut job.env);
        drop(staged);
        state.lanes[lane].pending.push(call.site());
        LAST_LAUNCH.with(|l| {
            let mut l = l.borrow_mut();
            l.ran = true;
            l.kernels.clear();
            l.kernels.extend_from_slice(launched.launches());
            l.input_address = job.input;
        });
        match (record, output) {
            (Some(record), Output::Value { ptr, .. }) => {
                let scratch = state.lanes[lane].scratch.as_ref().expect("created above");
                let value = scratch.read_value(record);
                let value = value.map_err(|e| wait_error(state, lane, e))?;
                state.lanes[lane].pending = Pending::default();
                // A chain that kept nothing, without an initial value.
                let Some(value) = value else {
                    return Ok(Produced::Value(0));
                };
                // SAFETY: `ptr` has room for the value (checked above).
                unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), ptr, value.len()) };
                Ok(Produced::Value(value.len()))
            }
            _ if provider.counts_results() => {
                let scratch = state.lanes[lane].scratch.as_ref().expect("created above");
                let kept = scratch.read_count();
                let kept = kept.map_err(|e| wait_error(state, lane, e))?;
                state.lanes[lane].pending = Pending::default();
                if kept > len as u64 {
                    return Err(error(
                        HostErrorKind::Device,
                        format!(
                            "the {} kernel kept {kept} of {len} elements",
                            provider.name()
                        ),
                    ));
                }
                match (fresh, second) {
                    // Each run's first key and its fold.
                    (Some(keys), Some(folds)) if provider == Provider::ReduceByKey => {
                        Ok(Produced::Split {
                            first: (keys, kept as usize),
                            second: (folds, kept as usize),
                        })
                    }
                    (Some(kept_alloc), Some(rejected_alloc)) => Ok(Produced::Split {
                        first: (kept_alloc, kept as usize),
                        second: (rejected_alloc, len - kept as usize),
                    }),
                    (fresh, _) => Ok(Produced::Device {
                        alloc: fresh,
                        len: kept as usize,
                    }),
                }
            }
            _ => Ok(Produced::Device {
                alloc: fresh,
                len: count as usize,
            }),
        }
    }
}

/// One host value of `element`: its scalars copied at their offsets into
/// zeroed bytes, its padding (which no one initialised) left zero.
///
/// # Safety
///
/// `value` is one live value whose scalars are `element.scalars()`, and
/// `value.len` its size.
unsafe fn value_scalars(element: &Element, value: HostBytes) -> Vec<u8> {
    let mut out = vec![0u8; value.len];
    for (at, s) in element.scalars() {
        let (at, n) = (at as usize, s.size() as usize);
        // Always inside: a compiled layout was checked when read
        // (`Layout::check`), and its size is `value.len`.
        if let Some(to) = out.get_mut(at..at + n) {
            // SAFETY: the caller's contract: an initialised scalar lies at
            // `at`.
            unsafe { std::ptr::copy_nonoverlapping(value.ptr.add(at), to.as_mut_ptr(), n) };
        }
    }
    out
}

/// An error of a wait on `lane`, naming the calls it may come from.
fn wait_error(state: &mut State, lane: usize, e: RuntimeError) -> HostError {
    let pending = std::mem::take(&mut state.lanes[lane].pending);
    error(
        HostErrorKind::Device,
        format!("the GPU failed running {}: {e}", pending.describe()),
    )
}

/// An error of the driver while calls are pending on `lane`: a kernel's
/// failure makes every later call of the context fail, so it names them.
fn after_pending(state: &mut State, lane: usize, e: RuntimeError) -> HostError {
    match (&e, state.lanes[lane].pending.count) {
        (RuntimeError::Driver { .. } | RuntimeError::Launch { .. }, 1..) => {
            wait_error(state, lane, e)
        }
        _ => device_error(e),
    }
}

/// How many devices the driver reports.
pub fn device_count() -> Result<usize, HostError> {
    Gpu::count().map_err(device_error)
}

/// `RMIR_EXCHANGE`, read once: `nccl` moves data between shards of one
/// device through NCCL too, which checks NCCL's path on a machine of one
/// GPU; `auto` (the default) copies it.
fn exchange_all_through_nccl() -> Result<bool, HostError> {
    static PICK: OnceLock<Result<bool, String>> = OnceLock::new();
    PICK.get_or_init(|| match std::env::var("RMIR_EXCHANGE").as_deref() {
        Err(_) | Ok("auto") => Ok(false),
        Ok("nccl") => Ok(true),
        Ok(other) => Err(format!(
            "RMIR_EXCHANGE is `{other}`: it may be `auto` or `nccl`"
        )),
    })
    .clone()
    .map_err(|m| error(HostErrorKind::Mismatch, m))
}

/// One move of a sort's exchange between shards: `bytes` from `from`
/// (at its offset, in its lane's order) to `to` (likewise).
pub struct Move<'a> {
    pub from: (&'a DeviceAlloc, usize, usize),
    pub to: (&'a DeviceAlloc, usize, usize),
    pub bytes: usize,
}

/// Makes a `native::gpu::GpuSet` sort's moves between shards: a move
/// within a device is a copy in the receiver's lane (unless
/// `RMIR_EXCHANGE=nccl`, which checks NCCL's path on one GPU); the others
/// go through NCCL, whose communicators over `devices` (the set's,
/// repeats counted once) `comms` keeps, made at the first such move.
/// Returns once every move is enqueued; each allocation's later uses are
/// ordered after them.
pub fn exchange(
    comms: &mut Option<Comms>,
    devices: &[&'static Device],
    moves: &[Move<'_>],
) -> Result<(), HostError> {
    let all_through_nccl = exchange_all_through_nccl()?;
    let (copied, sent): (Vec<&Move<'_>>, Vec<&Move<'_>>) = moves
        .iter()
        .partition(|m| !all_through_nccl && std::ptr::eq(m.from.0.device, m.to.0.device));
    for m in copied {
        let ((from, from_at, _), (to, to_at, to_lane)) = (m.from, m.to);
        to.device
            .copy(to_lane, (from, from_at), (to, to_at), m.bytes)?;
    }
    let sent: Vec<&Move<'_>> = sent.into_iter().filter(|m| m.bytes > 0).collect();
    if sent.is_empty() {
        return Ok(());
    }
    let comms = match comms {
        Some(c) => c,
        None => {
            let mut distinct: Vec<&'static Device> = Vec::new();
            for &d in devices {
                if !distinct.iter().any(|e| e.ordinal == d.ordinal) {
                    distinct.push(d);
                }
            }
            comms.insert(Comms::open(&distinct)?)
        }
    };
    comms.send_receive(&sent)
}

/// NCCL communicators over distinct devices of this process, one rank a
/// device (`ncclCommInitAll`): what moves data between the GPUs of a
/// `native::gpu::GpuSet`. NCCL is loaded when the first one is made
/// (`crate::nccl`: `libnccl.so.2` on the loader's path, the
/// `nvidia-nccl-cu13` package's `lib` directory, or `RMIR_NCCL`).
pub struct Comms {
    nccl: &'static Nccl,
    ordinals: Vec<usize>,
    comms: Vec<nccl::Comm>,
}

// SAFETY: a communicator is used by one call at a time (`exchange` takes
// `&mut self`), from any thread, with its device's context current.
unsafe impl Send for Comms {}
unsafe impl Sync for Comms {}

fn nccl_error(message: String) -> HostError {
    error(HostErrorKind::Device, message)
}

impl Comms {
    /// Communicators over `devices` (distinct). NVLink multicast is left
    /// off (`NCCL_NVLS_ENABLE=0` unless the environment says otherwise):
    /// the exchange does not use it, and on shared hosts it must not be.
    fn open(devices: &[&'static Device]) -> Result<Comms, HostError> {
        let ordinals: Vec<usize> = devices.iter().map(|d| d.ordinal).collect();
        if ordinals
            .iter()
            .enumerate()
            .any(|(i, o)| ordinals[..i].contains(o))
        {
            return Err(error(
                HostErrorKind::Mismatch,
                format!("NCCL communicators over devices {ordinals:?}: a device twice"),
            ));
        }
        let nccl = Nccl::get().map_err(|m| error(HostErrorKind::NoDevice, m))?;
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            // SAFETY: set before NCCL reads its environment (at its first
            // communicator, below).
            unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
        }
        let list: Vec<i32> = ordinals.iter().map(|&o| o as i32).collect();
        let mut comms = vec![std::ptr::null_mut(); list.len()];
        // SAFETY: room for one communicator a device; `list` holds the
        // ordinals of open devices.
        let code =
            unsafe { (nccl.comm_init_all)(comms.as_mut_ptr(), list.len() as i32, list.as_ptr()) };
        nccl.check("ncclCommInitAll", code).map_err(nccl_error)?;
        Ok(Comms {
            nccl,
            ordinals,
            comms,
        })
    }

    fn rank(&self, device: &Device) -> Result<usize, HostError> {
        self.ordinals
            .iter()
            .position(|&o| o == device.ordinal)
            .ok_or_else(|| {
                error(
                    HostErrorKind::Mismatch,
                    format!(
                        "device {} is not one of the communicators' {:?}",
                        device.ordinal, self.ordinals
                    ),
                )
            })
    }

    /// NCCL's sends and receives of `moves`, all in one group, each
    /// device's in one lane of its (the first its moves name), each
    /// allocation ordered in that lane first.
    fn send_receive(&mut self, moves: &[&Move<'_>]) -> Result<(), HostError> {
        // Each device's lane for NCCL: the first its moves name.
        let mut lanes: Vec<(usize, usize)> = Vec::new();
        let mut lane_of =
            |a: &DeviceAlloc, lane: usize| match lanes.iter().find(|(o, _)| *o == a.device.ordinal)
            {
                Some(&(_, l)) => l,
                None => {
                    lanes.push((a.device.ordinal, lane));
                    lane
                }
            };
        // The device address and stream of each side, ordered after the
        // allocation's earlier uses (one device's lock at a time).
        let side = |a: &DeviceAlloc, at: usize, lane: usize, bytes: usize| {
            a.check_range("an exchange", "of", at, bytes)?;
            let state = a.device.lock()?;
            state.order(a, lane)?;
            Ok::<_, HostError>((a.address() + at as u64, state.lanes[lane].stream.raw()))
        };
        let mut ops = Vec::new();
        for m in moves {
            let ((from, from_at, from_lane), (to, to_at, to_lane)) = (m.from, m.to);
            let (from_lane, to_lane) = (lane_of(from, from_lane), lane_of(to, to_lane));
            let (src, src_stream) = side(from, from_at, from_lane, m.bytes)?;
            let (dst, dst_stream) = side(to, to_at, to_lane, m.bytes)?;
            let (sender, receiver) = (self.rank(from.device)?, self.rank(to.device)?);
            ops.push((src, src_stream, sender, dst, dst_stream, receiver, m.bytes));
        }
        let nccl = self.nccl;
        // SAFETY: a plain call; the group is closed below whatever happens.
        nccl.check("ncclGroupStart", unsafe { (nccl.group_start)() })
            .map_err(nccl_error)?;
        let mut failed = None;
        for &(src, src_stream, sender, dst, dst_stream, receiver, bytes) in &ops {
            // SAFETY: both ranges were checked inside live allocations,
            // ordered in these streams of their devices; the communicators
            // are this process's, one a device.
            let moved = unsafe {
                nccl.send(src, bytes, receiver, self.comms[sender], src_stream.cast())
                    .and_then(|()| {
                        nccl.recv(dst, bytes, sender, self.comms[receiver], dst_stream.cast())
                    })
            };
            if let Err(m) = moved {
                failed = Some(nccl_error(m));
                break;
            }
        }
        // SAFETY: closes the group opened above.
        let ended = nccl
            .check("ncclGroupEnd", unsafe { (nccl.group_end)() })
            .map_err(nccl_error);
        match failed {
            Some(e) => Err(e),
            None => ended,
        }
    }
}

impl Drop for Comms {
    fn drop(&mut self) {
        for &c in &self.comms {
            // SAFETY: made by ncclCommInitAll and destroyed once.
            let _ = unsafe { (self.nccl.comm_destroy)(c) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use manifest::{CallSite, EnvLayout, Field, Layout, RegistrationId, Signature};
    use std::mem::{align_of, offset_of, size_of};

    /// A composite's `ElementType` as `native::gpu`'s macros build it.
    macro_rules! composite {
        ($t:ty { $($field:tt : $e:expr),+ }) => {
            ElementType::Composite(&CompositeType {
                name: std::any::type_name::<$t>,
                size: size_of::<$t>(),
                align: align_of::<$t>(),
                fields: &[$(CompositeField { offset: offset_of!($t, $field), ty: $e }),+],
            })
        };
    }

    const U8: ElementType = ElementType::Scalar(Scalar::U8);
    const U32: ElementType = ElementType::Scalar(Scalar::U32);
    const F32: ElementType = ElementType::Scalar(Scalar::F32);

    const PAIR: ElementType = composite!((u8, u32) { 0: U8, 1: U32 });
    /// A tuple rustc reorders (its u32 first).
    const TRIPLE: ElementType = composite!((u8, u32, u8) { 0: U8, 1: U32, 2: U8 });

    #[allow(dead_code)]
    #[derive(Clone, Copy)]
    #[repr(C)]
    struct Point {
        x: f32,
        y: f32,
    }
    const POINT: ElementType = composite!(Point { x: F32, y: F32 });

    #[allow(dead_code)]
    #[derive(Clone, Copy)]
    struct Tagged {
        tag: u8,
        at: Point,
        pair: (u8, u32),
    }
    const TAGGED: ElementType = composite!(Tagged {
        tag: U8,
        at: POINT,
        pair: PAIR
    });

    /// A compiled composite as the compiler records it: its scalars
    /// flattened, each at its offset from the start.
    fn layout(name: &str, size: u64, align: u64, fields: &[(&str, u64, Scalar)]) -> Element {
        Element::Composite(Layout {
            name: name.into(),
            size,
            align,
            fields: fields
                .iter()
                .map(|&(name, offset, s)| Field {
                    name: name.into(),
                    offset,
                    element: Element::Scalar(s),
                })
                .collect(),
        })
    }

    /// Whether a call of `types` fits a fold (`(T, T) -> T`) compiled for
    /// `t`: the reason if not.
    fn check_fold(t: Element, types: &[ElementType]) -> Result<(), String> {
        let callback = Callback {
            registration: RegistrationId(0),
            provider: Provider::Reduce,
            signature: Signature::fold(t),
            origin: None,
            env: EnvLayout {
                fields: Vec::new(),
                size: 0,
                align: 1,
            },
            sort: None,
            pick: None,
            site: Some(CallSite {
                file: "app/src/main.rs".into(),
                line: 3,
                column: 5,
                crate_name: None,
                closure_suffix: None,
            }),
        };
        check_call(
            &callback,
            &CallInfo {
                file: "app/src/main.rs",
                line: 3,
                column: 5,
                provider: Provider::Reduce,
                types,
                closure_type: "app::main::{{closure}}",
                closure_size: 0,
                closure_align: 1,
            },
        )
    }

    /// `(u8, u32)`'s layout as the compiler records it, measured here.
    fn pair_layout() -> Element {
        let (a, b) = (offset_of!((u8, u32), 0), offset_of!((u8, u32), 1));
        layout(
            "(u8, u32)",
            8,
            4,
            &[("0", a as u64, Scalar::U8), ("1", b as u64, Scalar::U32)],
        )
    }

    #[test]
    fn a_composite_flattens_to_its_scalars_at_rustc_offsets() {
        // Field order, at the offsets rustc chose (measured, not assumed:
        // rustc 1.95 keeps `(u8, u32)` in order).
        let (a, b) = (offset_of!((u8, u32), 0), offset_of!((u8, u32), 1));
        assert_eq!(PAIR.scalars(), [(a, Scalar::U8), (b, Scalar::U32)]);
        assert_eq!(
            (PAIR.size(), PAIR.align(), PAIR.name()),
            (8, 4, "(u8, u32)")
        );
        let (a, b, c) = (
            offset_of!((u8, u32, u8), 0),
            offset_of!((u8, u32, u8), 1),
            offset_of!((u8, u32, u8), 2),
        );
        assert!(
            b < a,
            "wanted: a tuple rustc reorders, got offsets {a}, {b}, {c}"
        );
        assert_eq!(
            TRIPLE.scalars(),
            [(a, Scalar::U8), (b, Scalar::U32), (c, Scalar::U8)]
        );
        let (at, pair) = (offset_of!(Tagged, at), offset_of!(Tagged, pair));
        assert_eq!(
            TAGGED.scalars(),
            [
                (offset_of!(Tagged, tag), Scalar::U8),
                (at, Scalar::F32),
                (at + 4, Scalar::F32),
                (pair + offset_of!((u8, u32), 0), Scalar::U8),
                (pair + offset_of!((u8, u32), 1), Scalar::U32),
            ]
        );
        assert_eq!((TAGGED.size(), TAGGED.align()), (size_of::<Tagged>(), 4));
        assert_eq!(U32.scalars(), [(0, Scalar::U32)]);
    }

    #[test]
    fn a_composite_fits_an_equal_compiled_layout_whatever_its_names() {
        assert_eq!(check_fold(pair_layout(), &[PAIR; 3]), Ok(()));
        // Flattened as the compiler records it (`at.x`), named its way.
        let (at, p) = (
            offset_of!(Tagged, at) as u64,
            offset_of!(Tagged, pair) as u64,
        );
        let tagged = layout(
            "Tagged",
            size_of::<Tagged>() as u64,
            4,
            &[
                ("tag", offset_of!(Tagged, tag) as u64, Scalar::U8),
                ("at.x", at, Scalar::F32),
                ("at.y", at + 4, Scalar::F32),
                ("pair.0", p + offset_of!((u8, u32), 0) as u64, Scalar::U8),
                ("pair.1", p + offset_of!((u8, u32), 1) as u64, Scalar::U32),
            ],
        );
        assert_eq!(check_fold(tagged, &[TAGGED; 3]), Ok(()));
        assert_eq!(check_fold(Scalar::U32.into(), &[U32; 3]), Ok(()));
    }

    #[test]
    fn a_different_layout_is_refused_naming_both() {
        // The same spelling, laid out otherwise.
        let swapped = layout(
            "(f32, u32)",
            8,
            4,
            &[("0", 4, Scalar::F32), ("1", 0, Scalar::U32)],
        );
        const F32_U32: ElementType = composite!((f32, u32) { 0: F32, 1: U32 });
        assert_eq!(
            check_fold(swapped, &[F32_U32; 3]),
            Err(
                "it was compiled for a callback of type `((f32, u32), (f32, u32)) -> (f32, u32)`, \
                 the call's types are ((f32, u32), (f32, u32), (f32, u32)); \
                 parameter 1, parameter 2, the result: compiled for `(f32, u32)` of 8 bytes \
                 aligned to 4 (f32 at 4, u32 at 0); the call's element is `(f32, u32)` of 8 \
                 bytes aligned to 4 (f32 at 0, u32 at 4)"
                    .into()
            )
        );
        // Another size: the same scalars at the same offsets are not enough.
        let Element::Composite(mut wide) = pair_layout() else {
            unreachable!()
        };
        (wide.size, wide.align) = (16, 8);
        let refused = check_fold(Element::Composite(wide), &[PAIR; 3]).unwrap_err();
        assert!(
            refused.ends_with(
                "compiled for `(u8, u32)` of 16 bytes aligned to 8 (u8 at 0, u32 at 4); \
                 the call's element is `(u8, u32)` of 8 bytes aligned to 4 (u8 at 0, u32 at 4)"
            ),
            "{refused}"
        );
        // A scalar for a composite, and the reverse.
        let point = layout(
            "Point",
            8,
            4,
            &[("x", 0, Scalar::F32), ("y", 4, Scalar::F32)],
        );
        let refused = check_fold(point, &[F32; 3]).unwrap_err();
        assert!(
            refused.ends_with(
                "compiled for `Point` of 8 bytes aligned to 4 (f32 at 0, f32 at 4); \
                 the call's element is `f32`"
            ),
            "{refused}"
        );
        const ONE: ElementType = composite!((f32,) { 0: F32 });
        let refused = check_fold(Scalar::F32.into(), &[ONE; 3]).unwrap_err();
        assert!(
            refused.ends_with(
                "compiled for `f32`; the call's element is `(f32,)` of 4 bytes aligned to 4 \
                 (f32 at 0)"
            ),
            "{refused}"
        );
    }

    #[test]
    fn scalar_mismatches_read_as_before() {
        let i64_ = ElementType::Scalar(Scalar::I64);
        assert_eq!(
            check_fold(Scalar::I32.into(), &[i64_; 3]),
            Err(
                "it was compiled for a callback of type `(i32, i32) -> i32`, the call's types \
                 are (i64, i64, i64)"
                    .into()
            )
        );
        assert_eq!(
            check_fold(Scalar::I32.into(), &[i64_; 2]),
            Err(
                "it was compiled for a callback of type `(i32, i32) -> i32`, the call's types \
                 are (i64, i64)"
                    .into()
            )
        );
    }

    #[test]
    fn an_initial_value_is_its_scalars_and_zeroed_padding() {
        let value: (u8, u32, u8) = (0xAB, 0x0102_0304, 0xCD);
        let triple = layout(
            "(u8, u32, u8)",
            8,
            4,
            &[
                ("0", offset_of!((u8, u32, u8), 0) as u64, Scalar::U8),
                ("1", offset_of!((u8, u32, u8), 1) as u64, Scalar::U32),
                ("2", offset_of!((u8, u32, u8), 2) as u64, Scalar::U8),
            ],
        );
        let host = HostBytes {
            ptr: (&raw const value).cast::<u8>(),
            len: size_of::<(u8, u32, u8)>(),
        };
        // SAFETY: one live `(u8, u32, u8)`, whose scalars `triple` states.
        let bytes = unsafe { value_scalars(&triple, host) };
        let mut expected = vec![0u8; 8];
        expected[offset_of!((u8, u32, u8), 0)] = 0xAB;
        let at = offset_of!((u8, u32, u8), 1);
        expected[at..at + 4].copy_from_slice(&0x0102_0304u32.to_ne_bytes());
        expected[offset_of!((u8, u32, u8), 2)] = 0xCD;
        assert_eq!(bytes, expected);
        // Two bytes of padding, left zero.
        assert_eq!(bytes.iter().filter(|b| **b == 0).count(), 2);
    }
}
