//! The device libraries given to the link (`driver build --link FILE`), as
//! admission sees them: which device functions each input defines, and
//! with which parameter widths where the input says. The tables are read by
//! `backend_nvptx::symbols` (PTX text, cubin symbol tables, LTOIR through a
//! probe link); admission only looks names up.

use std::collections::BTreeMap;

use frontend::ty::{Scalar, Ty};

use crate::lower::plan::DeviceAbi;

/// What the link inputs define.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceLibraries {
    /// Every input searched, in the order given (file names).
    pub inputs: Vec<String>,
    /// Device functions by symbol; more than one entry is a symbol defined
    /// by more than one input.
    pub functions: BTreeMap<String, Vec<LibraryFunction>>,
    /// Parts of inputs whose symbols could not be read, each with why
    /// (`lib.a(k.o) › .nv_fatbin › entry 1: LZ4-compressed`).
    pub unreadable: Vec<String>,
    /// The callbacks are built by the PTX route (`--no-lto`), whose PTX
    /// callers nvJitLink cannot link to a definition that exists only as
    /// LTOIR.
    pub ptx_route: bool,
}

/// One definition of a device function.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryFunction {
    /// The input that defines it.
    pub input: String,
    /// The `.param` types of its definition, where the input says (PTX and
    /// CUDA sources; a cubin's symbol table does not).
    pub abi: Option<DeviceAbi>,
    /// Defined only as LTOIR (no PTX or cubin part of the input has it).
    pub ltoir_only: bool,
}

impl DeviceLibraries {
    pub fn is_empty(&self) -> bool {
        self.inputs.is_empty()
    }

    /// Records that `input` defines `symbol`.
    pub fn define(&mut self, symbol: &str, input: &str, abi: Option<DeviceAbi>, ltoir_only: bool) {
        self.functions
            .entry(symbol.to_string())
            .or_default()
            .push(LibraryFunction {
                input: input.to_string(),
                abi,
                ltoir_only,
            });
    }

    /// `a.cu, b.ptx`, or `none` when no input was given.
    pub fn searched(&self) -> String {
        if self.inputs.is_empty() {
            "none".to_string()
        } else {
            self.inputs
                .iter()
                .map(|i| format!("`{i}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    }
}

/// Scalars Rust's `extern "C"` and CUDA C++ pass the same way on the
/// device: 32- and 64-bit integers and floats (smaller integers and `bool`
/// are widened by C with a sign or zero extension the callee's PTX assumes,
/// which the declaration here would have to repeat).
pub fn extern_scalar(ty: &Ty) -> Option<Scalar> {
    match ty {
        Ty::Scalar(
            s @ (Scalar::I32
            | Scalar::U32
            | Scalar::I64
            | Scalar::U64
            | Scalar::Isize
            | Scalar::Usize
            | Scalar::F32
            | Scalar::F64),
        ) => Some(*s),
        _ => None,
    }
}

/// Bytes a scalar [`extern_scalar`] admits takes as a `.param`.
pub fn param_bytes(s: Scalar) -> u32 {
    match s {
        Scalar::I32 | Scalar::U32 | Scalar::F32 => 4,
        _ => 8,
    }
}

/// The symbols the module's `extern "C"` calls name, sorted: what the link
/// inputs are searched for.
pub fn wanted(facts: &super::facts::ModuleFacts) -> Vec<String> {
    let mut out: Vec<String> = facts
        .bodies
        .values()
        .flat_map(|b| &b.calls)
        .filter(|c| c.kind == super::facts::CallKind::Extern)
        .map(|c| c.callee.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}
