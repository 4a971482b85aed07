//! Launching provider kernels with the manifest's parameter ABI and launch
//! facts.

use crate::build::ResolvedKernel;
use crate::gpu::{DeviceBuffer, Gpu};
use crate::RuntimeError;
use manifest::{GridPolicy, Kernel, ParamKind, Provider};

/// Device memory a reduce launch needs besides its input: one partial per
/// block (int2), the last-block counter (kept zero between launches by the
/// kernel itself) and the result.
pub struct Workspace<'g> {
    pub partials: DeviceBuffer<'g>,
    pub counter: DeviceBuffer<'g>,
    pub output: DeviceBuffer<'g>,
    pub max_grid: u32,
}

impl<'g> Workspace<'g> {
    /// Sized for the largest grid any of `kernels` can get under `policy`
    /// (or its own policy).
    pub fn new<'k>(
        gpu: &'g Gpu,
        kernels: impl IntoIterator<Item = &'k Kernel>,
        policy: Option<GridPolicy>,
    ) -> Result<Workspace<'g>, RuntimeError> {
        let max_grid = kernels
            .into_iter()
            .map(|k| {
                policy
                    .unwrap_or(k.launch.grid)
                    .max_grid_size(gpu.multiprocessors)
            })
            .max()
            .unwrap_or(1)
            .max(1);
        let partials = gpu.alloc(max_grid as usize * 8)?;
        let counter = gpu.alloc(4)?;
        counter.fill_bytes(0)?;
        let output = gpu.alloc(4)?;
        Ok(Workspace {
            partials,
            counter,
            output,
            max_grid,
        })
    }

    pub fn read_result(&self) -> Result<i32, RuntimeError> {
        let mut out = [0i32; 1];
        self.output.download(0, &mut out)?;
        Ok(out[0])
    }
}

/// The values a launch passes, by parameter kind.
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

fn param_bytes(kernel: &Kernel, args: &LaunchArgs<'_>) -> Result<Vec<Vec<u8>>, RuntimeError> {
    let fail = |what: String| RuntimeError::Launch {
        kernel: kernel.name.clone(),
        what,
    };
    let workspace = || {
        args.workspace
            .ok_or_else(|| fail("a reduce launch needs a workspace".into()))
    };
    let mut params = Vec::with_capacity(kernel.params.len());
    for param in &kernel.params {
        let bytes = match param.kind {
            ParamKind::Input => args.input.to_le_bytes().to_vec(),
            ParamKind::Len => args.len.to_le_bytes().to_vec(),
            ParamKind::Init => args.init.to_le_bytes().to_vec(),
            ParamKind::Partials => workspace()?.partials.address(0).to_le_bytes().to_vec(),
            ParamKind::Counter => workspace()?.counter.address(0).to_le_bytes().to_vec(),
            ParamKind::Output => match kernel.provider {
                Provider::ReduceI32 => workspace()?.output.address(0).to_le_bytes().to_vec(),
                Provider::CopyI32 => args
                    .copy_output
                    .ok_or_else(|| fail("a copy launch needs an output buffer".into()))?
                    .to_le_bytes()
                    .to_vec(),
            },
            ParamKind::Env => args.env.to_vec(),
        };
        if bytes.len() as u64 != param.size {
            return Err(fail(format!(
                "{:?} parameter is {} bytes in the manifest, {} were packed",
                param.kind,
                param.size,
                bytes.len()
            )));
        }
        params.push(bytes);
    }
    Ok(params)
}

/// The policy's cap lowered to what is resident at once, so the grid-stride
/// loop runs in one wave (a second, partial wave would leave most
/// multiprocessors idle while it runs).
pub fn resident_policy(policy: GridPolicy, resident_blocks_per_sm: u32) -> GridPolicy {
    match policy {
        GridPolicy::TilesCappedBySms { blocks_per_sm } => GridPolicy::TilesCappedBySms {
            blocks_per_sm: blocks_per_sm.min(resident_blocks_per_sm.max(1)),
        },
    }
}

/// Launches (asynchronously) and returns the grid size used.
pub fn launch(
    gpu: &Gpu,
    resolved: &ResolvedKernel<'_>,
    args: &LaunchArgs<'_>,
) -> Result<u32, RuntimeError> {
    let kernel = &resolved.kernel;
    let policy = resident_policy(
        args.grid_policy.unwrap_or(kernel.launch.grid),
        resolved.resident_blocks_per_sm,
    );
    let grid = policy.grid_size(args.len, &kernel.launch, gpu.multiprocessors);
    if let Some(ws) = args.workspace {
        if kernel.provider == Provider::ReduceI32 && grid > ws.max_grid {
            return Err(RuntimeError::Launch {
                kernel: kernel.name.clone(),
                what: format!(
                    "grid {grid} exceeds the workspace's {} partials",
                    ws.max_grid
                ),
            });
        }
    }
    let params = param_bytes(kernel, args)?;
    gpu.launch(
        &resolved.function,
        grid,
        kernel.launch.block_size,
        kernel.launch.dynamic_shared_bytes,
        &params,
    )
    .map_err(|e| RuntimeError::Launch {
        kernel: kernel.name.clone(),
        what: e.to_string(),
    })?;
    Ok(grid)
}
