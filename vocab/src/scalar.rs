//! Rust's scalar types.

use crate::name::{parse_among, UnknownName};

/// A Rust scalar type, named as in Rust (`i32`).
///
/// Sizes and alignments are those of `nvptx64-nvidia-cuda` and of 64-bit
/// hosts, which agree for every type here (`i128`/`u128` align to 16, as on
/// x86-64 since Rust 1.77; `usize`/`isize` are 64 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    F16,
    F32,
    F64,
    F128,
    Bool,
    Char,
}

impl Scalar {
    pub const ALL: [Scalar; 18] = [
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
        Scalar::F16,
        Scalar::F32,
        Scalar::F64,
        Scalar::F128,
        Scalar::Bool,
        Scalar::Char,
    ];

    /// The Rust name, e.g. `"i32"`.
    pub const fn name(self) -> &'static str {
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
            Scalar::F16 => "f16",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F128 => "f128",
            Scalar::Bool => "bool",
            Scalar::Char => "char",
        }
    }

    /// The scalar a Rust type name is, if it is one: for classifying the
    /// types of a program (`Vec<i32>` is no scalar, and that is no error).
    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Reads a name that must be a scalar's (a document's field): an error
    /// that lists the valid names otherwise.
    ///
    /// ```
    /// use vocab::Scalar;
    /// assert_eq!(Scalar::parse("u16"), Ok(Scalar::U16));
    /// let unknown = Scalar::parse("int").unwrap_err().to_string();
    /// assert!(unknown.starts_with("unknown scalar type `int`; valid: `i8`, `i16`"), "{unknown}");
    /// ```
    pub fn parse(name: &str) -> Result<Scalar, UnknownName> {
        parse_among("scalar type", name, Scalar::ALL, Scalar::name)
    }

    /// Size in bytes.
    pub fn size(self) -> u64 {
        match self {
            Scalar::I8 | Scalar::U8 | Scalar::Bool => 1,
            Scalar::I16 | Scalar::U16 | Scalar::F16 => 2,
            Scalar::I32 | Scalar::U32 | Scalar::F32 | Scalar::Char => 4,
            Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize | Scalar::F64 => 8,
            Scalar::I128 | Scalar::U128 | Scalar::F128 => 16,
        }
    }

    /// Natural alignment in bytes (equal to the size for every scalar here).
    pub fn align(self) -> u64 {
        self.size()
    }

    pub fn is_int(self) -> bool {
        self.int_bits().is_some()
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32 | Scalar::F64 | Scalar::F128)
    }

    /// A signed integer (`i8` … `i128`, `isize`).
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::I128 | Scalar::Isize
        )
    }

    /// An unsigned integer (`u8` … `u128`, `usize`).
    pub fn is_unsigned(self) -> bool {
        matches!(
            self,
            Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::U128 | Scalar::Usize
        )
    }

    /// Width of an integer type in bits; `None` for every other type.
    pub fn int_bits(self) -> Option<u32> {
        Some(match self {
            Scalar::I8 | Scalar::U8 => 8,
            Scalar::I16 | Scalar::U16 => 16,
            Scalar::I32 | Scalar::U32 => 32,
            Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize => 64,
            Scalar::I128 | Scalar::U128 => 128,
            _ => return None,
        })
    }

    /// Whether a value of this type may cross to the device in a closure's
    /// environment: every scalar but the half and quad floats, which have
    /// no plain CUDA C++ type (and no stable Rust arithmetic).
    pub fn is_capturable(self) -> bool {
        !matches!(self, Scalar::F16 | Scalar::F128)
    }

    /// The CUDA C++ type with the same size, alignment and representation,
    /// for a capturable scalar ([`Scalar::is_capturable`]); built-in types
    /// only, so generated sources need no headers. `None` for `f16`/`f128`.
    pub fn c_type(self) -> Option<&'static str> {
        Some(match self {
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
            Scalar::F16 | Scalar::F128 => return None,
        })
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(feature = "serde")]
crate::name::serde_by_name!(Scalar);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for s in Scalar::ALL {
            assert_eq!(Scalar::parse(s.name()), Ok(s));
            assert_eq!(s.size(), s.align());
            assert_eq!(s.c_type().is_some(), s.is_capturable());
        }
        let err = Scalar::parse("String").unwrap_err();
        assert_eq!(err.name, "String");
        let text = err.to_string();
        assert!(
            text.starts_with("unknown scalar type `String`; valid: `i8`, `i16`"),
            "{text}"
        );
        assert!(text.ends_with("`bool`, `char`"), "{text}");
    }
}
