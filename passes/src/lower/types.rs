//! MIR types (as the dialect spells them in `ty` attributes) → LLVM-dialect
//! types, for the memory a local or field occupies, built with melior's
//! typed builders.
//!
//! Locals never leave the function they belong to, so tuples may use LLVM's
//! struct layout; the one layout that crosses the ABI, the closure
//! environment, is never computed here (see `manifest::env::EnvLayout`).

use frontend::adt::{AdtKind, Adts};
use frontend::ty::{Scalar, Ty};
use melior::dialect::llvm;
use melior::ir::Type;
use melior::Context;

/// The builtin type of a scalar (`i8` for `u8`, `i1` for `bool`); `None`
/// for `f128`, which the GPU side does not lay out.
pub fn scalar_type(context: &Context, s: Scalar) -> Option<Type<'_>> {
    (s != Scalar::F128).then(|| ir::import::scalar_type(context, s))
}

/// The LLVM-dialect type of the memory that holds a value of MIR type `ty`,
/// or `None` when the lowering has no layout for it (closures, slices, ADTs
/// whose definition is unknown).
///
/// A struct is an LLVM struct of its fields. An enum is its discriminant
/// followed by one struct per variant, side by side rather than
/// overlapping: the value never leaves the function (it is not an element,
/// a capture or a thunk argument), so no byte of it is shared with rustc,
/// and LLVM's SROA turns each part into registers.
pub fn memory_type<'c>(context: &'c Context, ty: &Ty, adts: &Adts) -> Option<Type<'c>> {
    match ty {
        Ty::Scalar(s) => scalar_type(context, *s),
        // A closure that captures something is the struct of its captures
        // (`frontend::adt`).
        Ty::Adt { .. } | Ty::Closure { .. } => {
            let (def, args) = adts.of(ty)?;
            let variant = |i: usize| -> Option<Type<'c>> {
                memory_type(context, &Ty::Tuple(def.fields(i, args)?), adts)
            };
            match def.kind {
                AdtKind::Struct => variant(0),
                AdtKind::Enum => {
                    let mut parts = vec![scalar_type(context, def.discr)?];
                    for i in 0..def.variants.len() {
                        parts.push(variant(i)?);
                    }
                    Some(llvm::r#type::r#struct(context, &parts, false))
                }
            }
        }
        Ty::Ref { inner, .. } | Ty::Ptr { inner, .. } if is_sized(inner) => {
            Some(llvm::r#type::pointer(context, 0))
        }
        Ty::FnPtr(_) => Some(llvm::r#type::pointer(context, 0)),
        // Zero-sized.
        Ty::Never | Ty::FnDef { .. } => Some(llvm::r#type::r#struct(context, &[], false)),
        Ty::Tuple(parts) => {
            let parts = parts
                .iter()
                .map(|p| memory_type(context, p, adts))
                .collect::<Option<Vec<_>>>()?;
            Some(llvm::r#type::r#struct(context, &parts, false))
        }
        Ty::Array(elem, len) => {
            let n = u32::try_from(array_len(len)?).ok()?;
            Some(llvm::r#type::array(memory_type(context, elem, adts)?, n))
        }
        _ => None,
    }
}

/// `3`, `3_usize` → 3.
pub fn array_len(text: &str) -> Option<u64> {
    let digits: String = text.chars().take_while(|c| c.is_ascii_digit()).collect();
    digits.parse().ok()
}

fn is_sized(ty: &Ty) -> bool {
    !matches!(ty, Ty::Slice(_) | Ty::Str | Ty::Other(_))
}

/// Whether an integer type is signed (`i32`, `isize`); `None` for any
/// other type.
pub fn is_signed(ty: &Ty) -> Option<bool> {
    let s = ty.scalar()?;
    s.is_int().then(|| s.is_signed())
}

/// Types with no drop glue: dropping them does nothing. A struct or enum
/// the lowering lays out is made of such types only (it has a memory type),
/// and a type with a `Drop` impl is never `Copy`, so it is never captured
/// or built by value in an admitted callback.
pub fn is_trivially_dropped(ty: &Ty, adts: &Adts) -> bool {
    match ty {
        Ty::Scalar(_) | Ty::Ref { .. } | Ty::Ptr { .. } | Ty::FnPtr(_) | Ty::FnDef { .. } => true,
        Ty::Never => true,
        Ty::Tuple(parts) => parts.iter().all(|p| is_trivially_dropped(p, adts)),
        Ty::Array(e, _) => is_trivially_dropped(e, adts),
        Ty::Adt { .. } | Ty::Closure { .. } => adts.of(ty).is_some_and(|(def, args)| {
            (0..def.variants.len()).all(|i| {
                def.fields(i, args)
                    .is_some_and(|f| f.iter().all(|t| is_trivially_dropped(t, adts)))
            })
        }),
        _ => false,
    }
}

/// The alignment LLVM gives the memory type of `ty` on the GPU target: a
/// scalar's size (`i128` 16), a pointer's 8, an aggregate's largest part.
pub fn align_of(ty: &Ty, adts: &Adts) -> Option<u64> {
    match ty {
        Ty::Scalar(s) => Some(s.align()),
        Ty::Ref { .. } | Ty::Ptr { .. } | Ty::FnPtr(_) => Some(8),
        Ty::Never | Ty::FnDef { .. } => Some(1),
        Ty::Tuple(parts) => parts
            .iter()
            .try_fold(1, |a, p| Some(a.max(align_of(p, adts)?))),
        Ty::Array(elem, _) => align_of(elem, adts),
        Ty::Adt { .. } | Ty::Closure { .. } => {
            let (def, args) = adts.of(ty)?;
            let mut align = match def.kind {
                AdtKind::Struct => 1,
                AdtKind::Enum => def.discr.align(),
            };
            for i in 0..def.variants.len() {
                align = align.max(align_of(&Ty::Tuple(def.fields(i, args)?), adts)?);
            }
            Some(align)
        }
        _ => None,
    }
}
