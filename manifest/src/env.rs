//! The environment ABI: how a callback's captures are laid out in the bytes
//! its thunk receives as `const void *env`.
//!
//! The environment is the closure object itself, in rustc's layout: rustc
//! reorders a closure's fields (captures `u8, u16, u32, f64, i8, i64, u16`
//! sit at offsets 24, 20, 16, 0, 25, 8, 22, size 32), and the frontend
//! measures that layout (`frontend::closure_layout`). [`EnvLayout::from_fields`]
//! takes the measured offsets; everything else (the lowering that reads
//! captures, the generated C++ struct and its `static_assert`s, the packing
//! at run time, the host API that copies a closure's bytes) follows the
//! layout written in the manifest, and never recomputes it.
//!
//! [`EnvLayout::check`] is what any layout must satisfy: named fields, each
//! with its scalar's size and alignment, aligned, inside the object and
//! overlapping no other; the alignment is the largest field alignment (1
//! with none), and the size is the end of the last field rounded up to it.
//! An environment with no captures has size 0 and alignment 1: it is passed
//! to no kernel parameter, and the thunk still receives a valid, non-null
//! pointer (to a one-byte dummy) that it never reads.
//!
//! [`EnvLayout::from_captures`] is the C declaration-order layout, kept for
//! hand-written bundles and tests; no closure is built with it.

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
    #[error("environment layout is malformed: {0}")]
    Malformed(String),
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

    /// The layout of an environment holding `fields` (name, type and byte
    /// offset, in capture order) in an object of `size` bytes aligned to
    /// `align`: rustc's layout of the closure. Fails unless it is
    /// well-formed ([`EnvLayout::check`]).
    pub fn from_fields<S: AsRef<str>>(
        fields: &[(S, Scalar, u64)],
        size: u64,
        align: u64,
    ) -> Result<EnvLayout, LayoutError> {
        let layout = EnvLayout {
            fields: fields
                .iter()
                .map(|(name, scalar, offset)| EnvField {
                    name: name.as_ref().to_string(),
                    scalar: *scalar,
                    offset: *offset,
                    size: scalar.size(),
                    align: scalar.align(),
                })
                .collect(),
            size,
            align,
        };
        layout.check()?;
        Ok(layout)
    }

    /// The fields in the order they sit in memory.
    pub fn fields_by_offset(&self) -> Vec<&EnvField> {
        let mut v: Vec<&EnvField> = self.fields.iter().collect();
        v.sort_by_key(|f| f.offset);
        v
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

    /// Checks that this layout (read from a file, say) is well-formed: see
    /// the module documentation for the rules.
    pub fn check(&self) -> Result<(), LayoutError> {
        let bad = |m: String| Err(LayoutError::Malformed(m));
        for (index, f) in self.fields.iter().enumerate() {
            if f.name.is_empty() {
                return Err(LayoutError::EmptyName { index });
            }
            if !f.scalar.is_capturable() {
                return bad(format!(
                    "field `{}` is a `{}`, which no environment holds",
                    f.name, f.scalar
                ));
            }
            if let Some(first) = self.fields[..index].iter().position(|g| g.name == f.name) {
                return Err(LayoutError::DuplicateName {
                    name: f.name.clone(),
                    first,
                    second: index,
                });
            }
            for (what, found, expected) in [
                ("size", f.size, f.scalar.size()),
                ("align", f.align, f.scalar.align()),
            ] {
                if found != expected {
                    return Err(LayoutError::Inconsistent {
                        what: format!("field `{}` {what}", f.name),
                        found,
                        expected,
                    });
                }
            }
            if f.offset % f.align != 0 {
                return bad(format!(
                    "field `{}` at offset {} is not aligned to {}",
                    f.name, f.offset, f.align
                ));
            }
            if f.offset
                .checked_add(f.size)
                .is_none_or(|end| end > self.size)
            {
                return bad(format!(
                    "field `{}` at offset {} ends past the environment's {} bytes",
                    f.name, f.offset, self.size
                ));
            }
        }
        for pair in self.fields_by_offset().windows(2) {
            if pair[0].offset + pair[0].size > pair[1].offset {
                return bad(format!(
                    "fields `{}` (offset {}) and `{}` (offset {}) overlap",
                    pair[0].name, pair[0].offset, pair[1].name, pair[1].offset
                ));
            }
        }
        let align = self.fields.iter().map(|f| f.align).max().unwrap_or(1);
        let end = self
            .fields
            .iter()
            .map(|f| f.offset + f.size)
            .max()
            .unwrap_or(0);
        for (what, found, expected) in [
            ("alignment", self.align, align),
            ("total size", self.size, align_up(end, align)),
        ] {
            if found != expected {
                return Err(LayoutError::Inconsistent {
                    what: what.to_string(),
                    found,
                    expected,
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
        Scalar::F16 | Scalar::F128 => Err(bad("no environment holds this type")),
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
    let (min, max): (i128, i128) = if scalar.is_signed() {
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
