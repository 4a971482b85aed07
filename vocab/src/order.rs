//! Which sort a sorting registration runs: a radix sort on key bits where
//! the compiler has proved that the comparator is a lexicographic order on
//! the element's scalar fields (`frontend::order`); for `sort_by_key`
//! whose key is computed (`|x| x >> 4`), a radix sort of the keys the key
//! function computes, each carrying its element; else the merge sort with
//! the comparator.

use std::fmt;

use crate::element::{Element, Field, Layout};
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

impl RadixKey {
    /// The key described for people: the field of `whole` (`element`, or
    /// a computed `key`), how its bits order, its direction and place.
    pub fn describe(&self, whole: &str) -> String {
        let field = if self.field.is_empty() {
            format!("the {whole}")
        } else {
            format!("`{}`", self.field)
        };
        let how = match self.order {
            KeyOrder::Total => format!("{} by total_cmp", self.scalar.name()),
            // `bool` and `char` order as their bits do.
            KeyOrder::Unsigned if self.scalar.is_float() || self.scalar.is_signed() => {
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
        format!("{field} ({how}, {dir}, at byte {})", self.offset)
    }
}

impl fmt::Display for RadixKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe("element"))
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
    /// A stable radix sort of `(key, element)` pairs on the key that
    /// `sort_by_key`'s key function computes for each element (a kernel
    /// calls it once an element), laid out as [`computed_key`] says, on
    /// these fields of it, most significant first: `Ord`'s order of an
    /// integer, `bool`, `char` or a tuple of them. `reason` says why the
    /// key is not the element's own fields (which would sort the elements
    /// alone, the cheaper sort).
    ComputedKey {
        key: Element,
        keys: Vec<RadixKey>,
        reason: String,
    },
    /// The merge sort with the comparator, and why no radix sort.
    Merge { reason: String },
}

/// How a radix sort ranks a key of scalar type `s` as `Ord` orders it:
/// integers as themselves (signed or not), `bool` and `char` as unsigned;
/// `None` for a type CUB's radix keys cannot hold (`i128`, `u128`) or
/// that is not `Ord` (floats).
pub fn ord_key_order(s: Scalar) -> Option<KeyOrder> {
    match s {
        Scalar::Bool | Scalar::Char => Some(KeyOrder::Unsigned),
        s if s.is_int() && s.size() <= 8 => Some(if s.is_signed() {
            KeyOrder::Signed
        } else {
            KeyOrder::Unsigned
        }),
        _ => None,
    }
}

/// The key a `sort_by_key` computes, as the radix sort holds it, for a key
/// of type `fields` (one scalar, or a tuple of them): a scalar as itself;
/// a tuple as a C struct of its fields in order, each at its natural
/// alignment (the key thunk writes each field there, whatever rustc's
/// layout of the tuple); and the radix keys on it, most significant
/// first, ascending as `Ord` orders each field. `None` where a field has
/// no radix order ([`ord_key_order`]) or there is no field.
pub fn computed_key(fields: &[Scalar]) -> Option<(Element, Vec<RadixKey>)> {
    let orders = fields
        .iter()
        .map(|s| ord_key_order(*s))
        .collect::<Option<Vec<_>>>()?;
    let key = |field: String, offset: u64, scalar: Scalar, order: KeyOrder| RadixKey {
        field,
        offset,
        scalar,
        order,
        descending: false,
    };
    if let ([s], [order]) = (fields, orders.as_slice()) {
        return Some((Element::Scalar(*s), vec![key(String::new(), 0, *s, *order)]));
    }
    if fields.is_empty() {
        return None;
    }
    let (mut at, mut align) = (0u64, 1u64);
    let mut placed = Vec::new();
    let mut keys = Vec::new();
    for (i, (s, order)) in fields.iter().zip(orders).enumerate() {
        at = at.next_multiple_of(s.align());
        align = align.max(s.align());
        placed.push(Field {
            name: i.to_string(),
            offset: at,
            element: Element::Scalar(*s),
        });
        keys.push(key(format!(".{i}"), at, *s, order));
        at += s.size();
    }
    let names: Vec<&str> = fields.iter().map(|s| s.name()).collect();
    let layout = Layout {
        name: format!("({})", names.join(", ")),
        size: at.next_multiple_of(align),
        align,
        fields: placed,
    };
    Some((Element::Composite(layout), keys))
}

impl SortChoice {
    pub fn merge(reason: impl Into<String>) -> SortChoice {
        SortChoice::Merge {
            reason: reason.into(),
        }
    }

    /// The radix keys, when the radix sort was proved: on the element's
    /// fields, or on the computed key's ([`SortChoice::computed_key`]).
    pub fn radix_keys(&self) -> Option<&[RadixKey]> {
        match self {
            SortChoice::Radix { keys } | SortChoice::ComputedKey { keys, .. } => Some(keys),
            SortChoice::Merge { .. } => None,
        }
    }

    /// The key a `sort_by_key` computes for its radix sort, if it sorts so.
    pub fn computed_key(&self) -> Option<&Element> {
        match self {
            SortChoice::ComputedKey { key, .. } => Some(key),
            _ => None,
        }
    }

    /// The bytes of a computed key ([`SortChoice::computed_key`]); 0 for a
    /// sort that ranks the elements themselves.
    pub fn computed_key_bytes(&self) -> u64 {
        self.computed_key().map_or(0, Element::size)
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
            SortChoice::ComputedKey { key, keys, reason } => {
                let keys: Vec<String> = keys.iter().map(|k| k.describe("key")).collect();
                write!(
                    f,
                    "radix sort of (key, element) pairs on the key `{}` the key function computes, once an element: {} (the merge sort below the size where radix pays); not on the element's own fields: {reason}",
                    key.name(),
                    keys.join(", then ")
                )
            }
            SortChoice::Merge { reason } => write!(f, "merge sort: {reason}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_computed_scalar_key_is_itself_ranked_as_ord_orders_it() {
        let (key, keys) = computed_key(&[Scalar::I32]).unwrap();
        assert_eq!(key, Element::Scalar(Scalar::I32));
        assert_eq!(keys.len(), 1);
        assert_eq!((keys[0].offset, keys[0].order), (0, KeyOrder::Signed));
        assert!(!keys[0].descending);
        for (s, order) in [
            (Scalar::U8, KeyOrder::Unsigned),
            (Scalar::Bool, KeyOrder::Unsigned),
            (Scalar::Char, KeyOrder::Unsigned),
            (Scalar::Isize, KeyOrder::Signed),
        ] {
            assert_eq!(ord_key_order(s), Some(order), "{s:?}");
        }
    }

    #[test]
    fn a_computed_tuple_key_is_a_c_struct_of_its_fields_in_order() {
        let (key, keys) =
            computed_key(&[Scalar::U8, Scalar::U32, Scalar::Bool, Scalar::I16]).unwrap();
        let Element::Composite(l) = &key else {
            panic!("a tuple key is a composite: {key:?}")
        };
        assert_eq!(l.name, "(u8, u32, bool, i16)");
        let offsets: Vec<u64> = l.fields.iter().map(|f| f.offset).collect();
        assert_eq!(offsets, [0, 4, 8, 10]);
        assert_eq!((l.size, l.align), (12, 4));
        assert_eq!(l.check(), Ok(()));
        let fields: Vec<&str> = keys.iter().map(|k| k.field.as_str()).collect();
        assert_eq!(fields, [".0", ".1", ".2", ".3"]);
        assert_eq!(keys.iter().map(|k| k.offset).collect::<Vec<_>>(), offsets);
        assert_eq!(keys[3].order, KeyOrder::Signed);
        let choice = SortChoice::ComputedKey {
            key,
            keys,
            reason: "the callback compares the result of `Shr`, not a field".into(),
        };
        assert_eq!(choice.key_bits(), 8 + 32 + 8 + 16);
        assert!(choice.computed_key().is_some());
        assert_eq!(choice.computed_key_bytes(), 12);
    }

    #[test]
    fn keys_a_radix_sort_cannot_rank_are_not_computed() {
        assert_eq!(computed_key(&[]), None);
        assert_eq!(computed_key(&[Scalar::U128]), None);
        assert_eq!(computed_key(&[Scalar::U32, Scalar::I128]), None);
        assert_eq!(computed_key(&[Scalar::F32]), None);
    }
}
