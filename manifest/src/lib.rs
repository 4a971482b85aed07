//! The artifact manifest that travels with a cubin, the environment ABI of
//! callbacks, run bundles for validation on the GPU, deterministic inputs,
//! and the text of provider instantiations.
//!
//! Invariant: this crate never links LLVM, MLIR or CUDA; it is shared by the
//! builder (which writes manifests and bundles) and the GPU runtime (which
//! reads them), so both agree on every byte by construction.

pub mod bundle;
pub mod embed;
pub mod env;
pub mod fingerprint;
mod generator;
pub mod inputs;
pub mod provider;
pub mod scalar;

pub use bundle::{
    BenchSpec, BenchVariant, Bundle, BundleError, CaptureValue, Case, RegistrationRun,
    BUNDLE_FORMAT,
};
pub use env::{EnvField, EnvLayout, LayoutError, PackError};
pub use fingerprint::Fingerprint;
pub use inputs::{
    fill_inputs, generate_inputs, input_value, InputSpec, GENERATOR, GENERATOR_SOURCE, INPUT_BOUND,
};
pub use scalar::Scalar;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The manifest format tag; a manifest carrying another is rejected.
pub const MANIFEST_FORMAT: &str = "manifest/1";

/// Identifies one registration (one call site of a provider API function)
/// within a build. Kernel and thunk names are derived from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RegistrationId(pub u32);

impl std::fmt::Display for RegistrationId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// What a build produced: one cubin and the facts needed to launch it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`MANIFEST_FORMAT`].
    pub format: String,
    /// Over every input of the build (see [`Fingerprint::of_inputs`]).
    pub fingerprint: Fingerprint,
    /// Target architecture, e.g. `"sm_90"`.
    pub arch: String,
    /// File name of the cubin, relative to the manifest's directory.
    pub cubin: String,
    /// Tool name to version, e.g. `"nvjitlink" => "13.0"`.
    pub toolchain: BTreeMap<String, String>,
    /// One per registration whose callback was compiled.
    pub callbacks: Vec<Callback>,
    pub kernels: Vec<Kernel>,
    /// The user's device libraries linked into every cubin (`--link`), in
    /// link order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_libraries: Vec<DeviceLibrary>,
}

/// One user device library given to the link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceLibrary {
    /// The path as given.
    pub path: String,
    /// What it holds: `CUDA source`, `PTX`, `LTOIR`, `cubin`, `fatbin`,
    /// `host object`, `static library`.
    pub kind: String,
    pub size: u64,
    /// SHA-256 of its bytes, 64 lowercase hex digits.
    pub sha256: String,
}

impl DeviceLibrary {
    pub fn new(path: &str, kind: &str, bytes: &[u8]) -> Self {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(bytes);
        DeviceLibrary {
            path: path.to_string(),
            kind: kind.to_string(),
            size: bytes.len() as u64,
            sha256: digest.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }
}

/// A compiled callback's environment ABI.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Callback {
    pub registration: RegistrationId,
    /// Where the closure is, `file:line:col`, for messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    pub env: EnvLayout,
    /// Where the program calls the registration, as `#[track_caller]`
    /// reports it at run time: how `native::gpu` finds this callback's
    /// kernel. Absent for calls the host API cannot make (`native::reduce`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<CallSite>,
}

impl CallSite {
    /// Whether `type_name` (of the closure a call passes) is the closure this
    /// site was compiled for, as far as the site knows it: it begins with
    /// the crate's name and, generic arguments removed, ends with the suffix.
    pub fn closure_matches(&self, type_name: &str) -> bool {
        let owned;
        let plain = if type_name.contains('<') {
            owned = without_generics(type_name);
            owned.as_str()
        } else {
            type_name
        };
        let crate_ok = self.crate_name.as_ref().is_none_or(|c| {
            plain
                .strip_prefix(c.as_str())
                .is_some_and(|r| r.starts_with("::"))
        });
        let suffix_ok = self.closure_suffix.as_ref().is_none_or(|s| {
            plain == s
                || plain
                    .strip_suffix(s.as_str())
                    .is_some_and(|head| head.ends_with("::"))
        });
        crate_ok && suffix_ok
    }
}

/// `a::f<i64>::{{closure}}` without its generic arguments: `a::f::{{closure}}`.
pub fn without_generics(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut depth = 0usize;
    for ch in name.chars() {
        match ch {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(ch),
            _ => {}
        }
    }
    out
}

/// A registration call's place in the program and the types it is called
/// with; the key a run-time call is looked up by.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSite {
    /// The source path as rustc was given it (`lib/src/lib.rs`), as
    /// `std::panic::Location::file` reports it.
    pub file: String,
    pub line: u32,
    pub column: u32,
    /// The element type `T`.
    pub element: Scalar,
    /// The crate that makes the call (`--crate-name`), when known: the
    /// first segment of the closure's type name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crate_name: Option<String>,
    /// How `std::any::type_name` of the closure ends, generic arguments
    /// removed: `mix::{{closure}}` for `sums::keyed::mix::{{closure}}`.
    /// Checked with `crate_name` at run time.
    /// MIR names items by their shortest unique path, so the full name is
    /// not known; a suffix of it is. Absent where even that is not known
    /// (closures inside impl methods).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closure_suffix: Option<String>,
}

/// A native provider: the CUDA C++ code a kernel instantiates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    /// `providers/reduce.cuh`: `op`-fold of an i32 array plus `init`.
    ReduceI32,
    /// Device-to-device copy of an i32 array (the bandwidth ceiling).
    CopyI32,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::ReduceI32 => "reduce_i32",
            Provider::CopyI32 => "copy_i32",
        }
    }
}

/// How a kernel's operation was supplied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// The Rust callback's thunk, linked as LTOIR (inlined into the provider).
    RustLtoir,
    /// The Rust callback's thunk, linked as PTX (a call per element).
    RustPtx,
    /// The same operation hand-written in C++ (the benchmark baseline).
    CppFunctor,
    /// No operation (the copy kernel).
    Plain,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::RustLtoir => "rust_ltoir",
            Variant::RustPtx => "rust_ptx",
            Variant::CppFunctor => "cpp_functor",
            Variant::Plain => "plain",
        }
    }
}

/// What a kernel parameter is, so the runtime knows what to pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// `const int *`: the input array.
    Input,
    /// `unsigned long long`: the element count.
    Len,
    /// `int`: the fold's initial value.
    Init,
    /// `int2 *`: one (value, has-value) partial per block.
    Partials,
    /// `unsigned int *`: the last-block counter, zero between launches.
    Counter,
    /// `int *`: the result (reduce) or the destination array (copy).
    Output,
    /// The callback environment, by value (`__grid_constant__`).
    Env,
}

/// One kernel parameter, in order; offsets follow C struct rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub kind: ParamKind,
    pub size: u64,
    pub align: u64,
}

/// How many blocks a launch of `n` elements gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case", deny_unknown_fields)]
pub enum GridPolicy {
    /// `min(ceil(n / (block_size * items_per_thread)), sms * blocks_per_sm)`,
    /// at least 1: enough blocks to cover the data once, capped at a few
    /// resident blocks per multiprocessor (the rest is a grid-stride loop).
    TilesCappedBySms { blocks_per_sm: u32 },
}

impl GridPolicy {
    /// The grid size for `n` elements on a device with `sms` multiprocessors.
    pub fn grid_size(&self, n: u64, launch: &LaunchFacts, sms: u32) -> u32 {
        match *self {
            GridPolicy::TilesCappedBySms { blocks_per_sm } => {
                let tile = u64::from(launch.block_size) * u64::from(launch.items_per_thread);
                let tiles = n.div_ceil(tile.max(1));
                let cap = u64::from(sms.max(1)) * u64::from(blocks_per_sm.max(1));
                tiles.clamp(1, cap) as u32
            }
        }
    }

    /// The largest grid this policy ever gives (sizes the partials buffer).
    pub fn max_grid_size(&self, sms: u32) -> u32 {
        match *self {
            GridPolicy::TilesCappedBySms { blocks_per_sm } => {
                sms.max(1).saturating_mul(blocks_per_sm.max(1))
            }
        }
    }
}

/// How a kernel is launched. The generated source bakes `block_size` and
/// `items_per_thread` in as template arguments; the runtime launches with
/// the same numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFacts {
    /// Threads per block (a multiple of 32, at most 1024).
    pub block_size: u32,
    /// Elements each thread handles per loop iteration (a multiple of 4: the
    /// loop issues `items_per_thread / 4` 16-byte loads before using them).
    pub items_per_thread: u32,
    pub dynamic_shared_bytes: u32,
    pub grid: GridPolicy,
}

impl LaunchFacts {
    /// The facts used unless a build says otherwise: 256 threads, 4 int4
    /// loads in flight per thread, up to 8 blocks per multiprocessor (2048
    /// threads, full occupancy on sm_90 at <= 32 registers).
    pub const DEFAULT: LaunchFacts = LaunchFacts {
        block_size: 256,
        items_per_thread: 16,
        dynamic_shared_bytes: 0,
        grid: GridPolicy::TilesCappedBySms { blocks_per_sm: 8 },
    };

    pub fn check(&self) -> Result<(), String> {
        if self.block_size == 0 || self.block_size & 31 != 0 || self.block_size > 1024 {
            return Err(format!(
                "block_size {} is not a multiple of 32 in 32..=1024",
                self.block_size
            ));
        }
        if self.items_per_thread == 0
            || self.items_per_thread & 3 != 0
            || self.items_per_thread > 64
        {
            return Err(format!(
                "items_per_thread {} is not a multiple of 4 in 4..=64",
                self.items_per_thread
            ));
        }
        if self.dynamic_shared_bytes != 0 {
            return Err(format!(
                "dynamic_shared_bytes {}: the providers use static shared memory only",
                self.dynamic_shared_bytes
            ));
        }
        match self.grid {
            GridPolicy::TilesCappedBySms { blocks_per_sm }
                if blocks_per_sm == 0 || blocks_per_sm > 64 =>
            {
                Err(format!("blocks_per_sm {blocks_per_sm} is not in 1..=64"))
            }
            GridPolicy::TilesCappedBySms { .. } => Ok(()),
        }
    }
}

/// One `extern "C" __global__` kernel in the cubin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    pub name: String,
    pub provider: Provider,
    pub variant: Variant,
    /// The registration whose callback (and environment) this kernel uses;
    /// none for the copy kernel.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration: Option<RegistrationId>,
    /// The thunk symbol the functor calls, for the `rust_*` variants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thunk: Option<String>,
    pub params: Vec<Param>,
    pub launch: LaunchFacts,
    /// The cubin holding this kernel (a file beside the manifest); none: the
    /// manifest's `cubin`. A large build links its callbacks in chunks, in
    /// parallel, one cubin per chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubin: Option<String>,
}

/// A manifest that does not hold together; says where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("manifest format is `{found}`, this build reads `{MANIFEST_FORMAT}`")]
    Format { found: String },
    #[error("manifest fingerprint `{0}` is not 64 lowercase hex digits")]
    Fingerprint(String),
    #[error("manifest: {0}")]
    Field(String),
    #[error("callback of registration {registration}: {source}")]
    Layout {
        registration: RegistrationId,
        source: LayoutError,
    },
    #[error("kernel `{kernel}`: {what}")]
    Kernel { kernel: String, what: String },
}

/// Whether `name` is a plain C identifier (what `extern "C"` symbols here use).
pub fn is_c_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    matches!(bytes.next(), Some(b'A'..=b'Z' | b'a'..=b'z' | b'_'))
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl Manifest {
    /// The cubin file that holds `kernel`.
    pub fn cubin_of<'a>(&'a self, kernel: &'a Kernel) -> &'a str {
        kernel.cubin.as_deref().unwrap_or(&self.cubin)
    }

    /// Every cubin file of the build, the manifest's own first, each once.
    pub fn cubins(&self) -> Vec<&str> {
        let mut out = vec![self.cubin.as_str()];
        for k in &self.kernels {
            let c = self.cubin_of(k);
            if !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    /// Parses and validates a manifest.
    pub fn from_json(text: &str) -> Result<Manifest, String> {
        let manifest: Manifest =
            serde_json::from_str(text).map_err(|e| format!("manifest JSON: {e}"))?;
        manifest.validate().map_err(|e| e.to_string())?;
        Ok(manifest)
    }

    /// Pretty JSON with a trailing newline; the same manifest gives the same bytes.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a manifest always serialises");
        text.push('\n');
        text
    }

    pub fn callback(&self, registration: RegistrationId) -> Option<&Callback> {
        self.callbacks
            .iter()
            .find(|c| c.registration == registration)
    }

    /// The first kernel built for `registration` (the only one, in a build
    /// of one route without the benchmark's baselines).
    pub fn kernel_for(&self, registration: RegistrationId) -> Option<&Kernel> {
        self.kernels
            .iter()
            .find(|k| k.registration == Some(registration))
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }

    /// The environment a kernel is launched with (empty for none).
    pub fn kernel_env(&self, kernel: &Kernel) -> Option<&EnvLayout> {
        kernel
            .registration
            .and_then(|r| self.callback(r))
            .map(|c| &c.env)
    }

    /// Checks everything that can be checked without the cubin: format,
    /// unique names, each environment layout against the ABI rules, each
    /// kernel's parameter list against its provider's ABI, launch facts.
    pub fn validate(&self) -> Result<(), ManifestError> {
        if self.format != MANIFEST_FORMAT {
            return Err(ManifestError::Format {
                found: self.format.clone(),
            });
        }
        if !self.fingerprint.is_well_formed() {
            return Err(ManifestError::Fingerprint(self.fingerprint.0.clone()));
        }
        for cubin in self.cubins() {
            if cubin.is_empty() || cubin.contains('/') || cubin.contains('\\') {
                return Err(ManifestError::Field(format!(
                    "cubin `{cubin}` must be a plain file name beside the manifest"
                )));
            }
        }
        for (i, callback) in self.callbacks.iter().enumerate() {
            if self.callbacks[..i]
                .iter()
                .any(|c| c.registration == callback.registration)
            {
                return Err(ManifestError::Field(format!(
                    "registration {} has two callbacks",
                    callback.registration
                )));
            }
            callback
                .env
                .check()
                .map_err(|source| ManifestError::Layout {
                    registration: callback.registration,
                    source,
                })?;
        }
        for (i, kernel) in self.kernels.iter().enumerate() {
            let fail = |what: String| ManifestError::Kernel {
                kernel: kernel.name.clone(),
                what,
            };
            if !is_c_identifier(&kernel.name) {
                return Err(fail("the name is not a C identifier".into()));
            }
            if self.kernels[..i].iter().any(|k| k.name == kernel.name) {
                return Err(fail("appears twice".into()));
            }
            kernel.launch.check().map_err(fail)?;
            let env = match (kernel.provider, kernel.variant) {
                (Provider::CopyI32, Variant::Plain) => {
                    if kernel.registration.is_some() || kernel.thunk.is_some() {
                        return Err(fail("a copy kernel has no registration or thunk".into()));
                    }
                    None
                }
                (Provider::ReduceI32, Variant::Plain) | (Provider::CopyI32, _) => {
                    return Err(fail(format!(
                        "provider {} has no variant {}",
                        kernel.provider.name(),
                        kernel.variant.name()
                    )))
                }
                (Provider::ReduceI32, variant) => {
                    let registration = kernel
                        .registration
                        .ok_or_else(|| fail("a reduce kernel needs a registration".into()))?;
                    let callback = self.callback(registration).ok_or_else(|| {
                        fail(format!("registration {registration} has no callback entry"))
                    })?;
                    let wants_thunk = variant != Variant::CppFunctor;
                    match &kernel.thunk {
                        Some(thunk) if wants_thunk && !is_c_identifier(thunk) => {
                            return Err(fail(format!("thunk `{thunk}` is not a C identifier")))
                        }
                        Some(_) if !wants_thunk => {
                            return Err(fail("a cpp_functor kernel calls no thunk".into()))
                        }
                        None if wants_thunk => {
                            return Err(fail(format!(
                                "a {} kernel names its thunk",
                                variant.name()
                            )))
                        }
                        _ => {}
                    }
                    Some(&callback.env)
                }
            };
            let expected = provider::kernel_params(kernel.provider, env);
            if kernel.params != expected {
                return Err(fail(format!(
                    "parameters {} differ from the provider ABI {}",
                    provider::describe_params(&kernel.params),
                    provider::describe_params(&expected)
                )));
            }
        }
        Ok(())
    }
}

/// Byte offsets of `params` in a kernel's parameter buffer (C struct rules),
/// and the buffer's total size.
pub fn param_offsets(params: &[Param]) -> (Vec<u64>, u64) {
    let mut offsets = Vec::with_capacity(params.len());
    let mut offset = 0u64;
    for param in params {
        let align = param.align.max(1);
        offset = offset.div_ceil(align) * align;
        offsets.push(offset);
        offset += param.size;
    }
    (offsets, offset)
}

#[cfg(test)]
mod call_site_tests {
    use super::*;

    #[test]
    fn closure_names_match_by_crate_and_suffix() {
        let site = CallSite {
            file: "sums/src/lib.rs".into(),
            line: 12,
            column: 13,
            element: Scalar::I32,
            crate_name: Some("sums".into()),
            closure_suffix: Some("mix::{{closure}}".into()),
        };
        assert!(site.closure_matches("sums::keyed::mix::{{closure}}"));
        assert!(site.closure_matches("sums::mix::{{closure}}"));
        assert!(site.closure_matches("sums::keyed::mix<u8>::{{closure}}"));
        assert!(!site.closure_matches("sums::keyed::remix::{{closure}}"));
        assert!(!site.closure_matches("other::keyed::mix::{{closure}}"));
        assert!(!site.closure_matches("sumsx::mix::{{closure}}"));
        assert!(!site.closure_matches("sums::mix::{{closure}}::{{closure}}"));
        assert_eq!(without_generics("a::f<Vec<u8>>::g<i32>"), "a::f::g");
    }
}
