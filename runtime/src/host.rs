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
use crate::gpu::{DeviceBuffer, Gpu};
use crate::RuntimeError;
use manifest::{Callback, Kernel, RegistrationId};
pub use manifest::{Provider, Scalar};
use std::collections::{BTreeMap, HashMap};
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
        _ => HostErrorKind::Device,
    };
    error(kind, e.to_string())
}

/// The facts of one call that the lookup checks.
#[derive(Debug, Clone, Copy)]
pub struct CallInfo<'a> {
    pub file: &'a str,
    pub line: u32,
    pub column: u32,
    /// The registration's provider.
    pub provider: Provider,
    /// The callback's parameter types and its result, in order (`[T, T, T]`
    /// for reduce, `[T, bool]` for select): each a sealed element trait's
    /// constant (`native::gpu::DeviceElement`).
    pub types: &'a [Scalar],
    /// `type_name::<F>()`, `size_of::<F>()`, `align_of::<F>()`.
    pub closure_type: &'a str,
    pub closure_size: usize,
    pub closure_align: usize,
}

impl CallInfo<'_> {
    fn site(&self) -> String {
        format!("{}:{}:{}", self.file, self.line, self.column)
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

/// A call site's file, build index and registration.
type SiteEntry = (String, usize, RegistrationId);

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
            for c in &b.manifest.callbacks {
                if let Some(s) = &c.site {
                    sites.entry((s.line, s.column)).or_default().push((
                        s.file.clone(),
                        i,
                        c.registration,
                    ));
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
        // Every build's callback at this site and file; no allocation
        // unless the call is refused.
        let candidates = self
            .sites
            .get(&(call.line, call.column))
            .into_iter()
            .flatten()
            .filter(|(file, _, _)| file == call.file);
        let mut reasons = Vec::new();
        let mut seen = false;
        for &(_, b, registration) in candidates {
            seen = true;
            let build = &self.builds[b];
            let Some(callback) = build.manifest.callback(registration) else {
                continue;
            };
            if let Err(why) = check_call(callback, call) {
                reasons.push(why);
                continue;
            }
            let kernel = build.manifest.kernel_for(registration).ok_or_else(|| {
                error(
                    HostErrorKind::Artifacts,
                    format!(
                        "{}: registration {registration} has no kernel",
                        build.manifest_path.display()
                    ),
                )
            })?;
            return Ok((b, callback, kernel));
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
    let compiled = dispatch::signature_types(&callback.signature);
    let fits = compiled.len() == call.types.len()
        && compiled
            .iter()
            .zip(call.types)
            .all(|(e, s)| e.scalar() == Some(*s));
    if !fits {
        let called: Vec<&str> = call.types.iter().map(|s| s.name()).collect();
        return Err(format!(
            "it was compiled for a callback of type `{}`, the call's types are ({})",
            callback.signature,
            called.join(", ")
        ));
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

/// Everything a device holds, behind its lock.
struct State {
    gpu: &'static Gpu,
    /// Per build: its modules (kept for the process) and resolved kernels.
    loaded: HashMap<usize, BTreeMap<String, ResolvedKernel<'static>>>,
    scratch: Option<Scratch<'static>>,
    /// Device copies of host inputs (one per input), grown as needed.
    staging: Vec<Option<DeviceBuffer<'static>>>,
    /// Segment offsets, as u64.
    offsets: Option<DeviceBuffer<'static>>,
    /// The output array.
    output: Option<DeviceBuffer<'static>>,
}

// SAFETY: the CUDA driver API may be called from any thread once the
// context is current; every use of a `State` is under its device's mutex,
// and `Device::lock` makes the context current on the calling thread first.
unsafe impl Send for State {}

/// One device, opened once per process.
pub struct Device {
    pub ordinal: usize,
    pub name: String,
    state: Mutex<State>,
}

/// Device memory of ours (`native::gpu::DeviceVec`): freed on drop.
pub struct DeviceAlloc {
    device: &'static Device,
    buffer: Option<DeviceBuffer<'static>>,
    pub bytes: usize,
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

    /// Copies the whole allocation back.
    pub fn download(&self, out: &mut [u8]) -> Result<(), HostError> {
        if out.len() != self.bytes {
            return Err(error(
                HostErrorKind::Device,
                format!("download of {} bytes from {}", out.len(), self.bytes),
            ));
        }
        let _state = self.device.lock()?;
        match &self.buffer {
            Some(b) if self.bytes > 0 => b.download(0, out).map_err(device_error),
            _ => Ok(()),
        }
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        if let Ok(_state) = self.device.lock() {
            self.buffer.take();
        }
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

/// What a call hands its provider besides the callback's types.
pub struct Request<'a> {
    /// The data (and, for transform2, the second input).
    pub inputs: &'a [Input<'a>],
    /// Segment boundaries (segmented reduce).
    pub offsets: Option<&'a [usize]>,
    /// The initial value's bytes, for providers that take one.
    pub init: Option<&'a [u8]>,
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

thread_local! {
    static LAST_LAUNCH: std::cell::RefCell<Option<LaunchReport>> =
        const { std::cell::RefCell::new(None) };
}

/// The [`LaunchReport`] of the last call on this thread that ran (`None`
/// before any did).
pub fn last_launch() -> Option<LaunchReport> {
    LAST_LAUNCH.with(|l| l.borrow().clone())
}

/// A buffer of at least `bytes`, kept in `slot`.
fn grown(
    gpu: &'static Gpu,
    slot: &mut Option<DeviceBuffer<'static>>,
    bytes: usize,
) -> Result<u64, HostError> {
    if slot.as_ref().is_none_or(|s| s.bytes() < bytes) {
        *slot = None;
        *slot = Some(gpu.alloc(bytes.max(1 << 20)).map_err(device_error)?);
    }
    Ok(slot.as_ref().map_or(0, |s| s.address(0)))
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
        let device: &'static Device = Box::leak(Box::new(Device {
            ordinal,
            name: gpu.name.clone(),
            state: Mutex::new(State {
                gpu,
                loaded: HashMap::new(),
                scratch: None,
                staging: Vec::new(),
                offsets: None,
                output: None,
            }),
        }));
        devices.insert(ordinal, device);
        Ok(device)
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, State>, HostError> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.gpu.make_current().map_err(device_error)?;
        Ok(state)
    }

    /// Copies `bytes` to a new device allocation.
    pub fn upload(&'static self, bytes: &[u8]) -> Result<DeviceAlloc, HostError> {
        let state = self.lock()?;
        let buffer = state.gpu.alloc(bytes.len()).map_err(device_error)?;
        if !bytes.is_empty() {
            buffer.upload(0, bytes).map_err(device_error)?;
        }
        Ok(DeviceAlloc {
            device: self,
            buffer: Some(buffer),
            bytes: bytes.len(),
        })
    }

    /// Runs the provider compiled for `call` on `request`, the closure's
    /// captured fields read at the manifest's offsets, and copies its output
    /// (at most `room` bytes) to `out`; returns the bytes written.
    ///
    /// # Safety
    ///
    /// `request.closure` points to a live closure of `call.closure_size`
    /// bytes; a host input's `ptr` to `len` live elements of the size
    /// `call.types` gives its position; `init` holds one element; `out` has
    /// `room` writable bytes.
    pub unsafe fn run(
        &self,
        call: &CallInfo<'_>,
        request: &Request<'_>,
        out: *mut u8,
        room: usize,
    ) -> Result<usize, HostError> {
        let registry = Registry::embedded()?;
        let (b, callback, kernel) = registry.find(call)?;
        let provider = callback.provider;
        let signature = &callback.signature;
        let mismatch = |what: String| {
            error(
                HostErrorKind::Mismatch,
                format!("the call at {}: {what}", call.site()),
            )
        };
        let element = signature.element().size() as usize;
        let wanted_inputs = if provider == Provider::Transform2 {
            2
        } else {
            1
        };
        if request.inputs.len() != wanted_inputs {
            return Err(mismatch(format!(
                "{} inputs for a {} kernel",
                request.inputs.len(),
                provider.name()
            )));
        }
        let len = request.inputs[0].len();
        if request.inputs.iter().any(|i| i.len() != len) {
            return Err(mismatch("the inputs differ in length".into()));
        }
        let init = match (provider.takes_init(), request.init) {
            (true, Some(v)) if v.len() == element => v.to_vec(),
            (false, None) => Vec::new(),
            (_, v) => {
                return Err(mismatch(format!(
                    "an initial value of {} bytes for a {} kernel of {}-byte elements",
                    v.map_or(0, <[u8]>::len),
                    provider.name(),
                    element
                )))
            }
        };
        // Segment boundaries: in order and inside the data.
        let mut offsets64: Vec<u64> = Vec::new();
        let mut longest = 0u64;
        if provider == Provider::SegmentedReduce {
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
            Provider::Reduce => 1,
            _ => len as u64,
        };
        let out_bytes = dispatch::output_bytes(provider, signature, count) as usize;
        if out_bytes > room && provider != Provider::Select {
            return Err(mismatch(format!(
                "{out_bytes} bytes of output, room for {room}"
            )));
        }
        // The environment: the closure's captured fields, copied at their
        // offsets into zeroed bytes (padding is never read).
        let mut env = vec![0u8; callback.env.size as usize];
        for f in &callback.env.fields {
            let (at, n) = (f.offset as usize, f.size as usize);
            // SAFETY: find() checked size_of::<F>() == env.size, and the
            // manifest's layout keeps every field inside it (EnvLayout::check);
            // the field is a captured scalar, initialised by the closure.
            unsafe {
                std::ptr::copy_nonoverlapping(request.closure.add(at), env[at..].as_mut_ptr(), n)
            };
        }
        let mut state = self.lock()?;
        let state = &mut *state;
        let gpu = state.gpu;
        if let std::collections::hash_map::Entry::Vacant(slot) = state.loaded.entry(b) {
            let build = &registry.builds[b];
            let loaded: &'static Loaded<'static> =
                Box::leak(Box::new(Loaded::load(gpu, build).map_err(device_error)?));
            slot.insert(loaded.resolve(&build.manifest).map_err(device_error)?);
        }
        let resolved = &state.loaded[&b];
        let kernels: Vec<&ResolvedKernel<'static>> = registry.builds[b]
            .manifest
            .kernels
            .iter()
            .filter(|k| k.registration == kernel.registration && k.variant == kernel.variant)
            .map(|k| {
                resolved.get(&k.name).ok_or_else(|| {
                    error(
                        HostErrorKind::Artifacts,
                        format!("kernel `{}` was not resolved", k.name),
                    )
                })
            })
            .collect::<Result<_, _>>()?;
        if state.scratch.is_none() {
            let all = registry
                .builds
                .iter()
                .flat_map(|b| b.manifest.kernels.iter());
            state.scratch = Some(Scratch::new(gpu, all).map_err(device_error)?);
        }
        // Each input where the device reads it.
        let sizes = [
            element,
            signature
                .params
                .get(1)
                .map_or(element, |s| s.size() as usize),
        ];
        let mut addresses = [0u64; 2];
        if state.staging.len() < request.inputs.len() {
            state.staging.resize_with(request.inputs.len(), || None);
        }
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
                    alloc.address() + (start * sizes[i]) as u64
                }
                Input::Host { ptr, len } => {
                    let bytes = len * sizes[i];
                    let address = grown(gpu, &mut state.staging[i], bytes)?;
                    if bytes > 0 {
                        // SAFETY: the caller's contract: `len` elements at `ptr`.
                        let host = unsafe { std::slice::from_raw_parts(ptr, bytes) };
                        let staging = state.staging[i].as_ref().expect("grown above");
                        staging.upload(0, host).map_err(device_error)?;
                    }
                    address
                }
            };
        }
        let mut job = Job {
            input: addresses[0],
            input2: addresses[1],
            len: len as u64,
            init,
            env,
            ..Job::default()
        };
        if provider == Provider::SegmentedReduce {
            job.offsets = grown(gpu, &mut state.offsets, offsets64.len() * 8)?;
            if !offsets64.is_empty() {
                let buffer = state.offsets.as_ref().expect("grown above");
                buffer.upload(0, &offsets64).map_err(device_error)?;
            }
            job.segments = count;
            job.longest_segment = longest;
        }
        let out_alloc = match provider {
            Provider::Select => dispatch::output_bytes(provider, signature, len as u64),
            _ => out_bytes as u64,
        };
        job.output = grown(gpu, &mut state.output, out_alloc as usize)?;
        let scratch = state.scratch.as_mut().expect("created above");
        // SAFETY: the inputs are live device buffers of `len` elements (a
        // host input was uploaded above), the offsets buffer holds
        // `segments + 1` u64s, the output was grown to what the provider
        // writes, and the call waits for the stream before any is released.
        let launched =
            unsafe { dispatch::run(scratch, signature, &kernels, &job) }.map_err(device_error)?;
        let report = LaunchReport {
            kernels: launched.launches,
            input_address: job.input,
        };
        LAST_LAUNCH.with(|l| *l.borrow_mut() = Some(report));
        let bytes = match provider {
            Provider::Reduce => {
                let value = scratch.read_value(element).map_err(device_error)?;
                // SAFETY: `out` has room for one element (checked above).
                unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), out, value.len()) };
                return Ok(value.len());
            }
            Provider::Select => {
                let kept = scratch.read_count().map_err(device_error)?;
                if kept > len as u64 {
                    return Err(error(
                        HostErrorKind::Device,
                        format!("the select kernel kept {kept} of {len} elements"),
                    ));
                }
                dispatch::output_bytes(provider, signature, kept) as usize
            }
            _ => out_bytes,
        };
        if bytes > room {
            return Err(mismatch(format!(
                "{bytes} bytes of output, room for {room}"
            )));
        }
        if bytes > 0 {
            let output = state.output.as_ref().expect("grown above");
            // SAFETY: `out` has `room` >= `bytes` writable bytes.
            let host = unsafe { std::slice::from_raw_parts_mut(out, bytes) };
            output.download(0, host).map_err(device_error)?;
        } else {
            gpu.synchronize().map_err(device_error)?;
        }
        Ok(bytes)
    }
}
