//! Run bundles: what the GPU runner checks a build against.
//!
//! A bundle names the manifest it belongs to (and carries that build's
//! fingerprint), and per registration: the kernel to launch, the capture
//! values, and cases of (size, seed, offset, init) with the result the host
//! reference computed. Inputs are never stored: both sides regenerate them
//! with [`crate::inputs`]. An optional benchmark section names the variants
//! to time.

use crate::{inputs, Fingerprint, InputSpec, Manifest, PackError, Provider, RegistrationId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The bundle format tag; a bundle carrying another is rejected.
pub const BUNDLE_FORMAT: &str = "bundle/1";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bundle {
    /// Always [`BUNDLE_FORMAT`].
    pub format: String,
    /// The fingerprint of the build this bundle belongs to; must equal the
    /// manifest's.
    pub fingerprint: Fingerprint,
    /// File name of the manifest, relative to the bundle's directory.
    pub manifest: String,
    /// Always [`inputs::GENERATOR`].
    pub generator: String,
    pub registrations: Vec<RegistrationRun>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<BenchSpec>,
}

/// The cases of one registration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RegistrationRun {
    pub registration: RegistrationId,
    /// A reduce kernel of this registration in the manifest.
    pub kernel: String,
    /// One value per capture (see [`crate::EnvLayout::pack`] for encodings).
    #[serde(default)]
    pub captures: Vec<CaptureValue>,
    pub cases: Vec<Case>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CaptureValue {
    pub name: String,
    pub value: Value,
}

/// One launch and its expected result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// Element count.
    pub size: u64,
    pub seed: u64,
    /// The input starts this many elements past a 256-byte aligned
    /// allocation (0..=3 exercises every 16-byte misalignment).
    #[serde(default)]
    pub offset: u32,
    pub init: i32,
    /// The host reference's result on the same input.
    pub expected: i32,
}

impl Case {
    pub fn input(&self) -> InputSpec {
        InputSpec {
            size: self.size,
            seed: self.seed,
        }
    }
}

/// The benchmark: every variant runs on the same `buffers`, rotated so that
/// no launch finds its input in L2, after `warmup` launches; each pass times
/// `repeats` launches with device events and keeps the median. Every variant
/// is timed `passes` times (default 2) to show the noise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchSpec {
    pub size: u64,
    /// One input buffer per seed.
    pub seeds: Vec<u64>,
    pub warmup: u32,
    pub repeats: u32,
    #[serde(default = "default_passes")]
    pub passes: u32,
    pub variants: Vec<BenchVariant>,
}

fn default_passes() -> u32 {
    2
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum BenchVariant {
    /// A kernel of the manifest (reduce or copy). A reduce kernel's captures
    /// are those of its registration in [`Bundle::registrations`].
    Kernel {
        label: String,
        kernel: String,
        #[serde(default)]
        init: i32,
        /// Expected result per seed (reduce only; empty: unchecked here, but
        /// all reduce variants of one registration and init must agree).
        #[serde(default)]
        expected: Vec<i32>,
    },
    /// `cuMemcpyDtoDAsync` of the buffer (the driver's copy, for reference).
    DriverMemcpy { label: String },
}

/// The benchmark's two ceilings: the provider's copy kernel and the
/// driver's device-to-device copy (both count bytes read and written).
pub fn copy_ceilings() -> Vec<BenchVariant> {
    vec![
        BenchVariant::Kernel {
            label: "copy kernel".into(),
            kernel: crate::copy_kernel::NAME.to_string(),
            init: 0,
            expected: vec![],
        },
        BenchVariant::DriverMemcpy {
            label: "driver memcpy".into(),
        },
    ]
}

impl BenchVariant {
    pub fn label(&self) -> &str {
        match self {
            BenchVariant::Kernel { label, .. } | BenchVariant::DriverMemcpy { label } => label,
        }
    }
}

/// A bundle that does not hold together, alone or with its manifest.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BundleError {
    #[error("bundle JSON: {0}")]
    Json(String),
    #[error("bundle format is `{found}`, this build reads `{BUNDLE_FORMAT}`")]
    Format { found: String },
    #[error(
        "bundle generator is `{found}`, this build generates `{}`",
        inputs::GENERATOR
    )]
    Generator { found: String },
    #[error("bundle belongs to build {bundle}, but the manifest is of build {manifest}: rebuild the bundle with the cubin")]
    FingerprintMismatch {
        bundle: Fingerprint,
        manifest: Fingerprint,
    },
    #[error("bundle: {0}")]
    Field(String),
    #[error("registration {registration}: {what}")]
    Registration {
        registration: RegistrationId,
        what: String,
    },
    #[error("registration {registration}: {source}")]
    Captures {
        registration: RegistrationId,
        source: PackError,
    },
    #[error("bench variant `{label}`: {what}")]
    Bench { label: String, what: String },
}

/// Element counts every bundle should cover: warp and block edges, odd
/// millions, and 2^28.
pub const STANDARD_SIZES: [u64; 10] = [
    1,
    31,
    32,
    33,
    1023,
    1024,
    1025,
    1_000_003,
    3_333_333,
    1 << 28,
];

/// The standard cases' (size, seed, offset): every standard size at offset
/// 0, plus misaligned starts (offsets 1..=3) at sizes that reach the vector
/// loop. Seeds are distinct per case.
pub fn standard_case_inputs() -> Vec<(InputSpec, u32)> {
    let mut cases: Vec<(InputSpec, u32)> = STANDARD_SIZES
        .iter()
        .enumerate()
        .map(|(i, &size)| {
            (
                InputSpec {
                    size,
                    seed: i as u64 + 1,
                },
                0,
            )
        })
        .collect();
    for (i, (size, offset)) in [(33u64, 1u32), (1025, 2), (1_000_003, 3), (3_333_333, 1)]
        .into_iter()
        .enumerate()
    {
        cases.push((
            InputSpec {
                size,
                seed: 101 + i as u64,
            },
            offset,
        ));
    }
    cases
}

impl Bundle {
    /// Parses a bundle and checks it alone (format, generator, shape).
    pub fn from_json(text: &str) -> Result<Bundle, BundleError> {
        let bundle: Bundle =
            serde_json::from_str(text).map_err(|e| BundleError::Json(e.to_string()))?;
        bundle.validate()?;
        Ok(bundle)
    }

    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a bundle always serialises");
        text.push('\n');
        text
    }

    pub fn validate(&self) -> Result<(), BundleError> {
        if self.format != BUNDLE_FORMAT {
            return Err(BundleError::Format {
                found: self.format.clone(),
            });
        }
        if self.generator != inputs::GENERATOR {
            return Err(BundleError::Generator {
                found: self.generator.clone(),
            });
        }
        if !self.fingerprint.is_well_formed() {
            return Err(BundleError::Field(format!(
                "fingerprint `{}` is not 64 lowercase hex digits",
                self.fingerprint
            )));
        }
        if self.manifest.is_empty() || self.manifest.contains('/') || self.manifest.contains('\\') {
            return Err(BundleError::Field(format!(
                "manifest `{}` must be a plain file name beside the bundle",
                self.manifest
            )));
        }
        if self.registrations.is_empty() {
            return Err(BundleError::Field(
                "no registrations: a bundle that checks nothing cannot pass".into(),
            ));
        }
        for run in &self.registrations {
            let fail = |what: String| BundleError::Registration {
                registration: run.registration,
                what,
            };
            if run.cases.is_empty() {
                return Err(fail("has no cases".into()));
            }
            for case in &run.cases {
                if case.size == 0 {
                    return Err(fail("a case has size 0".into()));
                }
                if case.offset > 3 {
                    return Err(fail(format!("case offset {} is not in 0..=3", case.offset)));
                }
            }
        }
        if let Some(bench) = &self.bench {
            let fail = |what: &str| BundleError::Field(format!("bench: {what}"));
            if bench.size == 0 || bench.seeds.is_empty() || bench.repeats == 0 || bench.passes == 0
            {
                return Err(fail("size, seeds, repeats and passes must be non-zero"));
            }
            for variant in &bench.variants {
                if let BenchVariant::Kernel {
                    label, expected, ..
                } = variant
                {
                    if !expected.is_empty() && expected.len() != bench.seeds.len() {
                        return Err(BundleError::Bench {
                            label: label.clone(),
                            what: format!(
                                "{} expected results for {} seeds",
                                expected.len(),
                                bench.seeds.len()
                            ),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// The captures of a registration as `(name, value)`, if the bundle has
    /// a run for it.
    pub fn captures(&self, registration: RegistrationId) -> Option<Vec<(String, Value)>> {
        self.registrations
            .iter()
            .find(|r| r.registration == registration)
            .map(|r| {
                r.captures
                    .iter()
                    .map(|c| (c.name.clone(), c.value.clone()))
                    .collect()
            })
    }

    /// Checks the bundle against the manifest it names, before any launch:
    /// same build, kernels exist with the right registration and provider,
    /// capture values pack into each environment.
    pub fn check_against(&self, manifest: &Manifest) -> Result<(), BundleError> {
        if self.fingerprint != manifest.fingerprint {
            return Err(BundleError::FingerprintMismatch {
                bundle: self.fingerprint.clone(),
                manifest: manifest.fingerprint.clone(),
            });
        }
        for run in &self.registrations {
            let fail = |what: String| BundleError::Registration {
                registration: run.registration,
                what,
            };
            let kernel = manifest
                .kernel(&run.kernel)
                .ok_or_else(|| fail(format!("kernel `{}` is not in the manifest", run.kernel)))?;
            // Bundles hold one i32 per case: they check `i32` reduces (every
            // other provider and type is checked through `native::gpu`).
            let i32_reduce = manifest
                .kernel_env(kernel)
                .and(kernel.registration.and_then(|r| manifest.callback(r)))
                .is_some_and(|c| c.signature == crate::Signature::fold(crate::Scalar::I32));
            if kernel.kind != Provider::Reduce || !i32_reduce {
                return Err(fail(format!(
                    "kernel `{}` is not an i32 reduce kernel",
                    run.kernel
                )));
            }
            if kernel.registration != Some(run.registration) {
                return Err(fail(format!(
                    "kernel `{}` belongs to registration {}",
                    run.kernel,
                    kernel
                        .registration
                        .map_or("none".to_string(), |r| r.to_string())
                )));
            }
            let env = manifest
                .kernel_env(kernel)
                .ok_or_else(|| fail("has no callback in the manifest".into()))?;
            let values: Vec<(String, Value)> = run
                .captures
                .iter()
                .map(|c| (c.name.clone(), c.value.clone()))
                .collect();
            env.pack(&values).map_err(|source| BundleError::Captures {
                registration: run.registration,
                source,
            })?;
        }
        // Every callback of the build is checked: a bundle that leaves one
        // out would pass without testing it.
        for callback in &manifest.callbacks {
            if !self
                .registrations
                .iter()
                .any(|r| r.registration == callback.registration)
            {
                return Err(BundleError::Registration {
                    registration: callback.registration,
                    what: "is a callback of the manifest but has no cases in the bundle".into(),
                });
            }
        }
        if let Some(bench) = &self.bench {
            for variant in &bench.variants {
                let BenchVariant::Kernel { label, kernel, .. } = variant else {
                    continue;
                };
                let fail = |what: String| BundleError::Bench {
                    label: label.clone(),
                    what,
                };
                let k = manifest
                    .kernel(kernel)
                    .ok_or_else(|| fail(format!("kernel `{kernel}` is not in the manifest")))?;
                if let (Some(registration), Some(env)) = (k.registration, manifest.kernel_env(k)) {
                    let values = self.captures(registration).unwrap_or_default();
                    env.pack(&values).map_err(|e| fail(e.to_string()))?;
                }
            }
        }
        Ok(())
    }
}
