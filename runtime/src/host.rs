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
use crate::gpu::{DeviceBuffer, Gpu};
use crate::launch::{launch, LaunchArgs, Workspace};
use crate::RuntimeError;
use manifest::{Callback, Kernel, Provider, RegistrationId};
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
    /// `type_name::<T>()` and `size_of::<T>()`.
    pub element: &'a str,
    pub element_size: usize,
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
    let element = site.element;
    if call.element != element.name() || call.element_size as u64 != element.size() {
        return Err(format!(
            "it was compiled for elements of type {}, the call passes {} ({} bytes)",
            element.name(),
            call.element,
            call.element_size
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
    workspace: Option<Workspace<'static>>,
    /// Device copy of host input, grown as needed.
    staging: Option<DeviceBuffer<'static>>,
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

/// The input of a call.
#[derive(Clone, Copy)]
pub enum Input<'a> {
    /// Host memory: `len` elements at `ptr`.
    Host { ptr: *const u8, len: usize },
    /// One of our device allocations.
    Device { alloc: &'a DeviceAlloc, len: usize },
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
                workspace: None,
                staging: None,
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

    /// Runs the reduce compiled for `call` over `input` from `init`, the
    /// closure's captured fields read at the manifest's offsets; the
    /// result's bytes.
    ///
    /// # Safety
    ///
    /// `closure` points to a live closure of `call.closure_size` bytes, and
    /// a host input's `ptr` to `len` live elements of `call.element_size`
    /// bytes each. `init` holds one element.
    pub unsafe fn reduce(
        &self,
        call: &CallInfo<'_>,
        input: Input<'_>,
        init: &[u8],
        closure: *const u8,
    ) -> Result<Vec<u8>, HostError> {
        let registry = Registry::embedded()?;
        let (b, callback, kernel) = registry.find(call)?;
        if kernel.provider != Provider::ReduceI32 {
            return Err(error(
                HostErrorKind::Mismatch,
                format!(
                    "the kernel for the call at {} is a {} kernel, not a reduce",
                    call.site(),
                    kernel.provider.name()
                ),
            ));
        }
        // The element is a scalar of the manifest's type (checked by find).
        let init: [u8; 4] = init.try_into().map_err(|_| {
            error(
                HostErrorKind::Mismatch,
                format!("an initial value of {} bytes", init.len()),
            )
        })?;
        // The environment: the closure's captured fields, copied at their
        // offsets into zeroed bytes (padding is never read).
        let mut env = vec![0u8; callback.env.size as usize];
        for f in &callback.env.fields {
            let (at, n) = (f.offset as usize, f.size as usize);
            // SAFETY: find() checked size_of::<F>() == env.size, and the
            // manifest's layout keeps every field inside it (EnvLayout::check);
            // the field is a captured scalar, initialised by the closure.
            unsafe { std::ptr::copy_nonoverlapping(closure.add(at), env[at..].as_mut_ptr(), n) };
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
        let resolved = state.loaded[&b].get(&kernel.name).ok_or_else(|| {
            error(
                HostErrorKind::Artifacts,
                format!("kernel `{}` was not resolved", kernel.name),
            )
        })?;
        if state.workspace.is_none() {
            let kernels = registry
                .builds
                .iter()
                .flat_map(|b| b.manifest.kernels.iter())
                .filter(|k| k.provider == Provider::ReduceI32);
            state.workspace = Some(Workspace::new(gpu, kernels, None).map_err(device_error)?);
        }
        let (address, len) = match input {
            Input::Device { alloc, len } => {
                if !std::ptr::eq(alloc.device, self) {
                    return Err(error(
                        HostErrorKind::Mismatch,
                        format!(
                            "the data lives on device {}, the call runs on device {}",
                            alloc.device.ordinal, self.ordinal
                        ),
                    ));
                }
                (alloc.address(), len)
            }
            Input::Host { ptr, len } => {
                let bytes = len * call.element_size;
                if state.staging.as_ref().is_none_or(|s| s.bytes() < bytes) {
                    state.staging = None;
                    state.staging = Some(gpu.alloc(bytes.max(1 << 20)).map_err(device_error)?);
                }
                let staging = state.staging.as_ref().expect("allocated above");
                if bytes > 0 {
                    // SAFETY: the caller's contract: `len` elements at `ptr`.
                    let host = unsafe { std::slice::from_raw_parts(ptr, bytes) };
                    staging.upload(0, host).map_err(device_error)?;
                }
                (staging.address(0), len)
            }
        };
        let workspace = state.workspace.as_ref().expect("created above");
        let args = LaunchArgs {
            input: address,
            len: len as u64,
            init: i32::from_le_bytes(init),
            workspace: Some(workspace),
            copy_output: None,
            env: &env,
            grid_policy: None,
        };
        launch(gpu, resolved, &args).map_err(device_error)?;
        let result = workspace.read_result().map_err(device_error)?;
        Ok(result.to_le_bytes().to_vec())
    }
}
