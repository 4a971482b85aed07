//! Lowering: admitted callbacks in the `rmir` dialect → LLVM-dialect
//! functions, plus one exported C thunk per admitted registration.
//!
//! ```text
//! select-admitted      keep the admitted callbacks and the bodies they reach; C-safe symbols
//! lower-rmir-arith     rmir.checked → llvm.intr.*.with.overflow; rmir.cast → fpto*i.sat, bitcast
//! lower-rmir-calls     local calls → func.call; core scalar methods → arith/llvm intrinsics; panics → trap
//! lower-rmir-control   rmir.assert → cf.cond_br to a trap (optional overflow checks dropped when off)
//! lower-rmir-memory    locals, places, loads, stores, captures → llvm.alloca/getelementptr/load/store
//! make-thunks          `R THUNK(ptr env, A[, B])` in the thunk ABI, C linkage, calling the callback body
//! convert-arith-to-llvm, convert-cf-to-llvm, convert-func-to-llvm, reconcile-unrealized-casts
//! ```
//!
//! Why our passes are Rust functions over the module rather than MLIR passes
//! made with `melior::pass::create_external`: they need the lowering plan
//! (which callbacks were admitted, their thunk names and environment
//! layouts) and must return typed, located errors; an external pass gets
//! cloned state and can only signal failure. Upstream conversions run in
//! MLIR's pass manager, one step at a time, so that the pipeline can print
//! and verify the module between any two passes, its own or upstream.
//!
//! After every pass the module is verified by MLIR, and the phase invariant
//! is checked: no op that this or an earlier pass lowers is left.
//!
//! Invariant: lowering only touches admitted callbacks and the bodies they
//! reach; it never panics on a module admission admitted, and anything it
//! cannot lower is a [`LowerError`] located at the op.

pub mod arith;
pub mod calls;
pub mod control;
pub mod memory;
pub mod plan;
// Raw MLIR handles with unchecked lifetimes: crate-private, used only by
// the passes below while the pipeline holds the module (`Pipeline::run`).
pub(crate) mod rewrite;
pub mod select;
pub mod split;
pub mod thunks;
pub mod types;
pub mod upstream;

use melior::ir::{operation::OperationLike, operation::OperationPrintingFlags, Module};

pub use plan::{CallbackAbi, Plan, Thunk};
use rewrite::Patch;

/// An admitted registration's callback, as lowering needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Callback {
    /// The registration's index in the module (`RegistrationFact::index`).
    pub registration: usize,
    pub abi: CallbackAbi,
}

/// How to run a pipeline. A struct, not bool parameters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Keep the module text after every pass (`--print-ir-after-all`).
    pub print_after_all: bool,
    /// Print locations in those dumps.
    pub print_locations: bool,
    /// Overflow checks, as rustc's `-C overflow-checks`. `None`: the
    /// setting the MIR was built with (the module's `rmir.overflow_checks`;
    /// on when unknown). With checks off, asserts that are optional
    /// overflow checks are dropped, as rustc's code generation does (even
    /// in code inlined from `core`); every other assert traps.
    pub overflow_checks: Option<bool>,
}

/// The module after one pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassDump {
    pub pass: &'static str,
    pub module: String,
}

impl PassDump {
    /// `// -----// IR Dump After NAME //----- //` and the module, as
    /// `mlir-opt --mlir-print-ir-after-all` prints it.
    pub fn render(&self) -> String {
        format!(
            "// -----// IR Dump After {} //----- //\n{}\n",
            self.pass,
            self.module.trim_end()
        )
    }
}

/// What a pipeline run produced besides the rewritten module.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    /// One per admitted registration: its exported thunk and environment.
    pub thunks: Vec<Thunk>,
    /// With [`Options::print_after_all`]: the module after every pass.
    pub dumps: Vec<PassDump>,
}

/// An op the lowering cannot handle, or a module that breaks a pass's
/// invariants, located at the op.
#[derive(Debug, Clone, PartialEq)]
pub struct LowerError {
    pub pass: &'static str,
    /// Boxed: the error travels through every rewrite helper.
    pub loc: Box<ir::Loc>,
    /// The op's name (`rmir.cast`), or empty for a module-level error.
    pub op: String,
    /// The symbol of the function that holds the op, when there is one.
    pub function: Option<String>,
    pub message: String,
}

impl std::fmt::Display for LowerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: error: {}: ", self.loc.short(), self.pass)?;
        if !self.op.is_empty() {
            write!(f, "`{}`: ", self.op)?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for LowerError {}

/// A pass pipeline that names an unknown pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPass {
    pub name: String,
}

impl std::fmt::Display for UnknownPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unknown pass `{}`; the passes are: {}",
            self.name,
            pass_names().join(", ")
        )
    }
}

impl std::error::Error for UnknownPass {}

pub(crate) type RustPass = fn(&Patch<'_, '_>, &Plan) -> Result<(), LowerError>;

#[derive(Clone, Copy)]
pub(crate) enum PassKind {
    /// One of ours, a Rust function over the module.
    Rust(RustPass),
    /// An upstream MLIR pass, by its registered name.
    Upstream(&'static str),
}

/// One pass of the lowering.
#[derive(Clone, Copy)]
pub struct PassInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// Ops that must be gone after this pass (the phase invariant).
    pub lowers: &'static [&'static str],
    pub(crate) kind: PassKind,
}

impl std::fmt::Debug for PassInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// Every pass, in the standard order.
pub const PASSES: &[PassInfo] = &[
    PassInfo {
        name: "select-admitted",
        summary: "keep the admitted callbacks and the local bodies they reach, with C-safe symbols; drop module facts",
        lowers: &[
            "rmir.registration",
            "rmir.closure",
            "rmir.capture",
            "rmir.env_layout",
            "rmir.element_layout",
            "rmir.adt_def",
        ],
        kind: PassKind::Rust(select::run),
    },
    PassInfo {
        name: "lower-rmir-arith",
        summary: "checked arithmetic → overflow intrinsics; casts with no arith equivalent → saturating conversions, bitcasts",
        lowers: &["rmir.checked", "rmir.cast"],
        kind: PassKind::Rust(arith::run),
    },
    PassInfo {
        name: "lower-rmir-calls",
        summary: "local calls → func.call; core scalar methods → arith/llvm intrinsics; panic calls → trap",
        lowers: &["rmir.call", "rmir.arg"],
        kind: PassKind::Rust(calls::run),
    },
    PassInfo {
        name: "lower-rmir-control",
        summary: "assert → branch to a trap (optional overflow checks dropped when off); unreachable, resume, drop",
        lowers: &["rmir.assert", "rmir.unreachable", "rmir.resume", "rmir.drop"],
        kind: PassKind::Rust(control::run),
    },
    PassInfo {
        name: "lower-rmir-memory",
        summary: "locals, places, loads, stores and capture reads → llvm.alloca/getelementptr/load/store at the environment ABI's offsets",
        lowers: &[
            "rmir.local", "rmir.field", "rmir.deref", "rmir.index", "rmir.const_index",
            "rmir.capture_addr", "rmir.capture_read", "rmir.load", "rmir.store", "rmir.copy",
            "rmir.ref", "rmir.constant", "rmir.aggregate", "rmir.downcast", "rmir.discriminant",
            "rmir.set_discriminant", "rmir.write_discriminant", "rmir.env_write",
        ],
        kind: PassKind::Rust(memory::run),
    },
    PassInfo {
        name: "make-thunks",
        summary: "one exported `R THUNK(ptr env, A[, B])` (thunk ABI) per admitted registration, calling the callback body",
        lowers: &[],
        kind: PassKind::Rust(thunks::run),
    },
    PassInfo {
        name: "convert-arith-to-llvm",
        summary: "upstream: arith → llvm",
        lowers: &[],
        kind: PassKind::Upstream("convert-arith-to-llvm"),
    },
    PassInfo {
        name: "convert-cf-to-llvm",
        summary: "upstream: cf → llvm",
        lowers: &[],
        kind: PassKind::Upstream("convert-cf-to-llvm"),
    },
    PassInfo {
        name: "convert-func-to-llvm",
        summary: "upstream: func → llvm",
        lowers: &[],
        kind: PassKind::Upstream("convert-func-to-llvm"),
    },
    PassInfo {
        name: "reconcile-unrealized-casts",
        summary: "upstream: removes the casts the conversions left; the module is LLVM dialect only",
        lowers: &[],
        kind: PassKind::Upstream("reconcile-unrealized-casts"),
    },
];

/// Whether a pass of the standard pipeline lowers `op` (an `rmir.*` name):
/// the one answer admission and lowering share.
pub fn is_lowered(op: &str) -> bool {
    PASSES.iter().any(|p| p.lowers.contains(&op))
}

/// `rmir` ops no pass lowers: admission rejects them, and the lowering
/// refuses them with a located error if they reach it anyway.
pub fn not_lowered() -> Vec<String> {
    ir::dialect::OPS
        .iter()
        .map(|o| format!("rmir.{}", o.name))
        .filter(|n| !is_lowered(n))
        .collect()
}

/// The names of every pass, in the standard order.
pub fn pass_names() -> Vec<&'static str> {
    PASSES.iter().map(|p| p.name).collect()
}

pub fn pass(name: &str) -> Option<&'static PassInfo> {
    PASSES.iter().find(|p| p.name == name)
}

/// An ordered list of passes.
#[derive(Debug, Clone)]
pub struct Pipeline {
    passes: Vec<&'static PassInfo>,
}

impl Pipeline {
    /// Every pass in order: rmir → LLVM dialect.
    pub fn standard() -> Pipeline {
        Pipeline {
            passes: PASSES.iter().collect(),
        }
    }

    /// `a,b,c` (as `driver opt --passes`); an unknown name is an error that
    /// lists the valid ones.
    pub fn parse(text: &str) -> Result<Pipeline, UnknownPass> {
        let passes = text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|n| {
                pass(n).ok_or_else(|| UnknownPass {
                    name: n.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Pipeline { passes })
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name).collect()
    }

    /// Runs the passes on `module` (an imported rmir module) for the
    /// admitted `callbacks`.
    pub fn run(
        &self,
        module: &mut Module<'_>,
        callbacks: &[Callback],
        options: &Options,
    ) -> Result<Lowered, LowerError> {
        // The dialect's module rules first (local callees name bodies,
        // captures name closures, …): every pipeline starts from a module
        // that keeps them, whoever built it.
        ir::verify(module).map_err(|e| LowerError {
            pass: "verify",
            loc: Box::new(ir::Loc::decode(module.as_operation().location())),
            op: String::new(),
            function: None,
            message: format!("the module breaks the rmir dialect's rules: {e}"),
        })?;
        let plan = Plan::new(module, callbacks, options)?;
        let context = module.context();
        // SAFETY: the module borrows its context, which outlives this call.
        let ctx = unsafe { context.to_ref() };
        let mut dumps = Vec::new();
        let mut gone: Vec<&'static str> = Vec::new();
        for p in &self.passes {
            let mut rw = Patch::new(ctx, p.name, module);
            let (result, diagnostics) = ir::diag::capture_diagnostics(ctx, || match p.kind {
                PassKind::Rust(f) => f(&rw, &plan),
                PassKind::Upstream(name) => upstream::run(&mut rw, name),
            });
            result.map_err(|mut e| {
                if let Some(d) = diagnostics.first() {
                    e.message.push_str(&format!("\n  {d}"));
                }
                e
            })?;
            gone.extend(p.lowers);
            check_after(&rw, &gone)?;
            if options.print_after_all {
                dumps.push(PassDump {
                    pass: p.name,
                    module: print(module, options.print_locations),
                });
            }
        }
        Ok(Lowered {
            thunks: plan.thunks.clone(),
            dumps,
        })
    }
}

/// The module as text, with or without locations.
pub fn print(module: &Module<'_>, locations: bool) -> String {
    if locations {
        return ir::print(module);
    }
    let flags = OperationPrintingFlags::new();
    module
        .as_operation()
        .to_string_with_flags(flags)
        .unwrap_or_else(|e| format!("// the module could not be printed: {e}"))
}

/// MLIR's verifier, then the phase invariant: none of `gone` is left.
fn check_after(rw: &Patch<'_, '_>, gone: &[&str]) -> Result<(), LowerError> {
    let op = rw.module().as_operation();
    let (ok, diagnostics) = ir::diag::capture_diagnostics(rw.ctx, || op.verify());
    if !ok {
        let first = diagnostics.first();
        return Err(LowerError {
            pass: rw.pass,
            loc: Box::new(first.map(|d| d.loc.clone()).unwrap_or_default()),
            op: String::new(),
            function: None,
            message: format!(
                "the module does not verify after this pass: {}",
                diagnostics
                    .iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join("\n  ")
            ),
        });
    }
    if let Some(left) = rewrite::collect(op.to_raw(), gone).first() {
        return Err(rw.error(
            *left,
            "left in the module by a pass that lowers it (or an earlier one)",
        ));
    }
    Ok(())
}
