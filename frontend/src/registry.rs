//! The tables that decide what a callee is: registration functions of the
//! provider API crate (`native`), and the pure `core` scalar methods that the
//! GPU side may call. Everything about names lives here, nowhere else.

use crate::ty::Scalar;
use vocab::{Provider, Shape};

/// A registration function of the provider API and the native provider that
/// implements it on the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegistrationFn {
    /// Function name in the `native` crate.
    pub function: &'static str,
    /// The provider (a CUDA C++ template under `providers/`).
    pub provider: Provider,
    /// The callback's type: the provider's own ([`Provider::shape`]), or
    /// how this function adapts another to it (`sort_by_key`'s key, whose
    /// thunk compares keys for the merge sort).
    pub shape: Shape,
    /// Where the callback comes from: an argument of the call, or the
    /// element type's own order.
    pub callback: CallbackSource,
    /// For a method of the host API, its type (`Gpu` for `gpu.reduce(…)`,
    /// `native::gpu::Gpu`; `GpuSet` for `gpus.reduce(…)` over sharded
    /// data); `None` for a free function of `native`.
    pub receiver: Option<&'static str>,
}

impl RegistrationFn {
    /// The name users know it by: `reduce`, or `Gpu::reduce` for a method.
    pub fn display_name(&self) -> String {
        match self.receiver {
            Some(ty) => format!("{ty}::{}", self.function),
            None => self.function.to_string(),
        }
    }
}

/// Where a registration's callback comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallbackSource {
    /// The call's argument at this index (`self` counts).
    Arg(usize),
    /// No argument: the element type's own order, `Ord::cmp` (`sort`,
    /// `sort_unstable`). The callback is the core model's comparator for
    /// the element type ([`natural_order_fn`]), a comparator as
    /// `sort_by` takes.
    NaturalOrder,
    /// No argument: a `par_iter` chain's terminal (`ParIter::sum`), whose
    /// callback is the chain, closures in its type (written by the `chain`
    /// module).
    Chain,
    /// Two arguments, `same` on keys and `op` on values, at these indices
    /// (`reduce_by_key`, `scan_by_key`): the callback is one body that
    /// calls either (written by the `chain` module), its environment the
    /// two closures (`native::gpu::ByKey`).
    ByKey { same: usize, op: usize },
}

/// The core model's comparator of `T`'s own order, `|a, b| a.cmp(b)`,
/// which `sort` and `sort_unstable` of integers compile as their callback:
/// `rmir_natural_order_u32`. `None` for a type that has none (every
/// element type but the floats, which are not `Ord`).
pub fn natural_order_fn(element: Scalar) -> Option<String> {
    (element.is_int() && vocab::ELEMENT_SCALARS.contains(&element))
        .then(|| format!("rmir_natural_order_{}", element.name()))
}

/// Whether the registration named `display_name` (as
/// [`RegistrationFn::display_name`] gives it) sorts by the element type's
/// own order, with no callback argument.
pub fn is_natural_order(display_name: &str) -> bool {
    REGISTRATIONS
        .iter()
        .any(|r| r.callback == CallbackSource::NaturalOrder && r.display_name() == display_name)
}

/// The callback shape of the registration named `display_name` (as
/// [`RegistrationFn::display_name`] gives it).
pub fn shape_of(display_name: &str) -> Option<Shape> {
    REGISTRATIONS
        .iter()
        .find(|r| r.display_name() == display_name)
        .map(|r| r.shape)
}

/// Whether the registration named `display_name` (as
/// [`RegistrationFn::display_name`] gives it, the name prepared MIR records)
/// is a method of the run-time host API (`Gpu::reduce`), which finds its
/// kernel by call site.
pub fn is_host_method(display_name: &str) -> bool {
    REGISTRATIONS
        .iter()
        .any(|r| r.receiver.is_some() && r.display_name() == display_name)
}

/// The module of `native` that holds the host API's types.
pub const GPU_MODULE: &str = "gpu";

/// Name of the provider API crate as user code refers to it.
pub const API_CRATE: &str = "native";

/// Every registration function: the free functions of `native` (the CPU
/// reference) and the methods of `native::gpu::Gpu` (the run-time host
/// API), which take `self` first.
pub const REGISTRATIONS: &[RegistrationFn] = &[
    RegistrationFn {
        function: "reduce",
        provider: Provider::Reduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "reduce_mut",
        provider: Provider::Reduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "inclusive_scan",
        provider: Provider::InclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "exclusive_scan",
        provider: Provider::ExclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "transform",
        provider: Provider::Transform,
        shape: Shape::Map,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "transform2",
        provider: Provider::Transform2,
        shape: Shape::Zip,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "segmented_reduce",
        provider: Provider::SegmentedReduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(3),
        receiver: None,
    },
    RegistrationFn {
        function: "select",
        provider: Provider::Select,
        shape: Shape::Predicate,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "dedup_by",
        provider: Provider::DedupBy,
        shape: Shape::Same,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "partition",
        provider: Provider::Partition,
        shape: Shape::RefPredicate,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "partition_point",
        provider: Provider::PartitionPoint,
        shape: Shape::Probe,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "histogram",
        provider: Provider::Histogram,
        shape: Shape::Bin,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "merge_by",
        provider: Provider::MergeBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "reduce_by_key",
        provider: Provider::ReduceByKey,
        shape: Shape::ByKey,
        callback: CallbackSource::ByKey { same: 2, op: 3 },
        receiver: None,
    },
    RegistrationFn {
        function: "scan_by_key",
        provider: Provider::ScanByKey,
        shape: Shape::ByKey,
        callback: CallbackSource::ByKey { same: 2, op: 3 },
        receiver: None,
    },
    RegistrationFn {
        function: "sort_by",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "sort_by_key",
        provider: Provider::SortBy,
        shape: Shape::Key,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "segmented_sort_by",
        provider: Provider::SegmentedSortBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "sort",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: None,
    },
    RegistrationFn {
        function: "sort_unstable",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: None,
    },
    RegistrationFn {
        function: "reduce",
        provider: Provider::Reduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "inclusive_scan",
        provider: Provider::InclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "exclusive_scan",
        provider: Provider::ExclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "transform",
        provider: Provider::Transform,
        shape: Shape::Map,
        callback: CallbackSource::Arg(2),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "transform2",
        provider: Provider::Transform2,
        shape: Shape::Zip,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "segmented_reduce",
        provider: Provider::SegmentedReduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(4),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "select",
        provider: Provider::Select,
        shape: Shape::Predicate,
        callback: CallbackSource::Arg(2),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "dedup_by",
        provider: Provider::DedupBy,
        shape: Shape::Same,
        callback: CallbackSource::Arg(2),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "partition",
        provider: Provider::Partition,
        shape: Shape::RefPredicate,
        callback: CallbackSource::Arg(2),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "partition_point",
        provider: Provider::PartitionPoint,
        shape: Shape::Probe,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "histogram",
        provider: Provider::Histogram,
        shape: Shape::Bin,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "merge_by",
        provider: Provider::MergeBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "reduce_by_key",
        provider: Provider::ReduceByKey,
        shape: Shape::ByKey,
        callback: CallbackSource::ByKey { same: 3, op: 4 },
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "scan_by_key",
        provider: Provider::ScanByKey,
        shape: Shape::ByKey,
        callback: CallbackSource::ByKey { same: 3, op: 4 },
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "sort_by",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(2),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "sort_by_key",
        provider: Provider::SortBy,
        shape: Shape::Key,
        callback: CallbackSource::Arg(2),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "segmented_sort_by",
        provider: Provider::SegmentedSortBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "sort",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "sort_unstable",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: Some("Gpu"),
    },
    // The `_into` forms write into a caller's device buffer, the argument
    // before the callback's (and before `init`).
    RegistrationFn {
        function: "inclusive_scan_into",
        provider: Provider::InclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "exclusive_scan_into",
        provider: Provider::ExclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(4),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "transform_into",
        provider: Provider::Transform,
        shape: Shape::Map,
        callback: CallbackSource::Arg(3),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "transform2_into",
        provider: Provider::Transform2,
        shape: Shape::Zip,
        callback: CallbackSource::Arg(4),
        receiver: Some("Gpu"),
    },
    RegistrationFn {
        function: "segmented_reduce_into",
        provider: Provider::SegmentedReduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(5),
        receiver: Some("Gpu"),
    },
    // A `par_iter` chain's terminals: the chain is the callback.
    // The same methods of `native::gpu::GpuSet`, over sharded data: the
    // callback compiled once for every shard's GPU.
    RegistrationFn {
        function: "transform",
        provider: Provider::Transform,
        shape: Shape::Map,
        callback: CallbackSource::Arg(2),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "transform2",
        provider: Provider::Transform2,
        shape: Shape::Zip,
        callback: CallbackSource::Arg(3),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "select",
        provider: Provider::Select,
        shape: Shape::Predicate,
        callback: CallbackSource::Arg(2),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "reduce",
        provider: Provider::Reduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "reduce_mut",
        provider: Provider::Reduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "inclusive_scan",
        provider: Provider::InclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "exclusive_scan",
        provider: Provider::ExclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "transform",
        provider: Provider::Transform,
        shape: Shape::Map,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "transform2",
        provider: Provider::Transform2,
        shape: Shape::Zip,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "segmented_reduce",
        provider: Provider::SegmentedReduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(3),
        receiver: None,
    },
    RegistrationFn {
        function: "select",
        provider: Provider::Select,
        shape: Shape::Predicate,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "dedup_by",
        provider: Provider::DedupBy,
        shape: Shape::Same,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "partition",
        provider: Provider::Partition,
        shape: Shape::RefPredicate,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "partition_point",
        provider: Provider::PartitionPoint,
        shape: Shape::Probe,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "histogram",
        provider: Provider::Histogram,
        shape: Shape::Bin,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "merge_by",
        provider: Provider::MergeBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "reduce_by_key",
        provider: Provider::ReduceByKey,
        shape: Shape::ByKey,
        callback: CallbackSource::ByKey { same: 2, op: 3 },
        receiver: None,
    },
    RegistrationFn {
        function: "scan_by_key",
        provider: Provider::ScanByKey,
        shape: Shape::ByKey,
        callback: CallbackSource::ByKey { same: 2, op: 3 },
        receiver: None,
    },
    RegistrationFn {
        function: "sort_by",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "sort_by_key",
        provider: Provider::SortBy,
        shape: Shape::Key,
        callback: CallbackSource::Arg(1),
        receiver: None,
    },
    RegistrationFn {
        function: "segmented_sort_by",
        provider: Provider::SegmentedSortBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(2),
        receiver: None,
    },
    RegistrationFn {
        function: "sort",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: None,
    },
    RegistrationFn {
        function: "sort_unstable",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: None,
    },
    RegistrationFn {
        function: "reduce",
        provider: Provider::Reduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(3),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "inclusive_scan",
        provider: Provider::InclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(2),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "exclusive_scan",
        provider: Provider::ExclusiveScan,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(3),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "segmented_reduce",
        provider: Provider::SegmentedReduce,
        shape: Shape::Fold,
        callback: CallbackSource::Arg(4),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "sort_by",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::Arg(2),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "sort_by_key",
        provider: Provider::SortBy,
        shape: Shape::Key,
        callback: CallbackSource::Arg(2),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "dedup_by",
        provider: Provider::DedupBy,
        shape: Shape::Same,
        callback: CallbackSource::Arg(2),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "partition",
        provider: Provider::Partition,
        shape: Shape::RefPredicate,
        callback: CallbackSource::Arg(2),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "histogram",
        provider: Provider::Histogram,
        shape: Shape::Bin,
        callback: CallbackSource::Arg(3),
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "sort",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "sort_unstable",
        provider: Provider::SortBy,
        shape: Shape::Compare,
        callback: CallbackSource::NaturalOrder,
        receiver: Some("GpuSet"),
    },
    RegistrationFn {
        function: "sum",
        provider: Provider::ChainReduce,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "product",
        provider: Provider::ChainReduce,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "reduce",
        provider: Provider::ChainReduce,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "count",
        provider: Provider::ChainReduce,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "any",
        provider: Provider::ChainReduce,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "all",
        provider: Provider::ChainReduce,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "min",
        provider: Provider::ChainPick,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "max",
        provider: Provider::ChainPick,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "min_by",
        provider: Provider::ChainPick,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "max_by",
        provider: Provider::ChainPick,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "min_by_key",
        provider: Provider::ChainPick,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "max_by_key",
        provider: Provider::ChainPick,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
    RegistrationFn {
        function: "collect",
        provider: Provider::ChainCollect,
        shape: Shape::Chain,
        callback: CallbackSource::Chain,
        receiver: Some("ParIter"),
    },
];

/// The receiver types a core operation is defined on (and lowered for).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Receivers {
    /// Every integer type.
    Int,
    /// Signed integers only (`abs`, `signum`, `is_negative`…).
    SignedInt,
    /// Unsigned integers only (`is_power_of_two`).
    UnsignedInt,
    /// Floats only (`sqrt`, `mul_add`…).
    Float,
    /// Integers and floats (`min`, `max`, `clamp`).
    IntOrFloat,
    /// Signed integers and floats (`abs`, `signum`).
    SignedIntOrFloat,
    /// No receiver: a hint (`cold_path`, `likely`).
    None,
}

impl Receivers {
    /// Whether `s` is a receiver type this operation is defined on. Only
    /// the types the GPU lowering handles count: every integer (`isize` and
    /// `usize` are 64-bit on the device), `f32` and `f64` (not `f16`/`f128`).
    pub fn accepts(self, s: Scalar) -> bool {
        let int = s.is_int();
        let float = matches!(s, Scalar::F32 | Scalar::F64);
        match self {
            Receivers::Int => int,
            Receivers::SignedInt => int && s.is_signed(),
            Receivers::UnsignedInt => int && !s.is_signed(),
            Receivers::Float => float,
            Receivers::IntOrFloat => int || float,
            Receivers::SignedIntOrFloat => (int && s.is_signed()) || float,
            Receivers::None => false,
        }
    }

    /// The receiver types in words, for diagnostics.
    pub fn describe(self) -> &'static str {
        match self {
            Receivers::Int => "integers",
            Receivers::SignedInt => "signed integers",
            Receivers::UnsignedInt => "unsigned integers",
            Receivers::Float => "`f32` and `f64`",
            Receivers::IntOrFloat => "integers, `f32` and `f64`",
            Receivers::SignedIntOrFloat => "signed integers, `f32` and `f64`",
            Receivers::None => "no receiver",
        }
    }
}

/// How a core operation is named in MIR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreKind {
    /// An inherent or `Ord` method: `core::num::<impl i32>::wrapping_add`,
    /// `<u8 as Ord>::max`.
    Method,
    /// A `core::intrinsics` function that MIR inlining exposes at
    /// opt-level 3 (`rotate_left::<u32>`, `fabsf32`).
    Intrinsic,
}

/// Every pure `core` scalar operation the GPU side can run: what the
/// frontend resolves as `core`, what admission accepts (name, receiver
/// types, operand count) and what the lowering must lower. The lowering
/// matches on [`CoreOp`] exhaustively, so an operation cannot be allowed
/// here without a lowering; a test lowers every entry for every receiver
/// type it accepts, by both code generation routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CoreOp {
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    WrappingNeg,
    WrappingShl,
    WrappingShr,
    WrappingAbs,
    WrappingDiv,
    WrappingRem,
    WrappingPow,
    SaturatingAdd,
    SaturatingSub,
    SaturatingMul,
    SaturatingPow,
    UncheckedAdd,
    UncheckedSub,
    UncheckedMul,
    UncheckedDiv,
    UncheckedRem,
    UncheckedShl,
    UncheckedShr,
    ExactDiv,
    RotateLeft,
    RotateRight,
    CountOnes,
    CountZeros,
    LeadingZeros,
    TrailingZeros,
    SwapBytes,
    ReverseBits,
    Abs,
    UnsignedAbs,
    AbsDiff,
    Signum,
    IsNegative,
    IsPositive,
    IsPowerOfTwo,
    Min,
    Max,
    Clamp,
    Pow,
    Sqrt,
    Floor,
    Ceil,
    Round,
    Trunc,
    MulAdd,
    Copysign,
    Recip,
    RoundTiesEven,
    Fract,
    ToBits,
    FromBits,
    IsNan,
    IsFinite,
    IsInfinite,
    IsSignNegative,
    IsSignPositive,
    ToDegrees,
    ToRadians,
    ColdPath,
    Likely,
    Unlikely,
    /// `isqrt` (`core::num::int_sqrt::u32`, which MIR calls; a signed
    /// `isqrt` panics on a negative value).
    Isqrt,
    /// `checked_isqrt` of a signed integer: `None` for a negative value.
    CheckedIsqrt,
    /// `ilog2`/`ilog10` (panic on a value ≤ 0) and their `checked_` forms
    /// (`None` there), where MIR calls them rather than inlining.
    Ilog2,
    Ilog10,
    CheckedIlog2,
    CheckedIlog10,
    /// `std::hint::black_box`: an identity the optimiser may not see
    /// through on the host; on the GPU it passes its value through.
    BlackBox,
    /// `…::precondition_check(..)` of `core`'s `assert_unsafe_precondition!`
    /// (MIR with debug assertions): it only checks for undefined behaviour,
    /// and rustc lets such checks be dropped; the GPU side drops it.
    UbCheck,
    /// `checked_pow`: an `Option` of the power (the only `checked_*` that
    /// optimised MIR calls rather than inlines: its body is a loop).
    CheckedPow,
    /// `overflowing_pow`: the wrapped power and whether it overflowed.
    OverflowingPow,
    /// `overflowing_div`/`overflowing_rem`: the wrapped quotient or
    /// remainder, and whether it overflowed (`MIN / -1`); optimised MIR
    /// calls them from `wrapping_div`/`wrapping_rem` with overflow checks.
    OverflowingDiv,
    OverflowingRem,
    RemEuclid,
    DivEuclid,
    // The transcendental functions, through libdevice (`__nv_expf`, …).
    Exp,
    Exp2,
    ExpM1,
    Ln,
    Ln1p,
    Log,
    Log2,
    Log10,
    Powf,
    Powi,
    Cbrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Hypot,
}

impl CoreOp {
    /// libdevice's name of a transcendental function for `f64` (`exp`);
    /// its `f32` form has an `f` appended (`__nv_expf`). `None` for an
    /// operation lowered otherwise.
    pub fn libdevice(self) -> Option<&'static str> {
        Some(match self {
            CoreOp::Exp => "exp",
            CoreOp::Exp2 => "exp2",
            CoreOp::ExpM1 => "expm1",
            CoreOp::Ln => "log",
            CoreOp::Ln1p => "log1p",
            CoreOp::Log2 => "log2",
            CoreOp::Log10 => "log10",
            CoreOp::Powf => "pow",
            CoreOp::Powi => "powi",
            CoreOp::Cbrt => "cbrt",
            CoreOp::Sin => "sin",
            CoreOp::Cos => "cos",
            CoreOp::Tan => "tan",
            CoreOp::Asin => "asin",
            CoreOp::Acos => "acos",
            CoreOp::Atan => "atan",
            CoreOp::Atan2 => "atan2",
            CoreOp::Sinh => "sinh",
            CoreOp::Cosh => "cosh",
            CoreOp::Tanh => "tanh",
            CoreOp::Asinh => "asinh",
            CoreOp::Acosh => "acosh",
            CoreOp::Atanh => "atanh",
            CoreOp::Hypot => "hypot",
            _ => return None,
        })
    }
}

/// One spelling of a core operation.
#[derive(Debug, Clone, Copy)]
pub struct CoreEntry {
    pub name: &'static str,
    pub kind: CoreKind,
    pub op: CoreOp,
    /// Operands, the receiver included (`a.wrapping_add(b)` has 2).
    pub arity: usize,
    pub receivers: Receivers,
}

impl CoreEntry {
    /// Whether a call with `operands` operands fits the entry: its arity,
    /// or any count for a precondition check (each takes the operands of
    /// the function it guards).
    pub fn takes(&self, operands: usize) -> bool {
        self.op == CoreOp::UbCheck || operands == self.arity
    }
}

const fn m(name: &'static str, op: CoreOp, arity: usize, receivers: Receivers) -> CoreEntry {
    CoreEntry {
        name,
        kind: CoreKind::Method,
        op,
        arity,
        receivers,
    }
}

const fn i(name: &'static str, op: CoreOp, arity: usize, receivers: Receivers) -> CoreEntry {
    CoreEntry {
        name,
        kind: CoreKind::Intrinsic,
        op,
        arity,
        receivers,
    }
}

use CoreOp as O;
use Receivers as R;

/// The capability table (see [`CoreOp`]).
pub const CORE_OPS: &[CoreEntry] = &[
    m("wrapping_add", O::WrappingAdd, 2, R::Int),
    m("wrapping_sub", O::WrappingSub, 2, R::Int),
    m("wrapping_mul", O::WrappingMul, 2, R::Int),
    m("wrapping_neg", O::WrappingNeg, 1, R::Int),
    m("wrapping_shl", O::WrappingShl, 2, R::Int),
    m("wrapping_shr", O::WrappingShr, 2, R::Int),
    m("wrapping_abs", O::WrappingAbs, 1, R::SignedInt),
    m("wrapping_div", O::WrappingDiv, 2, R::Int),
    m("wrapping_rem", O::WrappingRem, 2, R::Int),
    m("wrapping_pow", O::WrappingPow, 2, R::Int),
    m("saturating_add", O::SaturatingAdd, 2, R::Int),
    m("saturating_sub", O::SaturatingSub, 2, R::Int),
    m("saturating_mul", O::SaturatingMul, 2, R::Int),
    m("saturating_pow", O::SaturatingPow, 2, R::Int),
    m("rotate_left", O::RotateLeft, 2, R::Int),
    m("rotate_right", O::RotateRight, 2, R::Int),
    m("count_ones", O::CountOnes, 1, R::Int),
    m("count_zeros", O::CountZeros, 1, R::Int),
    m("leading_zeros", O::LeadingZeros, 1, R::Int),
    m("trailing_zeros", O::TrailingZeros, 1, R::Int),
    m("swap_bytes", O::SwapBytes, 1, R::Int),
    m("reverse_bits", O::ReverseBits, 1, R::Int),
    m("abs", O::Abs, 1, R::SignedIntOrFloat),
    m("unsigned_abs", O::UnsignedAbs, 1, R::SignedInt),
    m("abs_diff", O::AbsDiff, 2, R::Int),
    m("signum", O::Signum, 1, R::SignedIntOrFloat),
    m("is_negative", O::IsNegative, 1, R::SignedInt),
    m("is_positive", O::IsPositive, 1, R::SignedInt),
    m("is_power_of_two", O::IsPowerOfTwo, 1, R::UnsignedInt),
    m("min", O::Min, 2, R::IntOrFloat),
    m("max", O::Max, 2, R::IntOrFloat),
    m("clamp", O::Clamp, 3, R::IntOrFloat),
    m("pow", O::Pow, 2, R::Int),
    m("sqrt", O::Sqrt, 1, R::Float),
    m("floor", O::Floor, 1, R::Float),
    m("ceil", O::Ceil, 1, R::Float),
    m("round", O::Round, 1, R::Float),
    m("trunc", O::Trunc, 1, R::Float),
    m("mul_add", O::MulAdd, 3, R::Float),
    m("copysign", O::Copysign, 2, R::Float),
    m("recip", O::Recip, 1, R::Float),
    m("round_ties_even", O::RoundTiesEven, 1, R::Float),
    m("fract", O::Fract, 1, R::Float),
    m("to_bits", O::ToBits, 1, R::Float),
    m("from_bits", O::FromBits, 1, R::Float),
    m("is_nan", O::IsNan, 1, R::Float),
    m("is_finite", O::IsFinite, 1, R::Float),
    m("is_infinite", O::IsInfinite, 1, R::Float),
    m("is_sign_negative", O::IsSignNegative, 1, R::Float),
    m("is_sign_positive", O::IsSignPositive, 1, R::Float),
    m("to_degrees", O::ToDegrees, 1, R::Float),
    m("to_radians", O::ToRadians, 1, R::Float),
    m("checked_pow", O::CheckedPow, 2, R::Int),
    m("overflowing_pow", O::OverflowingPow, 2, R::Int),
    m("overflowing_div", O::OverflowingDiv, 2, R::Int),
    m("overflowing_rem", O::OverflowingRem, 2, R::Int),
    m("rem_euclid", O::RemEuclid, 2, R::Int),
    m("div_euclid", O::DivEuclid, 2, R::Int),
    m("exp", O::Exp, 1, R::Float),
    m("exp2", O::Exp2, 1, R::Float),
    m("exp_m1", O::ExpM1, 1, R::Float),
    m("ln", O::Ln, 1, R::Float),
    m("ln_1p", O::Ln1p, 1, R::Float),
    m("log", O::Log, 2, R::Float),
    m("log2", O::Log2, 1, R::Float),
    m("log10", O::Log10, 1, R::Float),
    m("powf", O::Powf, 2, R::Float),
    m("powi", O::Powi, 2, R::Float),
    m("cbrt", O::Cbrt, 1, R::Float),
    m("sin", O::Sin, 1, R::Float),
    m("cos", O::Cos, 1, R::Float),
    m("tan", O::Tan, 1, R::Float),
    m("asin", O::Asin, 1, R::Float),
    m("acos", O::Acos, 1, R::Float),
    m("atan", O::Atan, 1, R::Float),
    m("atan2", O::Atan2, 2, R::Float),
    m("sinh", O::Sinh, 1, R::Float),
    m("cosh", O::Cosh, 1, R::Float),
    m("tanh", O::Tanh, 1, R::Float),
    m("asinh", O::Asinh, 1, R::Float),
    m("acosh", O::Acosh, 1, R::Float),
    m("atanh", O::Atanh, 1, R::Float),
    m("hypot", O::Hypot, 2, R::Float),
    i("rotate_left", O::RotateLeft, 2, R::Int),
    i("rotate_right", O::RotateRight, 2, R::Int),
    i("ctpop", O::CountOnes, 1, R::Int),
    i("ctlz", O::LeadingZeros, 1, R::Int),
    i("cttz", O::TrailingZeros, 1, R::Int),
    i("bswap", O::SwapBytes, 1, R::Int),
    i("bitreverse", O::ReverseBits, 1, R::Int),
    i("cold_path", O::ColdPath, 0, R::None),
    i("likely", O::Likely, 1, R::None),
    i("unlikely", O::Unlikely, 1, R::None),
    i("black_box", O::BlackBox, 1, R::IntOrFloat),
    i("ctlz_nonzero", O::LeadingZeros, 1, R::Int),
    i("cttz_nonzero", O::TrailingZeros, 1, R::Int),
    m("isqrt", O::Isqrt, 1, R::Int),
    m("checked_isqrt", O::CheckedIsqrt, 1, R::SignedInt),
    m("ilog2", O::Ilog2, 1, R::Int),
    m("ilog10", O::Ilog10, 1, R::Int),
    m("checked_ilog2", O::CheckedIlog2, 1, R::Int),
    m("checked_ilog10", O::CheckedIlog10, 1, R::Int),
    i("unchecked_add", O::UncheckedAdd, 2, R::Int),
    i("unchecked_sub", O::UncheckedSub, 2, R::Int),
    i("unchecked_mul", O::UncheckedMul, 2, R::Int),
    i("unchecked_div", O::UncheckedDiv, 2, R::Int),
    i("unchecked_rem", O::UncheckedRem, 2, R::Int),
    i("unchecked_shl", O::UncheckedShl, 2, R::Int),
    i("unchecked_shr", O::UncheckedShr, 2, R::Int),
    i("exact_div", O::ExactDiv, 2, R::Int),
    i("saturating_add", O::SaturatingAdd, 2, R::Int),
    i("saturating_sub", O::SaturatingSub, 2, R::Int),
    i("wrapping_add", O::WrappingAdd, 2, R::Int),
    i("wrapping_sub", O::WrappingSub, 2, R::Int),
    i("wrapping_mul", O::WrappingMul, 2, R::Int),
    i("minnumf32", O::Min, 2, R::Float),
    i("maxnumf32", O::Max, 2, R::Float),
    i("minnumf64", O::Min, 2, R::Float),
    i("maxnumf64", O::Max, 2, R::Float),
    i("fabsf32", O::Abs, 1, R::Float),
    i("fabsf64", O::Abs, 1, R::Float),
    // What the float methods above become when MIR inlining runs (`-O`):
    // the same operations, so dev and release builds agree.
    i("sqrtf32", O::Sqrt, 1, R::Float),
    i("sqrtf64", O::Sqrt, 1, R::Float),
    i("floorf32", O::Floor, 1, R::Float),
    i("floorf64", O::Floor, 1, R::Float),
    i("ceilf32", O::Ceil, 1, R::Float),
    i("ceilf64", O::Ceil, 1, R::Float),
    i("roundf32", O::Round, 1, R::Float),
    i("roundf64", O::Round, 1, R::Float),
    i("truncf32", O::Trunc, 1, R::Float),
    i("truncf64", O::Trunc, 1, R::Float),
    i("round_ties_even_f32", O::RoundTiesEven, 1, R::Float),
    i("round_ties_even_f64", O::RoundTiesEven, 1, R::Float),
    i("fmaf32", O::MulAdd, 3, R::Float),
    i("fmaf64", O::MulAdd, 3, R::Float),
    i("copysignf32", O::Copysign, 2, R::Float),
    i("copysignf64", O::Copysign, 2, R::Float),
    i("expf32", O::Exp, 1, R::Float),
    i("expf64", O::Exp, 1, R::Float),
    i("exp2f32", O::Exp2, 1, R::Float),
    i("exp2f64", O::Exp2, 1, R::Float),
    i("logf32", O::Ln, 1, R::Float),
    i("logf64", O::Ln, 1, R::Float),
    i("log2f32", O::Log2, 1, R::Float),
    i("log2f64", O::Log2, 1, R::Float),
    i("log10f32", O::Log10, 1, R::Float),
    i("log10f64", O::Log10, 1, R::Float),
    i("powf32", O::Powf, 2, R::Float),
    i("powf64", O::Powf, 2, R::Float),
    i("powif32", O::Powi, 2, R::Float),
    i("powif64", O::Powi, 2, R::Float),
    i("sinf32", O::Sin, 1, R::Float),
    i("sinf64", O::Sin, 1, R::Float),
    i("cosf32", O::Cos, 1, R::Float),
    i("cosf64", O::Cos, 1, R::Float),
    i("precondition_check", O::UbCheck, 0, R::None),
];

/// std's C math functions (`std::sys::cmath::hypotf`, `core::num::libm::cbrt`), which optimised MIR
/// calls where std's float methods are not intrinsics, and `core`'s
/// integer square roots and logarithms (`core::num::int_sqrt::u32`,
/// `core::num::int_log10::u64_impl`): the Rust method each
/// implements and the receiver type, or `None` for another path.
pub fn cmath(path: &str) -> Option<(String, String)> {
    // `core::num::int_sqrt::u32`: the integer square root, by type;
    // `core::num::int_log10::u64_impl`: `ilog10` of a positive value.
    if let Some(ty) = path.strip_prefix("core::num::int_sqrt::") {
        let s = crate::ty::Scalar::from_name(ty)?;
        return s
            .is_unsigned()
            .then(|| ("isqrt".to_string(), ty.to_string()));
    }
    if let Some(ty) = path
        .strip_prefix("core::num::int_log10::")
        .and_then(|rest| rest.strip_suffix("_impl"))
    {
        let s = crate::ty::Scalar::from_name(ty)?;
        return s.is_int().then(|| ("ilog10".to_string(), ty.to_string()));
    }
    let name = path
        .strip_prefix("std::sys::cmath::")
        .or_else(|| path.strip_prefix("core::num::libm::"))?;
    let (base, ty) = match name.strip_suffix('f') {
        Some(b) => (b, "f32"),
        None => (name, "f64"),
    };
    let method = match base {
        "cbrt" | "tan" | "asin" | "acos" | "atan" | "atan2" | "sinh" | "cosh" | "tanh"
        | "hypot" | "asinh" | "acosh" | "atanh" => base,
        "expm1" => "exp_m1",
        "log1p" => "ln_1p",
        _ => return None,
    };
    core_entry(CoreKind::Method, method)?;
    Some((method.to_string(), ty.to_string()))
}

/// `core`'s undefined-behaviour precondition checks
/// (`…::unchecked_add::precondition_check`), called only with debug
/// assertions on.
pub fn is_ub_check(path: &str) -> bool {
    path.ends_with("::precondition_check")
}

/// The table entry for a core callee of this kind, by name.
pub fn core_entry(kind: CoreKind, name: &str) -> Option<&'static CoreEntry> {
    CORE_OPS.iter().find(|e| e.kind == kind && e.name == name)
}

/// The table entry a resolved core callee names (methods first: a name
/// shared by a method and an intrinsic has the same operation).
pub fn core_op(name: &str) -> Option<&'static CoreEntry> {
    core_entry(CoreKind::Method, name).or_else(|| core_entry(CoreKind::Intrinsic, name))
}

/// Why a resolved core call cannot run on the GPU: an operand count or a
/// receiver type the operation is not defined on here. `None` when fine.
pub fn core_call_problem(name: &str, receiver: &str, operands: usize) -> Option<String> {
    let Some(e) = core_op(name) else {
        return Some(format!(
            "`{name}` is not a core operation the GPU side knows"
        ));
    };
    if !e.takes(operands) {
        return Some(format!(
            "`{name}` takes {} operand{}, this call passes {operands}",
            e.arity,
            if e.arity == 1 { "" } else { "s" }
        ));
    }
    if e.receivers == Receivers::None {
        return None;
    }
    match Scalar::from_name(receiver) {
        Some(s) if e.receivers.accepts(s) => None,
        Some(s) => Some(format!(
            "`{name}` on `{}` is not supported on the GPU: it is lowered for {}",
            s.name(),
            e.receivers.describe()
        )),
        None => Some(format!(
            "cannot tell the receiver type of `{name}` (got `{receiver}`)"
        )),
    }
}

/// The scalar type a core operation works on, from the callee as MIR
/// printed it: `core::num::<impl i32>::abs`, `<u8 as Ord>::max`,
/// `rotate_left::<u32>`, `fabsf32`.
pub fn core_receiver(text: &str, name: &str) -> Option<Scalar> {
    let from = |s: &str| Scalar::from_name(s.trim());
    if let Some(i) = text.find("<impl ") {
        let rest = &text[i + 6..];
        return from(&rest[..rest.find('>')?]);
    }
    if let Some(rest) = text.strip_prefix('<') {
        return from(&rest[..rest.find(" as ")?]);
    }
    if let Some(i) = text.find("::<") {
        let rest = &text[i + 3..];
        let end = rest.find([',', '>'])?;
        return from(&rest[..end]);
    }
    ["f16", "f32", "f64"]
        .into_iter()
        .find(|s| name.ends_with(s))
        .and_then(from)
}

/// The formatting machinery (`format_args!`): `fmt::Arguments` and its
/// `Argument`s, built only to be handed to a sink (`println!`, `format!`,
/// `panic!`), which is what a diagnostic should name.
pub fn is_fmt_machinery(path: &str) -> bool {
    ["core::fmt::", "std::fmt::", "Arguments::", "Argument::"]
        .iter()
        .any(|p| path.starts_with(p))
        && !matches!(path, "std::fmt::format" | "alloc::fmt::format")
}

/// What a call looks like in the Rust source, for locating it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceToken<'a> {
    /// Nothing the user wrote (the formatting machinery inside a macro).
    None,
    /// The callee's last path segment, followed by `(` or `::<`.
    Word(&'a str),
    /// One of these macros, followed by `!`.
    Macro(&'static [&'static str]),
    /// Indexing: `v[i]`.
    Index,
}

/// How to find a call of `path` in the source: macros' expansions call
/// functions the user never wrote (`std::io::_print` for `println!`).
pub fn source_token(path: &str) -> SourceToken<'_> {
    const PRINT: &[&str] = &["println", "print"];
    const EPRINT: &[&str] = &["eprintln", "eprint"];
    const FORMAT: &[&str] = &["format"];
    const PANIC: &[&str] = &[
        "panic",
        "assert",
        "assert_eq",
        "assert_ne",
        "unreachable",
        "todo",
        "unimplemented",
    ];
    if is_fmt_machinery(path) {
        return SourceToken::None;
    }
    if path.ends_with("::_print") {
        return SourceToken::Macro(PRINT);
    }
    if path.ends_with("::_eprint") {
        return SourceToken::Macro(EPRINT);
    }
    if matches!(path, "std::fmt::format" | "alloc::fmt::format") {
        return SourceToken::Macro(FORMAT);
    }
    if is_panic_path(path) {
        return SourceToken::Macro(PANIC);
    }
    if (path.contains(" as Index<") && path.ends_with("::index"))
        || (path.contains(" as IndexMut<") && path.ends_with("::index_mut"))
    {
        return SourceToken::Index;
    }
    SourceToken::Word(path.rsplit("::").next().unwrap_or(path))
}

/// Paths that start a panic, or build its message.
pub const PANIC_PATHS: &[&str] = &[
    "core::panicking::",
    "std::panicking::",
    "std::rt::panic_fmt",
    "std::rt::begin_panic",
    "core::panicking::panic_fmt",
    "Arguments::<'_>::new_const",
    "Arguments::<'_>::from_str",
    "Arguments::<'_>::new_v1",
    "Arguments::<'_>::new",
    "core::fmt::Arguments::",
    "std::fmt::Arguments::",
    "core::hint::unreachable_unchecked",
    "std::hint::unreachable_unchecked",
    "core::slice::index::slice_index_fail",
    "core::option::unwrap_failed",
    "core::option::expect_failed",
    "core::result::unwrap_failed",
    // As MIR prints them with trimmed paths (`Option::unwrap` inlined).
    "option::unwrap_failed",
    "option::expect_failed",
    "result::unwrap_failed",
    "core::num::int_log10::panic_for_nonpositive_argument",
    "core::num::int_sqrt::panic_for_negative_argument",
];

/// If `path` is a pure core intrinsic, returns its name. A bare name (MIR
/// trims `core::intrinsics::`) counts only with generic arguments, which
/// intrinsics have and a user's `extern` function cannot, or with a float
/// type suffix (`fabsf32`, `maxnumf64`), as the float intrinsics are spelled.
pub fn core_intrinsic(path: &str, has_generics: bool) -> Option<String> {
    let float_suffixed = ["f16", "f32", "f64", "f128"]
        .iter()
        .any(|s| path.ends_with(s));
    let name = match path
        .strip_prefix("core::intrinsics::")
        .or_else(|| path.strip_prefix("std::intrinsics::"))
    {
        Some(n) => n,
        None if (has_generics || float_suffixed) && !path.contains("::") => path,
        None => return None,
    };
    core_entry(CoreKind::Intrinsic, name).map(|_| name.to_string())
}

pub fn is_panic_path(path: &str) -> bool {
    PANIC_PATHS.iter().any(|p| {
        if p.ends_with("::") {
            path.starts_with(p)
        } else {
            path == *p
        }
    })
}

/// Resolves a callee path against the registration table, given the path as
/// printed (without generic arguments). MIR trims the crate prefix when the
/// name is unambiguous (`reduce_mut` rather than `native::reduce_mut`,
/// `Gpu::reduce` rather than `native::gpu::Gpu::reduce`), so each trimmed
/// spelling matches; a path with another crate or module prefix does not.
pub fn registration(path: &str) -> Option<&'static RegistrationFn> {
    let (prefix, name) = match path.rsplit_once("::") {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, path),
    };
    // A generic receiver's arguments (`ParIter::<f32, …>::sum`) are not
    // its name.
    let prefix = prefix.map(|p| p.split_once("::<").map_or(p, |(head, _)| head));
    REGISTRATIONS.iter().find(|r| {
        r.function == name
            && match (r.receiver, prefix) {
                (None, None) => true,
                (None, Some(p)) => p == API_CRATE,
                (Some(_), None) => false,
                (Some(ty), Some(p)) => {
                    p == ty
                        || p == format!("{GPU_MODULE}::{ty}")
                        || p == format!("{API_CRATE}::{GPU_MODULE}::{ty}")
                }
            }
    })
}

/// If `path` is an allowlisted scalar method, returns `(method, type)`.
///
/// Accepted spellings: `core::num::<impl i32>::wrapping_add`,
/// `core::f32::<impl f32>::abs`, `<i32 as Ord>::max`,
/// `std::cmp::Ord::max` is *not* accepted (no receiver type).
pub fn core_scalar(path: &str) -> Option<(String, String)> {
    let (prefix, method) = path.rsplit_once("::")?;
    core_entry(CoreKind::Method, method)?;
    let ty = if let Some(rest) = prefix.strip_prefix('<') {
        // `<i32 as Ord>`
        let inner = rest.strip_suffix('>')?;
        let (ty, tr) = inner.split_once(" as ")?;
        if !matches!(
            tr,
            "Ord" | "PartialOrd" | "std::cmp::Ord" | "core::cmp::Ord"
        ) {
            return None;
        }
        ty
    } else {
        // `core::num::<impl i32>`, `core::f32::<impl f32>`, `std::f32::<impl f32>`,
        // and `f64::<impl f64>` (MIR's trimmed spelling of std's float
        // methods, `x.floor()` in a crate with std). Only core and std can
        // have inherent impls on a primitive type, so `<impl T>` is theirs.
        let (krate, rest) = prefix.split_once("::")?;
        let imp = rest.rsplit("::").next()?;
        let ty = imp.strip_prefix("<impl ")?.strip_suffix('>')?;
        if !matches!(krate, "core" | "std") && krate != ty {
            return None;
        }
        ty
    };
    crate::ty::Scalar::from_name(ty)?;
    Some((method.to_string(), ty.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_paths() {
        assert_eq!(registration("native::reduce").unwrap().function, "reduce");
        assert_eq!(registration("reduce_mut").unwrap().function, "reduce_mut");
        assert!(registration("other::reduce").is_none());
        for p in [
            "Gpu::reduce",
            "gpu::Gpu::reduce",
            "native::gpu::Gpu::reduce",
        ] {
            let r = registration(p).unwrap();
            assert_eq!(
                (r.function, r.callback, r.receiver),
                ("reduce", CallbackSource::Arg(3), Some("Gpu"))
            );
        }
        assert!(registration("other::Gpu::reduce").is_none());
        // GpuSet's methods run the same providers with the same callback
        // argument as Gpu's.
        for name in [
            "reduce",
            "inclusive_scan",
            "sort_by",
            "sort_by_key",
            "segmented_reduce",
        ] {
            let set = registration(&format!("native::gpu::GpuSet::{name}")).unwrap();
            let one = registration(&format!("native::gpu::Gpu::{name}")).unwrap();
            assert_eq!(
                (set.provider, set.shape, set.callback),
                (one.provider, one.shape, one.callback)
            );
            assert_eq!(set.display_name(), format!("GpuSet::{name}"));
            assert!(is_host_method(&set.display_name()));
        }
        assert!(is_host_method("Gpu::reduce"));
        assert!(!is_host_method("reduce") && !is_host_method("reduce_mut"));
        assert!(registration("Gpu::reduce_mut").is_none());
        assert!(registration("native::nope").is_none());
    }

    #[test]
    fn scalar_methods() {
        assert_eq!(
            core_scalar("core::num::<impl i32>::wrapping_add"),
            Some(("wrapping_add".into(), "i32".into()))
        );
        assert_eq!(
            core_scalar("<i32 as Ord>::max"),
            Some(("max".into(), "i32".into()))
        );
        assert_eq!(core_scalar("core::num::<impl i32>::checked_div"), None);
        assert_eq!(core_scalar("<Foo as Ord>::max"), None);
        assert_eq!(core_scalar("mycrate::num::<impl i32>::abs"), None);
    }
}
