//! CUDA C++ text for provider instantiations, and each provider's kernel ABI.
//!
//! A translation unit emitted here embeds the provider headers it needs
//! (`providers/*.cuh`, no `#include` of ours), so NVRTC compiles it with no
//! include path, except for the merge sort, which is CUB's and includes
//! CCCL's headers ([`TranslationUnit::needs_cccl`]). For a Rust callback the
//! functor calls the thunk, `extern "C" __device__ R NAME(const void *env,
//! A a[, B b])` in the thunk ABI ([`abi_c_type`]), defined elsewhere and
//! linked by nvJitLink (a chain has two, `NAME_stage` and `NAME_combine`:
//! [`thunk_symbols`]); the environment is a kernel parameter passed by
//! value as `__grid_constant__`, so the functor can hand the thunk its
//! address without a per-thread copy. The environment struct spells out
//! every field and padding byte, and `static_assert`s pin its size,
//! alignment and every field's offset, size and alignment to the manifest's
//! [`EnvLayout`]: a disagreement is a compile error, not a wrong answer.

use crate::{
    copy_kernel, is_c_identifier, Element, EnvLayout, GridPolicy, Kernel, KernelKind, LaunchFacts,
    Param, ParamKind, Provider, RegistrationId, Scalar, Shape, Signature, Stage, Variant,
};
use std::fmt::Write as _;

/// `providers/common.cuh`: element types, vector loads, shuffles.
pub const COMMON_CUH: &str = include_str!("../../providers/common.cuh");
/// `providers/reduce.cuh` (and the copy kernel).
pub const REDUCE_CUH: &str = include_str!("../../providers/reduce.cuh");
/// `providers/lookback.cuh`: the deterministic single-pass look-back.
pub const LOOKBACK_CUH: &str = include_str!("../../providers/lookback.cuh");
/// `providers/scan.cuh`: both scans, and the tile storage select uses.
pub const SCAN_CUH: &str = include_str!("../../providers/scan.cuh");
/// `providers/select.cuh`.
pub const SELECT_CUH: &str = include_str!("../../providers/select.cuh");
/// `providers/transform.cuh`: transform and transform2.
pub const TRANSFORM_CUH: &str = include_str!("../../providers/transform.cuh");
/// `providers/segmented_reduce.cuh`.
pub const SEGMENTED_REDUCE_CUH: &str = include_str!("../../providers/segmented_reduce.cuh");
/// `providers/sort.cuh`: CUB's merge sort agents.
pub const SORT_CUH: &str = include_str!("../../providers/sort.cuh");
pub const SEGMENTED_SORT_CUH: &str = include_str!("../../providers/segmented_sort.cuh");
/// `providers/search.cuh`: partition_point's binary searches.
pub const SEARCH_CUH: &str = include_str!("../../providers/search.cuh");
/// `providers/merge.cuh`: CUB's merge kernels.
pub const MERGE_CUH: &str = include_str!("../../providers/merge.cuh");
pub const BY_KEY_CUH: &str = include_str!("../../providers/by_key.cuh");
/// `providers/histogram.cuh`.
pub const HISTOGRAM_CUH: &str = include_str!("../../providers/histogram.cuh");
/// `providers/chain.cuh`: `par_iter` chains, fused with a fold, a pick or
/// a compaction.
pub const CHAIN_CUH: &str = include_str!("../../providers/chain.cuh");
/// `providers/radix.cuh`: CUB's onesweep radix sort on proved key fields.
pub const RADIX_CUH: &str = include_str!("../../providers/radix.cuh");

/// The longest segment a segmented reduce folds with a warp: a launch whose
/// longest segment is longer gives every segment a block (the kernel's
/// `per_block`). The runtime decides by it, and a host model of the
/// combining order needs it.
pub const WARP_SEGMENT_LIMIT: u64 = 8192;

/// The provider headers, in the order a translation unit embeds them.
const HEADERS: [(&str, &str); 15] = [
    ("common.cuh", COMMON_CUH),
    ("reduce.cuh", REDUCE_CUH),
    ("lookback.cuh", LOOKBACK_CUH),
    ("scan.cuh", SCAN_CUH),
    ("select.cuh", SELECT_CUH),
    ("transform.cuh", TRANSFORM_CUH),
    ("segmented_reduce.cuh", SEGMENTED_REDUCE_CUH),
    ("search.cuh", SEARCH_CUH),
    ("histogram.cuh", HISTOGRAM_CUH),
    ("merge.cuh", MERGE_CUH),
    ("by_key.cuh", BY_KEY_CUH),
    ("chain.cuh", CHAIN_CUH),
    ("sort.cuh", SORT_CUH),
    ("segmented_sort.cuh", SEGMENTED_SORT_CUH),
    ("radix.cuh", RADIX_CUH),
];

/// The headers a provider's kernels need, besides `common.cuh`.
fn headers_of(provider: Provider) -> &'static [&'static str] {
    match provider {
        Provider::Reduce => &["reduce.cuh"],
        Provider::InclusiveScan | Provider::ExclusiveScan => &["lookback.cuh", "scan.cuh"],
        Provider::Select | Provider::DedupBy | Provider::Partition => {
            &["lookback.cuh", "scan.cuh", "select.cuh"]
        }
        Provider::Transform | Provider::Transform2 => &["transform.cuh"],
        Provider::SegmentedReduce => &["reduce.cuh", "segmented_reduce.cuh"],
        Provider::SortBy => &["sort.cuh"],
        Provider::SegmentedSortBy => &["sort.cuh", "segmented_sort.cuh"],
        Provider::PartitionPoint => &["search.cuh"],
        Provider::Histogram => &["histogram.cuh"],
        Provider::MergeBy => &["merge.cuh"],
        Provider::ReduceByKey | Provider::ScanByKey => &["by_key.cuh"],
        // chain.cuh holds every chain: chain_collect runs select's tile
        // stream, the others reduce.cuh's shape.
        Provider::ChainReduce | Provider::ChainPick | Provider::ChainCollect => &[
            "reduce.cuh",
            "lookback.cuh",
            "scan.cuh",
            "select.cuh",
            "chain.cuh",
        ],
    }
}

/// Every provider header with its file name, for tools that check them
/// (the NVRTC tests compile each).
pub fn headers() -> &'static [(&'static str, &'static str)] {
    &HEADERS
}

/// The C type a scalar travels as through the thunk ABI: integers narrower
/// than 32 bits (and `bool`) widened to 32 (sign-extended for signed types,
/// zero-extended otherwise), everything else as itself. Both sides of a
/// call agree on 32- and 64-bit values without relying on either
/// compiler's rules for narrow ones.
///
/// The emitter runs on signatures that [`Signature::fits`] its provider, so
/// on scalar elements only; a composite has no C type yet and is `void`,
/// which NVRTC refuses.
pub fn abi_c_type(e: &Element) -> &'static str {
    let Some(s) = e.scalar() else { return "void" };
    match s {
        Scalar::I8 | Scalar::I16 | Scalar::I32 => "int",
        Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::Bool | Scalar::Char => "unsigned int",
        Scalar::I64 | Scalar::Isize => "long long",
        Scalar::U64 | Scalar::Usize => "unsigned long long",
        Scalar::I128 => "__int128",
        Scalar::U128 => "unsigned __int128",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
        // Neither half nor quad floats are element types.
        Scalar::F16 | Scalar::F128 => "void",
    }
}

/// The C++ type of an element, as [`abi_c_type`] says, unwidened; a
/// composite's is the struct [`composite_struct`] declares.
fn c_type(e: &Element) -> String {
    match e {
        Element::Composite(l) => composite_c_name(l),
        e => e.c_type().unwrap_or("void").to_string(),
    }
}

/// An element's name in kernel names: a scalar's own, a composite's
/// spelling with every run of other characters than letters and digits
/// one `_` (`(f32, u32)` is `f32_u32`, `geo::Point` is `geo_Point`).
fn element_ident(e: &Element) -> String {
    let mut out = String::new();
    for c in e.name().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.is_empty() && !out.ends_with('_') {
            out.push('_');
        }
    }
    let out = out.trim_end_matches('_');
    match out {
        "" => "composite".to_string(),
        o => o.to_string(),
    }
}

/// The C++ name of a composite element's struct: its name in kernel
/// names and a digest of its layout (two layouts never share a struct).
fn composite_c_name(l: &vocab::Layout) -> String {
    let mut text = format!("{}:{}", l.size, l.align);
    for f in &l.fields {
        let _ = write!(text, ";{}@{}", f.element.name(), f.offset);
    }
    let mut h: u32 = 0x811c_9dc5;
    for b in text.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
    }
    format!(
        "rcb_elem_{}_{h:08x}",
        element_ident(&Element::Composite(l.clone()))
    )
}

/// The NVRTC option that declares composite elements as byte arrays
/// (see [`composite_struct`]): for `-g` builds.
pub const BYTE_COMPOSITES: &str = "-DRCB_BYTE_COMPOSITES";

/// The declaration of a composite element's type, once per translation
/// unit: its bytes with rustc's size and alignment, opaque to the
/// providers, which move values and hand them to the callback's thunk
/// (its fields are read and written there, at rustc's offsets).
///
/// The bytes are words of the alignment (at most 8 bytes): a copy is then
/// a register a word. As `unsigned char bytes[12]`, CUB's onesweep pass
/// of a 12-byte element takes 157 registers (a register a byte) where a
/// struct of three words takes 56 (ptxas, sm_90): three times the blocks
/// a multiprocessor. A `-g` build ([`BYTE_COMPOSITES`]) keeps the byte
/// array, whose radix passes nvJitLink 13.0's `-g` link of LTOIR accepts
/// where it refuses the words' ("Symbol name with unsupported
/// characters", docs/debug-info.md).
fn composite_struct(l: &vocab::Layout) -> String {
    let name = composite_c_name(l);
    let fields: Vec<String> = l
        .fields
        .iter()
        .map(|f| format!("{} `.{}` at {}", f.element.name(), f.name, f.offset))
        .collect();
    let (word, bytes) = match l.align.min(8) {
        8 => ("unsigned long long", 8),
        4 => ("unsigned int", 4),
        2 => ("unsigned short", 2),
        _ => ("unsigned char", 1),
    };
    format!(
        "#ifndef {guard}\n#define {guard}\n// `{}`: {} bytes, aligned to {}; {}.\n\
         #ifdef RCB_BYTE_COMPOSITES\n\
         struct alignas({}) {name} {{\n    unsigned char bytes[{}];\n}};\n\
         #else\n\
         struct alignas({}) {name} {{\n    {word} words[{}];\n}};\n\
         #endif\n#endif\n",
        l.name,
        l.size,
        l.align,
        fields.join(", "),
        l.align,
        l.size,
        l.align,
        l.size / bytes,
        guard = name.to_uppercase(),
    )
}

/// The stable kernel name for a provider, element type, registration,
/// variant and stage, e.g. `rcb_reduce_i32_r3_rust_ltoir` or
/// `rcb_sort_by_f64_r0_rust_ptx_merge`.
pub fn kernel_name(
    provider: Provider,
    element: &Element,
    registration: Option<RegistrationId>,
    variant: Variant,
    stage: Stage,
) -> String {
    match registration {
        Some(r) => format!(
            "rcb_{}_{}_r{}_{}{}",
            provider.name(),
            element_ident(element),
            r.0,
            variant.name(),
            stage.suffix()
        ),
        None => format!(
            "rcb_{}_{}{}",
            provider.name(),
            element.name(),
            stage.suffix()
        ),
    }
}

/// How each provider's kernels are launched, by element type: the tuning
/// table. `items_per_thread` is what each kernel's template takes (see
/// [`LaunchFacts`]). `RMIR_TUNING` may override it ([`Tuning`]).
pub fn launch_facts(provider: Provider, stage: Stage, signature: &Signature) -> LaunchFacts {
    let t = signature.element().size().max(1) as u32;
    // Elements in a 16-byte vector: one for an element of more bytes.
    let per16 = (16 / t).max(1);
    let capped = |items: u32, blocks_per_sm: u32| LaunchFacts {
        block_size: 256,
        items_per_thread: items,
        dynamic_shared_bytes: 0,
        grid: GridPolicy::TilesCappedBySms { blocks_per_sm },
        min_blocks_per_sm: 0,
        extra_warps: 0,
    };
    let tiled = |block: u32, items: u32| LaunchFacts {
        block_size: block,
        items_per_thread: items,
        dynamic_shared_bytes: 0,
        grid: GridPolicy::OneBlockPerTile,
        min_blocks_per_sm: 0,
        extra_warps: 0,
    };
    // Measured on the H200 against CUB (docs/perf.md, "Tuning"): every
    // choice below is the best of the variants timed side by side.
    match provider {
        // Four 16-byte loads in flight per thread. The reduce's grid stops
        // at six blocks per multiprocessor: fewer partials for the last
        // block to fold (2^24 elements: 0.98x CUB instead of 0.96x at
        // eight), the same bandwidth at 2^28.
        Provider::Reduce => capped(4 * per16, 6),
        // A chain is a reduce that runs the stages on each element first:
        // the same loads in flight, the same grid (t is the input's size).
        Provider::ChainReduce | Provider::ChainPick => capped(4 * per16, 6),
        Provider::SegmentedReduce => capped(4 * per16, 8),
        // A thread a query (its searches are chains of dependent loads:
        // the many threads in flight hide them).
        Provider::PartitionPoint => tiled(256, 1),
        // Resident blocks striding over the input, four 16-byte vectors in
        // flight a thread: each block flushes its shared counters once.
        Provider::Histogram => capped(4 * per16, 8),
        // One block per tile rather than a grid-stride loop: 0.97-1.03x
        // CUB's DeviceTransform at 2^28 instead of 0.93-0.96x. A transform
        // takes one chunk a thread (more, shorter blocks, as CUB sizes its
        // sm_90 tiles): 3x + 1 over 2^24 i64 at 0.998x CUB where four
        // chunks gave 0.983 (benches/experiments/transform_shape.cu).
        Provider::Transform => tiled(256, map_chunk(signature)),
        // Up to 64 bytes of every input in flight per thread.
        Provider::Transform2 => {
            let chunk = map_chunk(signature);
            let unroll = (16 / chunk).clamp(1, 4);
            tiled(256, unroll * chunk)
        }
        // The tile stream with a look-back warp (providers/scan.cuh),
        // for the scans and select: resident blocks, two a multiprocessor
        // for 4- and 8-byte elements (three tiles of shared memory each).
        // Scan of 2^28 i32: 646 us, 1.29x CUB, where a block without the
        // look-back warp took 793 and a block per tile 846; 23 items at
        // three a multiprocessor: 650 us; for 8-byte elements 15 items
        // beat 11 at three and 7 at four. Select of 8-byte elements takes
        // 17 (2^28 i64: 990 us against 1029 at 15 and 1051 at 11 with three
        // a multiprocessor; CUB 1000). Odd counts: a thread's elements in
        // shared memory start in different banks. A chain's collect is
        // select's compaction of what its stages keep, with select's facts
        // by its input's size (not measured on its own yet), and so is
        // dedup_by's and partition's, select with another rule or a second
        // output.
        Provider::InclusiveScan
        | Provider::ExclusiveScan
        | Provider::Select
        | Provider::DedupBy
        | Provider::Partition
        | Provider::ChainCollect => {
            let compaction = provider.compacts();
            let items = match (provider, t) {
                (_, 8) if compaction => 17,
                // A composite of more than 8 bytes: a tile of about the
                // 8-byte one's bytes (three of them, two blocks a
                // multiprocessor, fit the shared memory).
                (_, 9..) if compaction => (136 / t).clamp(1, 15),
                // A scan's tile holds the values too, and three tiles of
                // them besides: two blocks a multiprocessor fit.
                (Provider::InclusiveScan | Provider::ExclusiveScan, 9..) => (120 / t).clamp(1, 15),
                _ => scan_items(t),
            };
            let shared = tile_stream_bytes(provider, signature, 256, items);
            LaunchFacts {
                block_size: 256,
                items_per_thread: items,
                dynamic_shared_bytes: shared,
                grid: GridPolicy::ResidentTiles,
                // Two a multiprocessor where both fit (a composite's tile
                // of one item a thread may not).
                min_blocks_per_sm: if t >= 4 && 2 * shared <= crate::MAX_DYNAMIC_SHARED_BYTES {
                    2
                } else {
                    0
                },
                extra_warps: 1,
            }
        }
        // A thread a merge-path split, for the merge sort's passes and the
        // merge.
        Provider::SortBy | Provider::SegmentedSortBy | Provider::MergeBy
            if stage == Stage::Partition =>
        {
            LaunchFacts {
                block_size: 256,
                items_per_thread: 1,
                dynamic_shared_bytes: 0,
                grid: GridPolicy::ThreadPerPartition,
                min_blocks_per_sm: 0,
                extra_warps: 0,
            }
        }
        // CUB's sm_90 merge tuning (Nominal4BItemsToItems of T's size, 15).
        Provider::MergeBy => tiled(512, (15 * 4 / t).clamp(1, 15)),
        // The by-keys' init kernels: a thread a tile (CUB's 128-thread
        // blocks).
        Provider::ReduceByKey | Provider::ScanByKey if stage == Stage::Init => LaunchFacts {
            block_size: 128,
            items_per_thread: 1,
            dynamic_shared_bytes: 0,
            grid: GridPolicy::ThreadPerPartition,
            min_blocks_per_sm: 0,
            extra_warps: 0,
        },
        // CUB's sm_90 policies for an operation that is not one of CUB's
        // own functors (providers/by_key.cuh repeats them).
        Provider::ReduceByKey => tiled(128, reduce_by_key_items(signature)),
        Provider::ScanByKey => tiled(256, scan_by_key_items(signature)),
        // CUB's sm_90 merge sort tuning (Nominal4BItemsToItems<T>(17)).
        Provider::SortBy => tiled(256, (17 * 4 / t).clamp(1, 17)),
        // The segmented sort's tagging and untagging: a thread an element.
        Provider::SegmentedSortBy if matches!(stage, Stage::Tag | Stage::Untag) => tiled(256, 1),
        // The merge sort's, of the tagged elements.
        Provider::SegmentedSortBy => {
            let tagged = tagged_size(signature.element()) as u32;
            tiled(256, (17 * 4 / tagged).clamp(1, 17))
        }
    }
}

/// The bytes of `rcb::Segmented<T>` (providers/segmented_sort.cuh): a
/// 32-bit segment tag, then the element at its alignment, rounded up to
/// the larger alignment of the two.
pub fn tagged_size(e: &Element) -> u64 {
    let align = e.align().max(4);
    (4u64.next_multiple_of(e.align()) + e.size()).next_multiple_of(align)
}

/// The bytes of a by-key's key and value, and the larger of them.
fn by_key_sizes(signature: &Signature) -> (u32, u32) {
    let k = signature.element().size() as u32;
    let v = signature.ret.size() as u32;
    (k + v, k.max(v))
}

/// Items a thread of reduce_by_key's tile: CUB's default reduce-by-key
/// policy (`ReduceByKeyPolicy` of providers/by_key.cuh).
fn reduce_by_key_items(signature: &Signature) -> u32 {
    match by_key_sizes(signature) {
        (_, ..=8) => 6,
        (combined, _) => (48u32).div_ceil(combined).clamp(1, 6),
    }
}

/// Items a thread of scan_by_key's tile: CUB's default scan-by-key policy
/// (`ScanByKeyPolicy` of providers/by_key.cuh).
fn scan_by_key_items(signature: &Signature) -> u32 {
    match by_key_sizes(signature) {
        (_, ..=8) => 9,
        (combined, _) => (72 / combined).clamp(1, 9),
    }
}

/// What a kernel's launch facts must satisfy beyond [`LaunchFacts::check`]:
/// its template arguments come from them (whole 16-byte vectors for the
/// reduces, whole chunks for the maps, one flag bit per item for select and
/// chain_collect).
pub fn check_launch(
    provider: Provider,
    signature: &Signature,
    launch: &LaunchFacts,
) -> Result<(), String> {
    launch.check()?;
    let items = launch.items_per_thread;
    let stream = is_tile_stream(provider);
    let wanted_warps = u32::from(stream);
    if launch.extra_warps != wanted_warps {
        return Err(format!(
            "extra_warps {}: {} (the look-back warp of a tile stream)",
            launch.extra_warps,
            if stream {
                "a scan, select or chain_collect runs exactly one"
            } else {
                "only a scan, select or chain_collect runs any"
            }
        ));
    }
    match provider {
        Provider::Reduce
        | Provider::SegmentedReduce
        | Provider::Histogram
        | Provider::ChainReduce
        | Provider::ChainPick => {
            let n = vector_width(signature.element());
            if !items.is_multiple_of(n) {
                return Err(format!(
                    "items_per_thread {items} is not a whole number of 16-byte vectors of {} ({n} elements)",
                    signature.element().name()
                ));
            }
        }
        Provider::Transform | Provider::Transform2 => {
            let chunk = map_chunk(signature);
            if !items.is_multiple_of(chunk) {
                return Err(format!(
                    "items_per_thread {items} is not a whole number of chunks of {chunk} elements"
                ));
            }
        }
        Provider::PartitionPoint if !(1..=8).contains(&items) => {
            return Err(format!(
                "items_per_thread {items}: partition_point searches 1 to 8 queries side by side a thread"
            ));
        }
        p if p.compacts() && items > 32 => {
            return Err(format!(
                "items_per_thread {items}: {} keeps one flag bit per item, at most 32",
                provider.name()
            ));
        }
        _ => {}
    }
    if stream {
        let wanted = tile_stream_bytes(provider, signature, launch.block_size, items);
        if launch.dynamic_shared_bytes < wanted {
            return Err(format!(
                "dynamic_shared_bytes {}: the tile stream of {} needs {wanted} (three tiles)",
                launch.dynamic_shared_bytes,
                provider.name()
            ));
        }
    }
    Ok(())
}

/// The environment variable of [`Tuning`]'s overrides.
pub const TUNING_VAR: &str = "RMIR_TUNING";

/// Overrides of the tuning table, for experiments: `RMIR_TUNING` holds
/// entries `FAMILY[@SIZE].KEY=VALUE` separated by commas, e.g.
/// `scan@4.block=128,scan@4.items=15,transform.blocks_per_sm=4`. FAMILY is
/// `reduce`, `scan` (both scans), `select`, `transform` (both),
/// `segmented_reduce`, `histogram`, `partition_point`, `chain`
/// (chain_reduce and chain_pick, by the input's
/// size), `chain_collect` (by the input's size: its own family, though it
/// starts from select's facts, as its kernel is not select's and an
/// experiment on one should not move the other); SIZE an element size in
/// bytes (every size without it); KEY `block`, `items`, `min_blocks` or
/// `blocks_per_sm` (`0`: one block per tile). A build's manifest records
/// the facts it was built with, and the provider source (so the build
/// cache's key) holds them too.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tuning {
    entries: Vec<(String, Option<u64>, String, u32)>,
}

const TUNING_FAMILIES: [&str; 9] = [
    "reduce",
    "scan",
    "select",
    "transform",
    "segmented_reduce",
    "histogram",
    "partition_point",
    "chain",
    "chain_collect",
];
const TUNING_KEYS: [&str; 4] = ["block", "items", "min_blocks", "blocks_per_sm"];

impl Tuning {
    pub fn parse(text: &str) -> Result<Tuning, String> {
        let mut entries = Vec::new();
        for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let bad = |why: &str| format!("RMIR_TUNING entry `{entry}`: {why}");
            let (lhs, value) = entry.split_once('=').ok_or_else(|| bad("no `=`"))?;
            let (target, key) = lhs.rsplit_once('.').ok_or_else(|| bad("no `.KEY`"))?;
            let (family, size) = match target.split_once('@') {
                Some((f, s)) => (
                    f,
                    Some(
                        s.parse::<u64>()
                            .ok()
                            .filter(|s| [1, 2, 4, 8].contains(s))
                            .ok_or_else(|| bad("the size is not 1, 2, 4 or 8"))?,
                    ),
                ),
                None => (target, None),
            };
            if !TUNING_FAMILIES.contains(&family) {
                return Err(bad(&format!(
                    "the family is one of {}",
                    TUNING_FAMILIES.join(", ")
                )));
            }
            if !TUNING_KEYS.contains(&key) {
                return Err(bad(&format!(
                    "the key is one of {}",
                    TUNING_KEYS.join(", ")
                )));
            }
            let value: u32 = value
                .parse()
                .map_err(|_| bad("the value is not a number"))?;
            entries.push((family.to_string(), size, key.to_string(), value));
        }
        Ok(Tuning { entries })
    }

    /// `RMIR_TUNING`, or no overrides: for the edge (the command line, the
    /// Cargo wrapper) to read once.
    pub fn from_env() -> Result<Tuning, String> {
        match std::env::var(TUNING_VAR) {
            Ok(text) => Tuning::parse(&text),
            Err(_) => Ok(Tuning::default()),
        }
    }

    /// `facts` with this tuning's overrides for the kernel applied.
    pub fn apply(
        &self,
        mut facts: LaunchFacts,
        provider: Provider,
        signature: &Signature,
    ) -> LaunchFacts {
        let family = match provider {
            Provider::Reduce => "reduce",
            Provider::InclusiveScan | Provider::ExclusiveScan => "scan",
            // dedup_by and partition are select's kernel with another rule
            // or a second output.
            Provider::Select | Provider::DedupBy | Provider::Partition => "select",
            Provider::Transform | Provider::Transform2 => "transform",
            Provider::SegmentedReduce => "segmented_reduce",
            Provider::Histogram => "histogram",
            Provider::PartitionPoint => "partition_point",
            Provider::ChainReduce | Provider::ChainPick => "chain",
            Provider::ChainCollect => "chain_collect",
            Provider::SortBy
            | Provider::SegmentedSortBy
            | Provider::MergeBy
            | Provider::ReduceByKey
            | Provider::ScanByKey => return facts,
        };
        let size = signature.element().size();
        for (f, s, key, value) in &self.entries {
            if f != family || s.is_some_and(|s| s != size) {
                continue;
            }
            match key.as_str() {
                "block" => facts.block_size = *value,
                "items" => facts.items_per_thread = *value,
                "min_blocks" => facts.min_blocks_per_sm = *value,
                _ => {
                    facts.grid = match *value {
                        0 => GridPolicy::OneBlockPerTile,
                        b => GridPolicy::TilesCappedBySms { blocks_per_sm: b },
                    }
                }
            }
        }
        if is_tile_stream(provider) {
            // The tile buffers follow the tile.
            facts.dynamic_shared_bytes = tile_stream_bytes(
                provider,
                signature,
                facts.block_size,
                facts.items_per_thread,
            );
        }
        facts
    }
}

/// Whether the provider's kernel is a tile stream with a look-back warp
/// (providers/scan.cuh's `tile_stream`): resident blocks of
/// `block_size + 32` threads with three tiles of dynamic shared memory.
pub fn is_tile_stream(provider: Provider) -> bool {
    matches!(provider, Provider::InclusiveScan | Provider::ExclusiveScan) || provider.compacts()
}

/// Dynamic shared memory of a tile stream's block: three tiles of
/// `size`-byte elements and, for each, a scan's prefix per thread (the
/// `ScanStorage` of providers/scan.cuh) or select's flags and position per
/// thread (`SelectStorage`, select.cuh), or nothing per thread for a
/// chain's collect, which compacts a tile in its own slot (`CollectStorage`,
/// chain.cuh: its size is T's alone), plus a few values per warp and per
/// slot. The generated kernels assert it fits.
pub fn stream_shared_bytes(provider: Provider, block: u32, items: u32, size: u32) -> u32 {
    let tiles = 3 * (block * items * size).div_ceil(16) * 16;
    match provider {
        Provider::Select | Provider::DedupBy | Provider::Partition => {
            tiles + 3 * block * 8 + (block / 32) * 4 + 64
        }
        Provider::ChainCollect => tiles + (block / 32) * 4 + 64,
        // The two prefixes, their flags, the drawn tiles and alignment:
        // 64 bytes up to 8-byte elements.
        _ => tiles + 3 * block * size + (block / 32) * (size + 4) + (2 * size + 40).max(64),
    }
}

/// The dynamic shared memory of `provider`'s tile stream over
/// `signature`: [`stream_shared_bytes`] by its element's size, and for an
/// indexed chain's collect whose values take more room than its elements
/// (which it compacts, and stages again as it stores them) each kept
/// element's position in its tile besides, two bytes an item in each of
/// the three tiles ([`collect_keeps_positions`]).
pub fn tile_stream_bytes(provider: Provider, signature: &Signature, block: u32, items: u32) -> u32 {
    let size = signature.element().size() as u32;
    let positions = match provider == Provider::ChainCollect && collect_keeps_positions(signature) {
        true => 3 * (block * items * 2).div_ceil(16) * 16,
        false => 0,
    };
    stream_shared_bytes(provider, block, items, size) + positions
}

/// Whether a chain's collect keeps its kept elements' positions in their
/// tiles (chain.cuh's `CollectStorage::KEEP_POSITIONS`): an indexed chain
/// whose value is larger than its element stages each kept element again
/// as it stores it, and needs its index then.
pub fn collect_keeps_positions(signature: &Signature) -> bool {
    signature.is_indexed_chain() && signature.ret.size() > signature.element().size()
}

/// Items per thread of a scan tile (and of select's but for 8-byte
/// elements), by element size.
fn scan_items(size: u32) -> u32 {
    match size {
        1 => 23,
        2 => 19,
        4 => 31,
        _ => 15,
    }
}

/// The parameter list of a provider's kernel, in order. `env` is the
/// callback environment (none, or empty, adds no parameter).
pub fn kernel_params(
    provider: Provider,
    stage: Stage,
    signature: &Signature,
    env: Option<&EnvLayout>,
) -> Vec<Param> {
    use ParamKind as K;
    let p = |kind, size| Param {
        kind,
        size,
        align: size,
    };
    let ptr = |kind| p(kind, 8);
    // An initial value has its element's alignment (a composite's size
    // need not be its alignment).
    let init = |e: &Element| Param {
        kind: K::Init,
        size: e.size(),
        align: e.align(),
    };
    let mut params = match (provider, stage) {
        (Provider::Reduce, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            init(signature.element()),
            ptr(K::Partials),
            ptr(K::Counter),
            ptr(K::Output),
        ],
        (Provider::ChainReduce, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            init(&signature.ret),
            p(K::HasInit, 4),
            ptr(K::Partials),
            ptr(K::Counter),
            ptr(K::Output),
        ],
        (Provider::ChainPick, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            ptr(K::Partials),
            ptr(K::Counter),
            ptr(K::Output),
        ],
        // A seed (`has_init`): the scan of one shard after others, from
        // their carry (`native::gpu::GpuSet`).
        (Provider::InclusiveScan, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            init(signature.element()),
            p(K::HasInit, 4),
            ptr(K::Output),
            ptr(K::State),
            p(K::Epoch, 4),
        ],
        (Provider::ExclusiveScan, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            init(signature.element()),
            ptr(K::Output),
            ptr(K::State),
            p(K::Epoch, 4),
        ],
        (Provider::Transform, _) => vec![ptr(K::Input), p(K::Len, 8), ptr(K::Output)],
        (Provider::Transform2, _) => {
            vec![ptr(K::Input), ptr(K::Input2), p(K::Len, 8), ptr(K::Output)]
        }
        (Provider::SegmentedReduce, _) => vec![
            ptr(K::Input),
            ptr(K::Offsets),
            p(K::Segments, 8),
            init(signature.element()),
            ptr(K::Output),
            p(K::PerBlock, 4),
        ],
        (Provider::Select | Provider::DedupBy | Provider::ChainCollect, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            ptr(K::Output),
            ptr(K::Count),
            ptr(K::State),
            p(K::Epoch, 4),
        ],
        (Provider::Partition, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            ptr(K::Output),
            ptr(K::Rejected),
            ptr(K::Count),
            ptr(K::State),
            p(K::Epoch, 4),
        ],
        (Provider::PartitionPoint, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            ptr(K::Input2),
            p(K::Len2, 8),
            ptr(K::Output),
        ],
        (Provider::Histogram, _) => {
            vec![ptr(K::Input), p(K::Len, 8), p(K::Bins, 8), ptr(K::Output)]
        }
        (Provider::MergeBy, Stage::Partition) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            ptr(K::Input2),
            p(K::Len2, 8),
            p(K::NumPartitions, 8),
            ptr(K::Partitions),
        ],
        (Provider::MergeBy, _) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            ptr(K::Input2),
            p(K::Len2, 8),
            ptr(K::Output),
            ptr(K::Partitions),
        ],
        (Provider::ReduceByKey, Stage::Init) => vec![
            ptr(K::State),
            p(K::StateBytes, 8),
            p(K::Len, 8),
            ptr(K::Count),
        ],
        (Provider::ReduceByKey, _) => vec![
            ptr(K::Input),
            ptr(K::Input2),
            p(K::Len, 8),
            ptr(K::Output),
            ptr(K::Output2),
            ptr(K::Count),
            ptr(K::State),
            p(K::StateBytes, 8),
        ],
        (Provider::ScanByKey, Stage::Init) => vec![
            ptr(K::Input),
            p(K::Len, 8),
            ptr(K::State),
            p(K::StateBytes, 8),
            ptr(K::Buffer),
        ],
        (Provider::ScanByKey, _) => vec![
            ptr(K::Input),
            ptr(K::Input2),
            p(K::Len, 8),
            ptr(K::Output),
            ptr(K::State),
            p(K::StateBytes, 8),
            ptr(K::Buffer),
        ],
        (Provider::SegmentedSortBy, Stage::Tag) => vec![
            ptr(K::Input),
            p(K::Len, 4),
            ptr(K::Offsets),
            p(K::Segments, 8),
            ptr(K::Tagged),
        ],
        (Provider::SegmentedSortBy, Stage::Untag) => {
            vec![ptr(K::Tagged), p(K::Len, 4), ptr(K::Output)]
        }
        (Provider::SegmentedSortBy, Stage::PackSort) => {
            vec![
                ptr(K::Input),
                ptr(K::Output),
                ptr(K::Offsets),
                p(K::Segments, 8),
                ptr(K::Packs),
            ]
        }
        // The merge sort's stages: sort_by's on the output, the segmented
        // sort's on its tagged elements (and its segment count, for the
        // tags' comparator).
        (Provider::SortBy | Provider::SegmentedSortBy, _) => {
            let (data, mut extra) = match provider {
                Provider::SortBy => (K::Output, Vec::new()),
                _ => (K::Tagged, vec![p(K::Segments, 8)]),
            };
            let mut stage_params = match stage {
                Stage::Partition => vec![
                    p(K::Ping, 1),
                    ptr(data),
                    ptr(K::Buffer),
                    p(K::Len, 4),
                    p(K::NumPartitions, 4),
                    ptr(K::Partitions),
                    p(K::Target, 4),
                    p(K::ItemsPerTile, 4),
                ],
                Stage::Merge => vec![
                    p(K::Ping, 1),
                    ptr(data),
                    p(K::Len, 4),
                    ptr(K::Buffer),
                    ptr(K::Partitions),
                    p(K::Target, 4),
                ],
                // sort_by's block sort reads the input; the segmented
                // sort's sorts its tagged elements in place.
                _ if provider == Provider::SortBy => vec![
                    p(K::Ping, 1),
                    ptr(K::Input),
                    ptr(K::Output),
                    p(K::Len, 4),
                    ptr(K::Buffer),
                ],
                _ => vec![p(K::Ping, 1), ptr(K::Tagged), p(K::Len, 4), ptr(K::Buffer)],
            };
            stage_params.append(&mut extra);
            stage_params
        }
    };
    if let Some(env) = env.filter(|e| !e.is_empty()) {
        params.push(Param {
            kind: K::Env,
            size: env.size,
            align: env.align,
        });
    }
    params
}

/// What a provider that produces one value leaves behind its `Output`
/// parameter (the runtime's workspace), and where the value lies in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResultRecord {
    /// Bytes the kernel writes, all of which the runtime reads back.
    pub size: u64,
    /// Bytes of the value, at offset 0: the element's for a reduce, `R`'s
    /// for a chain (1 for a `bool`).
    pub value: u64,
    /// The offset of the `u32` "has a value" flag, for a chain, whose
    /// result may be none (nothing kept, no initial value); a reduce's
    /// record is its value alone.
    pub has: Option<u64>,
}

/// The result record of `provider`'s kernel, for the providers whose
/// result is one value (reduce and the chains); `None` for the others.
/// A chain's is `rcb::ChainPartial<R>` (`{ R value; u32 has; }`, 8 bytes,
/// or 16 for an 8-byte `R`, more for a composite) or `rcb::PickPartial<R>`
/// (`{ R value; u32 has; u64 index; }`, 16 bytes, or 32 for an 8-byte
/// `R`, more for a composite) of providers/chain.cuh; the generated
/// kernel asserts the size.
pub fn result_record(provider: Provider, signature: &Signature) -> Option<ResultRecord> {
    let r = signature.ret.size();
    let wide = r == 8;
    let (size, has) = match provider {
        Provider::Reduce => {
            let t = signature.element().size();
            return Some(ResultRecord {
                size: t,
                value: t,
                has: None,
            });
        }
        // `{ R value; u32 has; }`, aligned to 16 for an 8-byte R, else 8.
        Provider::ChainReduce => {
            let has = r.next_multiple_of(4);
            ((has + 4).next_multiple_of(if wide { 16 } else { 8 }), has)
        }
        // `{ R value; u32 has; u64 index; }`, aligned to 16.
        Provider::ChainPick => {
            let has = r.next_multiple_of(4);
            (
                ((has + 4).next_multiple_of(8) + 8).next_multiple_of(16),
                has,
            )
        }
        Provider::InclusiveScan
        | Provider::ExclusiveScan
        | Provider::Transform
        | Provider::Transform2
        | Provider::SegmentedReduce
        | Provider::Select
        | Provider::SortBy
        | Provider::SegmentedSortBy
        | Provider::DedupBy
        | Provider::Partition
        | Provider::PartitionPoint
        | Provider::MergeBy
        | Provider::ReduceByKey
        | Provider::ScanByKey
        | Provider::Histogram
        | Provider::ChainCollect => return None,
    };
    Some(ResultRecord {
        size,
        value: r,
        has: Some(has),
    })
}

/// `(input:8/8, len:8/8, ...)`, for messages.
pub fn describe_params(params: &[Param]) -> String {
    let parts: Vec<String> = params
        .iter()
        .map(|p| {
            let kind = serde_json::to_value(p.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            format!("{kind}:{}/{}", p.size, p.align)
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// How a kernel's operation is supplied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// A Rust callback's thunk. `variant` is [`Variant::RustLtoir`] or
    /// [`Variant::RustPtx`] (the text is the same; the variant records how
    /// the thunk will be linked).
    Thunk { symbol: String, variant: Variant },
    /// The operation written in C++: a C++ expression of the parameters
    /// `a` (and `b`) and the captures as `env.NAME` (NAME from
    /// [`c_field_names`]), e.g. `"a + b * env.k"`.
    Cpp { expr: String },
}

impl Operation {
    pub fn variant(&self) -> Variant {
        match self {
            Operation::Thunk { variant, .. } => *variant,
            Operation::Cpp { .. } => Variant::CppFunctor,
        }
    }
}

/// One kernel (or, for the merge sort, the three kernels) to emit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KernelRequest {
    /// A provider instantiated with a registration's operation.
    Callback {
        provider: Provider,
        registration: RegistrationId,
        signature: Signature,
        op: Operation,
        env: EnvLayout,
        /// For a chain's pick, how it keeps one of two equal values:
        /// `Ties::Identical` picks by value alone (chain.cuh's
        /// `EQUAL_IS_IDENTICAL`). Other providers ignore it.
        ties: crate::Ties,
    },
    /// The device-to-device copy kernel ([`crate::copy_kernel`]).
    Copy,
    /// A sorting registration's radix sort kernels ([`Stage::RADIX`]) on
    /// the keys its comparator was proved to order (`vocab::SortChoice`).
    /// They call no callback: they rank the keys' bits. With `computed`,
    /// the keys are the key function's, computed by a kernel of their own
    /// ([`Stage::RadixKeys`]), and sorted with the elements as values.
    Radix {
        registration: RegistrationId,
        element: Element,
        keys: Vec<vocab::RadixKey>,
        computed: Option<ComputedKey>,
    },
}

/// The key a `sort_by_key`'s radix sort computes: its type (as
/// `vocab::computed_key` lays it out), and the key thunk and environment
/// that compute it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ComputedKey {
    pub key: Element,
    /// `SYMBOL_key(const void *env, A x, K *out)`, the registration's
    /// thunk `SYMBOL` with `_key`.
    pub thunk: String,
    pub env: EnvLayout,
}

impl KernelRequest {
    /// An `i32` reduce with `op`: the shape the bundles and the selftest use.
    pub fn i32_reduce(registration: RegistrationId, op: Operation, env: EnvLayout) -> Self {
        KernelRequest::Callback {
            provider: Provider::Reduce,
            registration,
            signature: Signature::fold(Scalar::I32),
            op,
            env,
            ties: crate::Ties::ByPosition,
        }
    }
}

/// An emitted translation unit and the manifest entries of its kernels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranslationUnit {
    pub source: String,
    pub kernels: Vec<Kernel>,
    /// Options NVRTC needs for this source beyond the target and `-dlto`/
    /// `-rdc=true`: `--device-int128` when an environment holds an `i128`
    /// or `u128` (NVRTC rejects the type otherwise; nvcc accepts it).
    pub nvrtc_options: Vec<String>,
    /// Whether the source includes CCCL's headers (the merge sort), so that
    /// NVRTC needs their folder as an include path.
    pub needs_cccl: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error("launch facts: {0}")]
    Launch(String),
    #[error("registration {registration}: {source}")]
    Layout {
        registration: RegistrationId,
        source: crate::LayoutError,
    },
    #[error("registration {registration}: thunk `{thunk}` is not a C identifier")]
    Thunk {
        registration: RegistrationId,
        thunk: String,
    },
    #[error("registration {registration}: variant {variant} does not call a thunk")]
    ThunkVariant {
        registration: RegistrationId,
        variant: String,
    },
    #[error("registration {registration}: C++ expression {expr:?} {why}")]
    Expr {
        registration: RegistrationId,
        expr: String,
        why: String,
    },
    #[error("registration {registration}: captures `{first}` and `{second}` both become the C++ field `{c_name}`")]
    FieldCollision {
        registration: RegistrationId,
        first: String,
        second: String,
        c_name: String,
    },
    #[error("registration {registration}: a {provider} callback cannot have the type `{signature}` (it needs `{}` over {})", .provider.shape().describe(), element_list())]
    Signature {
        registration: RegistrationId,
        provider: Provider,
        signature: Signature,
    },
    #[error("kernel `{0}` is requested twice")]
    DuplicateKernel(String),
}

/// `i8, i16, …, f64`: the element types, for messages.
pub fn element_list() -> String {
    crate::ELEMENT_SCALARS
        .iter()
        .map(|s| s.name())
        .collect::<Vec<_>>()
        .join(", ")
}

const CPP_KEYWORDS: &[&str] = &[
    "alignas",
    "alignof",
    "and",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "break",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "class",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "continue",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "else",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "for",
    "friend",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not",
    "not_eq",
    "nullptr",
    "operator",
    "or",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "try",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "while",
    "xor",
    "xor_eq",
];

/// The C++ member name of each environment field: the capture's own name
/// when it is a plain, unreserved C++ identifier (`k`), else `capture{i}_`
/// (a C++ keyword such as `class`, a raw identifier, non-ASCII, or `__`).
pub fn c_field_names(env: &EnvLayout) -> Vec<String> {
    env.fields
        .iter()
        .enumerate()
        .map(|(i, field)| {
            let name = field.name.as_str();
            let plain = is_c_identifier(name)
                && !name.starts_with('_')
                && !name.contains("__")
                && !name.starts_with("rcb_")
                && !CPP_KEYWORDS.contains(&name);
            if plain {
                name.to_string()
            } else {
                format!("capture{i}_")
            }
        })
        .collect()
}

/// Emits one self-contained translation unit holding `requests`, with the
/// provider headers they need, each kernel launched as [`launch_facts`] says.
pub fn emit_translation_unit(requests: &[KernelRequest]) -> Result<TranslationUnit, EmitError> {
    emit_translation_unit_with(requests, &Tuning::default())
}

/// [`emit_translation_unit`] with `tuning`'s overrides of the launch facts.
pub fn emit_translation_unit_with(
    requests: &[KernelRequest],
    tuning: &Tuning,
) -> Result<TranslationUnit, EmitError> {
    let mut wanted: Vec<&str> = vec!["common.cuh"];
    for r in requests {
        match r {
            KernelRequest::Callback { provider, .. } => wanted.extend(headers_of(*provider)),
            KernelRequest::Copy => wanted.push(copy_kernel::HEADER),
            KernelRequest::Radix { .. } => wanted.push("radix.cuh"),
        }
    }
    let mut source = String::new();
    source
        .push_str("// Generated by the `manifest` crate (provider instantiation). Do not edit.\n");
    for (name, text) in HEADERS.iter().filter(|(n, _)| wanted.contains(n)) {
        let _ = writeln!(
            source,
            "// Provider header providers/{name} follows, embedded."
        );
        source.push_str(text);
        if !text.ends_with('\n') {
            source.push('\n');
        }
    }
    let mut kernels: Vec<Kernel> = Vec::with_capacity(requests.len());
    let mut nvrtc_options = Vec::new();
    let wide = |env: &EnvLayout| {
        env.fields
            .iter()
            .any(|f| matches!(f.scalar, Scalar::I128 | Scalar::U128))
    };
    if requests
        .iter()
        .any(|r| matches!(r, KernelRequest::Callback { env, .. } if wide(env)))
    {
        nvrtc_options.push("--device-int128".to_string());
    }
    for request in requests {
        for kernel in emit_request(&mut source, request, tuning)? {
            if kernels.iter().any(|k| k.name == kernel.name) {
                return Err(EmitError::DuplicateKernel(kernel.name));
            }
            kernels.push(kernel);
        }
    }
    Ok(TranslationUnit {
        source,
        kernels,
        nvrtc_options,
        needs_cccl: requests.iter().any(|r| {
            matches!(
                r,
                KernelRequest::Callback {
                    provider: Provider::SortBy
                        | Provider::SegmentedSortBy
                        | Provider::MergeBy
                        | Provider::ReduceByKey
                        | Provider::ScanByKey,
                    ..
                } | KernelRequest::Radix { .. }
            )
        }),
    })
}

fn emit_request(
    out: &mut String,
    request: &KernelRequest,
    tuning: &Tuning,
) -> Result<Vec<Kernel>, EmitError> {
    let (provider, registration, signature, op, env, ties) = match request {
        KernelRequest::Copy => return copy_kernel::emit(out).map(|k| vec![k]),
        KernelRequest::Radix {
            registration,
            element,
            keys,
            computed,
        } => return emit_radix(out, *registration, element, keys, computed.as_ref()),
        KernelRequest::Callback {
            provider,
            registration,
            signature,
            op,
            env,
            ties,
        } => (*provider, *registration, signature, op, env, *ties),
    };
    if !signature.fits(provider) {
        return Err(EmitError::Signature {
            registration,
            provider,
            signature: signature.clone(),
        });
    }
    let variant = op.variant();
    match op {
        Operation::Thunk { symbol, variant } => {
            if !matches!(variant, Variant::RustLtoir | Variant::RustPtx) {
                return Err(EmitError::ThunkVariant {
                    registration,
                    variant: variant.name().to_string(),
                });
            }
            if !is_c_identifier(symbol) {
                return Err(EmitError::Thunk {
                    registration,
                    thunk: symbol.clone(),
                });
            }
        }
        Operation::Cpp { expr } => check_expr(registration, expr)?,
    }
    let base = kernel_name(
        provider,
        signature.element(),
        Some(registration),
        variant,
        Stage::Main,
    );
    let what = match op {
        Operation::Thunk { symbol, .. } => format!("callback thunk {symbol}"),
        Operation::Cpp { .. } => "hand-written C++ operation".to_string(),
    };
    let _ = writeln!(
        out,
        "\n// ---- {base}: {} `{signature}`, registration {registration}, {what}",
        provider.name()
    );
    let mut declared: Vec<&vocab::Layout> = Vec::new();
    for e in signature.params.iter().chain([&signature.ret]) {
        if let Element::Composite(l) = e {
            if !declared.contains(&l) {
                out.push_str(&composite_struct(l));
                declared.push(l);
            }
        }
    }
    let env_type = emit_env_struct(out, &base, registration, env)?;
    if let Operation::Thunk { symbol, .. } = op {
        for declaration in thunk_declarations(provider, signature, symbol) {
            let _ = writeln!(out, "{declaration}");
        }
    }
    let functor = match provider.shape() {
        Shape::Chain => emit_chain_functors(
            out,
            &base,
            provider,
            signature,
            op,
            env_type.as_deref(),
            ties,
        ),
        Shape::ByKey => emit_by_key_functors(out, &base, signature, op, env_type.as_deref()),
        _ => emit_functor(out, &base, signature, op, env_type.as_deref()),
    };
    let mut kernels = Vec::new();
    for &stage in crate::stages(provider) {
        let launch = tuning.apply(
            launch_facts(provider, stage, signature),
            provider,
            signature,
        );
        check_launch(provider, signature, &launch)
            .map_err(|e| EmitError::Launch(format!("{}: {e}", provider.name())))?;
        let name = kernel_name(
            provider,
            signature.element(),
            Some(registration),
            variant,
            stage,
        );
        emit_kernel(
            out,
            &name,
            provider,
            stage,
            signature,
            &launch,
            env_type.as_deref(),
            &functor,
        )?;
        kernels.push(Kernel {
            name,
            kind: KernelKind::Provider(provider),
            stage,
            variant,
            registration: Some(registration),
            thunk: match op {
                Operation::Thunk { symbol, .. } => Some(symbol.clone()),
                Operation::Cpp { .. } => None,
            },
            params: kernel_params(provider, stage, signature, Some(env)),
            launch,
            cubin: None,
        });
    }
    Ok(kernels)
}

/// The `extern "C"` thunks of a registration's callback, which its
/// kernels declare, for its thunk `symbol` (a kernel's [`Kernel::thunk`]):
/// the symbol itself, or for a chain its two thunks, `SYMBOL_stage` and
/// `SYMBOL_combine` (a chain_collect's kernel calls the stage alone).
pub fn thunk_symbols(provider: Provider, symbol: &str) -> Vec<String> {
    match provider.shape() {
        Shape::Chain => vec![format!("{symbol}_stage"), format!("{symbol}_combine")],
        Shape::ByKey => vec![format!("{symbol}_same"), format!("{symbol}_op")],
        _ => vec![symbol.to_string()],
    }
}

/// The declarations of the thunks, in the thunk ABI ([`abi_c_type`]), one
/// per [`thunk_symbols`]. A chain's, with `A` the input's ABI type, `RA`
/// the value's and `R` the value's own C type:
///
/// ```c
/// // The stages on one element: nonzero if it is kept, its value in *out.
/// // An indexed chain's (`enumerate`) takes its index, `A x, unsigned long
/// // long i, R *out`.
/// extern "C" __device__ unsigned int SYMBOL_stage(const void *env, A x, R *out);
/// // chain_reduce: *out = combine(a, b), the result meaningless.
/// // chain_pick: nonzero iff b (the later value) wins over a; *out scratch.
/// // chain_collect: never called (declared, as the lowering exports it).
/// extern "C" __device__ unsigned int SYMBOL_combine(const void *env, RA a, RA b, R *out);
/// ```
fn thunk_declarations(provider: Provider, signature: &Signature, symbol: &str) -> Vec<String> {
    // A scalar operand as the ABI's type, a composite by pointer.
    let param = |e: &Element, n: &str| match e {
        Element::Composite(_) => format!("const {} *{n}", c_type(e)),
        e => format!("{} {n}", abi_c_type(e)),
    };
    if provider.shape() == Shape::Chain {
        let r = &signature.ret;
        let (x, a, b, rc) = (
            param(signature.element(), "x"),
            param(r, "a"),
            param(r, "b"),
            c_type(r),
        );
        // An indexed chain's stage takes the element's index too.
        let i = match signature.is_indexed_chain() {
            true => ", unsigned long long i",
            false => "",
        };
        return vec![
            format!("extern \"C\" __device__ unsigned int {symbol}_stage(const void *env, {x}{i}, {rc} *out);"),
            format!("extern \"C\" __device__ unsigned int {symbol}_combine(const void *env, {a}, {b}, {rc} *out);"),
        ];
    }
    if provider.shape() == Shape::ByKey {
        let (same, op) = by_key_signatures(signature);
        return [(same, "same"), (op, "op")]
            .iter()
            .flat_map(|(sig, part)| {
                thunk_declarations(Provider::Reduce, sig, &format!("{symbol}_{part}"))
            })
            .collect();
    }
    let mut params: Vec<String> = signature
        .params
        .iter()
        .zip(["a", "b"])
        .map(|(s, n)| param(s, n))
        .collect();
    // A composite result is written through `out`.
    let ret = match &signature.ret {
        r @ Element::Composite(_) => {
            params.push(format!("{} *out", c_type(r)));
            "void"
        }
        r => abi_c_type(r),
    };
    vec![format!(
        "extern \"C\" __device__ {ret} {symbol}(const void *env, {});",
        params.join(", ")
    )]
}

/// `name`, cast to the thunk ABI's type of `e` where that differs from its
/// own (narrow types widen: a cast only there).
fn widened(e: &Element, name: &str) -> String {
    match abi_c_type(e) {
        _ if matches!(e, Element::Composite(_)) => format!("&{name}"),
        abi if abi == c_type(e) => name.to_string(),
        abi => format!("({abi}){name}"),
    }
}

/// Emits a chain's functors, `struct BASE_stage` (`bool operator()(T x, R
/// *out)`: whether the element is kept, its value in `*out`) and, but for
/// chain_collect, which combines nothing, `struct BASE_combine` (`R
/// operator()(R a, R b)` for chain_reduce, `bool operator()(R a, R b)`,
/// whether the later `b` wins over the earlier `a`, for chain_pick), and
/// returns the expressions that construct them, as the kernel passes them.
/// A C++ operation of chain_reduce or chain_pick keeps every element as
/// `(R)x` and is the combine's expression of `a` and `b`; one of
/// chain_collect is the stages': it keeps the elements `a` for which the
/// expression of `a` holds (a select's predicate, captures as `env.NAME`),
/// each as `(R)a`.
fn emit_chain_functors(
    out: &mut String,
    base: &str,
    provider: Provider,
    signature: &Signature,
    op: &Operation,
    env_type: Option<&str>,
    ties: crate::Ties,
) -> String {
    let (t, r) = (c_type(signature.element()), c_type(&signature.ret));
    let pick = provider == Provider::ChainPick;
    let collect = provider == Provider::ChainCollect;
    let combine_ret = if pick { "bool" } else { r.as_str() };
    // Every stage functor takes the element's index; an indexed chain's
    // thunk reads it, and the provider stores it with a kept element it
    // stages again (chain.cuh's `INDEXED`).
    let indexed = signature.is_indexed_chain();
    let stage_head = format!(
        "    static constexpr bool INDEXED = {indexed};\n    __device__ __forceinline__ bool operator()({t} x, unsigned long long i, {r} *out) const"
    );
    let combine_head =
        format!("    __device__ __forceinline__ {combine_ret} operator()({r} a, {r} b) const");
    let what = match (pick, ties) {
        (true, crate::Ties::Identical) => "    // Whether b, the later value, wins over a, the earlier one; the order\n    // holds only identical values equal (vocab::Ties::Identical).\n    static constexpr bool EQUAL_IS_IDENTICAL = true;",
        (true, crate::Ties::ByPosition) => "    // Whether b, the later value, wins over a, the earlier one.",
        (false, _) => "    // The fold of two kept values.",
    };
    let (stage, combine) = (format!("{base}_stage"), format!("{base}_combine"));
    let construct = |ty: &str, with_env: bool| match env_type {
        Some(_) if with_env => format!("{ty}{{&env}}"),
        _ => format!("{ty}{{}}"),
    };
    match op {
        Operation::Thunk { symbol, .. } => {
            let env_arg = if env_type.is_some() {
                "env"
            } else {
                "rcb::empty_env"
            };
            let env_member = env_type
                .map(|env| format!("    const {env} *env;\n"))
                .unwrap_or_default();
            let x = widened(signature.element(), "x");
            let (a, b) = (widened(&signature.ret, "a"), widened(&signature.ret, "b"));
            let i = if indexed { ", i" } else { "" };
            let unused = if indexed { "" } else { "(void)i; " };
            let _ = writeln!(
                out,
                "struct {stage} {{\n{env_member}{stage_head} {{ {unused}return {symbol}_stage({env_arg}, {x}{i}, out) != 0u; }}\n}};"
            );
            if collect {
                return construct(&stage, true);
            }
            let call =
                |out_name: &str| format!("{symbol}_combine({env_arg}, {a}, {b}, &{out_name})");
            let body = if pick {
                format!("{r} scratch; return {} != 0u;", call("scratch"))
            } else {
                format!("{r} value; {}; return value;", call("value"))
            };
            let _ = writeln!(
                out,
                "struct {combine} {{\n{env_member}{what}\n{combine_head} {{ {body} }}\n}};"
            );
            format!("{}, {}", construct(&stage, true), construct(&combine, true))
        }
        Operation::Cpp { expr } if collect => {
            let head = format!(
                "    static constexpr bool INDEXED = false;\n    __device__ __forceinline__ bool operator()({t} a, unsigned long long, {r} *out) const"
            );
            let body = format!(
                "\x20       if (!(bool)({expr})) return false;\n\
                 \x20       *out = ({r})a;\n\
                 \x20       return true;"
            );
            let why = "    // Keeps the elements for which the expression holds, as their values.";
            match env_type {
                Some(env) => {
                    let _ = writeln!(
                        out,
                        "struct {stage} {{\n\
                         \x20   const {env} *env_ptr;\n\
                         {why}\n\
                         {head} {{\n\
                         \x20       const {env} &env = *env_ptr;\n\
                         \x20       (void)env;\n\
                         {body}\n\
                         \x20   }}\n\
                         }};"
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "struct {stage} {{\n{why}\n{head} {{\n{body}\n\x20   }}\n}};"
                    );
                }
            }
            construct(&stage, true)
        }
        Operation::Cpp { expr } => {
            let _ = writeln!(
                out,
                "struct {stage} {{\n    // Every element is kept, as its value.\n{stage_head} {{ (void)i; *out = ({r})x; return true; }}\n}};"
            );
            match env_type {
                Some(env) => {
                    let _ = writeln!(
                        out,
                        "struct {combine} {{\n\
                         \x20   const {env} *env_ptr;\n\
                         {what}\n\
                         {combine_head} {{\n\
                         \x20       const {env} &env = *env_ptr;\n\
                         \x20       (void)env;\n\
                         \x20       return ({combine_ret})({expr});\n\
                         \x20   }}\n\
                         }};"
                    );
                }
                None => {
                    let _ = writeln!(
                        out,
                        "struct {combine} {{\n{what}\n{combine_head} {{ return ({combine_ret})({expr}); }}\n}};"
                    );
                }
            }
            format!(
                "{}, {}",
                construct(&stage, false),
                construct(&combine, true)
            )
        }
    }
}

/// A by-key's two thunk types ([`Shape::ByKey`]'s `(K, V) -> V`): `same`'s
/// `(K, K) -> bool` and `op`'s `(V, V) -> V`.
pub fn by_key_signatures(signature: &Signature) -> (Signature, Signature) {
    let (k, v) = (signature.element().clone(), signature.ret.clone());
    (Shape::Same.signature(k.clone(), k), Signature::fold(v))
}

/// Emits a by-key's two functors, `struct BASE_same_op` (`bool
/// operator()(K a, K b)`: whether `b`, the key after `a`, is of its run)
/// and `struct BASE_fold_op` (`V operator()(V a, V b)`), and returns the
/// expressions that construct them, as the kernel passes them. A C++
/// operation is the fold's expression, its keys' runs those of `==`.
fn emit_by_key_functors(
    out: &mut String,
    base: &str,
    signature: &Signature,
    op: &Operation,
    env_type: Option<&str>,
) -> String {
    let (same_sig, fold_sig) = by_key_signatures(signature);
    let (same, fold) = match op {
        Operation::Thunk { symbol, variant } => (
            Operation::Thunk {
                symbol: format!("{symbol}_same"),
                variant: *variant,
            },
            Operation::Thunk {
                symbol: format!("{symbol}_op"),
                variant: *variant,
            },
        ),
        Operation::Cpp { .. } => (
            Operation::Cpp {
                expr: "a == b".into(),
            },
            op.clone(),
        ),
    };
    let same = emit_functor(out, &format!("{base}_same"), &same_sig, &same, env_type);
    let fold = emit_functor(out, &format!("{base}_fold"), &fold_sig, &fold, env_type);
    format!("{same}, {fold}")
}

/// Emits `struct BASE_op` (the operation as CUB-style functor) and returns
/// the expression that constructs it inside a kernel.
fn emit_functor(
    out: &mut String,
    base: &str,
    signature: &Signature,
    op: &Operation,
    env_type: Option<&str>,
) -> String {
    let ty = format!("{base}_op");
    let ret = c_type(&signature.ret);
    let params: Vec<String> = signature
        .params
        .iter()
        .zip(["a", "b"])
        .map(|(s, n)| format!("{} {n}", c_type(s)))
        .collect();
    let head = format!(
        "    __device__ __forceinline__ {ret} operator()({}) const",
        params.join(", ")
    );
    let _ = writeln!(out, "struct {ty} {{");
    match op {
        Operation::Thunk { symbol, .. } => {
            // Narrow types widen to the thunk ABI's (a cast only there).
            let args: Vec<String> = signature
                .params
                .iter()
                .zip(["a", "b"])
                .map(|(s, n)| widened(s, n))
                .collect();
            let env_arg = if env_type.is_some() {
                "env"
            } else {
                "rcb::empty_env"
            };
            if let Element::Composite(_) = &signature.ret {
                // The thunk writes a composite result into `r`.
                if let Some(env) = env_type {
                    let _ = writeln!(out, "    const {env} *env;");
                }
                let _ = writeln!(
                    out,
                    "{head} {{\n        {ret} r;\n        {symbol}({env_arg}, {}, &r);\n        return r;\n    }}",
                    args.join(", ")
                );
                let _ = writeln!(out, "}};");
                return match env_type {
                    Some(_) => format!("{ty}{{&env}}"),
                    None => format!("{ty}{{}}"),
                };
            }
            let call = format!("{symbol}({env_arg}, {})", args.join(", "));
            let value = if signature.ret == Element::Scalar(Scalar::Bool) {
                format!("{call} != 0u")
            } else if abi_c_type(&signature.ret) == ret {
                call
            } else {
                format!("({ret}){call}")
            };
            if let Some(env) = env_type {
                let _ = writeln!(out, "    const {env} *env;");
            }
            let _ = writeln!(out, "{head} {{ return {value}; }}");
        }
        Operation::Cpp { expr } => match env_type {
            Some(env) => {
                let _ = writeln!(out, "    const {env} *env_ptr;");
                let _ = writeln!(
                    out,
                    "{head} {{\n\
                     \x20       const {env} &env = *env_ptr;\n\
                     \x20       (void)env;\n\
                     \x20       return ({ret})({expr});\n\
                     \x20   }}"
                );
            }
            None => {
                let _ = writeln!(out, "{head} {{ return ({ret})({expr}); }}");
            }
        },
    }
    let _ = writeln!(out, "}};");
    match env_type {
        Some(_) => format!("{ty}{{&env}}"),
        None => format!("{ty}{{}}"),
    }
}

/// Elements of T in one 16-byte vector: at least one (a composite is
/// moved an element at a time, `Vectorized` in providers/common.cuh).
fn vector_width(s: &Element) -> u32 {
    (16 / s.size().max(1)).max(1) as u32
}

/// A map's chunk: the elements of the widest 16-byte vector among its
/// types (4 for i32 -> i32, 16 for u8 -> f64), `transform.cuh`'s C.
fn map_chunk(signature: &Signature) -> u32 {
    signature
        .params
        .iter()
        .chain([&signature.ret])
        .map(vector_width)
        .max()
        .unwrap_or(4)
}

/// The bytes of one look-back descriptor of a `size`-byte value
/// (providers/lookback.cuh's `Desc`, which the scans' kernels assert):
/// 8 for values of up to 4 bytes, 16 for 8-byte ones, and for any other
/// size (a tuple or a struct) an 8-byte status and the value's words, in
/// whole 16-byte units. The runtime sizes the look-back state by it.
pub fn descriptor_bytes(size: u64) -> u64 {
    match size {
        0..=4 => 8,
        8 => 16,
        _ => (8 + size.next_multiple_of(4)).next_multiple_of(16),
    }
}

/// A scan kernel's assertion that its look-back descriptors of `t` are the
/// size the runtime allocates them at.
fn descriptor_fits(t: &str, size: u64) -> String {
    format!(
        "static_assert(sizeof(rcb::Desc<{t}>) == {}, \"the runtime's look-back descriptor\");\n    ",
        descriptor_bytes(size)
    )
}

/// A tile-stream kernel's first statement: its block storage fits the
/// dynamic shared memory it is launched with. `types` are the storage's
/// type arguments after the block and the items (`T`, or `T, R`).
fn storage_fits(storage: &str, launch: &LaunchFacts, types: &str) -> String {
    format!(
        "static_assert(sizeof(rcb::{storage}<{}, {}, {types}>) <= {}, \"the manifest's dynamic shared memory\");\n    ",
        launch.block_size, launch.items_per_thread, launch.dynamic_shared_bytes
    )
}

#[allow(clippy::too_many_arguments)]
fn emit_kernel(
    out: &mut String,
    name: &str,
    provider: Provider,
    stage: Stage,
    signature: &Signature,
    launch: &LaunchFacts,
    env_type: Option<&str>,
    functor: &str,
) -> Result<(), EmitError> {
    let block = launch.block_size;
    let items = launch.items_per_thread;
    let t = c_type(signature.element());
    let v = c_type(&signature.ret);
    let env_param = match env_type {
        Some(ty) => format!(",\n    const __grid_constant__ {ty} env"),
        None => String::new(),
    };
    let per_vector = |s: &Element, what: &str| -> Result<u32, EmitError> {
        let n = vector_width(s);
        if !items.is_multiple_of(n) {
            return Err(EmitError::Launch(format!(
                "{what}: items_per_thread {items} is not a whole number of 16-byte vectors of {}",
                s.name()
            )));
        }
        Ok(items / n)
    };
    let (params, body) = match (provider, stage) {
        (Provider::Reduce, _) => (
            format!(
                "const {t} *__restrict__ input, unsigned long long len, {t} init, rcb::Partial<{t}> *partials,\n\
                 \x20   unsigned int *counter, {t} *output"
            ),
            format!(
                "rcb::reduce<{block}, {}>(input, len, init, partials, counter, output, {functor});",
                per_vector(signature.element(), name)?
            ),
        ),
        (Provider::ChainReduce | Provider::ChainPick, _) => {
            let r = c_type(&signature.ret);
            let record = result_record(provider, signature)
                .map_or(0, |record| record.size);
            let (partial, init, call) = match provider {
                Provider::ChainReduce => (
                    "ChainPartial",
                    format!(" {r} init, unsigned int has_init,"),
                    "chain_reduce",
                ),
                _ => ("PickPartial", String::new(), "chain_pick"),
            };
            let args = if init.is_empty() { "" } else { " init, has_init," };
            (
                format!(
                    "const {t} *__restrict__ input, unsigned long long len,{init} rcb::{partial}<{r}> *partials,\n\
                     \x20   unsigned int *counter, rcb::{partial}<{r}> *output"
                ),
                format!(
                    "static_assert(sizeof(rcb::{partial}<{r}>) == {record}, \"the runtime's result record\");\n\
                     \x20   rcb::{call}<{block}, {}>(input, len,{args} partials, counter, output, {functor});",
                    per_vector(signature.element(), name)?
                ),
            )
        }
        (Provider::InclusiveScan, _) => (
            format!(
                "const {t} *__restrict__ input, unsigned long long len, {t} init, unsigned int has_init,\n\
                 \x20   {t} *__restrict__ output, void *state, unsigned int epoch"
            ),
            format!(
                "{}{}rcb::scan<{block}, {items}, false>(input, len, init, has_init != 0, output, state, epoch, {functor});",
                storage_fits("ScanStorage", launch, &t),
                descriptor_fits(&t, signature.element().size())
            ),
        ),
        (Provider::ExclusiveScan, _) => (
            format!(
                "const {t} *__restrict__ input, unsigned long long len, {t} init, {t} *__restrict__ output,\n\
                 \x20   void *state, unsigned int epoch"
            ),
            format!(
                "{}{}rcb::scan<{block}, {items}, true>(input, len, init, true, output, state, epoch, {functor});",
                storage_fits("ScanStorage", launch, &t),
                descriptor_fits(&t, signature.element().size())
            ),
        ),
        (Provider::Transform, _) => {
            let u = c_type(&signature.ret);
            let chunk = map_chunk(signature);
            (
                format!(
                    "const {t} *__restrict__ input, unsigned long long len, {u} *__restrict__ output"
                ),
                format!(
                    "rcb::transform<{block}, {}>(input, len, output, {functor});",
                    unroll(items, chunk, name)?
                ),
            )
        }
        (Provider::Transform2, _) => {
            let u = c_type(&signature.params[1]);
            let v = c_type(&signature.ret);
            let chunk = map_chunk(signature);
            (
                format!(
                    "const {t} *__restrict__ a, const {u} *__restrict__ b, unsigned long long len,\n\
                     \x20   {v} *__restrict__ output"
                ),
                format!(
                    "rcb::transform2<{block}, {}>(a, b, len, output, {functor});",
                    unroll(items, chunk, name)?
                ),
            )
        }
        (Provider::SegmentedReduce, _) => (
            format!(
                "const {t} *__restrict__ input, const unsigned long long *__restrict__ offsets,\n\
                 \x20   unsigned long long segments, {t} init, {t} *__restrict__ output, unsigned int per_block"
            ),
            format!(
                "rcb::segmented_reduce<{block}, {}>(input, offsets, segments, init, output, per_block, {functor});",
                per_vector(signature.element(), name)?
            ),
        ),
        // select.cuh's compaction: dedup_by's rule keeps the first of each
        // run; partition's writes the rejected elements to a second array.
        (Provider::Select | Provider::DedupBy | Provider::Partition, _) => {
            let rule = match provider {
                Provider::DedupBy => "keep_first",
                _ => "keep_if",
            };
            let (rejected, rejects, rejected_arg) = match provider {
                Provider::Partition => (format!("{t} *__restrict__ rejected, "), ", true", ", rejected"),
                _ => (String::new(), "", ""),
            };
            (
                format!(
                    "const {t} *__restrict__ input, unsigned long long len, {t} *__restrict__ output,\n\
                     \x20   {rejected}unsigned long long *count, void *state, unsigned int epoch"
                ),
                format!(
                    "{}rcb::select<{block}, {items}{rejects}>(input, len, output, count, state, epoch, rcb::{rule}({functor}){rejected_arg});",
                    storage_fits("SelectStorage", launch, &t)
                ),
            )
        }
        (Provider::ChainCollect, _) => {
            let r = c_type(&signature.ret);
            (
                format!(
                    "const {t} *__restrict__ input, unsigned long long len, {r} *__restrict__ output,\n\
                     \x20   unsigned long long *count, void *state, unsigned int epoch"
                ),
                format!(
                    "{}rcb::chain_collect<{block}, {items}>(input, len, output, count, state, epoch, {functor});",
                    storage_fits(
                        "CollectStorage",
                        launch,
                        &format!("{t}, {r}, {}", signature.is_indexed_chain())
                    )
                ),
            )
        }
        (Provider::PartitionPoint, _) => {
            let q = c_type(&signature.params[1]);
            (
                format!(
                    "const {t} *__restrict__ sorted, unsigned long long len, const {q} *__restrict__ queries,\n\
                     \x20   unsigned long long count, unsigned long long *__restrict__ output"
                ),
                format!("rcb::partition_point<{block}, {items}>(sorted, len, queries, count, output, {functor});"),
            )
        }
        (Provider::Histogram, _) => (
            format!(
                "const {t} *__restrict__ input, unsigned long long len, unsigned long long bins,\n\
                 \x20   unsigned long long *__restrict__ output"
            ),
            format!(
                "rcb::histogram<{block}, {}>(input, len, bins, output, {functor});",
                per_vector(signature.element(), name)?
            ),
        ),
        (Provider::MergeBy, Stage::Partition) => (
            format!(
                "const {t} *a, unsigned long long len, const {t} *b, unsigned long long len2,\n\
                 \x20   unsigned long long num_partitions, unsigned long long *partitions"
            ),
            format!("rcb::merge_partition(a, len, b, len2, num_partitions, partitions, {functor});"),
        ),
        (Provider::MergeBy, _) => (
            format!(
                "const {t} *a, unsigned long long len, const {t} *b, unsigned long long len2, {t} *output,\n\
                 \x20   unsigned long long *partitions"
            ),
            format!(
                "static_assert(rcb::MergePolicy<{t}>::ITEMS == {items}, \"the manifest's items per thread\");\n\
                 \x20   rcb::merge(a, len, b, len2, output, partitions, {functor});"
            ),
        ),
        (Provider::ReduceByKey, Stage::Init) => (
            "void *state, unsigned long long state_bytes, unsigned long long len, unsigned long long *count"
                .to_string(),
            format!("rcb::reduce_by_key_init<{t}, {v}>(state, state_bytes, len, count);"),
        ),
        (Provider::ReduceByKey, _) => (
            format!(
                "const {t} *__restrict__ keys, const {v} *__restrict__ values, unsigned long long len,\n\
                 \x20   {t} *unique, {v} *aggregates, unsigned long long *count, void *state,\n\
                 \x20   unsigned long long state_bytes"
            ),
            format!(
                "static_assert(rcb::ReduceByKeyPolicy<{t}, {v}>::ITEMS == {items} && rcb::ReduceByKeyPolicy<{t}, {v}>::BLOCK == {block},\n\
                 \x20                 \"the manifest's launch facts\");\n\
                 \x20   rcb::reduce_by_key(keys, values, len, unique, aggregates, count, state, state_bytes, {functor});"
            ),
        ),
        (Provider::ScanByKey, Stage::Init) => (
            format!(
                "const {t} *__restrict__ keys, unsigned long long len, void *state, unsigned long long state_bytes,\n\
                 \x20   {t} *prev"
            ),
            format!("rcb::scan_by_key_init<{t}, {v}>(keys, len, state, state_bytes, prev);"),
        ),
        (Provider::ScanByKey, _) => (
            format!(
                "const {t} *__restrict__ keys, const {v} *__restrict__ values, unsigned long long len,\n\
                 \x20   {v} *output, void *state, unsigned long long state_bytes, {t} *prev"
            ),
            format!(
                "static_assert(rcb::ScanByKeyPolicy<{t}, {v}>::ITEMS == {items} && rcb::ScanByKeyPolicy<{t}, {v}>::BLOCK == {block},\n\
                 \x20                 \"the manifest's launch facts\");\n\
                 \x20   rcb::scan_by_key(keys, values, len, output, state, state_bytes, prev, {functor});"
            ),
        ),
        (Provider::SegmentedSortBy, Stage::Tag) => (
            format!(
                "const {t} *__restrict__ input, unsigned int len, const unsigned long long *__restrict__ offsets,\n\
                 \x20   unsigned long long segments, rcb::Segmented<{t}> *__restrict__ tagged"
            ),
            format!(
                "static_assert(sizeof(rcb::Segmented<{t}>) == {}, \"the manifest's tagged element\");\n\
                 \x20   rcb::segmented_tag(input, len, offsets, segments, tagged);",
                tagged_size(signature.element())
            ),
        ),
        (Provider::SegmentedSortBy, Stage::Untag) => (
            format!(
                "const rcb::Segmented<{t}> *__restrict__ tagged, unsigned int len, {t} *__restrict__ output"
            ),
            "rcb::segmented_untag(tagged, len, output);".to_string(),
        ),
        (Provider::SegmentedSortBy, Stage::PackSort) => (
            format!(
                "const {t} *__restrict__ input, {t} *__restrict__ output, const unsigned long long *__restrict__ offsets,\n\
                 \x20   unsigned long long segments, const unsigned int *__restrict__ packs"
            ),
            format!(
                "static_assert(rcb::SortPolicy<rcb::Segmented<{t}>>::ITEMS == {items}, \"the manifest's items per thread\");\n\
                 \x20   rcb::pack_sort<{block}, {items}>(input, output, offsets, packs, rcb::segmented_less<{t}>({functor}, segments));"
            ),
        ),
        (Provider::SegmentedSortBy, Stage::Partition) => (
            format!(
                "bool ping, rcb::Segmented<{t}> *tagged, rcb::Segmented<{t}> *buffer, unsigned int len,\n\
                 \x20   unsigned int num_partitions, unsigned int *partitions, unsigned int target, int items_per_tile,\n\
                 \x20   unsigned long long segments"
            ),
            format!(
                "rcb::sort_partition(ping, tagged, buffer, len, num_partitions, partitions, target, items_per_tile,\n\
                 \x20                        rcb::segmented_less<{t}>({functor}, segments));"
            ),
        ),
        (Provider::SegmentedSortBy, Stage::Merge) => (
            format!(
                "bool ping, rcb::Segmented<{t}> *tagged, unsigned int len, rcb::Segmented<{t}> *buffer,\n\
                 \x20   unsigned int *partitions, unsigned int target, unsigned long long segments"
            ),
            format!(
                "static_assert(rcb::SortPolicy<rcb::Segmented<{t}>>::ITEMS == {items}, \"the manifest's items per thread\");\n\
                 \x20   rcb::sort_merge(ping, tagged, len, buffer, partitions, target, rcb::segmented_less<{t}>({functor}, segments));"
            ),
        ),
        (Provider::SegmentedSortBy, _) => (
            format!(
                "bool ping, rcb::Segmented<{t}> *tagged, unsigned int len, rcb::Segmented<{t}> *buffer,\n\
                 \x20   unsigned long long segments"
            ),
            format!(
                "static_assert(rcb::SortPolicy<rcb::Segmented<{t}>>::ITEMS == {items}, \"the manifest's items per thread\");\n\
                 \x20   rcb::sort_block(ping, tagged, tagged, len, buffer, rcb::segmented_less<{t}>({functor}, segments));"
            ),
        ),
        (Provider::SortBy, Stage::Partition) => (
            format!(
                "bool ping, {t} *output, {t} *buffer, unsigned int len, unsigned int num_partitions,\n\
                 \x20   unsigned int *partitions, unsigned int target, int items_per_tile"
            ),
            format!(
                "rcb::sort_partition(ping, output, buffer, len, num_partitions, partitions, target, items_per_tile,\n\
                 \x20                        {functor});"
            ),
        ),
        (Provider::SortBy, Stage::Merge) => (
            format!(
                "bool ping, {t} *output, unsigned int len, {t} *buffer, unsigned int *partitions,\n\
                 \x20   unsigned int target"
            ),
            format!(
                "static_assert(rcb::SortPolicy<{t}>::ITEMS == {items}, \"the manifest's items per thread\");\n\
                 \x20   rcb::sort_merge(ping, output, len, buffer, partitions, target, {functor});"
            ),
        ),
        (Provider::SortBy, _) => (
            format!("bool ping, const {t} *input, {t} *output, unsigned int len, {t} *buffer"),
            format!(
                "static_assert(rcb::SortPolicy<{t}>::ITEMS == {items}, \"the manifest's items per thread\");\n\
                 \x20   rcb::sort_block(ping, input, output, len, buffer, {functor});"
            ),
        ),
    };
    let bounds = launch_bounds(launch);
    let _ = write!(
        out,
        "extern \"C\" __global__ void __launch_bounds__({bounds}) {name}(\n\
         \x20   {params}{env_param}) {{\n\
         \x20   {body}\n\
         }}\n"
    );
    Ok(())
}

/// A kernel's `__launch_bounds__` arguments: its threads, and the blocks a
/// multiprocessor it is compiled to fit where the facts ask for some.
fn launch_bounds(launch: &LaunchFacts) -> String {
    let threads = launch.threads();
    match launch.min_blocks_per_sm {
        0 => threads.to_string(),
        m => format!("{threads}, {m}"),
    }
}

/// A transform's chunks in flight per thread, from its items per thread.
fn unroll(items: u32, chunk: u32, name: &str) -> Result<u32, EmitError> {
    if !items.is_multiple_of(chunk) {
        return Err(EmitError::Launch(format!(
            "{name}: items_per_thread {items} is not a whole number of chunks of {chunk}"
        )));
    }
    Ok(items / chunk)
}

fn check_expr(registration: RegistrationId, expr: &str) -> Result<(), EmitError> {
    let fail = |why: &str| EmitError::Expr {
        registration,
        expr: expr.to_string(),
        why: why.to_string(),
    };
    if expr.trim().is_empty() {
        return Err(fail("is empty"));
    }
    // One expression, not statements or preprocessor lines smuggled in.
    if let Some(c) = expr
        .chars()
        .find(|c| matches!(c, ';' | '{' | '}' | '#' | '\\') || c.is_control())
    {
        return Err(fail(&format!(
            "contains {c:?}, which no single expression needs"
        )));
    }
    Ok(())
}

/// Emits the environment struct and its `static_assert`s; returns its type
/// name, or `None` for an empty environment (which has no struct).
fn emit_env_struct(
    out: &mut String,
    kernel: &str,
    registration: RegistrationId,
    env: &EnvLayout,
) -> Result<Option<String>, EmitError> {
    env.check().map_err(|source| EmitError::Layout {
        registration,
        source,
    })?;
    if env.is_empty() {
        let _ = writeln!(
            out,
            "// No captures: the thunk gets rcb::empty_env, which it never reads."
        );
        return Ok(None);
    }
    let names = c_field_names(env);
    for (i, name) in names.iter().enumerate() {
        if let Some(j) = names[..i].iter().position(|n| n == name) {
            return Err(EmitError::FieldCollision {
                registration,
                first: env.fields[j].name.clone(),
                second: env.fields[i].name.clone(),
                c_name: name.clone(),
            });
        }
    }
    let ty = format!("{kernel}_env");
    let _ = writeln!(out, "struct {ty} {{");
    // Members in memory order (rustc's layout is not declaration order).
    let mut members: Vec<(&crate::env::EnvField, &String)> =
        env.fields.iter().zip(&names).collect();
    members.sort_by_key(|(f, _)| f.offset);
    let mut at = 0u64;
    for (field, c_name) in members {
        if field.offset > at {
            let _ = writeln!(
                out,
                "    unsigned char rcb_pad_{at}[{}];",
                field.offset - at
            );
        }
        let _ = writeln!(
            out,
            "    {} {c_name};  // capture `{}`: {}, offset {}",
            field.scalar.c_type().unwrap_or("void"),
            field.name,
            field.scalar,
            field.offset
        );
        at = field.offset + field.size;
    }
    if env.size > at {
        let _ = writeln!(out, "    unsigned char rcb_pad_{at}[{}];", env.size - at);
    }
    let _ = writeln!(out, "}};");
    let what = format!("environment ABI of registration {registration}");
    let _ = writeln!(
        out,
        "static_assert(sizeof({ty}) == {}, \"{what}: size\");",
        env.size
    );
    let _ = writeln!(
        out,
        "static_assert(alignof({ty}) == {}, \"{what}: alignment\");",
        env.align
    );
    // Every field sits at a multiple of its alignment right after the
    // previous member (padding is explicit), so once each field's size and
    // alignment and the total size match, the compiler has inserted no
    // padding of its own and every offset is ours. NVRTC has no constant
    // offsetof, so there that argument is the check; nvcc checks the offsets
    // directly as well.
    let _ = writeln!(out, "#if !defined(__CUDACC_RTC__)");
    for (field, c_name) in env.fields.iter().zip(&names) {
        let _ = writeln!(
            out,
            "static_assert(__builtin_offsetof({ty}, {c_name}) == {}, \"{what}: offset of `{}`\");",
            field.offset, field.name
        );
    }
    let _ = writeln!(out, "#endif");
    for (field, c_name) in env.fields.iter().zip(&names) {
        let f = &field.name;
        let _ = writeln!(
            out,
            "static_assert(sizeof({ty}::{c_name}) == {}, \"{what}: size of `{f}`\");",
            field.size
        );
        let _ = writeln!(
            out,
            "static_assert(alignof(decltype({ty}::{c_name})) == {}, \"{what}: alignment of `{f}`\");",
            field.align
        );
    }
    Ok(Some(ty))
}

/// The radix sort's launch facts for elements `element` (CUB's sm_90
/// policy for a keys-only sort with 32-bit offsets, which
/// providers/radix.cuh instantiates and the kernels assert): the histogram
/// as many blocks as are resident, the scan a block a pass, the onesweep
/// pass a block a tile.
///
/// With a `key` of its own (`vocab::SortChoice::sorted_key`), CUB's
/// policy for pairs (`key`, `element`), or (`key`, a 32-bit index) where
/// the sort gathers (`vocab::radix_gathers`); the key kernel and the
/// gather a thread an element at a time over the resident blocks.
///
/// The onesweep pass is compiled for two blocks a multiprocessor
/// ([`RADIX_PASS_MIN_BLOCKS`]).
pub fn radix_launch(stage: Stage, element: &Element, key: Option<&Element>) -> LaunchFacts {
    let mut min_blocks = 0;
    let (block, items, grid) = match stage {
        Stage::RadixHistogram => (128, 16, GridPolicy::ResidentTiles),
        Stage::RadixScan => (256, 1, GridPolicy::OneBlockPerTile),
        Stage::RadixKeys | Stage::RadixGather => (256, 1, GridPolicy::ResidentTiles),
        _ => {
            let value = match vocab::radix_gathers(element) {
                true => 4,
                false => element.size() as u32,
            };
            let (block, items) = match key {
                None => radix_onesweep_policy(element.size() as u32, None),
                Some(k) => radix_onesweep_policy(k.size() as u32, Some(value)),
            };
            min_blocks = RADIX_PASS_MIN_BLOCKS;
            (block, items, GridPolicy::OneBlockPerTile)
        }
    };
    LaunchFacts {
        block_size: block,
        items_per_thread: items,
        dynamic_shared_bytes: 0,
        grid,
        min_blocks_per_sm: min_blocks,
        extra_warps: 0,
    }
}

/// Blocks a multiprocessor the onesweep pass is compiled to fit (its
/// `__launch_bounds__`): at 384 threads, at most 80 registers. Left to
/// itself, ptxas gave the pass of (key, index) pairs 95-109 registers
/// once its buffers came from one route word, so that one block ran a
/// multiprocessor where two had (docs/perf.md, "Radix passes at two
/// blocks a multiprocessor"); CUB's own pass asks for the block's threads
/// alone.
pub const RADIX_PASS_MIN_BLOCKS: u32 = 2;

/// CUB's onesweep policy on sm_90 for sorts of `key`-byte keys, alone or
/// with `value`-byte values, with 32-bit offsets: (threads, items a
/// thread), its nominal figures (`sm90_small_key_tuning` below 4-byte
/// keys) scaled by the larger of key and value (`RegBoundScaling`).
fn radix_onesweep_policy(key: u32, value: Option<u32>) -> (u32, u32) {
    let (threads, nominal) = match (key, value) {
        (1 | 2, None) => (512, 19),
        (1, Some(1)) => (512, 15),
        (1, Some(2 | 4)) => (512, 17),
        (1, Some(8)) => (384, 23),
        (1, Some(16)) => (512, 22),
        (2, Some(1)) => (384, 14),
        (2, Some(2)) => (384, 15),
        (2, Some(4)) => (512, 17),
        (2, Some(8)) => (384, 23),
        (2, Some(16)) => (512, 21),
        (1..=3, _) => (384, 23),
        (4, None) => (384, 20),
        (4, Some(v)) => (384, if v < 8 { 23 } else { 30 }),
        (_, None) => (384, 30),
        (_, Some(v)) => (384, if v < 8 { 30 } else { 24 }),
    };
    let dominant = key.max(value.unwrap_or(0));
    let items = (nominal * 4 / dominant.max(4)).max(1);
    // At most 48 KB of shared memory a block (`max_smem_per_block`).
    let fit = (49_152 / (dominant * items)).div_ceil(32) * 32;
    (threads.min(fit), items)
}

/// What the passes of a radix sort move: the elements as CUB's keys, a
/// computed key with its element, or a key with its element's index (the
/// elements gathered after).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RadixMoves {
    Elements,
    KeysAndElements,
    KeysAndIndices,
}

impl RadixMoves {
    /// For a radix sort of `element`s, on a `computed` key or not.
    pub fn of(element: &Element, computed: bool) -> RadixMoves {
        match (vocab::radix_gathers(element), computed) {
            (true, _) => RadixMoves::KeysAndIndices,
            (false, true) => RadixMoves::KeysAndElements,
            (false, false) => RadixMoves::Elements,
        }
    }
}

/// A radix sort's kernels, in launch order: with a key kernel where it
/// ranks a key of its own (computed, or the fields packed where it
/// gathers), and a gather last where it gathers.
pub fn radix_stages(element: &Element, computed: bool) -> Vec<Stage> {
    let moves = RadixMoves::of(element, computed);
    let keys = (moves != RadixMoves::Elements).then_some(Stage::RadixKeys);
    let gather = (moves == RadixMoves::KeysAndIndices).then_some(Stage::RadixGather);
    keys.into_iter().chain(Stage::RADIX).chain(gather).collect()
}

/// The radix sort kernels' parameters, for passes that move `moves`: a
/// sort of keys of its own has a histogram that reads them and passes
/// that move them with the elements or their indices; the key kernel of a
/// computed key takes the environment `env`.
pub fn radix_params(stage: Stage, moves: RadixMoves, env: Option<&EnvLayout>) -> Vec<Param> {
    use ParamKind as K;
    let computed = moves != RadixMoves::Elements;
    let indices = moves == RadixMoves::KeysAndIndices;
    let ptr = |kind| Param {
        kind,
        size: 8,
        align: 8,
    };
    let int = |kind| Param {
        kind,
        size: 4,
        align: 4,
    };
    let keys = if computed { K::RadixKeys } else { K::Input };
    let mut params = match stage {
        Stage::RadixKeys if indices => vec![
            ptr(K::Input),
            ptr(K::RadixKeysOut),
            ptr(K::RadixIndices),
            int(K::Len),
        ],
        Stage::RadixKeys => vec![ptr(K::Input), ptr(K::RadixKeysOut), int(K::Len)],
        Stage::RadixGather => vec![
            ptr(K::Output),
            ptr(K::Input),
            ptr(K::RadixIndices),
            ptr(K::RadixTrivial),
            int(K::Len),
            int(K::EndBit),
        ],
        Stage::RadixHistogram => vec![ptr(K::RadixBins), ptr(keys), int(K::Len), int(K::EndBit)],
        Stage::RadixScan => vec![
            ptr(K::RadixBins),
            int(K::Len),
            int(K::EndBit),
            ptr(K::RadixTrivial),
        ],
        _ => {
            let mut p = vec![
                ptr(K::RadixLookback),
                ptr(K::RadixCounter),
                ptr(K::RadixBinsOut),
                ptr(K::RadixBins),
                ptr(K::RadixTrivial),
            ];
            if computed {
                p.push(ptr(K::RadixKeys));
            }
            if indices {
                p.push(ptr(K::RadixIndices));
            } else {
                p.extend([ptr(K::Output), ptr(K::Input), ptr(K::Buffer)]);
            }
            p.extend([
                int(K::Len),
                int(K::PortionStart),
                int(K::PortionLen),
                int(K::CurrentBit),
                int(K::EndBit),
            ]);
            p
        }
    };
    if let Some(env) = env.filter(|e| stage == Stage::RadixKeys && !e.is_empty()) {
        params.push(Param {
            kind: K::Env,
            size: env.size,
            align: env.align,
        });
    }
    params
}

/// The C++ type of a radix key: `rcb::RadixKey<Bits, Order, Descending>`.
fn radix_key_type(key: &vocab::RadixKey) -> String {
    let bits = bits_type(key.scalar);
    let order = match key.order {
        vocab::KeyOrder::Unsigned => "rcb::RADIX_UNSIGNED",
        vocab::KeyOrder::Signed => "rcb::RADIX_SIGNED",
        vocab::KeyOrder::Total => "rcb::RADIX_TOTAL",
    };
    format!("rcb::RadixKey<{bits}, {order}, {}>", key.descending)
}

/// The unsigned C type of a scalar's bits.
fn bits_type(s: Scalar) -> &'static str {
    match s.size() {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        _ => "unsigned long long",
    }
}

/// A registration's radix sort kernels: for a scalar element sorted on
/// itself, CUB's key is one `RadixKey` over the element's bits; for a
/// composite, the element with a decomposer naming its key fields. With a
/// `computed` key, those are the key's, which a kernel computes first with
/// the key thunk, and the passes move each element with its key. Elements
/// of `vocab::RADIX_GATHER_BYTES` and more are not moved by the passes:
/// the key kernel writes each element's key (computed, or its key fields
/// packed, `vocab::packed_key`) and index, the passes move (key, index)
/// pairs, and a last kernel gathers the elements by the sorted indices.
fn emit_radix(
    out: &mut String,
    registration: RegistrationId,
    element: &Element,
    keys: &[vocab::RadixKey],
    computed: Option<&ComputedKey>,
) -> Result<Vec<Kernel>, EmitError> {
    let provider = Provider::SortBy;
    let name = |stage| kernel_name(provider, element, Some(registration), Variant::Plain, stage);
    let base = name(Stage::RadixPass);
    let moves = RadixMoves::of(element, computed.is_some());
    let gathers = moves == RadixMoves::KeysAndIndices;
    // The element's key fields, where the keys are read out of it (a
    // gathering sort on the element's own fields).
    let fields = if gathers && computed.is_none() {
        Some(keys)
    } else {
        None
    };
    // What CUB ranks: the element, the computed key, or the key fields
    // packed; with the radix keys on it.
    let packed;
    let (sorted, keys) = match (computed, fields) {
        (Some(c), _) => (&c.key, keys),
        (None, Some(fields)) => {
            packed = vocab::packed_key(fields)
                .ok_or_else(|| EmitError::Launch(format!("{base}: a radix sort needs a key")))?;
            (&packed.0, packed.1.as_slice())
        }
        (None, None) => (element, keys),
    };
    // The key CUB ranks where it is not the element.
    let own_key = (moves != RadixMoves::Elements).then_some(sorted);
    let key_fits = |keys: &[vocab::RadixKey], whole: &Element| {
        !keys.is_empty()
            && keys
                .iter()
                .all(|k| k.scalar.size() <= 8 && k.offset + k.scalar.size() <= whole.size())
    };
    if !key_fits(keys, sorted) || fields.is_some_and(|f| !key_fits(f, element)) {
        return Err(EmitError::Launch(format!(
            "{base}: radix keys {keys:?} do not fit the key `{}`",
            sorted.name()
        )));
    }
    let _ = writeln!(
        out,
        "\n// ---- {base}: sort_by's radix sort `{}`, registration {registration}, on {}{}{}",
        element.name(),
        match (computed, fields) {
            (Some(c), _) => format!("the computed key `{}`: ", c.key.name()),
            (None, Some(_)) => format!("the key `{}` of the element's fields: ", sorted.name()),
            (None, None) => String::new(),
        },
        keys.iter()
            .map(|k| k.describe(if own_key.is_some() { "key" } else { "element" }))
            .collect::<Vec<_>>()
            .join(", then "),
        if gathers {
            "; (key, index) pairs sorted, the elements gathered"
        } else {
            ""
        }
    );
    let (key_type, decomposer) = match (sorted, keys) {
        (Element::Scalar(s), [k]) if k.offset == 0 && k.scalar.size() == s.size() => (
            radix_key_type(k),
            "cub::detail::identity_decomposer_t{}".to_string(),
        ),
        _ => {
            let Element::Composite(l) = sorted else {
                return Err(EmitError::Launch(format!(
                    "{base}: a scalar key sorts on itself alone"
                )));
            };
            out.push_str(&composite_struct(l));
            let c = composite_c_name(l);
            let types: Vec<String> = keys.iter().map(radix_key_type).collect();
            let refs: Vec<String> = types.iter().map(|t| format!("{t} &")).collect();
            let fields: Vec<String> = keys
                .iter()
                .zip(&types)
                .map(|(k, t)| format!("rcb::radix_field<{t}>(e, {})", k.offset))
                .collect();
            let _ = writeln!(
                out,
                "struct {base}_keys {{\n\
                 \x20   __host__ __device__ cuda::std::tuple<{}> operator()({c} &e) const {{\n\
                 \x20       return {{{}}};\n\
                 \x20   }}\n}};",
                refs.join(", "),
                fields.join(", ")
            );
            (c, format!("{base}_keys{{}}"))
        }
    };
    let t = c_type(element);
    if let Element::Composite(l) = element {
        out.push_str(&composite_struct(l));
    }
    // The key's C type (the element's where the elements are CUB's keys),
    // the key thunk's declaration and the environment; CUB's values.
    let (k, env_type) = match computed {
        Some(c) => {
            let env_type = emit_env_struct(out, &base, registration, &c.env)?;
            let x = match element {
                Element::Composite(_) => format!("const {t} *x"),
                e => format!("{} x", abi_c_type(e)),
            };
            let k = c_type(&c.key);
            let _ = writeln!(
                out,
                "extern \"C\" __device__ void {}(const void *env, {x}, {k} *out);",
                c.thunk
            );
            (k, env_type)
        }
        None => (c_type(sorted), None),
    };
    let value = match moves {
        RadixMoves::Elements => "cub::NullType".to_string(),
        RadixMoves::KeysAndElements => t.clone(),
        RadixMoves::KeysAndIndices => "unsigned int".to_string(),
    };
    let facts = format!("rcb::RadixFacts<{key_type}, {value}>");
    let mut kernels = Vec::new();
    for stage in radix_stages(element, computed.is_some()) {
        let launch = radix_launch(stage, element, own_key);
        let kname = name(stage);
        let (params, body) = match stage {
            Stage::RadixKeys => {
                let (env_param, env_arg) = match &env_type {
                    Some(ty) => (format!(", const __grid_constant__ {ty} env"), "&env"),
                    None => (String::new(), "rcb::empty_env"),
                };
                let (index_param, index) = match gathers {
                    true => (
                        ", unsigned int *indices",
                        "\n\x20       indices[i] = (unsigned int)i;",
                    ),
                    false => ("", ""),
                };
                // The key built in a zeroed local: a tuple key's padding
                // is written too, as zeros.
                let make = match fields {
                    // Each key field's bits copied from the element to
                    // their place in the packed key.
                    Some(fields) => fields
                        .iter()
                        .zip(keys)
                        .map(|(from, to)| {
                            let b = bits_type(from.scalar);
                            format!(
                                "\n\x20       *reinterpret_cast<{b} *>(reinterpret_cast<unsigned char *>(&key) + {}) =\n\
                                 \x20           *reinterpret_cast<const {b} *>(reinterpret_cast<const unsigned char *>(input + i) + {});",
                                to.offset, from.offset
                            )
                        })
                        .collect::<String>(),
                    None => format!(
                        "\n\x20       {}({env_arg}, {}, &key);",
                        computed.map_or("", |c| &c.thunk),
                        widened(element, "input[i]")
                    ),
                };
                (
                    format!(
                        "const {t} *input, {k} *keys_out{index_param}, unsigned int len{env_param}"
                    ),
                    format!(
                        "for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < len;\n\
                         \x20        i += (unsigned long long)gridDim.x * blockDim.x) {{\n\
                         \x20       {k} key{{}};{make}\n\
                         \x20       keys_out[i] = key;{index}\n\
                         \x20   }}"
                    ),
                )
            }
            Stage::RadixHistogram => (
                format!("unsigned int *bins, const {k} *input, unsigned int len, int end_bit"),
                format!(
                    "static_assert({facts}::HISTOGRAM_BLOCK == {}, \"the manifest's launch facts\");\n\
                     \x20   rcb::radix_histogram<{key_type}>(bins, reinterpret_cast<const {key_type} *>(input), len, end_bit, {decomposer});",
                    launch.block_size
                ),
            ),
            Stage::RadixScan => (
                "unsigned int *bins, unsigned int len, int end_bit, unsigned int *trivial".to_string(),
                format!(
                    "static_assert({facts}::SCAN_BLOCK == {}, \"the manifest's launch facts\");\n\
                     \x20   rcb::radix_exclusive_sum<{key_type}>(bins, len, end_bit, trivial);",
                    launch.block_size
                ),
            ),
            Stage::RadixGather => (
                format!(
                    "{t} *output, const {t} *input, const unsigned int *indices, const unsigned int *trivial,\n\
                     \x20   unsigned int len, int end_bit"
                ),
                "rcb::radix_gather(output, input, indices, trivial, len, end_bit);".to_string(),
            ),
            _ => {
                let passes = "unsigned int n, unsigned int start, int len, int current_bit, int end_bit";
                let head = "int *lookback, int *counter, unsigned int *bins_out, const unsigned int *bins,\n\
                            \x20   const unsigned int *trivial";
                let check = format!(
                    "static_assert({facts}::ONESWEEP_BLOCK == {} && {facts}::ONESWEEP_ITEMS == {},\n\
                     \x20                 \"the manifest's launch facts\");",
                    launch.block_size, launch.items_per_thread
                );
                match moves {
                    RadixMoves::KeysAndIndices => (
                        format!("{head}, {k} *keys, unsigned int *indices,\n\x20   {passes}"),
                        format!(
                            "{check}\n\
                             \x20   rcb::radix_pass_indexed<{key_type}>(lookback, counter, bins_out, bins, trivial,\n\
                             \x20       reinterpret_cast<{key_type} *>(keys), indices, n, start, len, current_bit >> 3, end_bit, {decomposer});"
                        ),
                    ),
                    _ => {
                        let (key_params, key_args) = match computed {
                            Some(_) => (
                                format!("{k} *keys, "),
                                format!("reinterpret_cast<{key_type} *>(keys), n"),
                            ),
                            None => (String::new(), format!("({key_type} *)nullptr, 0u")),
                        };
                        (
                            format!(
                                "{head}, {key_params}{t} *output, const {t} *input, {t} *buffer,\n\x20   {passes}"
                            ),
                            format!(
                                "{check}\n\
                                 \x20   rcb::radix_pass<{key_type}, {value}>(lookback, counter, bins_out, bins, trivial, {key_args},\n\
                                 \x20       output, input, buffer, start, len, current_bit >> 3, end_bit, {decomposer});"
                            ),
                        )
                    }
                }
            }
        };
        let _ = write!(
            out,
            "extern \"C\" __global__ void __launch_bounds__({}) {kname}(\n\
             \x20   {params}) {{\n\
             \x20   {body}\n\
             }}\n",
            launch_bounds(&launch)
        );
        kernels.push(Kernel {
            name: kname,
            kind: KernelKind::Provider(provider),
            stage,
            variant: Variant::Plain,
            registration: Some(registration),
            thunk: match stage {
                Stage::RadixKeys => computed.map(|c| c.thunk.clone()),
                _ => None,
            },
            params: radix_params(stage, moves, computed.map(|c| &c.env)),
            launch,
            cubin: None,
        });
    }
    Ok(kernels)
}
