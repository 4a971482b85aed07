//! `ir`: the `rmir` MLIR dialect and the importer from prepared MIR.
//!
//! Invariants: reads only prepared MIR (never rustc, never MIR text); never
//! panics on any prepared-MIR document (what it cannot model becomes
//! `rmir.unsupported`); every op it builds carries a location; MLIR's
//! diagnostics are returned as values, never printed.
//!
//! ```no_run
//! let pmir = frontend::PreparedMir::from_json(&std::fs::read_to_string("x.pmir.json").unwrap()).unwrap();
//! let context = ir::context().unwrap();
//! let module = ir::import(&context, &pmir).unwrap();
//! let text = ir::print(&module);
//! let again = ir::parse(&context, &text).unwrap();
//! assert_eq!(ir::print(&again), text);
//! for (caller, call) in ir::facts(&module).unwrap().calls() { println!("{caller} → {}", call.callee); }
//! ```

pub mod diag;
pub mod dialect;
pub mod facts;
pub mod import;
pub mod loc;
mod mirtext;
pub mod nesting;
pub mod types;
pub mod verify;

pub use diag::{Diagnostic, Severity};
pub use dialect::{context, load_rmir, DialectError, OPS};
pub use facts::{read as facts, ModuleFacts};
pub use import::{import, ImportError};
pub use loc::Loc;
pub use verify::{verify, VerifyError};

use melior::{
    ir::{
        operation::{OperationLike, OperationPrintingFlags},
        Module,
    },
    Context,
};

/// The module as text that [`parse`] reads back to the same module: upstream
/// ops in their custom syntax, rmir ops in generic syntax, every location
/// printed (as `#loc` aliases at the end).
pub fn print(module: &Module) -> String {
    let flags = OperationPrintingFlags::new()
        .enable_debug_info(true, false)
        .use_local_scope();
    module
        .as_operation()
        .to_string_with_flags(flags)
        .unwrap_or_else(|e| format!("// the module could not be printed: {e}"))
}

/// The module's text without source locations: what its code computes,
/// the same for a callback moved to another line.
pub fn print_without_locations(module: &Module) -> String {
    module
        .as_operation()
        .to_string_with_flags(OperationPrintingFlags::new().use_local_scope())
        .unwrap_or_else(|e| format!("// the module could not be printed: {e}"))
}

/// A new, detached copy of `op` and everything it holds
/// (`mlirOperationClone`), owned by the caller.
pub fn clone_operation<'c>(
    op: &melior::ir::operation::OperationRef<'c, '_>,
) -> melior::ir::Operation<'c> {
    use melior::ir::operation::OperationLike;
    // SAFETY: `op` is live for the borrow; the clone is a new owned op,
    // detached from any block, which the returned value frees or hands on.
    unsafe { melior::ir::Operation::from_raw(mlir_sys::mlirOperationClone(op.to_raw())) }
}

/// A copy of `module`, in the same context (`None` only if MLIR's clone
/// of a module were not a module).
pub fn clone_module<'c>(module: &Module<'c>) -> Option<Module<'c>> {
    Module::from_operation(clone_operation(&module.as_operation()))
}

/// Renames the top-level operation of `module` whose `sym_name` is `from`
/// (a function) to `to`. Only the definition is renamed, not its uses.
pub fn rename_symbol<'c>(
    context: &'c Context,
    module: &mut Module<'c>,
    from: &str,
    to: &str,
) -> Result<(), String> {
    use melior::ir::attribute::StringAttribute;
    use melior::ir::block::BlockLike;
    use melior::ir::operation::{OperationLike, OperationMutLike};
    let body = module.body();
    let mut op = body.first_operation_mut();
    while let Some(mut o) = op {
        let named = o
            .attribute("sym_name")
            .ok()
            .and_then(string_attr)
            .is_some_and(|a| a == from);
        if named {
            o.set_attribute("sym_name", StringAttribute::new(context, to).into());
            return Ok(());
        }
        op = o.next_in_block_mut();
    }
    Err(format!("no symbol `{from}` in the module"))
}

/// The value of a string attribute; `None` for any other attribute.
///
/// `melior::ir::attribute::StringAttribute::value` panics on the empty
/// string (it reads the byte before the start), so every string attribute
/// of this project is read through here.
pub fn string_attr(attribute: melior::ir::Attribute<'_>) -> Option<String> {
    use melior::ir::attribute::AttributeLike;
    let raw = attribute.to_raw();
    // SAFETY: queries on a live attribute.
    unsafe {
        mlir_sys::mlirAttributeIsAString(raw)
            .then(|| owned_string(mlir_sys::mlirStringAttrGetValue(raw)))
    }
}

/// A symbol reference's name (`@foo` → `foo`); `None` for any other
/// attribute.
pub fn symbol_attr(attribute: melior::ir::Attribute<'_>) -> Option<String> {
    use melior::ir::attribute::AttributeLike;
    let raw = attribute.to_raw();
    // SAFETY: queries on a live attribute.
    unsafe {
        mlir_sys::mlirAttributeIsAFlatSymbolRef(raw)
            .then(|| owned_string(mlir_sys::mlirFlatSymbolRefAttrGetValue(raw)))
    }
}

/// The text of a string MLIR returned through melior (an op's or an
/// attribute's name, a location's name or file), lossily as UTF-8. Not
/// `melior::StringRef::as_str`, which builds a slice from the null pointer
/// MLIR returns for the empty string: undefined behaviour, and a panic in
/// debug builds (fuzz/ mlir_parse: `loc(""("f":1:1))` on an op that fails
/// to verify).
pub fn text_of(s: melior::StringRef<'_>) -> String {
    // SAFETY: a string reference melior just returned for a live object.
    unsafe { owned_string(s.to_raw()) }
}

/// Copies a string MLIR returned (it points into the context's storage);
/// the empty string may come as a null pointer.
///
/// # Safety
/// `s` is a string reference MLIR just returned for a live object.
unsafe fn owned_string(s: mlir_sys::MlirStringRef) -> String {
    if s.length == 0 || s.data.is_null() {
        return String::new();
    }
    let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
    String::from_utf8_lossy(bytes).into_owned()
}

/// Malformed or invalid module text, with MLIR's located diagnostics.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub diagnostics: Vec<Diagnostic>,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.diagnostics.first() {
            None => f.write_str("the module text does not parse"),
            Some(_) => {
                for (i, d) in self.diagnostics.iter().enumerate() {
                    if i > 0 {
                        f.write_str("\n")?;
                    }
                    write!(f, "{d}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for ParseError {}

/// Parses (and, as MLIR's parser does, verifies) module text.
pub fn parse<'c>(context: &'c Context, text: &str) -> Result<Module<'c>, ParseError> {
    check_nesting(context, text.as_bytes(), "-")?;
    // Not `Module::parse`: it copies the text into a C string and panics
    // on a NUL byte (found by fuzz/ mlir_parse). MLIR's parser takes a
    // length, but its lexer still finds the end by the NUL byte that
    // llvm::MemoryBuffer promises after it, and `mlirModuleCreateParse`
    // hands it the bytes as they are: an unterminated string literal read
    // on past the caller's text (found by fuzz/ mlir_parse too, a crash in
    // `Lexer::lexString`). So the text is parsed from a copy with a NUL
    // after its last byte; a NUL inside it stays part of the text.
    let mut terminated = Vec::with_capacity(text.len() + 1);
    terminated.extend_from_slice(text.as_bytes());
    terminated.push(0);
    let (module, diagnostics) = diag::capture_diagnostics(context, || {
        let text = mlir_sys::MlirStringRef {
            data: terminated.as_ptr().cast(),
            length: text.len(),
        };
        // SAFETY: a live context, and `text.length` bytes followed by a NUL
        // that outlive the call; MLIR returns a null module when parsing
        // fails.
        let raw = unsafe { mlir_sys::mlirModuleCreateParse(context.to_raw(), text) };
        unsafe { Module::from_option_raw(raw) }
    });
    match module {
        Some(m) => Ok(m),
        None => Err(ParseError { diagnostics }),
    }
}

/// Parses (and verifies) a module file; diagnostics name the file, as
/// `mlir-opt` does (`bad.mlir:4:12`), where [`parse`] says `-`.
pub fn parse_file<'c>(context: &'c Context, path: &str) -> Result<Module<'c>, ParseError> {
    // A file that cannot be read is left to MLIR, which says why.
    if let Ok(bytes) = std::fs::read(path) {
        check_nesting(context, &bytes, path)?;
    }
    let (module, diagnostics) = diag::capture_diagnostics(context, || {
        let path = melior::StringRef::new(path);
        // SAFETY: a live context and a string that outlives the call; MLIR
        // returns a null module when parsing fails.
        let raw =
            unsafe { mlir_sys::mlirModuleCreateParseFromFile(context.to_raw(), path.to_raw()) };
        unsafe { Module::from_option_raw(raw) }
    });
    match module {
        Some(m) => Ok(m),
        None => Err(ParseError { diagnostics }),
    }
}

/// Refuses a text nested deeper than MLIR's parser can recurse (see
/// [`nesting`]), with the diagnostic MLIR would give: at the opener, in
/// `file`.
fn check_nesting(context: &Context, text: &[u8], file: &str) -> Result<(), ParseError> {
    nesting::check(text).map_err(|at| ParseError {
        diagnostics: vec![Diagnostic::error_at(
            melior::ir::Location::new(context, file, at.line as usize, at.col as usize),
            format!(
                "brackets nested deeper than {} levels: MLIR's parser recurses once a level, \
                 with no limit of its own, and would overflow its stack",
                nesting::MAX_NESTING
            ),
        )],
    })
}
