//! The domain's vocabulary, one definition each, shared by every crate of
//! the workspace: the [`Scalar`] types of Rust, the [`Element`]s the
//! providers take (a scalar, or a layout of fields), the [`Provider`]s and
//! the [`Shape`] and [`Signature`] of their callbacks, and the [`CallKind`]s
//! a call in a callback's body resolves to.
//!
//! Names are parsed here, once, at the edge where text comes in: an unknown
//! name is an [`UnknownName`] error that lists the valid ones, never a
//! default.
//!
//! Invariant: a leaf. No workspace dependencies, no MLIR, no LLVM, no CUDA;
//! without the `serde` feature no dependencies at all, so the compiler's
//! bridge compiles it with plain rustc for the provider API crate `native`.

mod call;
mod element;
mod name;
mod order;
mod provider;
mod scalar;

pub use call::CallKind;
pub use element::{Element, Field, Layout, LayoutError};
pub use name::UnknownName;
pub use order::{
    computed_key, ord_key_order, packed_key, radix_gathers, KeyOrder, RadixKey, SortChoice, Ties,
    RADIX_GATHER_BYTES,
};
pub use provider::{Provider, Shape, Signature, ELEMENT_SCALARS};
pub use scalar::Scalar;
