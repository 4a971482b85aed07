//! Running a registration's provider on device buffers: its kernels in
//! stage order, the grids, and the device memory each needs besides its
//! inputs and output ([`Scratch`]). What `native::gpu` runs
//! (`host.rs`), and what the benchmarks and the validation time and check.
//!
//! The look-back state of the scans and of select is never cleared between
//! launches: every launch gets a new epoch, and a slot is valid only with
//! its launch's epoch (providers/lookback.cuh). State of 8-byte and 16-byte
//! descriptors lives in two buffers, so that a slot is always read at the
//! size it was written (a value word of a wide descriptor could otherwise
//! pass for a later launch's epoch). Each buffer starts with the tile
//! ticket counter of the tile streams, which every launch leaves at zero.

use crate::build::ResolvedKernel;
use crate::gpu::{DeviceBuffer, Gpu, Stream};
use crate::launch::{grid_for, launch_grid, launch_with, resident_policy, Args, Workspace};
use crate::RuntimeError;
use manifest::{Element, Kernel, KernelKind, ParamKind, Provider, Signature, Stage};

pub use manifest::provider::WARP_SEGMENT_LIMIT;

/// Device memory the providers need besides inputs and outputs, grown as
/// needed and kept between calls.
pub struct Scratch<'g> {
    gpu: &'g Gpu,
    /// Where every launch, copy and allocation of its calls goes.
    pub stream: &'g Stream,
    pub workspace: Workspace<'g>,
    /// Look-back state of 8-byte and of 16-byte descriptors.
    narrow_state: Option<DeviceBuffer<'g>>,
    wide_state: Option<DeviceBuffer<'g>>,
    /// The last launch's epoch (0: none yet).
    epoch: u32,
    /// Select's count of kept elements.
    pub count: DeviceBuffer<'g>,
    sort_buffer: Option<DeviceBuffer<'g>>,
    partitions: Option<DeviceBuffer<'g>>,
}

/// What one provider call reads and writes: device addresses and values.
#[derive(Clone, Debug, Default)]
pub struct Job {
    pub input: u64,
    /// transform2's second input.
    pub input2: u64,
    /// Elements of the input(s).
    pub len: u64,
    /// Segmented reduce: `segments + 1` u64 offsets on the device, and the
    /// longest segment (which picks the kernel's shape).
    pub offsets: u64,
    pub segments: u64,
    pub longest_segment: u64,
    /// The initial value's bytes (providers that take one).
    pub init: Vec<u8>,
    /// The output array (the result of a reduce goes to the workspace).
    pub output: u64,
    /// The callback environment's bytes (empty for none).
    pub env: Vec<u8>,
    /// Replaces the grid policy of a grid-stride kernel (benchmark sweeps).
    pub grid: Option<manifest::GridPolicy>,
}

/// One call's launches, in order: `(kernel, grid, threads a block)`.
/// The names are the manifest's, borrowed: a call allocates none.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Launched<'k> {
    pub launches: Vec<(&'k str, u32, u32)>,
}

impl<'k> Launched<'k> {
    fn push(&mut self, k: &'k ResolvedKernel<'_>, grid: u32) {
        self.launches
            .push((&k.kernel.name, grid, k.kernel.launch.threads()));
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

impl<'g> Scratch<'g> {
    /// A workspace for reduces of the largest grid any of `kernels` gets.
    pub fn new<'k>(
        gpu: &'g Gpu,
        stream: &'g Stream,
        kernels: impl IntoIterator<Item = &'k Kernel>,
    ) -> Result<Scratch<'g>, RuntimeError> {
        let workspace = Workspace::new(
            gpu,
            kernels.into_iter().filter(|k| k.kind == Provider::Reduce),
            None,
        )?;
        let count = gpu.alloc(8)?;
        Ok(Scratch {
            gpu,
            stream,
            workspace,
            narrow_state: None,
            wide_state: None,
            epoch: 0,
            count,
            sort_buffer: None,
            partitions: None,
        })
    }

    /// Look-back state of `bytes` for a launch, and the launch's epoch.
    fn state(&mut self, bytes: u64, wide: bool) -> Result<(u64, u32), RuntimeError> {
        let (gpu, stream) = (self.gpu, self.stream);
        if self.epoch == u32::MAX {
            // The epochs wrap: clear every slot so that no old one matches.
            for b in [&self.narrow_state, &self.wide_state].into_iter().flatten() {
                b.fill_on(stream, 0)?;
            }
            self.epoch = 0;
        }
        self.epoch += 1;
        let slot = if wide {
            &mut self.wide_state
        } else {
            &mut self.narrow_state
        };
        let address = grow(gpu, stream, slot, bytes as usize, true)?;
        Ok((address, self.epoch))
    }

    /// The result of the last reduce: `size` bytes, once the stream has
    /// computed it.
    pub fn read_value(&self, size: usize) -> Result<Vec<u8>, RuntimeError> {
        let mut out = vec![0u8; size];
        // SAFETY: pageable memory, read after the stream's wait below.
        unsafe {
            self.workspace
                .output
                .download_on(self.stream, 0, &mut out)?
        };
        self.stream.synchronize()?;
        Ok(out)
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
/// `job`, asynchronously, on the scratch's stream. A reduce leaves its
/// result in the workspace, a select its count in [`Scratch::count`].
///
/// # Safety
///
/// Every device address in `job` points into a live allocation with room
/// for what the provider reads and writes for `job.len` elements of the
/// signature's types: the input(s) `len` elements, `offsets` `segments + 1`
/// u64s, the output as many elements as the provider writes for them
/// ([`output_bytes`]); and each stays allocated until the stream has
/// finished the launches.
pub unsafe fn run<'k>(
    scratch: &mut Scratch<'_>,
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
    let mut args = Args::new();
    args.set(ParamKind::Env, job.env.clone())
        .set(ParamKind::Init, job.init.clone())
        .u64(ParamKind::Input, job.input)
        .u64(ParamKind::Input2, job.input2)
        .u64(ParamKind::Output, job.output);
    let mut launched = Launched::default();
    let provider = match provider {
        KernelKind::Provider(p) => p,
        KernelKind::Copy => {
            let k = stage(kernels, Stage::Main)?;
            let grid = grid_for(gpu, k, job.len, None);
            args.u64(ParamKind::Len, job.len);
            // SAFETY: `job`'s addresses are the caller's contract.
            unsafe { launch_grid(gpu, stream, k, grid, &args)? };
            launched.push(k, grid);
            return Ok(launched);
        }
    };
    match provider {
        Provider::Reduce => {
            let k = stage(kernels, Stage::Main)?;
            let grid = grid_for(gpu, k, job.len, job.grid);
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
            unsafe { launch_grid(gpu, stream, k, grid, &args)? };
            launched.push(k, grid);
        }
        Provider::InclusiveScan | Provider::ExclusiveScan | Provider::Select => {
            let k = stage(kernels, Stage::Main)?;
            if job.len == 0 {
                if provider == Provider::Select {
                    scratch.count.fill_on(stream, 0)?;
                }
                return Ok(launched);
            }
            let tiles = job.len.div_ceil(k.kernel.launch.tile().max(1));
            // A tile stream takes any grid: its blocks draw tiles.
            let grid = grid_for(gpu, k, job.len, job.grid);
            // Select's counts are 64-bit; a scan's values are T.
            let wide = provider == Provider::Select || element.size() == 8;
            let desc = if wide { 16 } else { 8 };
            let (state, epoch) = scratch.state(lookback_bytes(tiles, desc), wide)?;
            args.u64(ParamKind::Len, job.len)
                .u64(ParamKind::State, state)
                .u32(ParamKind::Epoch, epoch)
                .u64(ParamKind::Count, scratch.count.address(0));
            // SAFETY: `job`'s addresses are the caller's contract; the
            // scratch buffers are live and sized for this job.
            unsafe { launch_grid(gpu, stream, k, grid, &args)? };
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
            unsafe { launch_grid(gpu, stream, k, grid, &args)? };
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
            unsafe { launch_grid(gpu, stream, k, grid, &args)? };
            launched.push(k, grid);
        }
        Provider::SortBy => {
            let block_sort = stage(kernels, Stage::BlockSort)?;
            let partition = stage(kernels, Stage::Partition)?;
            let merge = stage(kernels, Stage::Merge)?;
            if job.len == 0 {
                return Ok(launched);
            }
            let n = u32::try_from(job.len).map_err(|_| {
                fail(
                    &block_sort.kernel,
                    format!(
                        "{} elements: the merge sort takes at most 2^32 - 1 (32-bit offsets, as CUB's)",
                        job.len
                    ),
                )
            })?;
            // CUB's DispatchMergeSort: a block sort, then ceil(log2(tiles))
            // merge passes, ping-ponging so that the last one writes the
            // output.
            let tile = block_sort.kernel.launch.tile();
            let tiles = job.len.div_ceil(tile);
            let passes = tiles.next_power_of_two().trailing_zeros();
            let mut ping = passes % 2 == 0;
            let buffer = grow(
                gpu,
                stream,
                &mut scratch.sort_buffer,
                (job.len * element.size()) as usize,
                false,
            )?;
            let partitions = grow(
                gpu,
                stream,
                &mut scratch.partitions,
                ((tiles + 1) * 4) as usize,
                false,
            )?;
            let grid = u32::try_from(tiles)
                .map_err(|_| fail(&block_sort.kernel, format!("{tiles} tiles")))?;
            args.u32(ParamKind::Len, n)
                .u64(ParamKind::Buffer, buffer)
                .u64(ParamKind::Partitions, partitions)
                .u32(ParamKind::NumPartitions, grid + 1)
                .set(ParamKind::ItemsPerTile, (tile as i32).to_le_bytes())
                .set(ParamKind::Ping, [u8::from(ping)]);
            // SAFETY: `job`'s addresses are the caller's contract; the
            // scratch buffers are live and sized for this job.
            unsafe { launch_grid(gpu, stream, block_sort, grid, &args)? };
            launched.push(block_sort, grid);
            let partition_block = u64::from(partition.kernel.launch.block_size.max(1));
            let partition_grid = (tiles + 1).div_ceil(partition_block) as u32;
            for pass in 0..passes {
                args.set(ParamKind::Ping, [u8::from(ping)])
                    .u32(ParamKind::Target, 2u32 << pass);
                // CUB's agents wait for the grid before them
                // (griddepcontrol.wait) before they read: each launch may
                // start while the one before it drains, as CUB launches them.
                // SAFETY: as for `launch_grid` above.
                unsafe { launch_with(gpu, stream, partition, partition_grid, &args, true)? };
                // SAFETY: as for `launch_grid` above.
                unsafe { launch_with(gpu, stream, merge, grid, &args, true)? };
                launched.push(partition, partition_grid);
                launched.push(merge, grid);
                ping = !ping;
            }
        }
    }
    Ok(launched)
}

/// Bytes of the output a call writes for `n` elements (segments for
/// segmented reduce, the kept elements for select): what to copy back.
pub fn output_bytes(provider: Provider, signature: &Signature, n: u64) -> u64 {
    let out = match provider {
        Provider::Transform | Provider::Transform2 => &signature.ret,
        Provider::Reduce => return signature.element().size(),
        _ => signature.element(),
    };
    n * out.size()
}

/// The element types of the callback, in the order a call states them:
/// the parameters, then the result.
pub fn signature_types(signature: &Signature) -> Vec<&Element> {
    signature.params.iter().chain([&signature.ret]).collect()
}
