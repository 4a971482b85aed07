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
    let keys = fields
        .iter()
        .enumerate()
        .map(|(i, s)| {
            Some(RadixKey {
                field: if fields.len() == 1 {
                    String::new()
                } else {
                    format!(".{i}")
                },
                offset: 0,
                scalar: *s,
                order: ord_key_order(*s)?,
                descending: false,
            })
        })
        .collect::<Option<Vec<_>>>()?;
    packed(keys)
}

/// From this many bytes an element, a radix sort ranks (key, index)
/// pairs and then gathers the elements once, in their sorted order,
/// instead of moving whole elements at every pass (CUB's onesweep keeps
/// fewer items a thread the wider what it moves). Measured on the H100
/// with CUB alone, 2^24 records of words sorted by a 4-byte key
/// (docs/perf.md, "Records as words"): the records' own sort takes 1241
/// us at 16 bytes against 1379 for pairs and a gather, and 2990 us at 24
/// bytes against 1670 (5863 against 1991 at 32).
pub const RADIX_GATHER_BYTES: u64 = 24;

/// Whether a radix sort of `element`s sorts (key, index) pairs and gathers
/// the elements after ([`RADIX_GATHER_BYTES`]).
pub fn radix_gathers(element: &Element) -> bool {
    element.size() >= RADIX_GATHER_BYTES
}

/// The key a gathering radix sort ranks for keys on the element's own
/// fields: the key fields copied out of the element, most significant
/// first, packed as [`computed_key`] packs a tuple (one field: itself),
/// each ranked as `keys` ranks it; `None` for no key.
pub fn packed_key(keys: &[RadixKey]) -> Option<(Element, Vec<RadixKey>)> {
    packed(keys.to_vec())
}

/// `keys` (their offsets ignored) placed in a key of their own: one
/// scalar as itself, else a C struct of them in order, each at its
/// natural alignment.
fn packed(mut keys: Vec<RadixKey>) -> Option<(Element, Vec<RadixKey>)> {
    if let [k] = keys.as_mut_slice() {
        k.offset = 0;
        return Some((Element::Scalar(k.scalar), keys));
    }
    if keys.is_empty() {
        return None;
    }
    let (mut at, mut align) = (0u64, 1u64);
    let mut placed = Vec::new();
    for (i, k) in keys.iter_mut().enumerate() {
        let s = k.scalar;
        at = at.next_multiple_of(s.align());
        align = align.max(s.align());
        placed.push(Field {
            name: i.to_string(),
            offset: at,
            element: Element::Scalar(s),
        });
        k.offset = at;
        at += s.size();
    }
    let names: Vec<&str> = keys.iter().map(|k| k.scalar.name()).collect();
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

    /// Whether the radix sort of `element`s sorts (key, index) pairs and
    /// gathers the elements after ([`radix_gathers`]).
    pub fn gathers(&self, element: &Element) -> bool {
        self.radix_keys().is_some() && radix_gathers(element)
    }

    /// What the radix sort of `element`s ranks when it is not the elements
    /// themselves, with the radix keys on it: the computed key, or, where
    /// it [gathers](SortChoice::gathers), the key fields packed
    /// ([`packed_key`]). `None` for the merge sort, or a radix sort of the
    /// elements on their own fields.
    pub fn sorted_key(&self, element: &Element) -> Option<(Element, Vec<RadixKey>)> {
        match self {
            SortChoice::ComputedKey { key, keys, .. } => Some((key.clone(), keys.clone())),
            SortChoice::Radix { keys } if radix_gathers(element) => packed_key(keys),
            _ => None,
        }
    }

    /// The bytes of [`SortChoice::sorted_key`]'s key; 0 where the radix
    /// sort ranks the elements themselves.
    pub fn sorted_key_bytes(&self, element: &Element) -> u64 {
        self.sorted_key(element).map_or(0, |(k, _)| k.size())
    }

    /// How the radix sort of `element`s moves them, where it gathers: for
    /// people (`driver inspect`, the verdicts).
    pub fn gather_note(&self, element: &Element) -> Option<String> {
        let (key, _) = self.sorted_key(element).filter(|_| self.gathers(element))?;
        Some(format!(
            "the {}-byte elements are not moved by the passes: the radix sort ranks (key, index) pairs, a {}-byte key `{}` and a 32-bit index, then gathers each element once (from {RADIX_GATHER_BYTES} bytes an element)",
            element.size(),
            key.size(),
            key.name()
        ))
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

/// How a chain's pick (`min`, `max_by`, `min_by_key`, …) keeps one of two
/// values its order holds equal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Ties {
    /// Equal values may differ (a key or comparator on some of the
    /// value's fields, or an order not proved): which one wins goes by
    /// position, as `Iterator`'s (`max_by` keeps the last, `min_by` the
    /// first), so each candidate carries its element's index.
    #[default]
    ByPosition,
    /// The order is proved to be a lexicographic order on every scalar of
    /// the value, each through a strictly increasing map of its bits
    /// (`frontend::order`; an integer's `Ord`), or a key holds every
    /// scalar so beside terms of any kind (`|v| (v % 7, *v)`): it holds
    /// two values equal only where they are the same value, so which wins
    /// does not matter and candidates carry no index.
    Identical,
}

impl Ties {
    /// The ties of a pick on `value`s whose order is proved to be the
    /// lexicographic order of `keys`, or whose key holds `keys` whole
    /// among other terms: identical where the keys are every scalar of the
    /// value, each whole.
    pub fn of(keys: &[RadixKey], value: &Element) -> Ties {
        let mut covered: Vec<(u64, Scalar)> = keys.iter().map(|k| (k.offset, k.scalar)).collect();
        let mut scalars = value.scalars();
        covered.sort_by_key(|&(offset, _)| offset);
        covered.dedup();
        scalars.sort_by_key(|&(offset, _)| offset);
        match covered == scalars {
            true => Ties::Identical,
            false => Ties::ByPosition,
        }
    }

    /// Said to people (`driver inspect`, the admission summary).
    pub fn describe(self) -> &'static str {
        match self {
            Ties::ByPosition => {
                "equal values may differ: each candidate carries its index, and ties go by position"
            }
            Ties::Identical => {
                "values alone: the order is proved to hold only identical values equal, so no index is carried"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(offset: u64, scalar: Scalar) -> RadixKey {
        RadixKey {
            field: String::new(),
            offset,
            scalar,
            order: ord_key_order(scalar).unwrap_or(KeyOrder::Total),
            descending: false,
        }
    }

    #[test]
    fn a_pick_has_identical_ties_only_where_its_keys_are_every_scalar() {
        let f32 = Element::Scalar(Scalar::F32);
        assert_eq!(Ties::of(&[key(0, Scalar::F32)], &f32), Ties::Identical);
        assert_eq!(Ties::of(&[], &f32), Ties::ByPosition);
        // `(f32, u32)` by its first field only: equal values may differ.
        let (pair, _) = packed_key(&[key(0, Scalar::F32), key(0, Scalar::U32)]).unwrap();
        assert_eq!(Ties::of(&[key(0, Scalar::F32)], &pair), Ties::ByPosition);
        // By both, in either significance.
        let both = [key(4, Scalar::U32), key(0, Scalar::F32)];
        assert_eq!(Ties::of(&both, &pair), Ties::Identical);
        // A key of another size at a field's offset is not that field.
        assert_eq!(
            Ties::of(&[key(0, Scalar::U16), key(4, Scalar::U32)], &pair),
            Ties::ByPosition
        );
    }

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
        assert_eq!(choice.computed_key().map(Element::size), Some(12));
    }

    #[test]
    fn wide_elements_sort_their_key_fields_packed_with_indices() {
        let field = |name: &str, offset, scalar: Scalar| Field {
            name: name.into(),
            offset,
            element: Element::Scalar(scalar),
        };
        let record = |size, fields| {
            Element::Composite(Layout {
                name: "Record".into(),
                size,
                align: 8,
                fields,
            })
        };
        let key = |field: &str, offset, scalar, order, descending| RadixKey {
            field: field.into(),
            offset,
            scalar,
            order,
            descending,
        };
        let wide = record(
            24,
            vec![
                field("id", 0, Scalar::U64),
                field("x", 8, Scalar::F32),
                field("tag", 12, Scalar::I8),
                field("w", 16, Scalar::U32),
            ],
        );
        let narrow = record(
            16,
            vec![field("id", 0, Scalar::U64), field("w", 8, Scalar::U32)],
        );
        // One field: the key is that scalar, ranked as the field was.
        let by_x = SortChoice::Radix {
            keys: vec![key(".x", 8, Scalar::F32, KeyOrder::Total, true)],
        };
        assert!(by_x.gathers(&wide) && !by_x.gathers(&narrow));
        assert_eq!(by_x.sorted_key(&narrow), None);
        let (k, keys) = by_x.sorted_key(&wide).unwrap();
        assert_eq!(k, Element::Scalar(Scalar::F32));
        assert_eq!(
            keys,
            [key(".x", 0, Scalar::F32, KeyOrder::Total, true)],
            "the offset is the packed key's"
        );
        assert_eq!(by_x.sorted_key_bytes(&wide), 4);
        assert_eq!(by_x.key_bits(), 32);
        // Several: packed most significant first at natural alignments.
        let by_tag_then_id = SortChoice::Radix {
            keys: vec![
                key(".tag", 12, Scalar::I8, KeyOrder::Signed, false),
                key(".id", 0, Scalar::U64, KeyOrder::Unsigned, true),
            ],
        };
        let (k, keys) = by_tag_then_id.sorted_key(&wide).unwrap();
        let Element::Composite(l) = &k else {
            panic!("two keys pack into a struct: {k:?}")
        };
        assert_eq!((l.size, l.align, l.check()), (16, 8, Ok(())));
        assert_eq!(keys.iter().map(|k| k.offset).collect::<Vec<_>>(), [0, 8]);
        assert_eq!(keys[1].field, ".id");
        assert!(keys[1].descending && keys[0].order == KeyOrder::Signed);
        let note = by_tag_then_id.gather_note(&wide).unwrap();
        assert!(
            note.contains("24-byte elements") && note.contains("(i8, u64)"),
            "{note}"
        );
        assert_eq!(by_tag_then_id.gather_note(&narrow), None);
        // A merge sort gathers nothing; a computed key keeps its own key.
        assert!(!SortChoice::merge("no order").gathers(&wide));
        let (key, keys) = computed_key(&[Scalar::U16]).unwrap();
        let computed = SortChoice::ComputedKey {
            key: key.clone(),
            keys,
            reason: "computed".into(),
        };
        assert!(computed.gathers(&wide));
        assert_eq!(computed.sorted_key(&narrow).map(|(k, _)| k), Some(key));
        assert_eq!(computed.sorted_key_bytes(&wide), 2);
    }

    #[test]
    fn keys_a_radix_sort_cannot_rank_are_not_computed() {
        assert_eq!(computed_key(&[]), None);
        assert_eq!(computed_key(&[Scalar::U128]), None);
        assert_eq!(computed_key(&[Scalar::U32, Scalar::I128]), None);
        assert_eq!(computed_key(&[Scalar::F32]), None);
    }
}
