//! The `rmir` dialect, declared once as a table of op specs.
//!
//! The table generates the IRDL module that MLIR loads at run time
//! ([`irdl_source`]), so the op set, operand/result constraints and required
//! attributes live in one place. IRDL cannot express everything (uses of a
//! value, symbol references to `func.func` bodies, locations); those rules are
//! in [`crate::verify`].

use melior::{
    dialect::DialectRegistry,
    ir::{operation::OperationLike, Module},
    utility::{load_irdl_dialects, register_all_dialects},
    Context,
};

use crate::diag::{capture_diagnostics, Diagnostic};
use vocab::{CallKind, Provider};

/// A type constraint on one operand or result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeC {
    /// `!llvm.ptr`: an address (a local's slot, a field, a pointee).
    Ptr,
    /// `i1`.
    I1,
    /// Any type, bound once per use: two operands with `Any` may differ.
    Any,
    /// The same type as every other `Same` operand/result of the op.
    Same,
    /// `!rmir.call_arg`: a call argument.
    Arg,
    /// Zero or more `!rmir.call_arg`.
    VariadicArg,
    /// Zero or one value of any type.
    OptionalAny,
}

/// A constraint on one attribute. Every declared attribute is required.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrC {
    Str,
    Int,
    Bool,
    StrArray,
    /// An array of integers.
    IntArray,
    /// A `TypeAttr`: a Rust type as an MLIR type (see [`crate::types`]).
    Type,
    /// An array of `TypeAttr`s.
    TypeArray,
    /// A `FlatSymbolRefAttr` naming a top-level `func.func`.
    Symbol,
    /// A symbol (a local callee) or a string (a path: any other callee).
    SymbolOrStr,
    /// A symbol (a callback's body) or a type (any other callback).
    SymbolOrType,
    /// One of these strings.
    Enum(&'static [&'static str]),
}

/// One op of the dialect.
#[derive(Debug, Clone, Copy)]
pub struct OpSpec {
    /// Name without the `rmir.` prefix.
    pub name: &'static str,
    pub operands: &'static [(&'static str, TypeC)],
    pub results: &'static [(&'static str, TypeC)],
    pub attributes: &'static [(&'static str, AttrC)],
    /// One line: what the op means.
    pub summary: &'static str,
}

/// The names of a vocabulary list, at compile time.
macro_rules! names_of {
    ($list:expr) => {{
        let mut names = [""; $list.len()];
        let mut i = 0;
        while i < names.len() {
            names[i] = $list[i].name();
            i += 1;
        }
        names
    }};
}

/// Call kinds, in the order the frontend resolves callees: the names of
/// `vocab::CallKind`.
pub const CALL_KINDS: &[&str] = &names_of!(CallKind::ALL);
/// The providers a registration can name: `vocab::Provider::ALL`.
pub const PROVIDERS: &[&str] = &names_of!(Provider::ALL);
pub const CLOSURE_KINDS: &[&str] = &["fn", "fn_mut", "fn_once"];
pub const CAPTURE_MODES: &[&str] = &["by_value", "by_ref", "by_mut_ref"];
pub const CALLBACK_KINDS: &[&str] = &["closure", "fn_item", "other"];
pub const REF_KINDS: &[&str] = &["shared", "mut", "raw_const", "raw_mut"];
pub const CHECKED_OPS: &[&str] = &["add", "sub", "mul"];
/// `frontend::pmir::AssertKind` names (a test checks they agree).
pub const ASSERT_KINDS: &[&str] = &[
    "overflow",
    "overflow_neg",
    "division_by_zero",
    "remainder_by_zero",
    "division_overflow",
    "bounds_check",
    "misaligned_pointer",
    "null_pointer",
    "other",
];
pub const AGGREGATE_KINDS: &[&str] = &["tuple", "array", "closure", "adt"];
pub const ADT_KINDS: &[&str] = &["struct", "enum"];

use AttrC::*;
use TypeC::*;

/// Every op of the dialect. `docs/dialect.md` documents each (a test checks).
pub const OPS: &[OpSpec] = &[
    // Module-level facts.
    OpSpec {
        name: "registration",
        operands: &[],
        results: &[],
        attributes: &[
            ("caller", Str),
            ("block", Int),
            ("function", Str),
            ("provider", Enum(PROVIDERS)),
            ("callback_kind", Enum(CALLBACK_KINDS)),
            ("callback", SymbolOrType),
            ("generics", TypeArray),
            ("arg_types", TypeArray),
        ],
        summary: "A call of a provider API registration function: which provider, which callback.",
    },
    OpSpec {
        name: "closure",
        operands: &[],
        results: &[],
        attributes: &[
            ("body", Symbol),
            ("ty", Type),
            ("kind", Enum(CLOSURE_KINDS)),
            ("params", TypeArray),
            ("ret", Type),
        ],
        summary: "A closure: its body (a func.func symbol), Fn kind and signature.",
    },
    OpSpec {
        name: "capture",
        operands: &[],
        results: &[],
        attributes: &[
            ("closure", Symbol),
            ("name", Str),
            ("field", Int),
            ("ty", Type),
            ("mode", Enum(CAPTURE_MODES)),
        ],
        summary: "One captured variable: environment field index, field type, capture mode.",
    },
    OpSpec {
        name: "env_layout",
        operands: &[],
        results: &[],
        attributes: &[
            ("closure", Symbol),
            ("size", Int),
            ("align", Int),
            ("offsets", IntArray),
        ],
        summary: "rustc's layout of a closure object: size, alignment, and each capture's byte offset in field order.",
    },
    OpSpec {
        name: "element_layout",
        operands: &[],
        results: &[],
        attributes: &[
            ("ty", Type),
            ("size", Int),
            ("align", Int),
            ("offsets", IntArray),
        ],
        summary: "rustc's layout of a tuple or struct that a callback takes or returns as an element, measured as a closure capturing one value of it: size, alignment, `offsets` `[0]`, and its scalars (`leaf_paths`, `leaf_types`, `leaf_offsets`, as an `env_layout`'s).",
    },
    OpSpec {
        name: "adt_def",
        operands: &[],
        results: &[],
        attributes: &[
            ("path", Str),
            ("params", StrArray),
            ("kind", Enum(ADT_KINDS)),
            ("discr", Type),
            ("variants", StrArray),
            ("discrs", IntArray),
            ("fields", TypeArray),
        ],
        summary: "A struct or enum the bodies name (`path` as MIR prints it): generic parameters, discriminant type, and per variant its name, discriminant and field types (a tuple).",
    },
    // Places.
    OpSpec {
        name: "local",
        operands: &[],
        results: &[("slot", Ptr)],
        attributes: &[("index", Int), ("ty", Type)],
        summary: "The storage of MIR local `_index` (MIR locals are not SSA).",
    },
    OpSpec {
        name: "field",
        operands: &[("base", Ptr)],
        results: &[("addr", Ptr)],
        attributes: &[("index", Int), ("ty", Type)],
        summary: "Address of field `index` (of type `ty`) of the place at `base`.",
    },
    OpSpec {
        name: "deref",
        operands: &[("pointer_addr", Ptr)],
        results: &[("addr", Ptr)],
        attributes: &[("ty", Type)],
        summary: "`*p`: reads the pointer of type `ty` stored at `pointer_addr`; yields the pointee's address.",
    },
    OpSpec {
        name: "index",
        operands: &[("base", Ptr), ("index", Any)],
        results: &[("addr", Ptr)],
        attributes: &[("ty", Type)],
        summary: "`p[i]`: address of element `index` (element type `ty`).",
    },
    OpSpec {
        name: "const_index",
        operands: &[("base", Ptr)],
        results: &[("addr", Ptr)],
        attributes: &[("offset", Int), ("min_length", Int), ("from_end", Bool), ("ty", Type)],
        summary: "`p[offset of min_length]`: address of a constant-index element.",
    },
    OpSpec {
        name: "downcast",
        operands: &[("base", Ptr)],
        results: &[("addr", Ptr)],
        attributes: &[("variant", Str), ("ty", Type)],
        summary: "`(p as Variant)`: the place of enum type `ty` viewed as its variant `variant`.",
    },
    OpSpec {
        name: "capture_addr",
        operands: &[("env", Ptr)],
        results: &[("addr", Ptr)],
        attributes: &[("field", Int), ("name", Str), ("ty", Type)],
        summary: "Address of capture `name` (environment field `field`) in the closure environment `env`.",
    },
    // Values.
    OpSpec {
        name: "load",
        operands: &[("addr", Ptr)],
        results: &[("value", Any)],
        attributes: &[("ty", Type)],
        summary: "Reads a value of MIR type `ty` (a scalar or thin pointer) from a place.",
    },
    OpSpec {
        name: "store",
        operands: &[("addr", Ptr), ("value", Any)],
        results: &[],
        attributes: &[("ty", Type)],
        summary: "Writes a value of MIR type `ty` (a scalar or thin pointer) to a place.",
    },
    OpSpec {
        name: "copy",
        operands: &[("dst", Ptr), ("src", Ptr)],
        results: &[],
        attributes: &[("ty", Type)],
        summary: "Copies a value of memory type `ty` (aggregate, fat pointer, …) between places.",
    },
    OpSpec {
        name: "capture_read",
        operands: &[("env", Ptr)],
        results: &[("value", Any)],
        attributes: &[("field", Int), ("name", Str), ("ty", Type)],
        summary: "Reads capture `name` (environment field `field`, type `ty`) from the environment `env`.",
    },
    OpSpec {
        name: "env_write",
        operands: &[("addr", Ptr), ("value", Any)],
        results: &[],
        attributes: &[("field", Int), ("name", Str), ("ty", Type)],
        summary: "A write to a place inside the closure environment (capture `name`): mutable closure state.",
    },
    OpSpec {
        name: "ref",
        operands: &[("addr", Ptr)],
        results: &[("pointer", Ptr)],
        attributes: &[("kind", Enum(REF_KINDS)), ("ty", Type)],
        summary: "`&p`, `&mut p`, `&raw const p`, `&raw mut p`: a thin pointer of type `ty` to a place.",
    },
    OpSpec {
        name: "constant",
        operands: &[],
        results: &[("value", Any)],
        attributes: &[("value", Str), ("ty", Type)],
        summary: "A constant that is not a plain number (a `const` item, a fn item, a zero-sized value), kept as MIR text.",
    },
    OpSpec {
        name: "checked",
        operands: &[("lhs", Same), ("rhs", Same)],
        results: &[("value", Same), ("overflow", I1)],
        attributes: &[("op", Enum(CHECKED_OPS))],
        summary: "`AddWithOverflow` & co: the wrapped result and whether it overflowed (checked by a following assert).",
    },
    OpSpec {
        name: "cast",
        operands: &[("value", Any)],
        results: &[("result", Any)],
        attributes: &[("kind", Str), ("from", Type), ("to", Type)],
        summary: "A MIR cast with no exact `arith` equivalent (saturating float→int, pointer casts, transmutes).",
    },
    OpSpec {
        name: "aggregate",
        operands: &[("dst", Ptr)],
        results: &[],
        attributes: &[("kind", Enum(AGGREGATE_KINDS)), ("name", Str), ("ty", Type)],
        summary: "Starts building an aggregate (tuple, array, closure, ADT) in place; field stores follow.",
    },
    OpSpec {
        name: "discriminant",
        operands: &[("addr", Ptr)],
        results: &[("value", Any)],
        attributes: &[("ty", Type)],
        summary: "Reads the discriminant of the enum place (of type `ty`).",
    },
    OpSpec {
        name: "set_discriminant",
        operands: &[("addr", Ptr)],
        results: &[],
        attributes: &[("variant", Int), ("ty", Type)],
        summary: "Sets the discriminant of the enum place (of type `ty`) to variant index `variant`'s.",
    },
    OpSpec {
        name: "write_discriminant",
        operands: &[("addr", Ptr), ("value", Any)],
        results: &[],
        attributes: &[("ty", Type)],
        summary: "Stores the discriminant value `value` into the fieldless enum place (of type `ty`): `Cmp`'s `Ordering`.",
    },
    // Calls and control.
    OpSpec {
        name: "arg",
        operands: &[("value", Any)],
        results: &[("arg", Arg)],
        attributes: &[],
        summary: "Wraps one call argument (any type) so that a call's operands have one type.",
    },
    OpSpec {
        name: "call",
        operands: &[("args", VariadicArg)],
        results: &[("result", OptionalAny)],
        attributes: &[
            ("callee", SymbolOrStr),
            ("receiver", Type),
            ("text", Str),
            ("kind", Enum(CALL_KINDS)),
            ("unwind", Str),
            ("sret", Bool),
        ],
        summary: "A call; `kind` says how the frontend resolved the callee (local body, registration, core scalar method, panic, indirect, foreign, `extern \"C\"` declaration); `receiver` is a core method's receiver type, an `extern` call's signature as a fn pointer type, else `()`; with `sret`, the last argument is the address the callee writes its result to.",
    },
    OpSpec {
        name: "assert",
        operands: &[("cond", I1)],
        results: &[],
        attributes: &[
            ("expected", Bool),
            ("kind", Enum(ASSERT_KINDS)),
            ("message", Str),
        ],
        summary: "Panics with `message` unless `cond == expected`; `kind` says what it checks (overflow checks are optional). The branch to the success block follows.",
    },
    OpSpec {
        name: "drop",
        operands: &[("addr", Ptr)],
        results: &[],
        attributes: &[("ty", Type)],
        summary: "Runs the drop glue of the place (of type `ty`); the branch to the target follows.",
    },
    OpSpec {
        name: "unreachable",
        operands: &[],
        results: &[],
        attributes: &[],
        summary: "MIR's `unreachable`: reaching it is undefined behaviour. `llvm.unreachable` follows.",
    },
    OpSpec {
        name: "resume",
        operands: &[],
        results: &[],
        attributes: &[],
        summary: "MIR's `UnwindResume` at the end of a cleanup block. `llvm.unreachable` follows.",
    },
    OpSpec {
        name: "unsupported",
        operands: &[],
        results: &[],
        attributes: &[("what", Str), ("reason", Str)],
        summary: "A MIR statement or terminator the importer does not model, kept so admission can reject it with a span.",
    },
];

/// Looks up an op by its name without the `rmir.` prefix.
pub fn op_spec(name: &str) -> Option<&'static OpSpec> {
    OPS.iter().find(|o| o.name == name)
}

/// The IRDL module that defines the dialect, generated from [`OPS`].
///
/// IRDL binds a constraint variable to one type/attribute per op, so every
/// operand and attribute gets its own variable unless it must be equal
/// (`Same`).
pub fn irdl_source() -> String {
    let mut g = IrdlWriter::default();
    g.text
        .push_str("irdl.dialect @rmir {\n  irdl.type @call_arg\n");
    for (name, params) in crate::types::TYPES {
        g.rust_type(name, params);
    }
    for op in OPS {
        g.text
            .push_str(&format!("  irdl.operation @{} {{\n", op.name));
        g.next = 0;
        g.same = None;
        let operands = g.values(op.operands);
        let results = g.values(op.results);
        let attrs: Vec<String> = op
            .attributes
            .iter()
            .map(|(name, c)| format!("\"{name}\" = {}", g.attr(*c)))
            .collect();
        for (keyword, list) in [("operands", operands), ("results", results)] {
            if !list.is_empty() {
                g.text
                    .push_str(&format!("    irdl.{keyword}({})\n", list.join(", ")));
            }
        }
        if !attrs.is_empty() {
            g.text
                .push_str(&format!("    irdl.attributes {{{}}}\n", attrs.join(", ")));
        }
        g.text.push_str("  }\n");
    }
    g.text.push_str("}\n");
    g.text
}

#[derive(Default)]
struct IrdlWriter {
    text: String,
    next: usize,
    same: Option<String>,
}

impl IrdlWriter {
    /// `irdl.type @NAME` with its parameters (a Rust type: [`crate::types`]).
    fn rust_type(&mut self, name: &str, params: &[crate::types::Param]) {
        use crate::types::Param;
        if params.is_empty() {
            self.text.push_str(&format!("  irdl.type @{name}\n"));
            return;
        }
        self.text.push_str(&format!("  irdl.type @{name} {{\n"));
        self.next = 0;
        let vars: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let v = match p {
                    Param::Type => self.var("irdl.any"),
                    Param::Str => self.var("irdl.base \"#builtin.string\""),
                    Param::Int => self.var("irdl.base \"#builtin.integer\""),
                };
                format!("p{i}: {v}")
            })
            .collect();
        self.text
            .push_str(&format!("    irdl.parameters({})\n  }}\n", vars.join(", ")));
    }

    fn var(&mut self, def: &str) -> String {
        let v = format!("%c{}", self.next);
        self.next += 1;
        self.text.push_str(&format!("    {v} = {def}\n"));
        v
    }

    fn ty(&mut self, c: TypeC) -> String {
        match c {
            Ptr => self.var("irdl.is !llvm.ptr"),
            I1 => self.var("irdl.is i1"),
            Any | OptionalAny => self.var("irdl.any"),
            Arg | VariadicArg => self.var("irdl.parametric @rmir::@call_arg<>"),
            Same => match &self.same {
                Some(v) => v.clone(),
                None => {
                    let v = self.var("irdl.any");
                    self.same = Some(v.clone());
                    v
                }
            },
        }
    }

    fn values(&mut self, list: &[(&str, TypeC)]) -> Vec<String> {
        list.iter()
            .map(|(name, c)| {
                let v = self.ty(*c);
                let prefix = match c {
                    VariadicArg => "variadic ",
                    OptionalAny => "optional ",
                    _ => "",
                };
                format!("{name}: {prefix}{v}")
            })
            .collect()
    }

    fn attr(&mut self, c: AttrC) -> String {
        match c {
            Str => self.var("irdl.base \"#builtin.string\""),
            Int => self.var("irdl.base \"#builtin.integer\""),
            StrArray | IntArray | TypeArray => self.var("irdl.base \"#builtin.array\""),
            Type => self.var("irdl.base \"#builtin.type\""),
            Symbol => self.var("irdl.base \"#builtin.symbol_ref\""),
            SymbolOrStr => {
                let a = self.var("irdl.base \"#builtin.symbol_ref\"");
                let b = self.var("irdl.base \"#builtin.string\"");
                self.var(&format!("irdl.any_of({a}, {b})"))
            }
            SymbolOrType => {
                let a = self.var("irdl.base \"#builtin.symbol_ref\"");
                let b = self.var("irdl.base \"#builtin.type\"");
                self.var(&format!("irdl.any_of({a}, {b})"))
            }
            Bool => {
                let t = self.var("irdl.is true");
                let f = self.var("irdl.is false");
                self.var(&format!("irdl.any_of({t}, {f})"))
            }
            Enum(values) => {
                let vs: Vec<String> = values
                    .iter()
                    .map(|v| self.var(&format!("irdl.is \"{v}\"")))
                    .collect();
                self.var(&format!("irdl.any_of({})", vs.join(", ")))
            }
        }
    }
}

/// Why the dialect could not be set up.
#[derive(Debug, Clone, PartialEq)]
pub struct DialectError {
    pub message: String,
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for DialectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)?;
        for d in &self.diagnostics {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DialectError {}

/// A context with every upstream dialect registered and `func`, `arith`,
/// `cf`, `llvm` and `rmir` loaded.
pub fn context() -> Result<Context, DialectError> {
    let registry = DialectRegistry::new();
    register_all_dialects(&registry);
    // Threading off: one context per compile job; rayon parallelises above.
    let context = Context::new_with_registry(&registry, false);
    // The LLVM IR translations are registered here, before the IRDL dialect
    // is loaded: appending a registry later (which registration does) walks
    // the loaded dialects and crashed on the dynamic `rmir` dialect in
    // optimised builds.
    melior::utility::register_all_llvm_translations(&context);
    for dialect in ["builtin", "func", "arith", "cf", "llvm", "irdl"] {
        context.get_or_load_dialect(dialect);
    }
    load_rmir(&context)?;
    Ok(context)
}

/// Loads the `rmir` dialect into `context` (idempotent).
pub fn load_rmir(context: &Context) -> Result<(), DialectError> {
    if context.is_registered_operation("rmir.call") {
        return Ok(());
    }
    let source = irdl_source();
    let (module, diagnostics) = capture_diagnostics(context, || Module::parse(context, &source));
    let Some(module) = module else {
        return Err(DialectError {
            message: "the rmir IRDL definition does not parse".into(),
            diagnostics,
        });
    };
    if !load_irdl_dialects(&module) || !context.is_registered_operation("rmir.call") {
        return Err(DialectError {
            message: "MLIR did not load the rmir IRDL definition".into(),
            diagnostics,
        });
    }
    // The IRDL module only describes the dialect; MLIR keeps its own copy of
    // the constraints, so the module can go.
    debug_assert!(module.as_operation().verify());
    Ok(())
}
