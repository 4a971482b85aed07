//! Which sort a sorting registration runs: a radix sort on key bits where
//! the compiler has proved that the comparator is a lexicographic order on
//! the element's scalar fields (`frontend::order`), else the merge sort
//! with the comparator.

use std::fmt;

use crate::scalar::Scalar;

/// How the bits of one key field order, as the comparator orders the
/// field: an integer's own order (unsigned, or two's complement), or a
/// float's `total_cmp` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum KeyOrder {
    /// As an unsigned integer of the field's size (`u32`, `bool`, `char`,
    /// a float's `to_bits()`).
    Unsigned,
    /// As a two's complement integer (`i32`, a float's bits as `i32`).
    Signed,
    /// As `f32::total_cmp`/`f64::total_cmp`: negative NaNs, −∞, …, −0,
    /// +0, …, +∞, positive NaNs (−0 before +0, unlike CUB's float keys).
    Total,
}

impl KeyOrder {
    pub fn name(self) -> &'static str {
        match self {
            KeyOrder::Unsigned => "unsigned",
            KeyOrder::Signed => "signed",
            KeyOrder::Total => "total",
        }
    }
}

/// One key of a radix sort: a scalar field of the element, where it lies,
/// and how its bits order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct RadixKey {
    /// The field as Rust writes it after the element (`.0`, `.id`,
    /// `.pos.x`); empty for a scalar element itself.
    pub field: String,
    /// Its byte offset in the element.
    pub offset: u64,
    /// Its type.
    pub scalar: Scalar,
    pub order: KeyOrder,
    /// Larger first (`b.cmp(a)`, `.reverse()`).
    pub descending: bool,
}

impl RadixKey {
    /// The key's bits: the field's size.
    pub fn bits(&self) -> u32 {
        (self.scalar.size() * 8) as u32
    }
}

impl fmt::Display for RadixKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = if self.field.is_empty() {
            "the element".to_string()
        } else {
            format!("`{}`", self.field)
        };
        let how = match self.order {
            KeyOrder::Total => format!("{} by total_cmp", self.scalar.name()),
            KeyOrder::Unsigned if !self.scalar.is_unsigned() => {
                format!("{}'s bits as unsigned", self.scalar.name())
            }
            KeyOrder::Signed if !self.scalar.is_signed() => {
                format!("{}'s bits as signed", self.scalar.name())
            }
            _ => self.scalar.name().to_string(),
        };
        let dir = if self.descending {
            "descending"
        } else {
            "ascending"
        };
        write!(f, "{field} ({how}, {dir}, at byte {})", self.offset)
    }
}

/// The sort a sorting registration runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum SortChoice {
    /// A stable radix sort of the elements on these keys, most significant
    /// first: the comparator is proved to be their lexicographic order.
    Radix { keys: Vec<RadixKey> },
    /// The merge sort with the comparator, and why no radix sort.
    Merge { reason: String },
}

impl SortChoice {
    pub fn merge(reason: impl Into<String>) -> SortChoice {
        SortChoice::Merge {
            reason: reason.into(),
        }
    }

    /// The radix keys, when the radix sort was proved.
    pub fn radix_keys(&self) -> Option<&[RadixKey]> {
        match self {
            SortChoice::Radix { keys } => Some(keys),
            SortChoice::Merge { .. } => None,
        }
    }

    /// The key bits a radix sort ranks (the sum of its keys' sizes).
    pub fn key_bits(&self) -> u32 {
        self.radix_keys()
            .map_or(0, |k| k.iter().map(RadixKey::bits).sum())
    }
}

impl fmt::Display for SortChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SortChoice::Radix { keys } => {
                let keys: Vec<String> = keys.iter().map(ToString::to_string).collect();
                write!(
                    f,
                    "radix sort on {}; the comparator is proved to be this order (the merge sort below the size where radix pays)",
                    keys.join(", then ")
                )
            }
            SortChoice::Merge { reason } => write!(f, "merge sort: {reason}"),
        }
    }
}
