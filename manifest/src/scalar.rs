//! The scalar types a callback may capture, as the environment ABI sees them.

use serde::{Deserialize, Serialize};

/// A capturable scalar type, named as in Rust (`"i32"`).
///
/// Sizes and alignments are those of `nvptx64-nvidia-cuda` and of 64-bit
/// hosts, which agree for every type here (`i128`/`u128` align to 16, as on
/// x86-64 since Rust 1.77). `f16`/`f128` are not admitted as captures and
/// have no variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scalar {
    I8,
    I16,
    I32,
    I64,
    I128,
    Isize,
    U8,
    U16,
    U32,
    U64,
    U128,
    Usize,
    F32,
    F64,
    Bool,
    Char,
}

impl Scalar {
    pub const ALL: [Scalar; 16] = [
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::I128,
        Scalar::Isize,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::U128,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
        Scalar::Bool,
        Scalar::Char,
    ];

    /// The Rust name, e.g. `"i32"`.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::I128 => "i128",
            Scalar::Isize => "isize",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::U128 => "u128",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::Bool => "bool",
            Scalar::Char => "char",
        }
    }

    /// Parses a Rust scalar name; `None` for anything else (`f16` included).
    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Scalar::I8 | Scalar::U8 | Scalar::Bool => 1,
            Scalar::I16 | Scalar::U16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 | Scalar::Char => 4,
            Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize | Scalar::F64 => 8,
            Scalar::I128 | Scalar::U128 => 16,
        }
    }

    /// Natural alignment in bytes (equal to the size for every scalar here).
    pub fn align(self) -> u64 {
        self.size()
    }

    /// The CUDA C++ type with the same size, alignment and representation.
    /// Built-in types only, so generated sources need no headers.
    pub fn c_type(self) -> &'static str {
        match self {
            Scalar::I8 => "signed char",
            Scalar::I16 => "short",
            Scalar::I32 => "int",
            Scalar::I64 | Scalar::Isize => "long long",
            Scalar::I128 => "__int128",
            Scalar::U8 => "unsigned char",
            Scalar::U16 => "unsigned short",
            Scalar::U32 => "unsigned int",
            Scalar::U64 | Scalar::Usize => "unsigned long long",
            Scalar::U128 => "unsigned __int128",
            Scalar::F32 => "float",
            Scalar::F64 => "double",
            Scalar::Bool => "bool",
            // A Rust `char` is a Unicode scalar value stored as a u32.
            Scalar::Char => "unsigned int",
        }
    }

    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::I128 | Scalar::Isize
        )
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(
            self,
            Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::U128 | Scalar::Usize
        )
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
