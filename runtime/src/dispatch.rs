//! Running a registration's provider on device buffers: its kernels in
//! stage order, the grids, and the device memory each needs besides its
//! inputs and output ([`Scratch`]). What `native::gpu` runs
//! (`host.rs`), and what the benchmarks and the validation time and check.
//!
//! The look-back state of the scans, select and chain_collect is never
//! cleared between launches: every launch gets a new epoch, and a slot is
//! valid only with its launch's epoch (providers/lookback.cuh). The state
//! of each descriptor size ([`descriptor_bytes`]) lives in a buffer of its
//! own, so that a slot is always read at the size it was written (a value
//! word of a wider descriptor could otherwise pass for a later launch's
//! epoch). Each buffer starts with the tile ticket counter of the tile
//! streams, which every launch leaves at zero.

use crate::build::ResolvedKernel;
use crate::gpu::{zero_on, DeviceBuffer, Gpu, Stream};
use crate::launch::{grid_for, launch_grid, launch_with, resident_policy, Args, Workspace};
use crate::RuntimeError;
use manifest::provider::{descriptor_bytes, result_record, ResultRecord};
use manifest::{Element, Kernel, KernelKind, ParamKind, Provider, Signature, Stage};

pub use manifest::provider::WARP_SEGMENT_LIMIT;

/// Device memory the providers need besides inputs and outputs, grown as
/// needed and kept between calls.
pub struct Scratch<'g> {
    gpu: &'g Gpu,
    /// Where every launch, copy and allocation of its calls goes.
    pub stream: &'g Stream,
    pub workspace: Workspace<'g>,
    /// Look-back state, by descriptor size in bytes.
    states: std::collections::BTreeMap<u64, Option<DeviceBuffer<'g>>>,
    /// The last launch's epoch (0: none yet).
    epoch: u32,
    /// Select's count of kept elements (chain_collect's of kept values).
    pub count: DeviceBuffer<'g>,
    sort_buffer: Option<DeviceBuffer<'g>>,
    /// A radix sort's computed keys, and the keys of every other pass.
    sort_keys: Option<DeviceBuffer<'g>>,
    partitions: Option<DeviceBuffer<'g>>,
    /// The radix sort's bins, look-back and pass counters.
    radix_bins: Option<DeviceBuffer<'g>>,
    radix_lookback: Option<DeviceBuffer<'g>>,
    radix_counters: Option<DeviceBuffer<'g>>,
    /// A gathering radix sort's element indices.
    radix_indices: Option<DeviceBuffer<'g>>,
    /// The by-keys' CUB tile states, which their init kernels prepare.
    tile_states: Option<DeviceBuffer<'g>>,
    /// scan_by_key's key before each tile.
    prev_keys: Option<DeviceBuffer<'g>>,
    /// The segmented sort's elements tagged with their segments.
    tagged: Option<DeviceBuffer<'g>>,
    /// The segmented sort's packs of segments.
    packs: Option<DeviceBuffer<'g>>,
    /// The parameter table every launch of this lane fills (its room kept
    /// from one call to the next).
    args: Args,
}

/// What one provider call reads and writes: device addresses and values.
#[derive(Clone, Debug, Default)]
pub struct Job {
    pub input: u64,
    /// transform2's second input, or partition_point's queries.
    pub input2: u64,
    /// Elements of the input(s) (partition_point's sorted input).
    pub len: u64,
    /// The second input's elements: partition_point's queries (and the
    /// indices it writes), merge_by's second input.
    pub len2: u64,
    /// histogram: the number of bins (and of counts it writes).
    pub bins: u64,
    /// Segmented reduce: `segments + 1` u64 offsets on the device, and the
    /// longest segment (which picks the kernel's shape).
    pub offsets: u64,
    pub segments: u64,
    pub longest_segment: u64,
    /// The segmented sort: the offsets on the host too (empty: none), from
    /// which it packs segments that fit a tile.
    pub host_offsets: Vec<u64>,
    /// The initial value's bytes (providers that take one); for a chain's
    /// fold, empty when it has none (it starts from the first value kept).
    pub init: Vec<u8>,
    /// The output array (the result of a reduce or a chain goes to the
    /// workspace).
    pub output: u64,
    /// Partition's second output, room for `len` elements: the elements
    /// its predicate rejects.
    pub rejected: u64,
    /// reduce_by_key's second output, room for `len` values: each run's
    /// fold (its first output holds each run's last key).
    pub output2: u64,
    /// The callback environment's bytes (empty for none).
    pub env: Vec<u8>,
    /// Replaces the grid policy of a grid-stride kernel (benchmark sweeps).
    pub grid: Option<manifest::GridPolicy>,
    /// A sort whose order was proved a radix order: its keys' bits (0:
    /// none, the merge sort).
    pub sort_bits: u32,
    /// A radix sort of keys of its own (`sort_by_key`'s radix sort of the
    /// keys its key function computes, or of the key fields of elements it
    /// gathers, `vocab::SortChoice::sorted_key`): a key's bytes; 0 for a
    /// sort that ranks the elements themselves.
    pub sort_key_size: u64,
    /// Which sort a sorting call runs (the benchmarks and the validation
    /// force one; by default the faster for its size).
    pub sort: SortPick,
}

/// Which of a sorting registration's sorts a call runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortPick {
    /// The radix sort where the order is proved and [`radix_pays`] for
    /// the call's size, else the merge sort.
    #[default]
    Auto,
    /// The merge sort.
    Merge,
    /// The radix sort where the order is proved (else the merge sort).
    Radix,
}

impl SortPick {
    /// `RMIR_SORT`: `radix`, `merge` or `auto` (the default), read once:
    /// how the validation and the benchmarks run each sort at every size.
    pub fn from_env() -> Result<SortPick, RuntimeError> {
        static PICK: std::sync::OnceLock<Result<SortPick, String>> = std::sync::OnceLock::new();
        PICK.get_or_init(|| match std::env::var("RMIR_SORT").as_deref() {
            Err(_) | Ok("auto") => Ok(SortPick::Auto),
            Ok("radix") => Ok(SortPick::Radix),
            Ok("merge") => Ok(SortPick::Merge),
            Ok(other) => Err(format!(
                "RMIR_SORT is `{other}`: it may be `auto`, `radix` or `merge`"
            )),
        })
        .clone()
        .map_err(RuntimeError::Usage)
    }
}

/// Whether the radix sort beats the merge sort on `n` elements of
/// `element_bytes` with `bits` key bits (a pass a byte) on sm_90.
/// Measured on the H100 with both sorts of the same data (docs/perf.md,
/// "Radix sort chosen by proof"): 32-bit keys tie at 2^19 and radix is
/// 1.15x faster at 2^20; 64-bit keys still lose at 2^21 (256 against 233
/// us) and win at 2^22 (402 against 482). Narrower keys take fewer passes
/// and pay earlier; keys of more than 8 bytes later, in proportion to
/// their passes.
///
/// Elements wider than 8 bytes pay earlier whatever their key: the merge
/// sort moves them at every level. Measured on the H100 (docs/perf.md,
/// "Records as words"), radix against merge, µs: 12-byte points sorted on
/// their 4-byte field 62.2 / 61.1 at 2^16 and 71.1 / 90.1 at 2^18, on a
/// computed key 62.4 / 60.6 and 70.4 / 92.6; so from 2^16. A radix sort
/// that `gathers` (elements of `manifest::RADIX_GATHER_BYTES` and more:
/// (key, index) pairs, then the elements once) costs a key kernel and a
/// gather more: 24-byte records on a 4-byte field 76.6 / 70.9 at 2^16,
/// 93.2 / 117.3 at 2^18; so from 2^17. Keys of more than 8 bytes on such
/// elements are not measured, and take the same sizes.
pub fn radix_pays(n: u64, bits: u32, element_bytes: u64, gathers: bool) -> bool {
    if bits == 0 {
        return false;
    }
    if gathers {
        return n >= 1 << 17;
    }
    if element_bytes > 8 {
        return n >= 1 << 16;
    }
    let from: u64 = match bits.div_ceil(8) {
        1 => 1 << 17,
        2 => 1 << 18,
        3 | 4 => 1 << 19,
        5..=8 => 1 << 22,
        passes => (1 << 22) * u64::from(passes) / 8,
    };
    n >= from
}

/// One call's launches, in order: `(kernel, grid, threads a block)`.
/// The names are the manifest's, borrowed: a call allocates none, and
/// holds up to [`Launched::INLINE`] launches without allocating.
#[derive(Clone, Debug)]
pub struct Launched<'k> {
    inline: [(&'k str, u32, u32); Launched::INLINE],
    len: usize,
    /// Every launch, once there are more than fit inline.
    spilled: Vec<(&'k str, u32, u32)>,
}

impl Default for Launched<'_> {
    fn default() -> Self {
        Launched {
            inline: [("", 0, 0); Launched::INLINE],
            len: 0,
            spilled: Vec::new(),
        }
    }
}

impl<'k> Launched<'k> {
    /// Launches held without an allocation (a radix sort's passes and
    /// gather take more).
    pub const INLINE: usize = 8;

    fn push(&mut self, k: &'k ResolvedKernel<'_>, grid: u32) {
        self.record((k.kernel.name.as_str(), grid, k.kernel.launch.threads()));
    }

    fn record(&mut self, launch: (&'k str, u32, u32)) {
        if self.spilled.is_empty() && self.len < Launched::INLINE {
            self.inline[self.len] = launch;
            self.len += 1;
        } else {
            if self.spilled.is_empty() {
                self.spilled.extend_from_slice(&self.inline[..self.len]);
            }
            self.spilled.push(launch);
        }
    }

    /// The launches, in order.
    pub fn launches(&self) -> &[(&'k str, u32, u32)] {
        if self.spilled.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spilled
        }
    }
}

/// A buffer of at least `bytes` in `slot`, in `stream`'s order (a
/// smaller one it replaces is freed after the work that used it).
fn grow<'g>(
    gpu: &'g Gpu,
    stream: &'g Stream,
    slot: &mut Option<DeviceBuffer<'g>>,
    bytes: usize,
    zeroed: bool,
) -> Result<u64, RuntimeError> {
    if slot.as_ref().is_none_or(|b| b.bytes() < bytes) {
        *slot = None;
        let buffer = gpu.alloc_on(bytes.max(256), stream)?;
        if zeroed {
            buffer.fill_on(stream, 0)?;
        }
        *slot = Some(buffer);
    }
    Ok(slot.as_ref().map_or(0, |b| b.address(0)))
}

/// Bytes of look-back state for `tiles` tiles of `desc`-byte descriptors:
/// the 16-byte tile ticket counter, then the descriptors (`lookback_bytes`
/// of providers/scan.cuh).
pub fn lookback_bytes(tiles: u64, desc: u64) -> u64 {
    16 + (tiles + tiles.div_ceil(32) + tiles.div_ceil(1024)) * desc
}

/// Bytes of CUB's tile states of a by-key over `tiles` tiles of values of
/// `value` (`ReduceByKeyScanTileState<V, int>`: a descriptor of at most 16
/// bytes a tile, or a status word and two `KeyValuePair<int, V>` a tile,
/// each array 256-aligned), with 32 tiles of padding: at least what CUB's
/// `AllocationSize` asks, which the kernels check.
pub fn by_key_state_bytes(tiles: u64, value: &Element) -> u64 {
    let align = value.align().max(4);
    let pair = (4u64.next_multiple_of(align) + value.size()).next_multiple_of(align);
    (tiles + 32) * (16 + 2 * pair) + 3 * 256
}

/// Whether a kernel folds through the [`Workspace`]: one partial per block,
/// the last-block counter and the result record (a reduce, a chain's fold
/// or pick).
pub fn uses_workspace(kind: KernelKind) -> bool {
    matches!(
        kind,
        KernelKind::Provider(Provider::Reduce | Provider::ChainReduce | Provider::ChainPick)
    )
}

impl<'g> Scratch<'g> {
    /// Room in the workspace for a partial per block of its largest grid
    /// and the result record, of `bytes` each (a chain's `rcb::Partial` or
    /// `rcb::PickPartial` of its value, the record's size): where it has
    /// less, the stream finishes what may still use the old buffers, which
    /// are then replaced.
    fn fit_records(&mut self, bytes: usize) -> Result<(), RuntimeError> {
        let ws = &mut self.workspace;
        let partials = ws.max_grid as usize * bytes;
        if ws.partials.bytes() >= partials && ws.output.bytes() >= bytes {
            return Ok(());
        }
        self.stream.synchronize()?;
        ws.partials = self.gpu.alloc(partials)?;
        ws.output = self.gpu.alloc(bytes)?;
        Ok(())
    }

    /// A workspace for the reduces and chains of the largest grid any of
    /// `kernels` gets.
    pub fn new<'k>(
        gpu: &'g Gpu,
        stream: &'g Stream,
        kernels: impl IntoIterator<Item = &'k Kernel>,
    ) -> Result<Scratch<'g>, RuntimeError> {
        let workspace = Workspace::new(
            gpu,
            kernels.into_iter().filter(|k| uses_workspace(k.kind)),
            None,
        )?;
        let count = gpu.alloc(8)?;
        Ok(Scratch {
            gpu,
            stream,
            workspace,
            states: std::collections::BTreeMap::new(),
            epoch: 0,
            count,
            sort_buffer: None,
            sort_keys: None,
            partitions: None,
            radix_bins: None,
            radix_lookback: None,
            radix_counters: None,
            radix_indices: None,
            tile_states: None,
            prev_keys: None,
            tagged: None,
            packs: None,
            args: Args::default(),
        })
    }

    /// Look-back state of `bytes` for a launch whose descriptors take
    /// `desc` bytes each, and the launch's epoch.
    fn state(&mut self, bytes: u64, desc: u64) -> Result<(u64, u32), RuntimeError> {
        let (gpu, stream) = (self.gpu, self.stream);
        if self.epoch == u32::MAX {
            // The epochs wrap: clear every slot so that no old one matches.
            for b in self.states.values().flatten() {
                b.fill_on(stream, 0)?;
            }
            self.epoch = 0;
        }
        self.epoch += 1;
        let slot = self.states.entry(desc).or_insert(None);
        let address = grow(gpu, stream, slot, bytes as usize, true)?;
        Ok((address, self.epoch))
    }

    /// The value of the last reduce or chain, whose kernel left `record`
    /// ([`result_record`]), once the stream has computed it: its bytes, or
    /// `None` for a chain that kept nothing and had no initial value.
    pub fn read_value(&self, record: ResultRecord) -> Result<Option<Vec<u8>>, RuntimeError> {
        let mut out = vec![0u8; record.size as usize];
        // SAFETY: pageable memory, read after the stream's wait below.
        unsafe {
            self.workspace
                .output
                .download_on(self.stream, 0, &mut out)?
        };
        self.stream.synchronize()?;
        Ok(value_of(record, out))
    }

    /// How many elements the last select kept, once the stream has
    /// counted them.
    pub fn read_count(&self) -> Result<u64, RuntimeError> {
        let mut out = [0u64; 1];
        // SAFETY: pageable memory, read after the stream's wait below.
        unsafe { self.count.download_on(self.stream, 0, &mut out)? };
        self.stream.synchronize()?;
        Ok(out[0])
    }
}

/// The value in a result record's bytes, `None` where its flag says it has
/// none.
fn value_of(record: ResultRecord, mut bytes: Vec<u8>) -> Option<Vec<u8>> {
    if let Some(at) = record.has {
        let at = at as usize;
        let flag = bytes.get(at..at + 4)?;
        if flag.iter().all(|b| *b == 0) {
            return None;
        }
    }
    bytes.truncate(record.value as usize);
    Some(bytes)
}

fn fail(kernel: &Kernel, what: String) -> RuntimeError {
    RuntimeError::Launch {
        kernel: kernel.name.clone(),
        what,
    }
}

/// The kernel of `stage` among a registration's.
fn stage<'a, 'm>(
    kernels: &[&'a ResolvedKernel<'m>],
    stage: Stage,
) -> Result<&'a ResolvedKernel<'m>, RuntimeError> {
    kernels
        .iter()
        .copied()
        .find(|k| k.kernel.stage == stage)
        .ok_or_else(|| {
            RuntimeError::Usage(format!(
                "the registration has no `{}` kernel (it has {})",
                stage.name(),
                kernels
                    .iter()
                    .map(|k| k.kernel.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
}

/// Runs the provider of `kernels` (one registration's, every stage) on
/// `job`, asynchronously, on the scratch's stream. A reduce, a chain's fold
/// or a chain's pick leaves its result in the workspace
/// ([`Scratch::read_value`]), a select or a chain's collect its count in
/// [`Scratch::count`].
///
/// # Safety
///
/// Every device address in `job` points into a live allocation with room
/// for what the provider reads and writes for `job.len` elements of the
/// signature's types: the input(s) `len` elements (partition_point's
/// queries and merge_by's second input `len2`), `offsets` `segments + 1` u64s, the output as many
/// elements as the provider writes for them ([`output_bytes`]: `len2`
/// indices, `bins` counts, `len + len2` merged elements); and each stays allocated until the stream has
/// finished the launches.
pub unsafe fn run<'k>(
    scratch: &mut Scratch<'_>,
    signature: &Signature,
    kernels: &[&'k ResolvedKernel<'_>],
    job: &Job,
) -> Result<Launched<'k>, RuntimeError> {
    let mut args = std::mem::take(&mut scratch.args);
    args.clear();
    // SAFETY: the caller's contract.
    let launched = unsafe { run_with(scratch, &mut args, signature, kernels, job) };
    scratch.args = args;
    launched
}

/// [`run`], its launches' parameters set in `args` (cleared).
///
/// # Safety
///
/// As [`run`].
unsafe fn run_with<'k>(
    scratch: &mut Scratch<'_>,
    args: &mut Args,
    signature: &Signature,
    kernels: &[&'k ResolvedKernel<'_>],
    job: &Job,
) -> Result<Launched<'k>, RuntimeError> {
    let (gpu, stream) = (scratch.gpu, scratch.stream);
    let main = kernels
        .first()
        .ok_or_else(|| RuntimeError::Usage("no kernel to launch".into()))?;
    let provider = main.kernel.kind;
    let element = signature.element();
    args.set(ParamKind::Env, &job.env)
        .set(ParamKind::Init, &job.init)
        .u64(ParamKind::Input, job.input)
        .u64(ParamKind::Input2, job.input2)
        .u64(ParamKind::Output, job.output)
        .u64(ParamKind::Rejected, job.rejected)
        .u64(ParamKind::Output2, job.output2);
    // An initial value the kernel may go without (a chain's fold starts
    // from the first value kept; an inclusive scan is seeded only with a
    // shard's carry): it says so by a HasInit parameter, and without a
    // value its Init parameter still takes the value's bytes.
    let params = &main.kernel.params;
    if params.iter().any(|p| p.kind == ParamKind::HasInit) {
        let has_init = !job.init.is_empty();
        if let Some(init) = params
            .iter()
            .find(|p| p.kind == ParamKind::Init)
            .filter(|_| !has_init)
        {
            args.set(ParamKind::Init, vec![0u8; init.size as usize]);
        }
        args.u32(ParamKind::HasInit, u32::from(has_init));
    }
    let mut launched = Launched::default();
    let provider = match provider {
        KernelKind::Provider(p) => p,
        KernelKind::Copy => {
            let k = stage(kernels, Stage::Main)?;
            let grid = grid_for(gpu, k, job.len, None);
            args.u64(ParamKind::Len, job.len);
            // SAFETY: `job`'s addresses are the caller's contract.
            unsafe { launch_grid(gpu, stream, k, grid, args)? };
            launched.push(k, grid);
            return Ok(launched);
        }
    };
    match provider {
        Provider::Reduce | Provider::ChainReduce | Provider::ChainPick => {
            let k = stage(kernels, Stage::Main)?;
            let grid = grid_for(gpu, k, job.len, job.grid);
            // A chain's fold or pick of a composite value wider than the
            // workspace was sized for (a chain kernel's parameters do not
            // say its value's size): its partials and record grow.
            if matches!(provider, Provider::ChainReduce | Provider::ChainPick) {
                if let Some(record) = result_record(provider, signature) {
                    scratch.fit_records(record.size as usize)?;
                }
            }
            let ws = &scratch.workspace;
            if grid > ws.max_grid {
                return Err(fail(
                    &k.kernel,
                    format!(
                        "grid {grid} exceeds the workspace's {} partials",
                        ws.max_grid
                    ),
                ));
            }
            args.u64(ParamKind::Len, job.len)
                .u64(ParamKind::Partials, ws.partials.address(0))
                .u64(ParamKind::Counter, ws.counter.address(0))
                .u64(ParamKind::Output, ws.output.address(0));
            // SAFETY: `job`'s addresses are the caller's contract; the
            // scratch buffers are live and sized for this job.
            unsafe { launch_grid(gpu, stream, k, grid, args)? };
            launched.push(k, grid);
        }
        Provider::InclusiveScan
        | Provider::ExclusiveScan
        | Provider::Select
        | Provider::DedupBy
        | Provider::Partition
        | Provider::ChainCollect => {
            let k = stage(kernels, Stage::Main)?;
            if job.len == 0 {
                if provider.compacts() {
                    scratch.count.fill_on(stream, 0)?;
                }
                return Ok(launched);
            }
            let tiles = job.len.div_ceil(k.kernel.launch.tile().max(1));
            // A tile stream takes any grid: its blocks draw tiles.
            let grid = grid_for(gpu, k, job.len, job.grid);
            // The compactions' counts are 64-bit; a scan's values are T.
            let desc = if provider.compacts() {
                descriptor_bytes(8)
            } else {
                descriptor_bytes(element.size())
            };
            let (state, epoch) = scratch.state(lookback_bytes(tiles, desc), desc)?;
            args.u64(ParamKind::Len, job.len)
                .u64(ParamKind::State, state)
                .u32(ParamKind::Epoch, epoch)
                .u64(ParamKind::Count, scratch.count.address(0));
            // SAFETY: `job`'s addresses are the caller's contract; the
            // scratch buffers are live and sized for this job.
            unsafe { launch_grid(gpu, stream, k, grid, args)? };
            launched.push(k, grid);
        }
        Provider::Transform | Provider::Transform2 => {
            let k = stage(kernels, Stage::Main)?;
            if job.len == 0 {
                return Ok(launched);
            }
            let grid = grid_for(gpu, k, job.len, job.grid);
            args.u64(ParamKind::Len, job.len);
            // SAFETY: `job`'s addresses are the caller's contract; the
            // scratch buffers are live and sized for this job.
            unsafe { launch_grid(gpu, stream, k, grid, args)? };
            launched.push(k, grid);
        }
        Provider::PartitionPoint => {
            let k = stage(kernels, Stage::Main)?;
            if job.len2 == 0 {
                return Ok(launched);
            }
            // A thread a query: the grid is the queries'.
            let grid = grid_for(gpu, k, job.len2, job.grid);
            args.u64(ParamKind::Len, job.len)
                .u64(ParamKind::Len2, job.len2);
            // SAFETY: `job`'s addresses are the caller's contract.
            unsafe { launch_grid(gpu, stream, k, grid, args)? };
            launched.push(k, grid);
        }
        Provider::MergeBy => {
            let partition = stage(kernels, Stage::Partition)?;
            let merge = stage(kernels, Stage::Merge)?;
            let total = job.len + job.len2;
            if total == 0 {
                return Ok(launched);
            }
            // CUB's DispatchMerge: the merge-path splits of every tile (and
            // the end), then a block a tile.
            let tiles = total.div_ceil(merge.kernel.launch.tile().max(1));
            let grid =
                u32::try_from(tiles).map_err(|_| fail(&merge.kernel, format!("{tiles} tiles")))?;
            let partitions = grow(
                gpu,
                stream,
                &mut scratch.partitions,
                ((tiles + 1) * 8) as usize,
                false,
            )?;
            args.u64(ParamKind::Len, job.len)
                .u64(ParamKind::Len2, job.len2)
                .u64(ParamKind::NumPartitions, tiles + 1)
                .u64(ParamKind::Partitions, partitions);
            let partition_block = u64::from(partition.kernel.launch.block_size.max(1));
            let partition_grid = (tiles + 1).div_ceil(partition_block) as u32;
            // SAFETY: `job`'s addresses are the caller's contract; the
            // splits' buffer is live and sized for this job.
            unsafe { launch_grid(gpu, stream, partition, partition_grid, args)? };
            launched.push(partition, partition_grid);
            // SAFETY: as above.
            unsafe { launch_grid(gpu, stream, merge, grid, args)? };
            launched.push(merge, grid);
        }
        Provider::ReduceByKey | Provider::ScanByKey => {
            let init = stage(kernels, Stage::Init)?;
            let main = stage(kernels, Stage::Main)?;
            if job.len == 0 {
                if provider == Provider::ReduceByKey {
                    scratch.count.fill_on(stream, 0)?;
                }
                return Ok(launched);
            }
            if job.len > i32::MAX as u64 {
                return Err(fail(
                    &main.kernel,
                    format!(
                        "{} elements: {} takes at most 2^31 - 1 (32-bit offsets, as CUB's)",
                        job.len,
                        provider.name()
                    ),
                ));
            }
            // CUB's dispatch: the tile states (and the scan's key before
            // each tile), then a block a tile.
            let tiles = job.len.div_ceil(main.kernel.launch.tile().max(1));
            let bytes = by_key_state_bytes(tiles, &signature.ret);
            let state = grow(gpu, stream, &mut scratch.tile_states, bytes as usize, false)?;
            args.u64(ParamKind::Len, job.len)
                .u64(ParamKind::State, state)
                .u64(ParamKind::StateBytes, bytes)
                .u64(ParamKind::Count, scratch.count.address(0));
            if provider == Provider::ScanByKey {
                let prev = grow(
                    gpu,
                    stream,
                    &mut scratch.prev_keys,
                    (tiles * element.size()) as usize,
                    false,
                )?;
                args.u64(ParamKind::Buffer, prev);
            }
            let init_block = u64::from(init.kernel.launch.block_size.max(1));
            let init_grid = tiles.div_ceil(init_block).max(1) as u32;
            let grid =
                u32::try_from(tiles).map_err(|_| fail(&main.kernel, format!("{tiles} tiles")))?;
            // SAFETY: `job`'s addresses are the caller's contract; the
            // tile states and keys are live and sized for this job.
            unsafe { launch_grid(gpu, stream, init, init_grid, args)? };
            launched.push(init, init_grid);
            // SAFETY: as above.
            unsafe { launch_grid(gpu, stream, main, grid, args)? };
            launched.push(main, grid);
        }
        Provider::Histogram => {
            let k = stage(kernels, Stage::Main)?;
            // The kernel adds to the counts: every one starts at zero,
            // which is the result of an empty input.
            // SAFETY: the output has room for `bins` counts (the caller's
            // contract).
            unsafe { zero_on(stream, job.output, (job.bins * 8) as usize)? };
            if job.len == 0 || job.bins == 0 {
                return Ok(launched);
            }
            let grid = grid_for(gpu, k, job.len, job.grid);
            args.u64(ParamKind::Len, job.len)
                .u64(ParamKind::Bins, job.bins);
            // SAFETY: `job`'s addresses are the caller's contract.
            unsafe { launch_grid(gpu, stream, k, grid, args)? };
            launched.push(k, grid);
        }
        Provider::SegmentedReduce => {
            let k = stage(kernels, Stage::Main)?;
            if job.segments == 0 {
                return Ok(launched);
            }
            let per_block = job.longest_segment > WARP_SEGMENT_LIMIT;
            let launch = &k.kernel.launch;
            let policy = job.grid.unwrap_or(launch.grid);
            let cap = match resident_policy(policy, k.resident_blocks_per_sm) {
                manifest::GridPolicy::TilesCappedBySms { blocks_per_sm } => {
                    u64::from(gpu.multiprocessors) * u64::from(blocks_per_sm)
                }
                _ => u64::from(u32::MAX),
            };
            let wanted = if per_block {
                job.segments
            } else {
                job.segments
                    .div_ceil(u64::from(launch.block_size / 32).max(1))
            };
            let grid = wanted.clamp(1, cap.max(1)) as u32;
            args.u64(ParamKind::Offsets, job.offsets)
                .u64(ParamKind::Segments, job.segments)
                .u32(ParamKind::PerBlock, u32::from(per_block));
            // SAFETY: `job`'s addresses are the caller's contract; the
            // scratch buffers are live and sized for this job.
            unsafe { launch_grid(gpu, stream, k, grid, args)? };
            launched.push(k, grid);
        }
        Provider::SortBy
            if job.sort_bits > 0
                && job.sort != SortPick::Merge
                && (job.sort == SortPick::Radix
                    || radix_pays(
                        job.len,
                        job.sort_bits,
                        element.size(),
                        manifest::radix_gathers(element),
                    )) =>
        {
            // SAFETY: the caller's contract.
            unsafe { radix_sort(scratch, kernels, element, job, args, &mut launched)? };
        }
        Provider::SortBy => {
            if job.len == 0 {
                return Ok(launched);
            }
            // SAFETY: the caller's contract.
            unsafe {
                merge_sort(
                    scratch,
                    kernels,
                    element.size(),
                    job.len,
                    args,
                    &mut launched,
                )?
            };
        }
        Provider::SegmentedSortBy => {
            let tag = stage(kernels, Stage::Tag)?;
            let untag = stage(kernels, Stage::Untag)?;
            if job.len == 0 {
                return Ok(launched);
            }
            if job.segments == 0 {
                // No segment (fewer than two offsets): every element stays
                // where it is.
                // SAFETY: `job`'s input and output hold `len` elements
                // (the caller's contract).
                unsafe {
                    gpu.copy_device_at(
                        stream,
                        job.output,
                        job.input,
                        (job.len * element.size()) as usize,
                    )?
                };
                return Ok(launched);
            }
            // Tags 0 and segments + 1 are the elements outside every
            // segment: both fit 32 bits.
            if job.segments >= u64::from(u32::MAX) - 1 {
                return Err(fail(
                    &tag.kernel,
                    format!(
                        "{} segments: the segmented sort takes at most 2^32 - 3 (32-bit tags)",
                        job.segments
                    ),
                ));
            }
            args.u64(ParamKind::Offsets, job.offsets)
                .u64(ParamKind::Segments, job.segments);
            let pack_sort = stage(kernels, Stage::PackSort)?;
            let tile = pack_sort.kernel.launch.tile();
            if job.longest_segment <= tile && job.host_offsets.len() == job.segments as usize + 1 {
                // SAFETY: the caller's contract.
                unsafe { sort_packs(scratch, pack_sort, element, job, args, &mut launched)? };
                return Ok(launched);
            }
            // The merge sort sorts the tagged elements in place.
            let size = manifest::provider::tagged_size(element);
            let tagged = grow(
                gpu,
                stream,
                &mut scratch.tagged,
                (job.len * size) as usize,
                false,
            )?;
            args.u64(ParamKind::Tagged, tagged);
            args.u32(ParamKind::Len, merge_sort_len(&tag.kernel, job.len)?);
            let grid = grid_for(gpu, tag, job.len, None);
            // SAFETY: `job`'s addresses are the caller's contract; the
            // tagged elements' buffer is live and sized for this job.
            unsafe { launch_grid(gpu, stream, tag, grid, args)? };
            launched.push(tag, grid);
            // SAFETY: as above.
            unsafe { merge_sort(scratch, kernels, size, job.len, args, &mut launched)? };
            let grid = grid_for(gpu, untag, job.len, None);
            // SAFETY: as above.
            unsafe { launch_grid(gpu, stream, untag, grid, args)? };
            launched.push(untag, grid);
        }
    }
    Ok(launched)
}

/// Consecutive segments packed into packs of at most `tile` elements (each
/// segment of at most `tile`): the index of each pack's first segment, and
/// `segments` last.
pub fn pack_segments(offsets: &[u64], tile: u64) -> Vec<u32> {
    let mut packs = vec![0u32];
    let mut start = offsets.first().copied().unwrap_or(0);
    for (s, w) in offsets.windows(2).enumerate() {
        if w[1] - start > tile {
            packs.push(s as u32);
            start = w[0];
        }
    }
    packs.push(offsets.len().saturating_sub(1) as u32);
    packs
}

/// The segmented sort of segments that each fit `pack_sort`'s tile: the
/// elements outside every segment copied, then a block a pack of segments.
///
/// # Safety
///
/// As [`run`]'s; `job.host_offsets` are the device offsets' values.
unsafe fn sort_packs<'k>(
    scratch: &mut Scratch<'_>,
    pack_sort: &'k ResolvedKernel<'_>,
    element: &Element,
    job: &Job,
    args: &mut Args,
    launched: &mut Launched<'k>,
) -> Result<(), RuntimeError> {
    let (gpu, stream) = (scratch.gpu, scratch.stream);
    let size = element.size();
    let (first, last) = match (job.host_offsets.first(), job.host_offsets.last()) {
        (Some(&f), Some(&l)) => (f, l),
        _ => return Err(fail(&pack_sort.kernel, "no offsets".into())),
    };
    for (from, to) in [(0, first), (last, job.len)] {
        if to > from {
            // SAFETY: both ranges lie inside the input and the output
            // (the caller's contract: offsets checked against `len`).
            unsafe {
                gpu.copy_device_at(
                    stream,
                    job.output + from * size,
                    job.input + from * size,
                    ((to - from) * size) as usize,
                )?
            };
        }
    }
    // Packs of at most a tile, and smaller where a tile each would leave
    // multiprocessors idle (two blocks each at least), but never smaller
    // than the longest segment.
    let tile = pack_sort.kernel.launch.tile();
    let spread = (last - first).div_ceil(2 * u64::from(gpu.multiprocessors).max(1));
    let packs = pack_segments(
        &job.host_offsets,
        spread.clamp(job.longest_segment.max(1), tile),
    );
    let grid = u32::try_from(packs.len() - 1)
        .map_err(|_| fail(&pack_sort.kernel, format!("{} packs", packs.len() - 1)))?;
    grow(gpu, stream, &mut scratch.packs, packs.len() * 4, false)?;
    let buffer = scratch.packs.as_ref().expect("grown above");
    // SAFETY: pageable memory, copied before this returns.
    unsafe { buffer.upload_on(stream, 0, &packs)? };
    args.u64(ParamKind::Packs, buffer.address(0));
    // SAFETY: the caller's contract; the packs are live.
    unsafe { launch_grid(gpu, stream, pack_sort, grid, args)? };
    launched.push(pack_sort, grid);
    Ok(())
}

/// `len` as the merge sort's 32-bit count (CUB's offsets for an `int`
/// count), or `kernel`'s error.
fn merge_sort_len(kernel: &Kernel, len: u64) -> Result<u32, RuntimeError> {
    u32::try_from(len).map_err(|_| {
        fail(
            kernel,
            format!(
                "{len} elements: the merge sort takes at most 2^32 - 1 (32-bit offsets, as CUB's)"
            ),
        )
    })
}

/// CUB's merge sort (its `DispatchMergeSort`) of `len` elements of `size`
/// bytes with `kernels`' block sort, partition and merge stages: a block
/// sort, then ceil(log2(tiles)) merge passes, ping-ponging between the
/// output and a buffer of `len` elements so that the last one writes the
/// output. `args` holds the input and output (sort_by's `Input` and
/// `Output`, the segmented sort's `Tagged` as both).
///
/// # Safety
///
/// As [`run`]'s: `args`' addresses hold `len` elements of `size` bytes.
unsafe fn merge_sort<'k>(
    scratch: &mut Scratch<'_>,
    kernels: &[&'k ResolvedKernel<'_>],
    size: u64,
    len: u64,
    args: &mut Args,
    launched: &mut Launched<'k>,
) -> Result<(), RuntimeError> {
    let (gpu, stream) = (scratch.gpu, scratch.stream);
    let block_sort = stage(kernels, Stage::BlockSort)?;
    let partition = stage(kernels, Stage::Partition)?;
    let merge = stage(kernels, Stage::Merge)?;
    let n = merge_sort_len(&block_sort.kernel, len)?;
    let tile = block_sort.kernel.launch.tile();
    let tiles = len.div_ceil(tile);
    let passes = tiles.next_power_of_two().trailing_zeros();
    let mut ping = passes % 2 == 0;
    let buffer = grow(
        gpu,
        stream,
        &mut scratch.sort_buffer,
        (len * size) as usize,
        false,
    )?;
    let partitions = grow(
        gpu,
        stream,
        &mut scratch.partitions,
        ((tiles + 1) * 4) as usize,
        false,
    )?;
    let grid =
        u32::try_from(tiles).map_err(|_| fail(&block_sort.kernel, format!("{tiles} tiles")))?;
    args.u32(ParamKind::Len, n)
        .u64(ParamKind::Buffer, buffer)
        .u64(ParamKind::Partitions, partitions)
        .u32(ParamKind::NumPartitions, grid + 1)
        .set(ParamKind::ItemsPerTile, (tile as i32).to_le_bytes())
        .set(ParamKind::Ping, [u8::from(ping)]);
    // SAFETY: the caller's contract; the scratch buffers are live and sized
    // for this job.
    unsafe { launch_grid(gpu, stream, block_sort, grid, args)? };
    launched.push(block_sort, grid);
    let partition_block = u64::from(partition.kernel.launch.block_size.max(1));
    let partition_grid = (tiles + 1).div_ceil(partition_block) as u32;
    for pass in 0..passes {
        args.set(ParamKind::Ping, [u8::from(ping)])
            .u32(ParamKind::Target, 2u32 << pass);
        // CUB's agents wait for the grid before them (griddepcontrol.wait)
        // before they read: each launch may start while the one before it
        // drains, as CUB launches them.
        // SAFETY: as for `launch_grid` above.
        unsafe { launch_with(gpu, stream, partition, partition_grid, args, true)? };
        // SAFETY: as for `launch_grid` above.
        unsafe { launch_with(gpu, stream, merge, grid, args, true)? };
        launched.push(partition, partition_grid);
        launched.push(merge, grid);
        ping = !ping;
    }
    Ok(())
}

/// CUB's onesweep radix sort (its `DispatchRadixSort::InvokeOnesweep`,
/// keys only, 32-bit offsets) of `job.len` elements on their proved keys'
/// `job.sort_bits` bits: a histogram of every pass's digits, their
/// exclusive sums, then a pass of 8 bits at a time over portions of at
/// most 2^28 elements, ping-ponging between the output and a buffer so
/// that the last pass writes the output.
///
/// A pass in which every key has the same digit (the top byte of keys
/// below 2^24, the exponent byte of floats of one binade) would put each
/// element where it is: the scan flags it, and its launches return at
/// once, the ping-pong going through the passes that run (the scan's last
/// block writes each pass's route, its source and destination, from the
/// flags: providers/radix.cuh's `radix_route_word`). CUB sorts every pass
/// it is told to; so nothing waits on the host for the flags.
///
/// A sort of computed keys (`job.sort_key_size` > 0) first computes each
/// element's key ([`Stage::RadixKeys`]) into a buffer holding two keys an
/// element; the histogram counts the keys' digits, and each pass moves
/// the keys between the buffer's halves and the elements, CUB's values,
/// as above. Elements of `manifest::RADIX_GATHER_BYTES` and more do not
/// move in the passes: the key kernel writes each one's key (computed,
/// or its key fields packed) and index, the passes move the keys and
/// indices between the halves of their buffers, and a last kernel
/// ([`Stage::RadixGather`]) writes the output from the input by the
/// sorted indices.
///
/// # Safety
///
/// As [`run`]'s, and the output is not the input.
unsafe fn radix_sort<'k>(
    scratch: &mut Scratch<'_>,
    kernels: &[&'k ResolvedKernel<'_>],
    element: &Element,
    job: &Job,
    args: &mut Args,
    launched: &mut Launched<'k>,
) -> Result<(), RuntimeError> {
    const DIGITS: u64 = 256;
    let (gpu, stream) = (scratch.gpu, scratch.stream);
    let histogram = stage(kernels, Stage::RadixHistogram)?;
    let scan = stage(kernels, Stage::RadixScan)?;
    let pass = stage(kernels, Stage::RadixPass)?;
    let computing = match job.sort_key_size {
        0 => None,
        _ => Some(stage(kernels, Stage::RadixKeys)?),
    };
    // Elements this wide are gathered once after the passes sort (key,
    // index) pairs.
    let gather = match manifest::radix_gathers(element) {
        true => Some(stage(kernels, Stage::RadixGather)?),
        false => None,
    };
    if gather.is_some() && computing.is_none() {
        return Err(fail(
            &pass.kernel,
            format!(
                "{}-byte elements are sorted by key and index: the job needs the key's size",
                element.size()
            ),
        ));
    }
    if job.len == 0 {
        return Ok(());
    }
    let n = u32::try_from(job.len).map_err(|_| {
        fail(
            &pass.kernel,
            format!(
                "{} elements: the radix sort takes at most 2^32 - 1 (32-bit offsets, as CUB's)",
                job.len
            ),
        )
    })?;
    let bits = job.sort_bits;
    let passes = u64::from(bits.div_ceil(8));
    let tile = pass.kernel.launch.tile();
    let portion = ((1u64 << 28) - 1) / tile * tile;
    let portions = job.len.div_ceil(portion);
    let max_blocks = job.len.min(portion).div_ceil(tile);
    let size = element.size();
    let bins = grow(
        gpu,
        stream,
        &mut scratch.radix_bins,
        (portions * passes * DIGITS * 4) as usize,
        false,
    )?;
    let lookback = grow(
        gpu,
        stream,
        &mut scratch.radix_lookback,
        (max_blocks * DIGITS * 4) as usize,
        false,
    )?;
    // A tile counter for each portion's pass, then the route: a trivial
    // flag a pass, a route word a pass and the scan's arrival count
    // (providers/radix.cuh's `radix_route_word`).
    let counter_bytes = (portions * passes + 2 * passes + 1) * 4;
    let counters = grow(
        gpu,
        stream,
        &mut scratch.radix_counters,
        counter_bytes as usize,
        false,
    )?;
    let trivial = counters + portions * passes * 4;
    let buffer = if passes > 1 && gather.is_none() {
        grow(
            gpu,
            stream,
            &mut scratch.sort_buffer,
            (job.len * size) as usize,
            false,
        )?
    } else {
        0
    };
    // The computed keys, and room for a pass's keys after them.
    let key_bytes = job.len * job.sort_key_size;
    let keys = match computing {
        Some(_) => grow(
            gpu,
            stream,
            &mut scratch.sort_keys,
            (2 * key_bytes) as usize,
            false,
        )?,
        None => 0,
    };
    // The elements' indices, in two halves as the keys.
    let indices = match gather {
        Some(_) => grow(
            gpu,
            stream,
            &mut scratch.radix_indices,
            (2 * job.len * 4) as usize,
            false,
        )?,
        None => 0,
    };
    // SAFETY: the scratch buffers are live and this large.
    unsafe {
        zero_on(stream, counters, counter_bytes as usize)?;
        zero_on(stream, bins, (passes * DIGITS * 4) as usize)?;
    }
    args.u64(ParamKind::RadixBins, bins)
        .u64(ParamKind::RadixTrivial, trivial)
        .u32(ParamKind::Len, n)
        .set(ParamKind::EndBit, (bits as i32).to_le_bytes())
        .u64(ParamKind::Input, job.input)
        .u64(ParamKind::Output, job.output)
        .u64(ParamKind::Buffer, buffer);
    if let Some(compute) = computing {
        args.u64(ParamKind::RadixKeysOut, keys)
            .u64(ParamKind::RadixKeys, keys)
            .u64(ParamKind::RadixIndices, indices);
        let grid = grid_for(gpu, compute, job.len, None);
        // SAFETY: `job`'s input holds `len` elements, the keys buffer room
        // for as many keys.
        unsafe { launch_grid(gpu, stream, compute, grid, args)? };
        launched.push(compute, grid);
    }
    let grid = grid_for(gpu, histogram, job.len, None);
    // SAFETY: `job`'s input holds `len` elements; the bins are live.
    unsafe { launch_grid(gpu, stream, histogram, grid, args)? };
    launched.push(histogram, grid);
    // SAFETY: as above.
    unsafe { launch_grid(gpu, stream, scan, passes as u32, args)? };
    launched.push(scan, passes as u32);
    for p in 0..passes {
        for q in 0..portions {
            let start = q * portion;
            let items = (job.len - start).min(portion);
            let blocks = items.div_ceil(tile);
            let at = |portion: u64| bins + (portion * passes + p) * DIGITS * 4;
            // SAFETY: the look-back holds `max_blocks` tiles' digits.
            unsafe { zero_on(stream, lookback, (blocks * DIGITS * 4) as usize)? };
            args.u64(ParamKind::RadixLookback, lookback)
                .u64(ParamKind::RadixCounter, counters + (q * passes + p) * 4)
                .u64(
                    ParamKind::RadixBinsOut,
                    if q + 1 < portions { at(q + 1) } else { 0 },
                )
                .u64(ParamKind::RadixBins, at(q))
                .set(ParamKind::PortionStart, (start as u32).to_le_bytes())
                .set(ParamKind::PortionLen, (items as i32).to_le_bytes())
                .set(ParamKind::CurrentBit, ((p * 8) as i32).to_le_bytes());
            // SAFETY: the input, output and buffer hold `len` elements (the
            // keys buffer twice as many keys), and the scratch buffers are
            // live and sized for this job.
            unsafe { launch_grid(gpu, stream, pass, blocks as u32, args)? };
            launched.push(pass, blocks as u32);
        }
    }
    if let Some(gather) = gather {
        let grid = grid_for(gpu, gather, job.len, None);
        // SAFETY: the input and output hold `len` elements, the indices
        // buffer twice as many indices, each below `len`.
        unsafe { launch_grid(gpu, stream, gather, grid, args)? };
        launched.push(gather, grid);
    }
    Ok(())
}

/// Bytes of the output a call writes for `n` elements (segments for
/// segmented reduce, the kept elements for select, the kept values, `R`s,
/// for chain_collect, `u64` indices for partition_point's queries and
/// counts for histogram's bins): what to copy back; for a reduce or a
/// chain's fold or pick, its one value's.
pub fn output_bytes(provider: Provider, signature: &Signature, n: u64) -> u64 {
    if let Some(record) = result_record(provider, signature) {
        return record.value;
    }
    let out = match provider {
        Provider::Transform
        | Provider::Transform2
        | Provider::ChainCollect
        | Provider::ScanByKey => &signature.ret,
        Provider::PartitionPoint | Provider::Histogram => return n * 8,
        _ => signature.element(),
    };
    n * out.size()
}

/// The element types of the callback, in the order a call states them:
/// the parameters, then the result.
pub fn signature_types(signature: &Signature) -> Vec<&Element> {
    signature.params.iter().chain([&signature.ret]).collect()
}

#[cfg(test)]
mod tests {
    use super::{radix_pays, Launched};

    #[test]
    fn a_call_s_launches_keep_their_order_past_what_fits_inline() {
        let names: Vec<String> = (0..Launched::INLINE + 3).map(|i| format!("k{i}")).collect();
        let mut launched = Launched::default();
        assert!(launched.launches().is_empty());
        for (i, name) in names.iter().enumerate() {
            launched.record((name, i as u32, 128));
            let want: Vec<(&str, u32, u32)> = names[..=i]
                .iter()
                .enumerate()
                .map(|(j, n)| (n.as_str(), j as u32, 128))
                .collect();
            assert_eq!(launched.launches(), &want[..], "after {} launches", i + 1);
        }
    }

    #[test]
    fn radix_pays_by_passes_and_by_the_width_of_what_it_moves() {
        assert!(!radix_pays(1 << 30, 0, 4, false));
        assert!(!radix_pays((1 << 19) - 1, 32, 4, false) && radix_pays(1 << 19, 32, 4, false));
        assert!(!radix_pays(1 << 21, 64, 8, false) && radix_pays(1 << 22, 64, 8, false));
        assert!(!radix_pays((1 << 17) - 1, 8, 1, false) && radix_pays(1 << 17, 8, 1, false));
        // Elements wider than 8 bytes, on their own fields or on a
        // computed key: from 2^16, else by the key's passes.
        assert!(radix_pays(1 << 16, 32, 12, false) && !radix_pays((1 << 16) - 1, 32, 12, false));
        assert!(!radix_pays(1 << 18, 32, 8, false));
        // Gathered elements: from 2^17.
        assert!(radix_pays(1 << 17, 32, 24, true) && !radix_pays(1 << 16, 32, 24, true));
    }

    use super::*;
    use manifest::{Scalar, Shape};

    fn chain(t: Scalar, r: Scalar) -> Signature {
        Shape::Chain.signature(t, r)
    }

    #[test]
    fn a_chain_result_is_its_value_or_none() {
        // (u8) -> bool: `{ bool value; u32 has; }`, the flag at 4.
        let record = result_record(Provider::ChainReduce, &chain(Scalar::U8, Scalar::Bool))
            .expect("a chain has a record");
        let bytes = |value: u8, has: u32| {
            let mut b = vec![value, 0xAA, 0xAA, 0xAA];
            b.extend(has.to_le_bytes());
            b
        };
        assert_eq!(value_of(record, bytes(1, 1)), Some(vec![1]));
        assert_eq!(value_of(record, bytes(1, 0)), None);
        // (i8) -> f64 pick: `{ f64 value; u32 has; u64 index; }` in 32 bytes.
        let record = result_record(Provider::ChainPick, &chain(Scalar::I8, Scalar::F64))
            .expect("a chain has a record");
        let mut b = 2.5f64.to_le_bytes().to_vec();
        b.extend(1u32.to_le_bytes());
        b.extend([0u8; 4]);
        b.extend(7u64.to_le_bytes());
        b.extend([0u8; 8]);
        assert_eq!(b.len() as u64, record.size);
        assert_eq!(
            value_of(record, b.clone()),
            Some(2.5f64.to_le_bytes().to_vec())
        );
        b[8] = 0;
        assert_eq!(value_of(record, b), None);
        // A reduce's record is its value alone.
        let reduce = result_record(Provider::Reduce, &Signature::fold(Scalar::I16))
            .expect("a reduce has a record");
        assert_eq!(value_of(reduce, vec![3, 0]), Some(vec![3, 0]));
    }

    #[test]
    fn output_bytes_of_one_value_or_of_the_elements() {
        let i8_bool = chain(Scalar::I8, Scalar::Bool);
        assert_eq!(output_bytes(Provider::ChainReduce, &i8_bool, 1), 1);
        let f32_u64 = chain(Scalar::F32, Scalar::U64);
        assert_eq!(output_bytes(Provider::ChainPick, &f32_u64, 1), 8);
        let fold = Signature::fold(Scalar::I32);
        assert_eq!(output_bytes(Provider::Reduce, &fold, 1), 4);
        assert_eq!(output_bytes(Provider::InclusiveScan, &fold, 10), 40);
        let map = Shape::Map.signature(Scalar::U8, Scalar::F64);
        assert_eq!(output_bytes(Provider::Transform, &map, 10), 80);
        // A collect writes up to n values of R, whatever T's size.
        assert_eq!(output_bytes(Provider::ChainCollect, &f32_u64, 10), 80);
        assert_eq!(output_bytes(Provider::ChainCollect, &i8_bool, 10), 10);
        let u64_u8 = chain(Scalar::U64, Scalar::U8);
        assert_eq!(output_bytes(Provider::ChainCollect, &u64_u8, 10), 10);
        let pred = Shape::Predicate.signature(Scalar::I16, Scalar::Bool);
        assert_eq!(output_bytes(Provider::Select, &pred, 10), 20);
    }

    #[test]
    fn segments_pack_into_tiles_whole() {
        // Segments of 3, 4, 0, 5, 2 elements from 10, tiles of 8: [3, 4, 0]
        // (7), then [5, 2] (7).
        assert_eq!(pack_segments(&[10, 13, 17, 17, 22, 24], 8), vec![0, 3, 5]);
        // A segment of exactly a tile is a pack of its own.
        assert_eq!(pack_segments(&[0, 8, 9, 17], 8), vec![0, 1, 2, 3]);
        // Empty segments join the pack they are in; none at all is one
        // empty pack.
        assert_eq!(pack_segments(&[4, 4, 4], 8), vec![0, 2]);
        assert_eq!(pack_segments(&[4], 8), vec![0, 0]);
    }

    #[test]
    fn reduces_and_chains_use_the_workspace() {
        for p in Provider::ALL {
            let expected = matches!(
                p,
                Provider::Reduce | Provider::ChainReduce | Provider::ChainPick
            );
            assert_eq!(uses_workspace(KernelKind::Provider(p)), expected, "{p}");
            assert_eq!(
                result_record(p, &p.shape().signature(Scalar::I32, Scalar::I32)).is_some(),
                expected,
                "{p}"
            );
        }
        assert!(!uses_workspace(KernelKind::Copy));
    }

    #[test]
    fn select_and_collect_compact_and_nothing_else() {
        for p in Provider::ALL {
            let expected = matches!(
                p,
                Provider::Select | Provider::DedupBy | Provider::Partition | Provider::ChainCollect
            );
            assert_eq!(p.compacts(), expected, "{p}");
            // A compaction's result is its elements, never one value.
            if expected {
                let signature = p.shape().signature(Scalar::I32, Scalar::Bool);
                assert_eq!(result_record(p, &signature), None, "{p}");
            }
        }
    }
}
