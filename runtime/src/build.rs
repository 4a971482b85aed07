//! A build on disk (manifest + cubin), checked on the CPU, then resolved on
//! a GPU with every kernel's parameter ABI compared with the driver's view.

use crate::cubin::{read_cubin, CubinInfo};
use crate::gpu::{Function, FunctionResources, Gpu, Module};
use crate::RuntimeError;
use manifest::{param_offsets, Kernel, Manifest, ParamKind};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One cubin of a build, read and checked without a GPU.
#[derive(Debug)]
pub struct CubinFile {
    /// The name the manifest uses.
    pub name: String,
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub info: CubinInfo,
}

/// A manifest and its cubins, read and checked without a GPU.
#[derive(Debug)]
pub struct Build {
    pub manifest_path: PathBuf,
    pub manifest: Manifest,
    /// Every cubin of the build, the manifest's own first.
    pub cubins: Vec<CubinFile>,
}

pub(crate) fn read(path: &Path) -> Result<Vec<u8>, RuntimeError> {
    std::fs::read(path).map_err(|source| RuntimeError::Io {
        path: path.to_path_buf(),
        source,
    })
}

impl Build {
    /// Reads and validates the manifest, reads the cubins it names (beside
    /// it), checks each cubin's container, and that every kernel of the
    /// manifest is a function in its cubin.
    pub fn load(manifest_path: &Path) -> Result<Build, RuntimeError> {
        let text = read(manifest_path)?;
        let dir = manifest_path.parent().unwrap_or(Path::new("."));
        Build::from_parts(manifest_path, &text, |name| {
            let path = dir.join(name);
            read(&path).map(|bytes| (path, bytes))
        })
    }

    /// A build embedded in the program (`manifest::embed`): `origin` names
    /// it in messages (`rmir_artifacts:TARGET/manifest.json`).
    pub fn from_record(record: &manifest::embed::Record) -> Result<Build, RuntimeError> {
        let origin = PathBuf::from(format!("{}:{}", manifest::embed::SECTION, record.target));
        Build::from_parts(
            &origin.join("manifest.json"),
            record.manifest.as_bytes(),
            |name| {
                record
                    .cubins
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(n, b)| (origin.join(n), b.clone()))
                    .ok_or_else(|| RuntimeError::Manifest {
                        path: origin.clone(),
                        message: format!(
                            "the manifest names the cubin `{name}`, which is not embedded"
                        ),
                    })
            },
        )
    }

    /// Validates the manifest text, reads the cubins it names through
    /// `cubin`, checks each cubin's container, and that every kernel of the
    /// manifest is a function in its cubin.
    fn from_parts(
        manifest_path: &Path,
        text: &[u8],
        mut cubin: impl FnMut(&str) -> Result<(PathBuf, Vec<u8>), RuntimeError>,
    ) -> Result<Build, RuntimeError> {
        let text = std::str::from_utf8(text).map_err(|_| RuntimeError::Manifest {
            path: manifest_path.to_path_buf(),
            message: "not UTF-8".into(),
        })?;
        let manifest = Manifest::from_json(text).map_err(|message| RuntimeError::Manifest {
            path: manifest_path.to_path_buf(),
            message,
        })?;
        let mut cubins = Vec::new();
        for name in manifest.cubins() {
            let (path, bytes) = cubin(name)?;
            let info = read_cubin(&bytes).map_err(|message| RuntimeError::Cubin {
                path: path.clone(),
                message,
            })?;
            cubins.push(CubinFile {
                name: name.to_string(),
                path,
                bytes,
                info,
            });
        }
        let build = Build {
            manifest_path: manifest_path.to_path_buf(),
            manifest,
            cubins,
        };
        for kernel in &build.manifest.kernels {
            let cubin = build.cubin_of(kernel);
            if !cubin.info.functions.iter().any(|f| f == &kernel.name) {
                return Err(RuntimeError::KernelMissing {
                    path: cubin.path.clone(),
                    kernel: kernel.name.clone(),
                    available: cubin.info.functions.join(", "),
                });
            }
        }
        Ok(build)
    }

    /// The cubin that holds `kernel` (every one the manifest names was read).
    pub fn cubin_of(&self, kernel: &Kernel) -> &CubinFile {
        let name = self.manifest.cubin_of(kernel);
        self.cubins
            .iter()
            .find(|c| c.name == name)
            .unwrap_or(&self.cubins[0])
    }
}

/// A kernel resolved in the loaded module, with its manifest entry.
pub struct ResolvedKernel<'m> {
    pub kernel: Kernel,
    pub function: Function<'m>,
    pub resources: FunctionResources,
    /// Whether the parameter layout was checked with cuFuncGetParamInfo.
    pub params_checked: bool,
    /// Blocks of the manifest's size that fit on one multiprocessor.
    pub resident_blocks_per_sm: u32,
}

/// The cubins loaded on a GPU, every kernel resolved and checked.
pub struct Loaded<'g> {
    /// `(cubin name, module)`, in the build's order.
    pub modules: Vec<(String, Module<'g>)>,
}

impl<'g> Loaded<'g> {
    pub fn load(gpu: &'g Gpu, build: &Build) -> Result<Loaded<'g>, RuntimeError> {
        let mut modules = Vec::new();
        for c in &build.cubins {
            modules.push((c.name.clone(), gpu.load_module(&c.bytes)?));
        }
        Ok(Loaded { modules })
    }

    /// Resolves every kernel of the manifest and checks, before any launch:
    /// the function exists; its parameter count, offsets and sizes equal the
    /// manifest's (where the driver can tell); it accepts the block size.
    pub fn resolve(
        &self,
        manifest: &Manifest,
    ) -> Result<BTreeMap<String, ResolvedKernel<'_>>, RuntimeError> {
        let mut kernels = BTreeMap::new();
        for kernel in &manifest.kernels {
            let mismatch = |what: String| RuntimeError::AbiMismatch {
                kernel: kernel.name.clone(),
                what,
            };
            let cubin = manifest.cubin_of(kernel);
            let module = self
                .modules
                .iter()
                .find(|(name, _)| name == cubin)
                .map(|(_, m)| m)
                .ok_or_else(|| RuntimeError::KernelMissing {
                    path: PathBuf::from(cubin),
                    kernel: kernel.name.clone(),
                    available: "(the cubin was not loaded)".into(),
                })?;
            let function =
                module
                    .function(&kernel.name)?
                    .ok_or_else(|| RuntimeError::KernelMissing {
                        path: PathBuf::from(cubin),
                        kernel: kernel.name.clone(),
                        available: "(see cuobjdump -elf)".into(),
                    })?;
            let (offsets, _) = param_offsets(&kernel.params);
            let layout = function.param_layout(kernel.params.len())?;
            if let Some(layout) = &layout {
                if layout.len() != kernel.params.len() {
                    return Err(mismatch(format!(
                        "the kernel takes {} parameters, the manifest lists {}",
                        layout.len(),
                        kernel.params.len()
                    )));
                }
                for (i, ((offset, size), param)) in layout.iter().zip(&kernel.params).enumerate() {
                    if *size != param.size || *offset != offsets[i] {
                        let env_note = if param.kind == ParamKind::Env {
                            " (the environment layout in the manifest disagrees with the compiled struct)"
                        } else {
                            ""
                        };
                        return Err(mismatch(format!(
                            "parameter {i} ({:?}) is {size} bytes at offset {offset} in the cubin, \
                             {} bytes at offset {} in the manifest{env_note}",
                            param.kind, param.size, offsets[i]
                        )));
                    }
                }
            }
            let resources = function.resources()?;
            let threads = kernel.launch.threads();
            if (resources.max_threads_per_block as i64) < i64::from(threads) {
                return Err(mismatch(format!(
                    "the manifest launches {threads} threads per block, the kernel allows at most {}",
                    resources.max_threads_per_block
                )));
            }
            if kernel.launch.dynamic_shared_bytes > 48 * 1024 {
                function.allow_dynamic_shared(kernel.launch.dynamic_shared_bytes)?;
            }
            let resident_blocks_per_sm =
                function.resident_blocks_per_sm(threads, kernel.launch.dynamic_shared_bytes)?;
            if resident_blocks_per_sm == 0 {
                return Err(mismatch(format!(
                    "no block of {threads} threads fits on a multiprocessor ({} registers per thread)",
                    resources.registers
                )));
            }
            kernels.insert(
                kernel.name.clone(),
                ResolvedKernel {
                    kernel: kernel.clone(),
                    function,
                    resources,
                    params_checked: layout.is_some(),
                    resident_blocks_per_sm,
                },
            );
        }
        Ok(kernels)
    }
}
