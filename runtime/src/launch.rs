//! Launching provider kernels with the manifest's parameter ABI and launch
//! facts: each parameter's bytes come from an [`Args`] by kind, in the
//! order and at the sizes the manifest lists.

use crate::build::ResolvedKernel;
use crate::gpu::{DeviceBuffer, Gpu, Stream, INLINE_PARAMS};
use crate::RuntimeError;
use manifest::{GridPolicy, Kernel, KernelKind, ParamKind, Provider};

/// Device memory a reduce or chain launch needs besides its input: one
/// partial per block (up to 32 bytes: a chain pick's 8-byte value, its flag
/// and its index), the last-block counter (kept zero between launches by
/// the kernel itself) and the result record (`provider::result_record`).
pub struct Workspace<'g> {
    pub partials: DeviceBuffer<'g>,
    pub counter: DeviceBuffer<'g>,
    pub output: DeviceBuffer<'g>,
    pub max_grid: u32,
}

/// Bytes of one partial of a scalar, the largest (`rcb::PickPartial` of an
/// 8-byte value); also the most a scalar's result record takes.
const PARTIAL_BYTES: usize = 32;

/// Bytes of one partial (and of the result record) for `kernel`: a
/// composite element's `rcb::Partial` is its value and a flag, in whole
/// 16 bytes at most (providers/reduce.cuh), more than a scalar's when the
/// element is larger than 12 bytes.
fn partial_bytes(kernel: &Kernel) -> usize {
    kernel
        .params
        .iter()
        .filter(|p| p.kind == ParamKind::Init)
        .map(|p| (p.size as usize + 4).div_ceil(16) * 16)
        .fold(PARTIAL_BYTES, usize::max)
}

impl<'g> Workspace<'g> {
    /// Sized for the largest grid any of `kernels` can get under `policy`
    /// (or its own policy).
    pub fn new<'k>(
        gpu: &'g Gpu,
        kernels: impl IntoIterator<Item = &'k Kernel>,
        policy: Option<GridPolicy>,
    ) -> Result<Workspace<'g>, RuntimeError> {
        let kernels: Vec<&Kernel> = kernels.into_iter().collect();
        let max_grid = kernels
            .iter()
            .filter_map(|k| {
                policy
                    .unwrap_or(k.launch.grid)
                    .max_grid_size(gpu.multiprocessors)
            })
            .max()
            .unwrap_or(1)
            .max(1);
        let partial = kernels
            .iter()
            .map(|k| partial_bytes(k))
            .fold(PARTIAL_BYTES, usize::max);
        let partials = gpu.alloc(max_grid as usize * partial)?;
        let counter = gpu.alloc(4)?;
        counter.fill_bytes(0)?;
        let output = gpu.alloc(partial)?;
        Ok(Workspace {
            partials,
            counter,
            output,
            max_grid,
        })
    }

    /// The i32 result of a reduce.
    pub fn read_result(&self) -> Result<i32, RuntimeError> {
        let mut out = [0i32; 1];
        self.output.download(0, &mut out)?;
        Ok(out[0])
    }
}

/// The values of one launch's parameters, by kind. A scalar's bytes are
/// held inline: a call's launches set a dozen of them, and a host with
/// fast launches sees every allocation.
#[derive(Default)]
pub struct Args {
    values: Vec<(ParamKind, ParamBytes)>,
}

/// One parameter's bytes: up to 16 inline, more on the heap.
enum ParamBytes {
    Inline { len: u8, bytes: [u8; 16] },
    Heap(Vec<u8>),
}

impl ParamBytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            ParamBytes::Inline { len, bytes } => &bytes[..*len as usize],
            ParamBytes::Heap(v) => v,
        }
    }

    fn of(b: &[u8]) -> ParamBytes {
        if b.len() > 16 {
            return ParamBytes::Heap(b.to_vec());
        }
        let mut bytes = [0u8; 16];
        bytes[..b.len()].copy_from_slice(b);
        ParamBytes::Inline {
            len: b.len() as u8,
            bytes,
        }
    }
}

impl Args {
    pub fn new() -> Args {
        Args {
            values: Vec::with_capacity(16),
        }
    }

    /// Sets (or replaces) the bytes of every parameter of `kind`.
    pub fn set(&mut self, kind: ParamKind, bytes: impl AsRef<[u8]>) -> &mut Args {
        let bytes = ParamBytes::of(bytes.as_ref());
        match self.values.iter_mut().find(|(k, _)| *k == kind) {
            Some(slot) => slot.1 = bytes,
            None => self.values.push((kind, bytes)),
        }
        self
    }

    pub fn u64(&mut self, kind: ParamKind, v: u64) -> &mut Args {
        self.set(kind, v.to_le_bytes())
    }

    pub fn u32(&mut self, kind: ParamKind, v: u32) -> &mut Args {
        self.set(kind, v.to_le_bytes())
    }

    /// The bytes set for parameters of `kind`, if any.
    fn get(&self, kind: ParamKind) -> Option<&[u8]> {
        self.values
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, b)| b.as_slice())
    }

    /// Forgets every value, keeping the room they took (a lane's launches
    /// reuse one `Args`).
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// The parameter buffer of `kernel`, checked against its sizes: in
    /// `inline` when it has no more than [`INLINE_PARAMS`] parameters,
    /// else in `heap`.
    fn pack<'a, 'p>(
        &'a self,
        kernel: &Kernel,
        inline: &'p mut [&'a [u8]; INLINE_PARAMS],
        heap: &'p mut Vec<&'a [u8]>,
    ) -> Result<&'p [&'a [u8]], RuntimeError> {
        let n = kernel.params.len();
        for (i, param) in kernel.params.iter().enumerate() {
            let bytes = self.get(param.kind).ok_or_else(|| RuntimeError::Launch {
                kernel: kernel.name.clone(),
                what: format!("no value for its {:?} parameter", param.kind),
            })?;
            if bytes.len() as u64 != param.size {
                return Err(RuntimeError::Launch {
                    kernel: kernel.name.clone(),
                    what: format!(
                        "{:?} parameter is {} bytes in the manifest, {} were packed",
                        param.kind,
                        param.size,
                        bytes.len()
                    ),
                });
            }
            if n <= INLINE_PARAMS {
                inline[i] = bytes;
            } else {
                heap.push(bytes);
            }
        }
        Ok(if n <= INLINE_PARAMS {
            &inline[..n]
        } else {
            heap
        })
    }
}

/// The policy's cap lowered to what is resident at once, so the grid-stride
/// loop runs in one wave (a second, partial wave would leave most
/// multiprocessors idle while it runs); a tile stream gets every resident
/// block.
pub fn resident_policy(policy: GridPolicy, resident_blocks_per_sm: u32) -> GridPolicy {
    match policy {
        GridPolicy::TilesCappedBySms { blocks_per_sm } => GridPolicy::TilesCappedBySms {
            blocks_per_sm: blocks_per_sm.min(resident_blocks_per_sm.max(1)),
        },
        GridPolicy::ResidentTiles => GridPolicy::TilesCappedBySms {
            blocks_per_sm: resident_blocks_per_sm.max(1),
        },
        other => other,
    }
}

/// The grid for `n` elements (segments, for segmented reduce), under the
/// kernel's policy or `policy`.
pub fn grid_for(
    gpu: &Gpu,
    resolved: &ResolvedKernel<'_>,
    n: u64,
    policy: Option<GridPolicy>,
) -> u32 {
    let kernel = &resolved.kernel;
    let policy = resident_policy(
        policy.unwrap_or(kernel.launch.grid),
        resolved.resident_blocks_per_sm,
    );
    policy.grid_size(n, &kernel.launch, gpu.multiprocessors)
}

/// Launches (asynchronously) on `grid` blocks.
///
/// # Safety
///
/// As [`Gpu::launch`]: every device address in `args` points into a live
/// allocation with room for what the kernel reads and writes for the sizes
/// in `args`, until the stream has finished it.
pub unsafe fn launch_grid(
    gpu: &Gpu,
    stream: &Stream,
    resolved: &ResolvedKernel<'_>,
    grid: u32,
    args: &Args,
) -> Result<(), RuntimeError> {
    // SAFETY: the caller's contract.
    unsafe { launch_with(gpu, stream, resolved, grid, args, false) }
}

/// [`launch_grid`], with programmatic dependent launch allowed when
/// `dependent` (only for kernels that wait for the grid before them:
/// [`Gpu::launch_dependent`]).
///
/// # Safety
///
/// As [`Gpu::launch`]: every device address in `args` points into a live
/// allocation with room for what the kernel reads and writes for the sizes
/// in `args`, until the stream has finished it.
pub unsafe fn launch_with(
    gpu: &Gpu,
    stream: &Stream,
    resolved: &ResolvedKernel<'_>,
    grid: u32,
    args: &Args,
    dependent: bool,
) -> Result<(), RuntimeError> {
    let kernel = &resolved.kernel;
    let mut inline = [&[][..]; INLINE_PARAMS];
    let mut heap = Vec::new();
    let params = args.pack(kernel, &mut inline, &mut heap)?;
    let (grid, block, shared) = (
        grid.max(1),
        kernel.launch.threads(),
        kernel.launch.dynamic_shared_bytes,
    );
    // SAFETY: the caller's contract covers the addresses in `params`.
    unsafe {
        if dependent {
            gpu.launch_dependent(stream, &resolved.function, grid, block, shared, params)
        } else {
            gpu.launch(stream, &resolved.function, grid, block, shared, params)
        }
    }
    .map_err(|e| RuntimeError::Launch {
        kernel: kernel.name.clone(),
        what: e.to_string(),
    })
}

/// The values a reduce or copy launch passes (the bundle runner's and the
/// bandwidth benchmark's kernels).
pub struct LaunchArgs<'a> {
    pub input: u64,
    pub len: u64,
    pub init: i32,
    /// Reduce: the workspace. Copy: unused.
    pub workspace: Option<&'a Workspace<'a>>,
    /// Copy: the destination address.
    pub copy_output: Option<u64>,
    /// The packed environment (empty for none).
    pub env: &'a [u8],
    /// Overrides the kernel's grid policy (benchmark sweeps).
    pub grid_policy: Option<GridPolicy>,
}

/// Launches an i32 reduce or the copy kernel (asynchronously, on the null
/// stream) and returns
/// the grid size used.
///
/// # Safety
///
/// `args.input` holds `args.len` elements (4-byte words for the copy) in a
/// live allocation, the copy's `copy_output` has room for as many, and both
/// stay allocated until the stream has finished the kernel (the workspace
/// is checked here).
pub unsafe fn launch(
    gpu: &Gpu,
    resolved: &ResolvedKernel<'_>,
    args: &LaunchArgs<'_>,
) -> Result<u32, RuntimeError> {
    let kernel = &resolved.kernel;
    let fail = |what: String| RuntimeError::Launch {
        kernel: kernel.name.clone(),
        what,
    };
    let grid = grid_for(gpu, resolved, args.len, args.grid_policy);
    let mut values = Args::new();
    values
        .u64(ParamKind::Input, args.input)
        .u64(ParamKind::Len, args.len)
        .set(ParamKind::Init, args.init.to_le_bytes())
        .set(ParamKind::Env, args.env);
    match kernel.kind {
        KernelKind::Provider(Provider::Reduce) => {
            let ws = args
                .workspace
                .ok_or_else(|| fail("a reduce launch needs a workspace".into()))?;
            if grid > ws.max_grid {
                return Err(fail(format!(
                    "grid {grid} exceeds the workspace's {} partials",
                    ws.max_grid
                )));
            }
            values
                .u64(ParamKind::Partials, ws.partials.address(0))
                .u64(ParamKind::Counter, ws.counter.address(0))
                .u64(ParamKind::Output, ws.output.address(0));
        }
        KernelKind::Copy => {
            let out = args
                .copy_output
                .ok_or_else(|| fail("a copy launch needs an output buffer".into()))?;
            values.u64(ParamKind::Output, out);
        }
        other => {
            return Err(fail(format!(
                "a {} kernel is launched by `dispatch`, not as a reduce",
                other.name()
            )))
        }
    }
    // SAFETY: the caller's contract for the input and output; the
    // workspace's buffers are live and hold `grid` partials (checked above).
    unsafe { launch_grid(gpu, Stream::null(), resolved, grid, &values)? };
    Ok(grid)
}

#[cfg(test)]
mod tests {
    use super::{Args, ParamKind, INLINE_PARAMS};
    use manifest::{GridPolicy, Kernel, KernelKind, LaunchFacts, Param, Stage, Variant};

    /// A kernel of `n` parameters, every one an 8-byte input address.
    fn kernel(n: usize) -> Kernel {
        Kernel {
            name: format!("k{n}"),
            kind: KernelKind::Copy,
            stage: Stage::default(),
            variant: Variant::Plain,
            registration: None,
            thunk: None,
            params: vec![
                Param {
                    kind: ParamKind::Input,
                    size: 8,
                    align: 8,
                };
                n
            ],
            launch: LaunchFacts {
                block_size: 256,
                items_per_thread: 1,
                dynamic_shared_bytes: 0,
                grid: GridPolicy::OneBlockPerTile,
                min_blocks_per_sm: 0,
                extra_warps: 0,
            },
            cubin: None,
        }
    }

    #[test]
    fn a_kernel_s_parameters_pack_in_order_on_the_stack_or_past_it_on_the_heap() {
        let mut args = Args::new();
        args.u64(ParamKind::Input, 0x0102_0304_0506_0708);
        let want = 0x0102_0304_0506_0708u64.to_le_bytes();
        for n in [0, 3, INLINE_PARAMS, INLINE_PARAMS + 1, 40] {
            let mut inline = [&[][..]; INLINE_PARAMS];
            let mut heap = Vec::new();
            let packed = args.pack(&kernel(n), &mut inline, &mut heap).unwrap();
            assert_eq!(packed.len(), n);
            assert!(packed.iter().all(|p| *p == &want[..]), "{n} parameters");
            let spilled = heap.len();
            assert_eq!(spilled, if n > INLINE_PARAMS { n } else { 0 }, "{n}");
        }
        // A size the manifest does not say is refused, as a missing value.
        args.u32(ParamKind::Input, 1);
        let mut inline = [&[][..]; INLINE_PARAMS];
        let e = args
            .pack(&kernel(2), &mut inline, &mut Vec::new())
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("8 bytes in the manifest, 4 were packed"),
            "{e}"
        );
        let e = Args::new()
            .pack(&kernel(1), &mut inline, &mut Vec::new())
            .unwrap_err();
        assert!(
            e.to_string().contains("no value for its Input parameter"),
            "{e}"
        );
    }

    fn bytes(args: &Args, kind: ParamKind) -> Option<&[u8]> {
        args.get(kind)
    }

    #[test]
    fn parameters_keep_their_bytes_inline_or_not_and_a_later_set_replaces() {
        let mut args = Args::new();
        let env: Vec<u8> = (0..40).collect();
        args.u64(ParamKind::Input, 0x0102_0304_0506_0708)
            .u32(ParamKind::HasInit, 1)
            .set(ParamKind::Env, &env)
            .set(ParamKind::Init, [7u8; 16])
            .set(ParamKind::Ping, [1u8])
            .set(ParamKind::Output2, []);
        assert_eq!(
            bytes(&args, ParamKind::Input),
            Some(&0x0102_0304_0506_0708u64.to_le_bytes()[..])
        );
        assert_eq!(bytes(&args, ParamKind::HasInit), Some(&[1u8, 0, 0, 0][..]));
        assert_eq!(bytes(&args, ParamKind::Env), Some(&env[..]));
        assert_eq!(bytes(&args, ParamKind::Init), Some(&[7u8; 16][..]));
        assert_eq!(bytes(&args, ParamKind::Ping), Some(&[1u8][..]));
        assert_eq!(bytes(&args, ParamKind::Output2), Some(&[][..]));
        assert_eq!(bytes(&args, ParamKind::Len), None);
        args.set(ParamKind::Env, [9u8; 3]).u64(ParamKind::Input, 5);
        assert_eq!(bytes(&args, ParamKind::Env), Some(&[9u8; 3][..]));
        assert_eq!(
            bytes(&args, ParamKind::Input),
            Some(&5u64.to_le_bytes()[..])
        );
        assert_eq!(args.values.len(), 6);
    }
}
