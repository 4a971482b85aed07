//! The definitions of the structs and enums a callback's MIR names.
//!
//! MIR text names an ADT (`std::option::Option<i32>`, `Shape`) but never
//! prints its definition: which variants it has, in which order, with
//! which fields and discriminants. Prepared MIR records each definition the
//! bodies name (`adt_items::collect`), from two sources:
//! - `core`'s types that callbacks meet once MIR inlining has run
//!   (`Option`, `Result`, `Ordering`, `ControlFlow`, `FpCategory`, `Range`,
//!   `RangeInclusive`, `TryFromIntError`, `PhantomData`, `Wrapping`,
//!   `Saturating`, `slice::Iter`, `Copied`, `Take`): [`std_def`], written from their documented definitions
//!   (declaration order, `Ordering`'s `#[repr(i8)]` values -1, 0, 1);
//! - the crate's own `struct` and `enum` items, read from its source files
//!   (`adt_items::source_defs`): generics, tuple, record and unit variants, a
//!   `#[repr(int)]` discriminant type and integer-literal discriminants.
//!
//! Inside a callback the representation of these values is the lowering's
//! choice (they never cross the environment or the thunk ABI as ADTs); what
//! must match rustc is each variant's discriminant *value*, which MIR's
//! `switchInt` and casts compare against. A type whose definition is not
//! found (another crate's) is simply not recorded: the lowering then reports
//! that it has no layout for it, in the user's terms.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ty::{Scalar, Ty};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdtKind {
    Struct,
    Enum,
}

impl AdtKind {
    pub fn name(self) -> &'static str {
        match self {
            AdtKind::Struct => "struct",
            AdtKind::Enum => "enum",
        }
    }
}

/// One struct or enum, as the bodies name it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdtDef {
    /// The path as MIR prints the type, without generic arguments
    /// (`std::option::Option`, `Shape`).
    pub path: String,
    /// Generic type parameters, in order (`T`, `E`); lifetimes are not kept.
    pub params: Vec<String>,
    pub kind: AdtKind,
    /// The discriminant's type: `isize` unless `#[repr(int)]` says
    /// otherwise. Unused for a struct.
    pub discr: Scalar,
    /// A struct has one variant, named as the struct; an enum its variants
    /// in declaration order (MIR's variant index).
    pub variants: Vec<VariantDef>,
    /// A struct's `#[repr(…)]` options other than an integer type, as
    /// written (`C`, `align(16)`): they decide rustc's layout of the struct
    /// when a callback captures one whole.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repr: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VariantDef {
    pub name: String,
    /// The discriminant value (an enum's variant); 0 for a struct.
    pub discr: i128,
    /// Field types in declaration order; generic parameters appear as
    /// paths (`T`).
    #[serde(with = "crate::ty::vec_as_string")]
    pub fields: Vec<Ty>,
}

impl AdtDef {
    /// The variant index of `name` (a struct's single variant answers to
    /// any name).
    pub fn variant_index(&self, name: &str) -> Option<usize> {
        match self.kind {
            AdtKind::Struct => Some(0),
            AdtKind::Enum => self.variants.iter().position(|v| v.name == name),
        }
    }

    /// The field types of variant `index` with the generic arguments `args`
    /// substituted for the parameters.
    pub fn fields(&self, index: usize, args: &[Ty]) -> Option<Vec<Ty>> {
        let v = self.variants.get(index)?;
        // `ControlFlow<B>` is `ControlFlow<B, ()>`: the one default a
        // type here has.
        let defaulted;
        let args = if self.path.ends_with("ControlFlow") && args.len() + 1 == self.params.len() {
            defaulted = [args, &[Ty::Tuple(Vec::new())]].concat();
            defaulted.as_slice()
        } else {
            args
        };
        Some(v.fields.iter().map(|t| self.subst(t, args)).collect())
    }

    fn subst(&self, ty: &Ty, args: &[Ty]) -> Ty {
        match ty {
            Ty::Adt { path, args: a } if a.is_empty() => {
                match self.params.iter().position(|p| p == path) {
                    Some(i) => args.get(i).cloned().unwrap_or_else(|| ty.clone()),
                    None => ty.clone(),
                }
            }
            Ty::Adt { path, args: a } => Ty::Adt {
                path: path.clone(),
                args: a.iter().map(|t| self.subst(t, args)).collect(),
            },
            Ty::Tuple(parts) => Ty::Tuple(parts.iter().map(|t| self.subst(t, args)).collect()),
            // A const parameter as the length (`[T; N]`).
            Ty::Array(e, n) => {
                let len = match self
                    .params
                    .iter()
                    .position(|p| p == n)
                    .and_then(|i| args.get(i))
                {
                    Some(Ty::Adt { path, args }) if args.is_empty() => path.clone(),
                    _ => n.clone(),
                };
                Ty::Array(Box::new(self.subst(e, args)), len)
            }
            Ty::Slice(e) => Ty::Slice(Box::new(self.subst(e, args))),
            Ty::Ref { mutable, inner } => Ty::Ref {
                mutable: *mutable,
                inner: Box::new(self.subst(inner, args)),
            },
            Ty::Ptr { mutable, inner } => Ty::Ptr {
                mutable: *mutable,
                inner: Box::new(self.subst(inner, args)),
            },
            other => other.clone(),
        }
    }
}

/// The definitions of a document, by the path MIR prints.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Adts {
    by_path: BTreeMap<String, AdtDef>,
}

impl Adts {
    pub fn new(defs: &[AdtDef]) -> Adts {
        Adts {
            by_path: defs.iter().map(|d| (d.path.clone(), d.clone())).collect(),
        }
    }

    /// Adds a closure type as the struct of its captures' types, in field
    /// order (`(*_1).0`, `(*_1).1`, …; none for a closure that captures
    /// nothing): a closure built and called inside a callback is such a
    /// value on the GPU, laid out as the lowering chooses. (A callback's own
    /// closure object crosses the ABI, and is read at rustc's offsets
    /// through its environment layout instead.)
    pub fn add_closure(&mut self, ty: &Ty, captures: Vec<Ty>) {
        let path = ty.to_string();
        self.by_path.insert(
            path.clone(),
            AdtDef {
                path,
                params: Vec::new(),
                kind: AdtKind::Struct,
                discr: Scalar::Isize,
                variants: vec![VariantDef {
                    name: "closure".into(),
                    discr: 0,
                    fields: captures,
                }],
                repr: Vec::new(),
            },
        );
    }

    /// The definition of an ADT type and its generic arguments.
    pub fn of<'t>(&self, ty: &'t Ty) -> Option<(&AdtDef, &'t [Ty])> {
        match ty {
            Ty::Adt { path, args } => self.by_path.get(path).map(|d| (d, args.as_slice())),
            Ty::Closure { .. } => self.by_path.get(&ty.to_string()).map(|d| (d, &[][..])),
            _ => None,
        }
    }

    /// An enum type's definition and arguments.
    pub fn enum_of<'t>(&self, ty: &'t Ty) -> Option<(&AdtDef, &'t [Ty])> {
        self.of(ty).filter(|(d, _)| d.kind == AdtKind::Enum)
    }

    /// A struct type's field types, substituted.
    pub fn struct_fields(&self, ty: &Ty) -> Option<Vec<Ty>> {
        let (d, args) = self.of(ty).filter(|(d, _)| d.kind == AdtKind::Struct)?;
        d.fields(0, args)
    }
}

fn v(name: &str, discr: i128, fields: &[&str]) -> VariantDef {
    VariantDef {
        name: name.into(),
        discr,
        fields: fields.iter().map(|t| Ty::parse(t)).collect(),
    }
}

fn def(
    path: &str,
    params: &[&str],
    kind: AdtKind,
    discr: Scalar,
    variants: Vec<VariantDef>,
) -> AdtDef {
    AdtDef {
        path: path.into(),
        params: params.iter().map(|p| p.to_string()).collect(),
        kind,
        discr,
        variants,
        repr: Vec::new(),
    }
}

/// `core`'s definition of the type MIR prints as `path` (`std::` or
/// `core::`), when it is one the GPU side lays out.
pub fn std_def(path: &str) -> Option<AdtDef> {
    let rest = path
        .strip_prefix("std::")
        .or_else(|| path.strip_prefix("core::"))?;
    use AdtKind::{Enum, Struct};
    let isize = Scalar::Isize;
    let mut d = match rest {
        "option::Option" => def(
            "",
            &["T"],
            Enum,
            isize,
            vec![v("None", 0, &[]), v("Some", 1, &["T"])],
        ),
        "result::Result" => def(
            "",
            &["T", "E"],
            Enum,
            isize,
            vec![v("Ok", 0, &["T"]), v("Err", 1, &["E"])],
        ),
        "cmp::Ordering" => def(
            "",
            &[],
            Enum,
            Scalar::I8,
            vec![v("Less", -1, &[]), v("Equal", 0, &[]), v("Greater", 1, &[])],
        ),
        "ops::ControlFlow" | "ops::control_flow::ControlFlow" => def(
            "",
            &["B", "C"],
            Enum,
            isize,
            vec![v("Continue", 0, &["C"]), v("Break", 1, &["B"])],
        ),
        "num::FpCategory" => def(
            "",
            &[],
            Enum,
            isize,
            ["Nan", "Infinite", "Zero", "Subnormal", "Normal"]
                .iter()
                .enumerate()
                .map(|(i, n)| v(n, i as i128, &[]))
                .collect(),
        ),
        "num::TryFromIntError" | "num::error::TryFromIntError" => def(
            "",
            &[],
            Struct,
            isize,
            vec![v("TryFromIntError", 0, &["()"])],
        ),
        "ops::Range" | "ops::range::Range" => def(
            "",
            &["Idx"],
            Struct,
            isize,
            vec![v("Range", 0, &["Idx", "Idx"])],
        ),
        "ops::RangeInclusive" | "ops::range::RangeInclusive" => def(
            "",
            &["Idx"],
            Struct,
            isize,
            vec![v("RangeInclusive", 0, &["Idx", "Idx", "bool"])],
        ),
        // Iterator adapters, fields in `core`'s order and meaning: inlined
        // code builds and reads them (`Zip` as for iterators with random
        // access; `StepBy` of an unsigned range counts what is left in its
        // range's end, as the core model does, `frontend::core_model`).
        "iter::Map" | "iter::adapters::map::Map" => def(
            "",
            &["I", "F"],
            Struct,
            isize,
            vec![v("Map", 0, &["I", "F"])],
        ),
        "iter::Filter" | "iter::adapters::filter::Filter" => def(
            "",
            &["I", "P"],
            Struct,
            isize,
            vec![v("Filter", 0, &["I", "P"])],
        ),
        "iter::Enumerate" | "iter::adapters::enumerate::Enumerate" => def(
            "",
            &["I"],
            Struct,
            isize,
            vec![v("Enumerate", 0, &["I", "usize"])],
        ),
        "iter::Rev" | "iter::adapters::rev::Rev" => {
            def("", &["I"], Struct, isize, vec![v("Rev", 0, &["I"])])
        }
        "iter::StepBy" | "iter::adapters::step_by::StepBy" => def(
            "",
            &["I"],
            Struct,
            isize,
            vec![v("StepBy", 0, &["I", "usize", "bool"])],
        ),
        "iter::Zip" | "iter::adapters::zip::Zip" => def(
            "",
            &["A", "B"],
            Struct,
            isize,
            vec![v("Zip", 0, &["A", "B", "usize", "usize", "usize"])],
        ),
        // `slice::Iter` with `NonNull<T>` as `*const T` (`frontend::slices`).
        "slice::Iter" | "slice::iter::Iter" => def(
            "",
            &["T"],
            Struct,
            isize,
            vec![v(
                "Iter",
                0,
                &["*const T", "*const T", "std::marker::PhantomData<&T>"],
            )],
        ),
        // An array's by-value iterator, its `MaybeUninit` gone
        // (`frontend::slices`); `N` is the array's length.
        "array::IntoIter" | "array::iter::IntoIter" => def(
            "",
            &["T", "N"],
            Struct,
            isize,
            vec![v(
                "IntoIter",
                0,
                &["std::mem::ManuallyDrop<std::array::iter::iter_inner::PolymorphicIter<[T; N]>>"],
            )],
        ),
        "array::iter::iter_inner::PolymorphicIter" => def(
            "",
            &["DATA"],
            Struct,
            isize,
            vec![v(
                "PolymorphicIter",
                0,
                &["std::ops::index_range::IndexRange", "DATA"],
            )],
        ),
        "ops::index_range::IndexRange" => def(
            "",
            &[],
            Struct,
            isize,
            vec![v("IndexRange", 0, &["usize", "usize"])],
        ),
        "mem::ManuallyDrop" | "mem::manually_drop::ManuallyDrop" => def(
            "",
            &["T"],
            Struct,
            isize,
            vec![v("ManuallyDrop", 0, &["std::mem::MaybeDangling<T>"])],
        ),
        "mem::MaybeDangling" | "mem::maybe_dangling::MaybeDangling" => def(
            "",
            &["P"],
            Struct,
            isize,
            vec![v("MaybeDangling", 0, &["P"])],
        ),
        "iter::Copied" | "iter::adapters::copied::Copied" => {
            def("", &["I"], Struct, isize, vec![v("Copied", 0, &["I"])])
        }
        "iter::Take" | "iter::adapters::take::Take" => def(
            "",
            &["I"],
            Struct,
            isize,
            vec![v("Take", 0, &["I", "usize"])],
        ),
        "marker::PhantomData" => def("", &["T"], Struct, isize, vec![v("PhantomData", 0, &[])]),
        "num::Wrapping" => def("", &["T"], Struct, isize, vec![v("Wrapping", 0, &["T"])]),
        // The value itself, never zero: what `frontend::niche` builds for
        // the transmutes `core` uses (`NonZero::new`, `NonZero::get`).
        "num::NonZero" => def("", &["T"], Struct, isize, vec![v("NonZero", 0, &["T"])]),
        "num::Saturating" => def("", &["T"], Struct, isize, vec![v("Saturating", 0, &["T"])]),
        _ => return None,
    };
    d.path = path.to_string();
    Some(d)
}

/// The type of a struct constant as MIR prints it in an operand
/// (`std::ops::Range::<u32> {{ start: 0_u32, end: 4_u32 }}` is a
/// `std::ops::Range<u32>`), or of a value rustc folded to its bytes
/// (`{transmute(0x…): T}`).
pub fn struct_constant_type(text: &str) -> Option<Ty> {
    if let Some(rest) = text.strip_prefix("{transmute(0x") {
        let (_, ty) = rest.split_once("): ")?;
        return Some(Ty::parse(ty.strip_suffix('}')?));
    }
    let (head, rest) = text.split_once(" {{ ")?;
    rest.ends_with(" }}").then_some(())?;
    match Ty::parse(&head.replacen("::<", "<", 1)) {
        ty @ Ty::Adt { .. } => Some(ty),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knows_cores_types() {
        let o = std_def("std::option::Option").unwrap();
        assert_eq!(o.variant_index("Some"), Some(1));
        assert_eq!(o.fields(1, &[Ty::parse("u8")]).unwrap(), [Ty::parse("u8")]);
        let ord = std_def("core::cmp::Ordering").unwrap();
        assert_eq!(ord.discr, Scalar::I8);
        assert_eq!(ord.variants[0].discr, -1);
        assert!(std_def("std::vec::Vec").is_none());
        assert!(std_def("Option").is_none());
    }
}
