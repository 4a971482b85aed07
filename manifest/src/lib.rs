//! The artifact manifest that travels with a cubin, the environment ABI of
//! callbacks, run bundles for validation on the GPU, deterministic inputs,
//! and the text of provider instantiations.
//!
//! Invariant: this crate never links LLVM, MLIR or CUDA; it is shared by the
//! builder (which writes manifests and bundles) and the GPU runtime (which
//! reads them), so both agree on every byte by construction.

pub mod bundle;
pub mod copy_kernel;
pub mod embed;
pub mod env;
pub mod fingerprint;
mod generator;
pub mod inputs;
pub mod provider;

pub use bundle::{
    BenchSpec, BenchVariant, Bundle, BundleError, CaptureValue, Case, RegistrationRun,
    BUNDLE_FORMAT,
};
pub use env::{EnvField, EnvLayout, LayoutError, PackError};
pub use fingerprint::Fingerprint;
pub use inputs::{
    fill_inputs, generate_inputs, input_value, InputSpec, GENERATOR, GENERATOR_SOURCE, INPUT_BOUND,
};
pub use vocab::{
    computed_key, packed_key, radix_gathers, Element, Field, KeyOrder, Layout, Provider, RadixKey,
    Scalar, Shape, Signature, SortChoice, Ties, UnknownName, ELEMENT_SCALARS, RADIX_GATHER_BYTES,
};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The manifest format tag; a manifest carrying another is rejected.
pub const MANIFEST_FORMAT: &str = "manifest/2";

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
    #[cfg(feature = "hash")]
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
    /// The provider the callback was compiled for.
    pub provider: Provider,
    /// The callback's type; its element types are the data's.
    pub signature: Signature,
    /// Where the closure is, `file:line:col`, for messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    pub env: EnvLayout,
    /// Where the program calls the registration, as `#[track_caller]`
    /// reports it at run time: how `native::gpu` finds this callback's
    /// kernel. Absent for calls the host API cannot make (`native::reduce`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<CallSite>,
    /// For a sorting registration, the sort it runs: a radix sort on the
    /// keys its comparator was proved to order (the cubin then has the
    /// radix kernels too), or the merge sort and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<vocab::SortChoice>,
    /// For a chain's pick (`min`, `max_by`, …), how it keeps one of two
    /// values its order holds equal: by value alone where the order is
    /// proved to hold only identical values equal, else by position.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<vocab::Ties>,
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
        // A `par_iter` chain passes its chain object, a type of `native`'s
        // whose generic arguments are the closures.
        // A by-key's call passes its two closures' `native::gpu::ByKey`.
        if let Some(t @ (CHAIN_TYPE | BY_KEY_TYPE)) = self.closure_suffix.as_deref() {
            return plain == t;
        }
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

/// The type a `par_iter` chain's call passes as its closure
/// (`native::gpu::Chain<S, C>`, generic arguments removed): a chain's
/// [`CallSite::closure_suffix`].
pub const CHAIN_TYPE: &str = "native::gpu::Chain";

/// The type a `reduce_by_key` or `scan_by_key` call passes as its closure
/// (`native::gpu::ByKey<E, F>`, its `same` and `op`, generic arguments
/// removed): such a call's [`CallSite::closure_suffix`].
pub const BY_KEY_TYPE: &str = "native::gpu::ByKey";

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

/// The kernels one registration of a provider has, in launch order.
pub fn stages(provider: Provider) -> &'static [Stage] {
    match provider {
        Provider::SortBy => &[Stage::BlockSort, Stage::Partition, Stage::Merge],
        Provider::SegmentedSortBy => &[
            Stage::Tag,
            Stage::BlockSort,
            Stage::Partition,
            Stage::Merge,
            Stage::Untag,
            Stage::PackSort,
        ],
        Provider::MergeBy => &[Stage::Partition, Stage::Merge],
        Provider::ReduceByKey | Provider::ScanByKey => &[Stage::Init, Stage::Main],
        _ => &[Stage::Main],
    }
}

/// Which kernel of a provider's registration: one for most, three for
/// the merge sort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    #[default]
    Main,
    /// Sorts each tile in shared memory.
    BlockSort,
    /// Finds the merge-path splits of a merge pass.
    Partition,
    /// Merges pairs of sorted runs.
    Merge,
    /// Prepares the tile states of a by-key's pass (and the scan's keys
    /// before each tile).
    Init,
    /// The segmented sort's tagging of each element with its segment.
    Tag,
    /// The segmented sort's copy of the sorted elements without their tags.
    Untag,
    /// The segmented sort of segments that each fit a tile: a block sorts
    /// each pack of them.
    PackSort,
    /// The radix sort's histogram of every pass's digits.
    RadixHistogram,
    /// The exclusive sum of each radix pass's bins.
    RadixScan,
    /// One onesweep pass of the radix sort (8 bits).
    RadixPass,
    /// A `sort_by_key`'s key of each element, for the radix sort of
    /// computed keys (`vocab::SortChoice::ComputedKey`): the one radix
    /// kernel that calls a thunk, the key thunk `SYMBOL_key`. For elements
    /// the radix sort gathers (`vocab::radix_gathers`), each key with its
    /// element's index: the computed key, or the key fields packed.
    RadixKeys,
    /// The elements a gathering radix sort (`vocab::radix_gathers`) has
    /// sorted (key, index) pairs for, gathered by the sorted indices.
    RadixGather,
}

impl Stage {
    pub fn is_main(&self) -> bool {
        *self == Stage::Main
    }

    /// `main`, `block_sort`, `partition`, `merge`, `init`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Main => "main",
            Stage::BlockSort => "block_sort",
            Stage::Partition => "partition",
            Stage::Merge => "merge",
            Stage::Init => "init",
            Stage::Tag => "tag",
            Stage::Untag => "untag",
            Stage::PackSort => "pack_sort",
            Stage::RadixHistogram => "radix_histogram",
            Stage::RadixScan => "radix_scan",
            Stage::RadixPass => "radix_pass",
            Stage::RadixKeys => "radix_keys",
            Stage::RadixGather => "radix_gather",
        }
    }

    /// The radix sort's kernels, which a sorting registration has besides
    /// the merge sort's where its order is proved (`vocab::SortChoice`).
    pub const RADIX: [Stage; 3] = [Stage::RadixHistogram, Stage::RadixScan, Stage::RadixPass];

    pub fn is_radix(self) -> bool {
        Stage::RADIX.contains(&self) || matches!(self, Stage::RadixKeys | Stage::RadixGather)
    }

    /// `""` for the main kernel, else `_block_sort`, `_partition`, `_merge`.
    pub fn suffix(self) -> &'static str {
        match self {
            Stage::Main => "",
            Stage::BlockSort => "_block_sort",
            Stage::Partition => "_partition",
            Stage::Merge => "_merge",
            Stage::Init => "_init",
            Stage::Tag => "_tag",
            Stage::Untag => "_untag",
            Stage::PackSort => "_pack_sort",
            Stage::RadixHistogram => "_radix_histogram",
            Stage::RadixScan => "_radix_scan",
            Stage::RadixPass => "_radix_pass",
            Stage::RadixKeys => "_radix_keys",
            Stage::RadixGather => "_radix_gather",
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
    /// `const T *`: the input array.
    Input,
    /// `const U *`: the second input array (`transform2`), or
    /// partition_point's queries.
    Input2,
    /// The element count: `unsigned long long`, or `unsigned int` for the
    /// merge sort (32-bit offsets, as CUB's).
    Len,
    /// `T`: the initial value (a chain's: `R`, its value type).
    Init,
    /// `unsigned int`: whether `Init` holds a value (a chain's fold takes
    /// an initial value or starts from the first value kept).
    HasInit,
    /// `rcb::Partial<T> *`: one (value, has-value) partial per block (a
    /// chain's: `rcb::ChainPartial<R>` or `rcb::PickPartial<R>`,
    /// providers/chain.cuh).
    Partials,
    /// `unsigned int *`: the last-block counter, zero between launches.
    Counter,
    /// The result (`T *` of one value for reduce, the result record for a
    /// chain: [`provider::result_record`]) or the output array.
    Output,
    /// `T *`: partition's second output array, the elements its predicate
    /// rejects (room for all of them).
    Rejected,
    /// `V *`: reduce_by_key's second output array, each run's fold of its
    /// values (room for a run an element).
    Output2,
    /// `unsigned long long`: the bytes of `State` (reduce_by_key's and
    /// scan_by_key's CUB tile states, which the kernels check).
    StateBytes,
    /// `const unsigned long long *`: segment boundaries (segments + 1).
    Offsets,
    /// `unsigned long long`: the number of segments.
    Segments,
    /// `unsigned long long`: the second input's elements (partition_point's
    /// queries, merge_by's second input).
    Len2,
    /// `unsigned long long`: histogram's number of bins.
    Bins,
    /// `unsigned int`: segmented reduce's shape, 1 for a block per segment.
    PerBlock,
    /// `void *`: the look-back state (`lookback_bytes`).
    State,
    /// `unsigned int`: the launch's epoch (never 0) for the look-back state.
    Epoch,
    /// `unsigned long long *`: the number of elements selected (select) or
    /// of values kept (chain_collect).
    Count,
    /// Merge sort: `bool`, which of output and buffer a stage reads.
    Ping,
    /// Merge sort and radix sort: `T *`, the buffer of n elements (the
    /// segmented sort's: of n tagged elements).
    Buffer,
    /// Segmented sort: `rcb::Segmented<T> *`, the n elements tagged with
    /// their segments, which the merge sort sorts in place.
    Tagged,
    /// Segmented sort: `const unsigned int *`, the packs of segments that
    /// fit a tile (pack `p` is segments `packs[p]..packs[p+1]`).
    Packs,
    /// Merge sort: `unsigned int *`, merge-path splits (tiles + 1).
    Partitions,
    /// Merge sort: `unsigned int`, the number of splits.
    NumPartitions,
    /// Merge sort: `unsigned int`, the tiles a merge pass's runs will hold.
    Target,
    /// Merge sort: `int`, elements per tile of the block sort.
    ItemsPerTile,
    /// Radix sort: `unsigned int *`, every pass's digit counts (a
    /// portion's passes after another's), scanned into offsets.
    RadixBins,
    /// Radix sort: `unsigned int *`, the next portion's bins of this pass
    /// (null for the last portion).
    RadixBinsOut,
    /// Radix sort: `int *`, the onesweep look-back (a tile's 256 digits),
    /// zero before each pass.
    RadixLookback,
    /// Radix sort: `int *`, the pass's tile counter, zero before the sort.
    RadixCounter,
    /// Radix sort: `unsigned int *`, the route: a flag a pass, set by the
    /// scan where every key has the same digit in the pass (which is then
    /// skipped), a route word a pass (where it reads and writes, written
    /// by the scan's last block) and the scan's arrival count, zero before
    /// the sort.
    RadixTrivial,
    /// Radix sort: `unsigned int`, the first element of the portion a pass
    /// launch sorts.
    PortionStart,
    /// Radix sort: `int`, the elements of the portion a pass launch sorts.
    PortionLen,
    /// Radix sort: `int`, the pass's first key bit.
    CurrentBit,
    /// Radix sort: `int`, the keys' bits (the histogram counts every
    /// pass's digits below it).
    EndBit,
    /// Radix sort of computed keys: `K *`, two halves of `Len` keys each,
    /// which the passes read and write in turn, the first pass reading
    /// the first half (the key kernel's output).
    RadixKeys,
    /// Radix sort of computed keys: `K *`, where the key kernel writes the
    /// keys (the first half of `RadixKeys`).
    RadixKeysOut,
    /// Gathering radix sort (`vocab::radix_gathers`): `unsigned int *`, two
    /// halves of `Len` element indices, which the key kernel fills (the
    /// first half) and the passes move with the keys; the gather reads the
    /// half the last pass wrote.
    RadixIndices,
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

/// How many blocks a launch gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "policy", rename_all = "snake_case", deny_unknown_fields)]
pub enum GridPolicy {
    /// `min(ceil(n / (block_size * items_per_thread)), sms * blocks_per_sm)`,
    /// at least 1: enough blocks to cover the data once, capped at a few
    /// resident blocks per multiprocessor (the rest is a grid-stride loop).
    /// For segmented reduce, `n` is the number of segments.
    TilesCappedBySms { blocks_per_sm: u32 },
    /// One block per tile of `block_size * items_per_thread` elements, in
    /// block order (the look-back and the merge sort rely on it).
    OneBlockPerTile,
    /// One thread per merge-path split of the sort's tiles.
    ThreadPerPartition,
    /// As many blocks as are resident at once, at most one per tile: the
    /// blocks take tiles in order from a ticket counter (the scans' tile
    /// stream, providers/scan.cuh). The runtime sizes it
    /// from the occupancy it measures; without one it assumes
    /// `min_blocks_per_sm` (at least 1).
    ResidentTiles,
}

impl GridPolicy {
    /// The grid size for `n` elements on a device with `sms` multiprocessors.
    pub fn grid_size(&self, n: u64, launch: &LaunchFacts, sms: u32) -> u32 {
        let tile = launch.tile().max(1);
        let tiles = n.div_ceil(tile);
        match *self {
            GridPolicy::TilesCappedBySms { blocks_per_sm } => {
                let cap = u64::from(sms.max(1)) * u64::from(blocks_per_sm.max(1));
                tiles.clamp(1, cap) as u32
            }
            GridPolicy::OneBlockPerTile => tiles.clamp(1, u64::from(u32::MAX)) as u32,
            GridPolicy::ThreadPerPartition => tiles.clamp(1, u64::from(u32::MAX)) as u32,
            GridPolicy::ResidentTiles => {
                let cap = u64::from(sms.max(1)) * u64::from(launch.min_blocks_per_sm.max(1));
                tiles.clamp(1, cap) as u32
            }
        }
    }

    /// The largest grid this policy ever gives (sizes the partials buffer);
    /// `None` for a policy that grows with the input.
    pub fn max_grid_size(&self, sms: u32) -> Option<u32> {
        match *self {
            GridPolicy::TilesCappedBySms { blocks_per_sm } => {
                Some(sms.max(1).saturating_mul(blocks_per_sm.max(1)))
            }
            GridPolicy::OneBlockPerTile
            | GridPolicy::ThreadPerPartition
            | GridPolicy::ResidentTiles => None,
        }
    }
}

/// How a kernel is launched. The generated source bakes `block_size` and
/// `items_per_thread` in as template arguments; the runtime launches with
/// the same numbers ([`LaunchFacts::threads`] threads a block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchFacts {
    /// Threads per block that take elements (a multiple of 32): the tile
    /// is `block_size * items_per_thread`.
    pub block_size: u32,
    /// Elements each thread handles per tile (per loop iteration for the
    /// grid-stride providers: the loads it has in flight).
    pub items_per_thread: u32,
    /// Dynamic shared memory a block is launched with (the scans' tile
    /// buffers, `provider::stream_shared_bytes`);
    /// at most [`MAX_DYNAMIC_SHARED_BYTES`].
    pub dynamic_shared_bytes: u32,
    pub grid: GridPolicy,
    /// Blocks per multiprocessor the kernel is compiled to fit (the second
    /// `__launch_bounds__` argument, which caps its registers); 0: none
    /// asked for.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub min_blocks_per_sm: u32,
    /// Warps a block runs beyond `block_size`, which take no elements: the
    /// look-back warp of the tile streams (the scans, select,
    /// chain_collect: providers/scan.cuh), 0 elsewhere.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extra_warps: u32,
}

/// The most shared memory one block may have on sm_90 (227 KB), which a
/// kernel must opt into above 48 KB.
pub const MAX_DYNAMIC_SHARED_BYTES: u32 = 232_448;

fn is_zero(v: &u32) -> bool {
    *v == 0
}

impl LaunchFacts {
    /// The i32 reduce's facts: 256 threads, 4 int4 loads in flight per
    /// thread, up to 8 blocks per multiprocessor (2048 threads, full
    /// occupancy on sm_90 at <= 32 registers). Every provider's are in
    /// [`provider::launch_facts`].
    pub const DEFAULT: LaunchFacts = LaunchFacts {
        block_size: 256,
        items_per_thread: 16,
        dynamic_shared_bytes: 0,
        grid: GridPolicy::TilesCappedBySms { blocks_per_sm: 8 },
        min_blocks_per_sm: 0,
        extra_warps: 0,
    };

    /// Elements one block covers: `block_size * items_per_thread`.
    pub fn tile(&self) -> u64 {
        u64::from(self.block_size) * u64::from(self.items_per_thread)
    }

    /// Threads a block is launched with: `block_size` and the extra warps.
    pub fn threads(&self) -> u32 {
        self.block_size
            .saturating_add(self.extra_warps.saturating_mul(32))
    }

    pub fn check(&self) -> Result<(), String> {
        if self.block_size == 0 || self.block_size & 31 != 0 || self.block_size > 1024 {
            return Err(format!(
                "block_size {} is not a multiple of 32 in 32..=1024",
                self.block_size
            ));
        }
        if self.threads() > 1024 {
            return Err(format!(
                "block_size {} and {} extra warps exceed 1024 threads a block",
                self.block_size, self.extra_warps
            ));
        }
        if self.items_per_thread == 0 || self.items_per_thread > 64 {
            return Err(format!(
                "items_per_thread {} is not in 1..=64",
                self.items_per_thread
            ));
        }
        if self.dynamic_shared_bytes > MAX_DYNAMIC_SHARED_BYTES {
            return Err(format!(
                "dynamic_shared_bytes {} exceeds sm_90's {MAX_DYNAMIC_SHARED_BYTES} a block",
                self.dynamic_shared_bytes
            ));
        }
        if self.min_blocks_per_sm > 32 {
            return Err(format!(
                "min_blocks_per_sm {} is not in 0..=32",
                self.min_blocks_per_sm
            ));
        }
        match self.grid {
            GridPolicy::TilesCappedBySms { blocks_per_sm }
                if blocks_per_sm == 0 || blocks_per_sm > 64 =>
            {
                Err(format!("blocks_per_sm {blocks_per_sm} is not in 1..=64"))
            }
            _ => Ok(()),
        }
    }
}

/// One `extern "C" __global__` kernel in the cubin.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Kernel {
    pub name: String,
    /// Whose kernel it is: a provider's, or the copy kernel.
    #[serde(rename = "provider")]
    pub kind: KernelKind,
    /// Which of the provider's kernels (the merge sort has three).
    #[serde(default, skip_serializing_if = "Stage::is_main")]
    pub stage: Stage,
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

/// What a kernel of a manifest runs: a provider's code with a
/// registration's callback, or the [copy kernel](copy_kernel) the
/// benchmarks measure the bandwidth ceiling with. Written as its name: the
/// provider's, or `copy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelKind {
    Provider(Provider),
    Copy,
}

impl KernelKind {
    pub fn name(self) -> &'static str {
        match self {
            KernelKind::Provider(p) => p.name(),
            KernelKind::Copy => "copy",
        }
    }

    /// Reads a kind's name: an error listing the valid names otherwise.
    pub fn parse(name: &str) -> Result<KernelKind, UnknownName> {
        if name == "copy" {
            return Ok(KernelKind::Copy);
        }
        Provider::parse(name)
            .map(KernelKind::Provider)
            .map_err(|mut e| {
                e.valid.push("copy");
                e
            })
    }

    /// The provider, for a provider's kernel.
    pub fn provider(self) -> Option<Provider> {
        match self {
            KernelKind::Provider(p) => Some(p),
            KernelKind::Copy => None,
        }
    }
}

impl PartialEq<Provider> for KernelKind {
    fn eq(&self, p: &Provider) -> bool {
        *self == KernelKind::Provider(*p)
    }
}

impl std::fmt::Display for KernelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for KernelKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for KernelKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str> as Deserialize>::deserialize(d)?;
        KernelKind::parse(&name).map_err(serde::de::Error::custom)
    }
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
    /// The first kernel built with `registration`'s callback (a radix
    /// sort's plain kernels, shared by every variant, are not one).
    pub fn kernel_for(&self, registration: RegistrationId) -> Option<&Kernel> {
        self.kernel_index_for(registration)
            .map(|i| &self.kernels[i])
    }

    /// [`Manifest::kernel_for`]'s kernel as its index in `kernels`.
    pub fn kernel_index_for(&self, registration: RegistrationId) -> Option<usize> {
        self.kernels
            .iter()
            .position(|k| k.registration == Some(registration) && k.variant != Variant::Plain)
    }

    /// Every kernel built for `registration`: each stage, each variant.
    pub fn kernels_of(&self, registration: RegistrationId) -> impl Iterator<Item = &Kernel> {
        self.kernels
            .iter()
            .filter(move |k| k.registration == Some(registration))
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
            if !callback.signature.fits(callback.provider) {
                return Err(ManifestError::Field(format!(
                    "registration {}: a {} callback cannot have the type `{}`",
                    callback.registration,
                    callback.provider.name(),
                    callback.signature
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
            let provider = match kernel.kind {
                KernelKind::Copy => {
                    if kernel.registration.is_some() || kernel.thunk.is_some() {
                        return Err(fail("a copy kernel has no registration or thunk".into()));
                    }
                    if kernel.stage != Stage::Main || kernel.variant != Variant::Plain {
                        return Err(fail("a copy kernel is one plain kernel".into()));
                    }
                    copy_kernel::check_launch(&kernel.launch).map_err(fail)?;
                    check_params(&kernel.params, &copy_kernel::params()).map_err(fail)?;
                    continue;
                }
                KernelKind::Provider(p) => p,
            };
            if kernel.stage.is_radix() {
                check_radix_kernel(self, kernel, provider).map_err(fail)?;
                continue;
            }
            if !stages(provider).contains(&kernel.stage) {
                return Err(fail(format!(
                    "provider {} has no stage `{}`",
                    provider.name(),
                    kernel.stage.name()
                )));
            }
            if kernel.variant == Variant::Plain {
                return Err(fail(format!(
                    "provider {} has no variant {}",
                    provider.name(),
                    kernel.variant.name()
                )));
            }
            let registration = kernel.registration.ok_or_else(|| {
                fail(format!("a {} kernel needs a registration", provider.name()))
            })?;
            let callback = self.callback(registration).ok_or_else(|| {
                fail(format!("registration {registration} has no callback entry"))
            })?;
            if callback.provider != provider {
                return Err(fail(format!(
                    "registration {registration} was compiled for `{}`, the kernel belongs to `{}`",
                    callback.provider.name(),
                    provider.name()
                )));
            }
            let wants_thunk = kernel.variant != Variant::CppFunctor;
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
                        kernel.variant.name()
                    )))
                }
                _ => {}
            }
            let signature = &callback.signature;
            provider::check_launch(provider, signature, &kernel.launch).map_err(fail)?;
            let expected =
                provider::kernel_params(provider, kernel.stage, signature, Some(&callback.env));
            check_params(&kernel.params, &expected).map_err(fail)?;
        }
        Ok(())
    }
}

/// A radix sort kernel: a plain kernel (shared by the registration's
/// variants; no callback: it ranks key bits, but for the key kernel of
/// computed keys, which calls the key thunk) of a sorting registration
/// whose order was proved.
fn check_radix_kernel(m: &Manifest, kernel: &Kernel, provider: Provider) -> Result<(), String> {
    if provider != Provider::SortBy {
        return Err(format!("provider {} has no radix sort", provider.name()));
    }
    if kernel.variant != Variant::Plain {
        return Err("a radix sort kernel is plain, shared by every variant".into());
    }
    let registration = kernel
        .registration
        .ok_or("a radix sort kernel needs a registration")?;
    let callback = m
        .callback(registration)
        .ok_or_else(|| format!("registration {registration} has no callback entry"))?;
    if callback.provider != provider {
        return Err(format!(
            "registration {registration} was compiled for `{}`",
            callback.provider.name()
        ));
    }
    let Some(sort) = callback.sort.as_ref().filter(|s| s.radix_keys().is_some()) else {
        return Err(format!(
            "registration {registration}'s order was not proved to be a radix order"
        ));
    };
    let element = callback.signature.element();
    let computed = sort.computed_key().is_some();
    let key = sort.sorted_key(element);
    let stages = provider::radix_stages(element, computed);
    if !stages.contains(&kernel.stage) {
        return Err(format!(
            "registration {registration}'s radix sort has the stages {}, not `{}`",
            stages
                .iter()
                .map(|s| s.name())
                .collect::<Vec<_>>()
                .join(", "),
            kernel.stage.name()
        ));
    }
    match (&kernel.thunk, kernel.stage) {
        (Some(thunk), Stage::RadixKeys) if computed && is_c_identifier(thunk) => {}
        (_, Stage::RadixKeys) if computed => {
            return Err("the radix key kernel names the key thunk it calls".into())
        }
        (Some(_), _) => {
            return Err("a radix sort kernel calls no thunk but a computed key's".into())
        }
        (None, _) => {}
    }
    let expected = provider::radix_launch(kernel.stage, element, key.as_ref().map(|(k, _)| k));
    if kernel.launch != expected {
        return Err(format!(
            "launch facts {:?} differ from the radix sort's {:?}",
            kernel.launch, expected
        ));
    }
    let env = Some(&callback.env).filter(|_| kernel.stage == Stage::RadixKeys && computed);
    check_params(
        &kernel.params,
        &provider::radix_params(
            kernel.stage,
            provider::RadixMoves::of(element, computed),
            env,
        ),
    )
}

/// A kernel's parameter list against the one its ABI says.
fn check_params(params: &[Param], expected: &[Param]) -> Result<(), String> {
    if params == expected {
        return Ok(());
    }
    Err(format!(
        "parameters {} differ from the provider ABI {}",
        provider::describe_params(params),
        provider::describe_params(expected)
    ))
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

    #[test]
    fn a_chain_matches_the_chain_object_only() {
        let site = CallSite {
            file: "sums/src/lib.rs".into(),
            line: 12,
            column: 40,
            crate_name: Some("sums".into()),
            closure_suffix: Some(CHAIN_TYPE.into()),
        };
        assert!(site.closure_matches(
            "native::gpu::Chain<native::gpu::Map<(), sums::run::{{closure}}, f32>, ()>"
        ));
        assert!(site.closure_matches("native::gpu::Chain<(), ()>"));
        assert!(!site.closure_matches("sums::run::{{closure}}"));
        assert!(!site.closure_matches("native::gpu::Map<(), sums::run::{{closure}}, f32>"));
    }
}
