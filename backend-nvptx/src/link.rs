//! Linking device code with nvJitLink, with the options derived from what
//! the inputs hold rather than from their file names.
//!
//! Rules (measured with nvJitLink 13.0):
//! - `-lto` exactly when at least one input carries LTOIR, wherever it sits:
//!   bare, in a fatbin, in a host object's `.nv_fatbin`/`__nv_relfatbin`
//!   section, or in any member of a static library. LTOIR without `-lto`
//!   fails ("LTO-IR input cannot be used without LTO enabled"), and `-lto -g`
//!   with no LTOIR input fails (NVVM_ERROR_NO_MODULE_IN_PROGRAM).
//! - `-ptx` (PTX output) only when every input carries LTOIR.
//! - `-g` and `-lineinfo` pass through.
//! - CUDA sources (`.cu`) are compiled by NVRTC with `-rdc=true`, to LTOIR
//!   when another input carries LTOIR (or PTX output is asked), else to PTX.
//! - An LTOIR definition referenced only from non-LTO code (PTX or cubin) is
//!   dropped by nvJitLink ("Undefined reference"); a failed link that looks
//!   like this gets a note saying so and how to fix it.

use std::fmt::{self, Write as _};
use std::path::PathBuf;

use serde::Serialize;

use crate::arch::Arch;
use crate::container::{self, ContainerError, Description, ItemKind};
use crate::isolate::{signal_name, Isolation, Job, JobError, JobInput, JobOutput, Stage};
use crate::nvjitlink::{InputType, NvJitLinkError};
use crate::nvrtc::{self, NvrtcError, NvrtcOptions, NvrtcTarget};

/// One input to a link: its name (shown in nvJitLink's logs), its bytes,
/// and what they were classified as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInput {
    pub name: String,
    pub bytes: Vec<u8>,
    pub description: Description,
}

impl LinkInput {
    /// Classifies `bytes`; `name` is the file name (`.cu` marks CUDA source).
    pub fn new(name: impl Into<String>, bytes: Vec<u8>) -> Result<Self, ContainerError> {
        let name = name.into();
        let description = container::describe(&name, &bytes)?;
        Ok(LinkInput {
            name,
            bytes,
            description,
        })
    }

    /// How nvJitLink is told about this input; `None` for CUDA source, which
    /// is compiled first.
    pub fn input_type(&self) -> Option<InputType> {
        match self.description.kind() {
            ItemKind::CudaSource => None,
            ItemKind::Ptx => Some(InputType::Ptx),
            ItemKind::Ltoir => Some(InputType::Ltoir),
            ItemKind::Cubin => Some(InputType::Cubin),
            ItemKind::Fatbin => Some(InputType::Fatbin),
            ItemKind::HostObject => Some(InputType::Object),
            ItemKind::Library => Some(InputType::Library),
        }
    }

    fn is_cuda_source(&self) -> bool {
        self.description.kind() == ItemKind::CudaSource
    }
}

/// What the link produces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub enum LinkOutput {
    /// A cubin for the target architecture.
    #[default]
    Cubin,
    /// PTX (`-lto -ptx`); every input must carry LTOIR.
    Ptx,
}

/// Everything a link needs. Build it, look at [`LinkPlan::explain`], then
/// [`LinkPlan::link`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkPlan {
    pub arch: Arch,
    pub inputs: Vec<LinkInput>,
    /// `-g`: debug information (and `-G` for CUDA sources).
    pub debug: bool,
    /// `-lineinfo`: line tables (also for CUDA sources).
    pub lineinfo: bool,
    pub output: LinkOutput,
    /// More nvJitLink options, appended as given (e.g. `-O3`, `-Xptxas=-v`).
    pub extra_options: Vec<String>,
    /// `-I` folders for CUDA sources, after the CCCL headers.
    pub cuda_include_dirs: Vec<PathBuf>,
    /// Where nvJitLink runs: in a child process for input that did not come
    /// from this process (see [`crate::isolate`]).
    pub isolation: Isolation,
}

impl LinkPlan {
    /// A plan for `arch` with no inputs, no debug information, cubin output.
    pub fn new(arch: Arch) -> Self {
        LinkPlan {
            arch,
            inputs: Vec::new(),
            debug: false,
            lineinfo: false,
            output: LinkOutput::Cubin,
            extra_options: Vec::new(),
            cuda_include_dirs: Vec::new(),
            isolation: Isolation::InProcess,
        }
    }

    /// Adds an input (builder style).
    pub fn with_input(mut self, input: LinkInput) -> Self {
        self.inputs.push(input);
        self
    }

    fn carries_ltoir(&self) -> bool {
        self.inputs.iter().any(|i| i.description.carries_ltoir())
    }

    /// The target NVRTC compiles CUDA sources to for this plan.
    fn cuda_target(&self) -> NvrtcTarget {
        if self.carries_ltoir() || self.output == LinkOutput::Ptx {
            NvrtcTarget::Ltoir
        } else {
            NvrtcTarget::Ptx
        }
    }

    fn nvrtc_options(&self, target: NvrtcTarget) -> NvrtcOptions {
        let mut options = NvrtcOptions::new(self.arch, target);
        options.debug = self.debug;
        options.lineinfo = self.lineinfo;
        options
            .include_dirs
            .extend(self.cuda_include_dirs.iter().cloned());
        options
    }

    /// Checks the plan and says which options the link will use and why.
    pub fn explain(&self) -> Result<LinkExplanation, LinkError> {
        if self.inputs.is_empty() {
            return Err(LinkError::NoInputs);
        }
        for input in &self.inputs {
            let root = &input.description.root;
            if !input.is_cuda_source() && !root.carries_ltoir() && !root.carries_non_ltoir_code() {
                return Err(LinkError::NoDeviceCode {
                    input: input.name.clone(),
                    kind: root.kind,
                });
            }
        }
        let cuda_target = self.cuda_target();
        // After compiling CUDA sources, does this input hold LTOIR?
        let ltoir_after_compile = |input: &LinkInput| {
            input.description.carries_ltoir()
                || (input.is_cuda_source() && cuda_target == NvrtcTarget::Ltoir)
        };

        let mut flags = vec![FlagChoice {
            flag: format!("-arch={}", self.arch.sm()),
            reason: "target architecture".to_string(),
            decided_by: Vec::new(),
        }];
        let mut notes = Vec::new();

        let lto_inputs: Vec<String> = self
            .inputs
            .iter()
            .filter(|i| ltoir_after_compile(i))
            .map(|i| {
                if i.is_cuda_source() {
                    format!("{} (compiled to LTOIR)", i.name)
                } else {
                    let paths = i.description.ltoir_paths();
                    // A bare LTOIR file's only path is its own name.
                    if paths == [i.name.clone()] {
                        i.name.clone()
                    } else {
                        format!("{} ({})", i.name, paths.join(", "))
                    }
                }
            })
            .collect();
        let lto = !lto_inputs.is_empty();
        if lto {
            flags.push(FlagChoice {
                flag: "-lto".to_string(),
                reason: "at least one input carries LTOIR".to_string(),
                decided_by: lto_inputs.clone(),
            });
            // nvJitLink's link-time optimiser contracts `fmul` + `fadd` into
            // `fma` by default whatever libNVVM was told; Rust never
            // contracts, so results would differ from the host's.
            flags.push(FlagChoice {
                flag: "-fma=0".to_string(),
                reason: "LTO must not contract floating-point multiply and add (Rust semantics)"
                    .to_string(),
                decided_by: lto_inputs,
            });
        } else {
            notes.push(
                "-lto not set: no input carries LTOIR (nvJitLink rejects -lto with -g when no input is LTOIR)"
                    .to_string(),
            );
        }

        if self.output == LinkOutput::Ptx {
            let not_lto: Vec<String> = self
                .inputs
                .iter()
                .filter(|i| !ltoir_after_compile(i))
                .map(|i| format!("{} ({})", i.name, i.description.kind()))
                .collect();
            if !not_lto.is_empty() {
                return Err(LinkError::PtxOutputNeedsLtoir { inputs: not_lto });
            }
            flags.push(FlagChoice {
                flag: "-ptx".to_string(),
                reason: "PTX output requested and every input carries LTOIR".to_string(),
                decided_by: Vec::new(),
            });
        }
        if self.debug {
            flags.push(FlagChoice {
                flag: "-g".to_string(),
                reason: "debug information requested".to_string(),
                decided_by: Vec::new(),
            });
        }
        if self.lineinfo {
            flags.push(FlagChoice {
                flag: "-lineinfo".to_string(),
                reason: "line information requested".to_string(),
                decided_by: Vec::new(),
            });
        }
        for extra in &self.extra_options {
            flags.push(FlagChoice {
                flag: extra.clone(),
                reason: "given by the caller".to_string(),
                decided_by: Vec::new(),
            });
        }

        let inputs = self
            .inputs
            .iter()
            .map(|input| {
                let compile = input.is_cuda_source().then(|| CudaCompile {
                    target: cuda_target,
                    options: self.nvrtc_options(cuda_target).to_args(),
                });
                let added_as = match (&compile, input.input_type()) {
                    (Some(c), _) if c.target == NvrtcTarget::Ltoir => InputType::Ltoir,
                    (Some(_), _) => InputType::Ptx,
                    (None, Some(t)) => t,
                    // Unreachable by construction: only CUDA source lacks a type.
                    (None, None) => InputType::Ptx,
                };
                InputPlan {
                    name: input.name.clone(),
                    kind: input.description.kind(),
                    carries_ltoir: ltoir_after_compile(input),
                    compile,
                    added_as,
                }
            })
            .collect();

        Ok(LinkExplanation {
            lto,
            flags,
            inputs,
            notes,
        })
    }

    /// Compiles CUDA sources, links everything with nvJitLink and returns the
    /// cubin (or PTX) with nvJitLink's info log.
    pub fn link(&self) -> Result<Linked, LinkError> {
        let explanation = self.explain()?;
        let options = explanation.options();
        let mut compile_logs = Vec::new();
        let mut prepared: Vec<(InputType, std::borrow::Cow<'_, [u8]>)> = Vec::new();
        for (input, plan) in self.inputs.iter().zip(&explanation.inputs) {
            match &plan.compile {
                Some(compile) => {
                    let source =
                        std::str::from_utf8(&input.bytes).map_err(|_| LinkError::Compile {
                            input: input.name.clone(),
                            error: NvrtcError::InteriorNul {
                                what: format!("{} (not UTF-8)", input.name),
                            },
                        })?;
                    let out =
                        nvrtc::compile(&input.name, source, &self.nvrtc_options(compile.target))
                            .map_err(|error| LinkError::Compile {
                                input: input.name.clone(),
                                error,
                            })?;
                    if !out.log.is_empty() {
                        compile_logs.push((input.name.clone(), out.log.clone()));
                    }
                    prepared.push((plan.added_as, out.bytes.into()));
                }
                None => prepared.push((plan.added_as, input.bytes.as_slice().into())),
            }
        }

        let fail = |stage: String, error: NvJitLinkError, notes: Vec<String>| {
            LinkError::Link(Box::new(LinkFailure {
                stage,
                error,
                options: options.clone(),
                inputs: explanation.inputs.iter().map(InputPlan::summary).collect(),
                notes,
            }))
        };
        let job = Job {
            options: &options,
            inputs: prepared
                .iter()
                .zip(&explanation.inputs)
                .map(|((kind, bytes), plan)| JobInput {
                    kind: *kind,
                    name: &plan.name,
                    bytes,
                })
                .collect(),
            output: match self.output {
                LinkOutput::Cubin => JobOutput::Cubin,
                LinkOutput::Ptx => JobOutput::Ptx,
            },
        };
        let done = self.isolation.run(&job).map_err(|e| match e {
            JobError::Failed { stage, error } => {
                let (stage, notes) = match stage {
                    Stage::Create => ("creating the linker".to_string(), Vec::new()),
                    Stage::Add(n) => (
                        format!("adding `{}`", job.inputs.get(n).map_or("?", |i| i.name)),
                        Vec::new(),
                    ),
                    Stage::Complete => {
                        ("linking".to_string(), self.failure_notes(error.error_log()))
                    }
                    Stage::Read => ("reading the result".to_string(), Vec::new()),
                };
                fail(stage, error, notes)
            }
            JobError::Crashed {
                stage,
                signal,
                culprits,
            } => LinkError::Crashed {
                during: match stage {
                    Stage::Create => "creating the linker",
                    Stage::Add(_) => "adding it",
                    Stage::Complete => "linking",
                    Stage::Read => "reading the result",
                },
                inputs: if culprits.is_empty() {
                    job.inputs.iter().map(|i| i.name.to_string()).collect()
                } else {
                    culprits
                },
                signal,
            },
            JobError::Child(message) => LinkError::Child(message),
        })?;
        Ok(Linked {
            output: self.output,
            bytes: done.bytes,
            info_log: done.info_log,
            compile_logs,
            explanation,
        })
    }

    /// Explains a failed link when it matches a known nvJitLink trap.
    fn failure_notes(&self, error_log: &str) -> Vec<String> {
        let mut notes = Vec::new();
        if !error_log
            .to_ascii_lowercase()
            .contains("undefined reference")
        {
            return notes;
        }
        let cuda_target = self.cuda_target();
        let (lto, non_lto): (Vec<&LinkInput>, Vec<&LinkInput>) =
            self.inputs.iter().partition(|i| {
                i.description.carries_ltoir()
                    || (i.is_cuda_source() && cuda_target == NvrtcTarget::Ltoir)
            });
        let non_lto: Vec<&LinkInput> = non_lto
            .into_iter()
            .filter(|i| i.description.root.carries_non_ltoir_code() || i.is_cuda_source())
            .collect();
        if lto.is_empty() || non_lto.is_empty() {
            return notes;
        }
        let names = |inputs: &[&LinkInput]| {
            inputs
                .iter()
                .map(|i| format!("{} ({})", i.name, i.description.kind()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let symbols = undefined_symbols(error_log);
        notes.push(format!(
            "this link mixes non-LTO code [{}] with LTOIR [{}]; nvJitLink's LTO keeps only what LTO code \
             reaches (from the kernels in LTOIR), so a function{} defined in LTOIR and called only from PTX or a \
             cubin is inlined or dropped there and the reference from the non-LTO side stays undefined",
            names(&non_lto),
            names(&lto),
            if symbols.is_empty() {
                String::new()
            } else {
                format!(" (here: {})", symbols.join(", "))
            }
        ));
        notes.push(
            "help: compile the caller to LTOIR too (NVRTC -dlto, nvcc -dc -dlto, libNVVM -gen-lto); \
             an LTOIR caller may call a PTX callee, not the reverse"
                .to_string(),
        );
        notes
    }
}

/// Symbol names quoted in nvJitLink's "Undefined reference to 'f'" lines.
fn undefined_symbols(error_log: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in error_log.lines() {
        let lower = line.to_ascii_lowercase();
        let Some(at) = lower.find("undefined reference to") else {
            continue;
        };
        let rest = &line[at + "undefined reference to".len()..];
        let rest = rest.trim_start();
        let Some(quote) = rest
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`'))
        else {
            continue;
        };
        let inner = &rest[quote.len_utf8()..];
        let close = if quote == '`' { '\'' } else { quote };
        if let Some(end) = inner.find(close) {
            let symbol = inner[..end].to_string();
            if !out.contains(&symbol) {
                out.push(symbol);
            }
        }
    }
    out
}

/// One chosen nvJitLink option and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlagChoice {
    pub flag: String,
    pub reason: String,
    /// The inputs (with where in them) that made the choice, if any.
    pub decided_by: Vec<String>,
}

/// How a CUDA source input is compiled before linking.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CudaCompile {
    pub target: NvrtcTarget,
    pub options: Vec<String>,
}

/// How one input enters the link.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InputPlan {
    pub name: String,
    pub kind: ItemKind,
    /// Whether it holds LTOIR once compiled.
    pub carries_ltoir: bool,
    /// Set for CUDA sources: how NVRTC compiles them.
    pub compile: Option<CudaCompile>,
    /// The nvJitLink input type it is added as.
    pub added_as: InputType,
}

impl InputPlan {
    fn summary(&self) -> String {
        let mut s = format!("{} ({}", self.name, self.kind);
        if let Some(c) = &self.compile {
            let _ = write!(s, ", NVRTC {}", c.options.join(" "));
        }
        let _ = write!(s, ", added as {})", self.added_as.c_name());
        s
    }
}

/// The options a plan links with, each with its reason.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkExplanation {
    /// Whether `-lto` is set.
    pub lto: bool,
    pub flags: Vec<FlagChoice>,
    pub inputs: Vec<InputPlan>,
    /// Decisions not to set a flag, and other remarks.
    pub notes: Vec<String>,
}

impl LinkExplanation {
    /// The nvJitLink options, in order.
    pub fn options(&self) -> Vec<String> {
        self.flags.iter().map(|f| f.flag.clone()).collect()
    }

    /// A text rendering for `--explain`.
    pub fn render(&self) -> String {
        let mut out = format!("nvJitLink options: {}\n", self.options().join(" "));
        let width = self.flags.iter().map(|f| f.flag.len()).max().unwrap_or(0);
        for flag in &self.flags {
            let _ = write!(out, "  {:width$}  {}", flag.flag, flag.reason);
            if !flag.decided_by.is_empty() {
                let _ = write!(out, ": {}", flag.decided_by.join("; "));
            }
            out.push('\n');
        }
        out.push_str("inputs:\n");
        for input in &self.inputs {
            let _ = writeln!(out, "  {}", input.summary());
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        out
    }
}

impl fmt::Display for LinkExplanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// A finished link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linked {
    pub output: LinkOutput,
    /// The cubin, or PTX text for [`LinkOutput::Ptx`].
    pub bytes: Vec<u8>,
    /// nvJitLink's info log.
    pub info_log: String,
    /// NVRTC warnings for CUDA source inputs, by input name.
    pub compile_logs: Vec<(String, String)>,
    pub explanation: LinkExplanation,
}

/// Why a link could not be planned or failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LinkError {
    #[error("nothing to link: no inputs")]
    NoInputs,
    #[error("input `{input}` ({kind}) holds no device code")]
    NoDeviceCode { input: String, kind: ItemKind },
    #[error("PTX output (-ptx) needs every input to carry LTOIR; these do not: {}", inputs.join(", "))]
    PtxOutputNeedsLtoir { inputs: Vec<String> },
    #[error("compiling `{input}`: {error}")]
    Compile { input: String, error: NvrtcError },
    #[error("{0}")]
    Link(Box<LinkFailure>),
    #[error("nvJitLink crashed on input{} {} while {during} (signal {signal}, {})",
        if inputs.len() == 1 { "" } else { "s" },
        inputs.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "),
        signal_name(*signal))]
    Crashed {
        /// `linking`, `adding it`, …
        during: &'static str,
        /// The inputs that crash it (all of them when none does alone).
        inputs: Vec<String>,
        signal: i32,
    },
    #[error("running nvJitLink in a child process: {0}")]
    Child(String),
}

/// A link nvJitLink refused, with what it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkFailure {
    /// What was being done: `linking`, `adding \`k.ptx\``, …
    pub stage: String,
    pub error: NvJitLinkError,
    pub options: Vec<String>,
    /// Each input with how it was added.
    pub inputs: Vec<String>,
    /// Explanations of known traps, and their fixes.
    pub notes: Vec<String>,
}

impl fmt::Display for LinkFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nvJitLink failed while {}: {}\noptions: {}\ninputs:",
            self.stage,
            self.error,
            self.options.join(" ")
        )?;
        for input in &self.inputs {
            write!(f, "\n  {input}")?;
        }
        for note in &self.notes {
            write!(f, "\nnote: {note}")?;
        }
        Ok(())
    }
}

impl LinkError {
    /// The explanatory notes attached to a failed link.
    pub fn notes(&self) -> &[String] {
        match self {
            LinkError::Link(failure) => &failure.notes,
            _ => &[],
        }
    }
}
