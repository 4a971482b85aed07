//! The values a provider takes: a scalar, or a composite laid out as rustc
//! lays it out (a tuple, a `#[repr(C)]` struct), fields at measured offsets.

use std::fmt;

use crate::scalar::Scalar;

/// The type of the data a provider reads and writes, and of its callback's
/// operands.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Element {
    Scalar(Scalar),
    /// A tuple or a struct of elements, with rustc's layout.
    Composite(Layout),
}

/// A composite element's layout: its Rust spelling, size and alignment, and
/// each field at its offset, in declaration order. Offsets are rustc's,
/// measured, never assumed (tuples and structs may be reordered).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Layout {
    /// The type as Rust spells it: `(f32, u32)`, `Point`.
    pub name: String,
    pub size: u64,
    pub align: u64,
    pub fields: Vec<Field>,
}

/// One field of a composite element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Field {
    /// `0`, `1`, … for a tuple; the field's name for a struct.
    pub name: String,
    pub offset: u64,
    pub element: Element,
}

/// Why a [`Layout`] cannot be the layout of a Rust value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// The alignment is not a power of two, or the size not a multiple of it.
    Shape {
        size: u64,
        align: u64,
    },
    /// A field lies outside the value, or is misaligned within it.
    Field {
        field: String,
        offset: u64,
    },
    /// Two fields share bytes.
    Overlap {
        first: String,
        second: String,
    },
    NoFields,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::Shape { size, align } => write!(
                f,
                "size {size} and alignment {align} are no Rust layout (the alignment must be a power of two dividing the size)"
            ),
            LayoutError::Field { field, offset } => write!(
                f,
                "field `{field}` at offset {offset} lies outside the value or is misaligned"
            ),
            LayoutError::Overlap { first, second } => {
                write!(f, "fields `{first}` and `{second}` share bytes")
            }
            LayoutError::NoFields => f.write_str("a composite element has no fields"),
        }
    }
}

impl std::error::Error for LayoutError {}

impl Element {
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            Element::Scalar(s) => Some(*s),
            Element::Composite(_) => None,
        }
    }

    pub fn size(&self) -> u64 {
        match self {
            Element::Scalar(s) => s.size(),
            Element::Composite(l) => l.size,
        }
    }

    pub fn align(&self) -> u64 {
        match self {
            Element::Scalar(s) => s.align(),
            Element::Composite(l) => l.align,
        }
    }

    /// The type as Rust spells it.
    pub fn name(&self) -> &str {
        match self {
            Element::Scalar(s) => s.name(),
            Element::Composite(l) => &l.name,
        }
    }

    /// The CUDA C++ type of a scalar element ([`Scalar::c_type`]); `None`
    /// for a composite, which has no built-in one.
    pub fn c_type(&self) -> Option<&'static str> {
        self.scalar().and_then(Scalar::c_type)
    }

    /// Every scalar of the value with its offset from the start, in field
    /// order, nested composites flattened: the bytes that are values (the
    /// rest is padding, never read as a value and never compared).
    pub fn scalars(&self) -> Vec<(u64, Scalar)> {
        let mut out = Vec::new();
        self.scalars_at(0, &mut out);
        out
    }

    fn scalars_at(&self, base: u64, out: &mut Vec<(u64, Scalar)>) {
        match self {
            Element::Scalar(s) => out.push((base, *s)),
            Element::Composite(l) => {
                for f in &l.fields {
                    f.element.scalars_at(base + f.offset, out);
                }
            }
        }
    }

    /// Whether the value has bytes that hold no field (padding): such an
    /// element is never read or compared as raw bytes.
    pub fn has_padding(&self) -> bool {
        let covered: u64 = self.scalars().iter().map(|(_, s)| s.size()).sum();
        covered != self.size()
    }
}

impl Layout {
    /// Checks that the layout is one rustc could have made: a power-of-two
    /// alignment dividing the size, each field inside the value and aligned
    /// (nested layouts checked too), and no two fields sharing bytes.
    pub fn check(&self) -> Result<(), LayoutError> {
        if self.fields.is_empty() {
            return Err(LayoutError::NoFields);
        }
        if !self.align.is_power_of_two() || !self.size.is_multiple_of(self.align) {
            return Err(LayoutError::Shape {
                size: self.size,
                align: self.align,
            });
        }
        let mut spans = Vec::with_capacity(self.fields.len());
        for f in &self.fields {
            if let Element::Composite(inner) = &f.element {
                inner.check()?;
            }
            let (size, align) = (f.element.size(), f.element.align());
            let fits = f
                .offset
                .checked_add(size)
                .is_some_and(|end| end <= self.size);
            if !fits || align > self.align || !f.offset.is_multiple_of(align) {
                return Err(LayoutError::Field {
                    field: f.name.clone(),
                    offset: f.offset,
                });
            }
            spans.push((f.offset, f.offset + size, &f.name));
        }
        spans.sort();
        for pair in spans.windows(2) {
            // Zero-sized fields share no bytes with anything.
            if pair[0].1 > pair[1].0 && pair[1].0 < pair[1].1 {
                return Err(LayoutError::Overlap {
                    first: pair[0].2.clone(),
                    second: pair[1].2.clone(),
                });
            }
        }
        Ok(())
    }
}

impl From<Scalar> for Element {
    fn from(s: Scalar) -> Self {
        Element::Scalar(s)
    }
}

impl fmt::Display for Element {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An element is written as its scalar's name (`"i32"`), so documents of
/// scalar elements read as they always have, or as its layout object.
#[cfg(feature = "serde")]
impl serde::Serialize for Element {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Element::Scalar(scalar) => scalar.serialize(s),
            Element::Composite(layout) => layout.serialize(s),
        }
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for Element {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Element;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar type's name or a composite element's layout")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Element, E> {
                Scalar::parse(v).map(Element::Scalar).map_err(E::custom)
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Element, A::Error> {
                let layout: Layout = serde::Deserialize::deserialize(
                    serde::de::value::MapAccessDeserializer::new(map),
                )?;
                layout.check().map_err(serde::de::Error::custom)?;
                Ok(Element::Composite(layout))
            }
        }
        d.deserialize_any(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, offset: u64, s: Scalar) -> Field {
        Field {
            name: name.into(),
            offset,
            element: Element::Scalar(s),
        }
    }

    #[test]
    fn a_reordered_pair_is_a_layout_and_its_padding_is_seen() {
        // A u32 first, then a u8 after it, as rustc lays out the first
        // two fields of `(u8, u32, u8)`: offsets are not field order.
        let pair = Layout {
            name: "(u8, u32)".into(),
            size: 8,
            align: 4,
            fields: vec![field("0", 4, Scalar::U8), field("1", 0, Scalar::U32)],
        };
        assert_eq!(pair.check(), Ok(()));
        let e = Element::Composite(pair);
        assert_eq!(e.scalars(), vec![(4, Scalar::U8), (0, Scalar::U32)]);
        assert!(e.has_padding());
        assert!(!Element::Scalar(Scalar::I32).has_padding());
    }

    #[test]
    fn impossible_layouts_are_refused() {
        let base = |fields, size, align| Layout {
            name: "T".into(),
            size,
            align,
            fields,
        };
        let overlap = base(
            vec![field("a", 0, Scalar::U32), field("b", 2, Scalar::U16)],
            8,
            4,
        );
        assert!(matches!(overlap.check(), Err(LayoutError::Overlap { .. })));
        let outside = base(vec![field("a", 8, Scalar::U32)], 8, 4);
        assert!(matches!(outside.check(), Err(LayoutError::Field { .. })));
        let misaligned = base(vec![field("a", 2, Scalar::U32)], 8, 4);
        assert!(matches!(misaligned.check(), Err(LayoutError::Field { .. })));
        let shape = base(vec![field("a", 0, Scalar::U32)], 6, 4);
        assert!(matches!(shape.check(), Err(LayoutError::Shape { .. })));
        assert_eq!(base(vec![], 0, 1).check(), Err(LayoutError::NoFields));
        let huge = base(vec![field("a", u64::MAX - 1, Scalar::U32)], 8, 4);
        assert!(matches!(huge.check(), Err(LayoutError::Field { .. })));
    }
}
