//! The environment ABI: how a callback's captures are laid out in the bytes
//! its thunk receives as `const void *env`.
//!
//! [`EnvLayout::from_captures`] is the one place this layout is computed.
//! Everything else (the lowering that reads captures, the generated C++
//! struct and its `static_assert`s, the runtime's packing) follows the layout
//! written in the manifest, never recomputes it differently.
//!
//! Rules: fields in capture order (= the closure's field index order), each at
//! the next offset aligned to its natural alignment; the total size is rounded
//! up to the largest alignment; the alignment is at least 1. An environment
//! with no captures has size 0 and alignment 1: it is passed to no kernel
//! parameter, and the thunk still receives a valid, non-null pointer (to a
//! one-byte dummy) that it never reads.

use crate::Scalar;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One capture's place in the environment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvField {
    /// The capture's name in the source (`k` for `debug k => ((*_1).0: i32)`).
    pub name: String,
    pub scalar: Scalar,
    pub offset: u64,
    pub size: u64,
    pub align: u64,
}

/// The layout of one callback's environment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvLayout {
    pub fields: Vec<EnvField>,
    pub size: u64,
    pub align: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    #[error("capture {index} has an empty name")]
    EmptyName { index: usize },
    #[error("capture `{name}` appears twice (at {first} and {second})")]
    DuplicateName {
        name: String,
        first: usize,
        second: usize,
    },
    #[error("environment layout disagrees with the ABI rules: {what} is {found}, the rules give {expected}")]
    Inconsistent {
        what: String,
        found: u64,
        expected: u64,
    },
    #[error("environment layout has {found} fields, the rules give {expected}")]
    FieldCount { found: usize, expected: usize },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackError {
    #[error("no value given for capture `{name}` ({scalar})")]
    Missing { name: String, scalar: Scalar },
    #[error("value given for `{name}`, which is not a capture of this callback")]
    Unknown { name: String },
    #[error("two values given for capture `{name}`")]
    Duplicate { name: String },
    #[error("capture `{name}`: {value} is not a valid {scalar}: {why}")]
    BadValue {
        name: String,
        scalar: Scalar,
        value: String,
        why: String,
    },
}

fn align_up(offset: u64, align: u64) -> u64 {
    offset.div_ceil(align) * align
}

impl EnvLayout {
    /// Computes the layout of an environment holding `captures` in order.
    pub fn from_captures<S: AsRef<str>>(
        captures: &[(S, Scalar)],
    ) -> Result<EnvLayout, LayoutError> {
        let mut fields: Vec<EnvField> = Vec::with_capacity(captures.len());
        let mut offset = 0u64;
        let mut align = 1u64;
        for (index, (name, scalar)) in captures.iter().enumerate() {
            let name = name.as_ref();
            if name.is_empty() {
                return Err(LayoutError::EmptyName { index });
            }
            if let Some(first) = fields.iter().position(|f| f.name == name) {
                return Err(LayoutError::DuplicateName {
                    name: name.to_string(),
                    first,
                    second: index,
                });
            }
            let field_align = scalar.align();
            offset = align_up(offset, field_align);
            fields.push(EnvField {
                name: name.to_string(),
                scalar: *scalar,
                offset,
                size: scalar.size(),
                align: field_align,
            });
            offset += scalar.size();
            align = align.max(field_align);
        }
        Ok(EnvLayout {
            fields,
            size: align_up(offset, align),
            align,
        })
    }

    /// The layout of an environment with no captures.
    pub fn empty() -> EnvLayout {
        EnvLayout {
            fields: Vec::new(),
            size: 0,
            align: 1,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// The captures, in order, as `(name, scalar)`.
    pub fn captures(&self) -> Vec<(&str, Scalar)> {
        self.fields
            .iter()
            .map(|f| (f.name.as_str(), f.scalar))
            .collect()
    }

    /// Checks that this layout (read from a file, say) is exactly what
    /// [`EnvLayout::from_captures`] computes for its own captures.
    pub fn check(&self) -> Result<(), LayoutError> {
        let expected = EnvLayout::from_captures(&self.captures())?;
        if expected.fields.len() != self.fields.len() {
            return Err(LayoutError::FieldCount {
                found: self.fields.len(),
                expected: expected.fields.len(),
            });
        }
        for (found, want) in self.fields.iter().zip(&expected.fields) {
            for (what, f, e) in [
                ("offset", found.offset, want.offset),
                ("size", found.size, want.size),
                ("align", found.align, want.align),
            ] {
                if f != e {
                    return Err(LayoutError::Inconsistent {
                        what: format!("field `{}` {what}", found.name),
                        found: f,
                        expected: e,
                    });
                }
            }
        }
        for (what, f, e) in [
            ("total size", self.size, expected.size),
            ("alignment", self.align, expected.align),
        ] {
            if f != e {
                return Err(LayoutError::Inconsistent {
                    what: what.to_string(),
                    found: f,
                    expected: e,
                });
            }
        }
        Ok(())
    }

    /// Packs capture values into environment bytes: each value little-endian
    /// at its field's offset, padding zero. `values` are `(name, JSON value)`:
    /// integers as JSON numbers or decimal strings (needed beyond 2^53 in some
    /// JSON readers, and for 128-bit values), floats as numbers, `bool` as
    /// `true`/`false`, `char` as a one-character string.
    pub fn pack<S: AsRef<str>>(&self, values: &[(S, Value)]) -> Result<Vec<u8>, PackError> {
        for (i, (name, _)) in values.iter().enumerate() {
            let name = name.as_ref();
            if !self.fields.iter().any(|f| f.name == name) {
                return Err(PackError::Unknown {
                    name: name.to_string(),
                });
            }
            if values[..i].iter().any(|(n, _)| n.as_ref() == name) {
                return Err(PackError::Duplicate {
                    name: name.to_string(),
                });
            }
        }
        let mut bytes = vec![0u8; self.size as usize];
        for field in &self.fields {
            let value = values
                .iter()
                .find(|(n, _)| n.as_ref() == field.name)
                .map(|(_, v)| v)
                .ok_or_else(|| PackError::Missing {
                    name: field.name.clone(),
                    scalar: field.scalar,
                })?;
            let encoded = encode(field, value)?;
            let start = field.offset as usize;
            bytes[start..start + encoded.len()].copy_from_slice(&encoded);
        }
        Ok(bytes)
    }
}

fn encode(field: &EnvField, value: &Value) -> Result<Vec<u8>, PackError> {
    let bad = |why: &str| PackError::BadValue {
        name: field.name.clone(),
        scalar: field.scalar,
        value: value.to_string(),
        why: why.to_string(),
    };
    let scalar = field.scalar;
    match scalar {
        Scalar::I8
        | Scalar::I16
        | Scalar::I32
        | Scalar::I64
        | Scalar::I128
        | Scalar::Isize
        | Scalar::U8
        | Scalar::U16
        | Scalar::U32
        | Scalar::U64
        | Scalar::U128
        | Scalar::Usize => encode_int(scalar, value, bad),
        Scalar::F32 => {
            let v = value.as_f64().ok_or_else(|| bad("expected a number"))?;
            let narrowed = v as f32;
            if v.is_finite() && !narrowed.is_finite() {
                return Err(bad("out of range"));
            }
            Ok(narrowed.to_le_bytes().to_vec())
        }
        Scalar::F64 => {
            let v = value.as_f64().ok_or_else(|| bad("expected a number"))?;
            Ok(v.to_le_bytes().to_vec())
        }
        Scalar::Bool => {
            let v = value
                .as_bool()
                .ok_or_else(|| bad("expected true or false"))?;
            Ok(vec![v as u8])
        }
        Scalar::Char => {
            let s = value
                .as_str()
                .ok_or_else(|| bad("expected a one-character string"))?;
            let mut chars = s.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => Ok((c as u32).to_le_bytes().to_vec()),
                _ => Err(bad("expected exactly one character")),
            }
        }
    }
}

fn encode_int(
    scalar: Scalar,
    value: &Value,
    bad: impl Fn(&str) -> PackError,
) -> Result<Vec<u8>, PackError> {
    let wide: i128 = match value {
        Value::Number(n) => {
            if let Some(v) = n.as_i64() {
                v as i128
            } else if let Some(v) = n.as_u64() {
                v as i128
            } else {
                return Err(bad("not an integer"));
            }
        }
        Value::String(s) => {
            if scalar == Scalar::U128 {
                let v: u128 = s.parse().map_err(|_| bad("not a decimal u128"))?;
                return Ok(v.to_le_bytes().to_vec());
            }
            s.parse::<i128>()
                .map_err(|_| bad("not a decimal integer"))?
        }
        _ => return Err(bad("expected a number or a decimal string")),
    };
    let size = scalar.size() as u32;
    let (min, max): (i128, i128) = if scalar.is_signed_int() {
        if size == 16 {
            (i128::MIN, i128::MAX)
        } else {
            (-(1i128 << (size * 8 - 1)), (1i128 << (size * 8 - 1)) - 1)
        }
    } else if size == 16 {
        (0, i128::MAX)
    } else {
        (0, (1i128 << (size * 8)) - 1)
    };
    if wide < min || wide > max {
        return Err(bad("out of range"));
    }
    Ok(wide.to_le_bytes()[..size as usize].to_vec())
}
