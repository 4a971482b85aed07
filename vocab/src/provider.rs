//! The native providers and the types of their callbacks.

use std::fmt;

use crate::element::Element;
use crate::name::{parse_among, UnknownName};
use crate::scalar::Scalar;

/// A native provider: the CUDA C++ code a kernel instantiates
/// (`providers/*.cuh`), named as the registration functions of `native` are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    /// `reduce.cuh`: `op`-fold of the elements plus `init`.
    Reduce,
    /// `scan.cuh`: every prefix, `op`-folded.
    InclusiveScan,
    /// `scan.cuh`: every prefix before an element, from `init`.
    ExclusiveScan,
    /// `transform.cuh`: `op` of each element.
    Transform,
    /// `transform.cuh`: `op` of each pair of elements of two inputs.
    Transform2,
    /// `segmented_reduce.cuh`: one fold from `init` per segment.
    SegmentedReduce,
    /// `select.cuh`: the elements a predicate keeps, in order.
    Select,
    /// `sort.cuh`: a stable sort by a comparator (CUB's merge sort).
    SortBy,
    /// `segmented_sort.cuh`: a stable sort of each segment of the input by
    /// a comparator, the elements outside every segment left in place
    /// (CUB's merge sort of the elements tagged with their segment).
    SegmentedSortBy,
    /// `select.cuh`: the elements that start a run of equal ones (the
    /// first, and each that `same` does not find equal to the one before
    /// it), in order, as `Vec::dedup_by` keeps them.
    DedupBy,
    /// `select.cuh`: the elements a predicate keeps and those it does not,
    /// each in order, as `Iterator::partition` splits them.
    Partition,
    /// `search.cuh`: for each query, the index of the first element of a
    /// sorted input for which a predicate of it and the query fails, as
    /// `slice::partition_point` finds it (a binary search per query).
    PartitionPoint,
    /// `merge.cuh`: two inputs sorted by a comparator merged into one,
    /// stably (of equal elements, the first input's first), as CUB's
    /// `DeviceMerge` merges them (CUB's merge agent).
    MergeBy,
    /// `by_key.cuh`: for each run of consecutive keys that `same` finds
    /// equal (as `slice::chunk_by` splits them), its last key and the
    /// `op`-fold of its values, in order (CUB's reduce-by-key agent).
    ReduceByKey,
    /// `by_key.cuh`: the inclusive `op`-scan of the values, restarting at
    /// each run of consecutive keys that `same` finds equal (CUB's
    /// scan-by-key agent).
    ScanByKey,
    /// `histogram.cuh`: how many elements a bin function maps to each of
    /// `bins` bins (an index past the last is not counted).
    Histogram,
    /// `chain.cuh`: a `par_iter` chain's `map`/`filter` stages fused with a
    /// fold of what they keep (`sum`, `product`, `reduce`, `count`, `any`,
    /// `all`), from an `init` or from the first value kept.
    ChainReduce,
    /// `chain.cuh`: a `par_iter` chain's stages fused with the pick of one
    /// value kept (`min`, `max`, `min_by`, `max_by`, `min_by_key`,
    /// `max_by_key`): of two values, the callback says whether the later
    /// one wins, so ties go as `Iterator`'s do whatever the combining order.
    ChainPick,
    /// `chain.cuh`: a `par_iter` chain's stages fused with the compaction of
    /// the values they keep, in order (`collect`), on select's tile stream.
    ChainCollect,
}

impl Provider {
    /// Every provider, each a registration function of `native`.
    pub const ALL: [Provider; 19] = [
        Provider::Reduce,
        Provider::InclusiveScan,
        Provider::ExclusiveScan,
        Provider::Transform,
        Provider::Transform2,
        Provider::SegmentedReduce,
        Provider::Select,
        Provider::SortBy,
        Provider::SegmentedSortBy,
        Provider::DedupBy,
        Provider::Partition,
        Provider::PartitionPoint,
        Provider::MergeBy,
        Provider::ReduceByKey,
        Provider::ScanByKey,
        Provider::Histogram,
        Provider::ChainReduce,
        Provider::ChainPick,
        Provider::ChainCollect,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Provider::Reduce => "reduce",
            Provider::InclusiveScan => "inclusive_scan",
            Provider::ExclusiveScan => "exclusive_scan",
            Provider::Transform => "transform",
            Provider::Transform2 => "transform2",
            Provider::SegmentedReduce => "segmented_reduce",
            Provider::Select => "select",
            Provider::SortBy => "sort_by",
            Provider::SegmentedSortBy => "segmented_sort_by",
            Provider::DedupBy => "dedup_by",
            Provider::Partition => "partition",
            Provider::PartitionPoint => "partition_point",
            Provider::MergeBy => "merge_by",
            Provider::ReduceByKey => "reduce_by_key",
            Provider::ScanByKey => "scan_by_key",
            Provider::Histogram => "histogram",
            Provider::ChainReduce => "chain_reduce",
            Provider::ChainPick => "chain_pick",
            Provider::ChainCollect => "chain_collect",
        }
    }

    /// Reads a provider's name: an error listing the valid names otherwise.
    pub fn parse(name: &str) -> Result<Provider, UnknownName> {
        parse_among("provider", name, Provider::ALL, Provider::name)
    }

    /// The type its callback has, in terms of the element types.
    pub fn shape(self) -> Shape {
        match self {
            Provider::Reduce
            | Provider::InclusiveScan
            | Provider::ExclusiveScan
            | Provider::SegmentedReduce => Shape::Fold,
            Provider::Transform => Shape::Map,
            Provider::Transform2 => Shape::Zip,
            Provider::Select => Shape::Predicate,
            Provider::SortBy | Provider::SegmentedSortBy => Shape::Compare,
            Provider::DedupBy => Shape::Same,
            Provider::Partition => Shape::RefPredicate,
            Provider::PartitionPoint => Shape::Probe,
            Provider::MergeBy => Shape::Compare,
            Provider::ReduceByKey | Provider::ScanByKey => Shape::ByKey,
            Provider::Histogram => Shape::Bin,
            Provider::ChainReduce | Provider::ChainPick | Provider::ChainCollect => Shape::Chain,
        }
    }

    /// Whether the provider takes tuples and structs as elements
    /// ([`Element::Composite`]): its kernels move them as opaque values of
    /// their size and alignment, and its callback takes and returns them in
    /// memory (`manifest::provider`'s thunk ABI). Every provider does.
    pub fn takes_composites(self) -> bool {
        matches!(
            self,
            Provider::Reduce
                | Provider::DedupBy
                | Provider::Partition
                | Provider::PartitionPoint
                | Provider::MergeBy
                | Provider::ReduceByKey
                | Provider::ScanByKey
                | Provider::Histogram
                | Provider::Transform
                | Provider::Transform2
                | Provider::SegmentedReduce
                | Provider::SortBy
                | Provider::SegmentedSortBy
                | Provider::Select
                | Provider::InclusiveScan
                | Provider::ExclusiveScan
                | Provider::ChainReduce
                | Provider::ChainPick
                | Provider::ChainCollect
        )
    }

    /// Whether the provider compacts (select, dedup_by, partition,
    /// chain_collect): it writes as many results as it keeps, up to one per
    /// element, and their count, so its result has no length before it has
    /// run. Its kernel is select.cuh's compaction on the tile stream (or
    /// chain_collect's on the same schedule): one flag bit per item.
    pub fn compacts(self) -> bool {
        matches!(
            self,
            Provider::Select | Provider::DedupBy | Provider::Partition | Provider::ChainCollect
        )
    }

    /// Whether the provider writes as many results as it finds, and their
    /// count, so that its result has no length before it has run: a
    /// compaction ([`Provider::compacts`]), or reduce_by_key's one result a
    /// run of keys.
    pub fn counts_results(self) -> bool {
        self.compacts() || self == Provider::ReduceByKey
    }

    /// Whether the provider takes an initial value (`init`).
    pub fn takes_init(self) -> bool {
        matches!(
            self,
            Provider::Reduce
                | Provider::ExclusiveScan
                | Provider::SegmentedReduce
                | Provider::ChainReduce
        )
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(feature = "serde")]
crate::name::serde_by_name!(Provider);

/// The scalar element types every provider takes: the types of CUB's
/// device-wide algorithms' benchmarks and more, all with a plain C++
/// equivalent.
pub const ELEMENT_SCALARS: [Scalar; 10] = [
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::U8,
    Scalar::U16,
    Scalar::U32,
    Scalar::U64,
    Scalar::F32,
    Scalar::F64,
];

impl Element {
    /// Whether a provider takes it as an element: one of
    /// [`ELEMENT_SCALARS`], or a composite of them with a layout rustc
    /// could have made (which providers take composites:
    /// [`Provider::takes_composites`]).
    pub fn is_provider_element(&self) -> bool {
        match self {
            Element::Scalar(s) => ELEMENT_SCALARS.contains(s),
            Element::Composite(l) => {
                l.check().is_ok()
                    && self
                        .scalars()
                        .iter()
                        .all(|(_, s)| ELEMENT_SCALARS.contains(s))
            }
        }
    }

    /// Whether a `par_iter` chain may yield values of this type: a
    /// provider element, or one with `usize` scalars too (an `enumerate`
    /// stage's index, `(usize, T)`, or the index alone). A chain's values
    /// are only combined, picked or stored by its own callback, never
    /// handed to another provider's arithmetic.
    pub fn is_chain_value(&self) -> bool {
        let value = |s: &Scalar| ELEMENT_SCALARS.contains(s) || *s == Scalar::Usize;
        match self {
            Element::Scalar(s) => value(s),
            Element::Composite(l) => {
                l.check().is_ok() && self.scalars().iter().all(|(_, s)| value(s))
            }
        }
    }
}

/// The type of a provider's callback, with `T`, `U`, `V` element types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `(T, T) -> T`: reduce, the scans, segmented reduce.
    Fold,
    /// `(T) -> U`: transform.
    Map,
    /// `(T, U) -> V`: transform2.
    Zip,
    /// `(T) -> bool`: select.
    Predicate,
    /// `(&T, &T) -> Ordering`: sort_by's comparator, as `slice::sort_by`
    /// takes it. Its thunk answers "less than", `(T, T) -> bool`:
    /// `compare(&a, &b) == Ordering::Less` (see [`Shape::signature`]).
    Compare,
    /// `(&T) -> bool`: partition's predicate, as `Iterator::partition`
    /// takes it. Its thunk takes the value: `(T) -> bool`.
    RefPredicate,
    /// `(&T, &T) -> bool`: whether two elements are the same, as
    /// `Vec::dedup_by` takes it (the later element first). Its thunk takes
    /// the values: `(T, T) -> bool`.
    Same,
    /// `(&T, &Q) -> bool`: partition_point's predicate of an element of
    /// the sorted input and a query, as `slice::partition_point`'s closure
    /// with the query passed too. Its thunk takes the values: `(T, Q) ->
    /// bool`.
    Probe,
    /// `(T) -> usize`: histogram's bin of an element.
    Bin,
    /// `(&T) -> K`: sort_by_key's key, `K` an integer, `bool` or `char`, as
    /// `slice::sort_by_key` takes it. Its thunk, too, answers "less than":
    /// `key(&a) < key(&b)`.
    Key,
    /// `(T) -> R`: a `par_iter` chain, compiled as one callback whose
    /// environment is the chain's closures (`frontend::chain`): its stages
    /// map an element `T` to a kept value `R` or drop it, and its terminal
    /// combines two values. Two thunks: `stage(env, x, &mut r) -> kept` and
    /// `combine(env, a, b, &mut r)` (for a pick, `-> later wins`). A chain
    /// with an `enumerate` stage is *indexed*, `(T, usize) -> R`: its stage
    /// thunk takes the element's index in the input too, `stage(env, x, i,
    /// &mut r)` ([`Signature::is_indexed_chain`]).
    Chain,
    /// `reduce_by_key`'s and `scan_by_key`'s two callbacks over keys `K`
    /// and values `V`: `same: (&K, &K) -> bool`, whether two consecutive
    /// keys are of one run, and `op: (V, V) -> V`, the fold of a run's
    /// values. Compiled as one callback whose environment is the two
    /// closures (`frontend::by_key`); two thunks: `same(env, a, b) ->
    /// bool` on keys and `op(env, a, b) -> V` on values.
    ByKey,
}

impl Shape {
    /// The thunk's type for a callback of this shape over `t`, with `u`
    /// where the shape has a second type (a map's result, a zip's second
    /// operand): the callback's own type, but for a comparator, whose thunk
    /// takes the values and answers "less than" (`(T, T) -> bool`).
    pub fn signature(self, t: impl Into<Element>, u: impl Into<Element>) -> Signature {
        let (t, u) = (t.into(), u.into());
        let boolean = Element::Scalar(Scalar::Bool);
        let (params, ret) = match self {
            Shape::Fold => (vec![t.clone(), t.clone()], t),
            Shape::Map => (vec![t], u),
            Shape::Zip => (vec![t.clone(), u], t),
            Shape::Predicate | Shape::RefPredicate => (vec![t], boolean),
            Shape::Compare | Shape::Key | Shape::Same => (vec![t.clone(), t], boolean),
            Shape::Probe => (vec![t, u], boolean),
            Shape::Bin => (vec![t], Element::Scalar(Scalar::Usize)),
            Shape::Chain => (vec![t], u),
            Shape::ByKey => (vec![t, u.clone()], u),
        };
        Signature { params, ret }
    }

    /// `(T, T) -> T`, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::Fold => "(T, T) -> T",
            Shape::Map => "(T) -> U",
            Shape::Zip => "(T, U) -> V",
            Shape::Predicate => "(T) -> bool",
            Shape::RefPredicate => "(&T) -> bool",
            Shape::Compare => "(&T, &T) -> Ordering",
            Shape::Key => "(&T) -> K",
            Shape::Same => "(&T, &T) -> bool",
            Shape::Probe => "(&T, &Q) -> bool",
            Shape::Bin => "(T) -> usize",
            Shape::Chain => "a chain of `map` and `filter` stages over T",
            Shape::ByKey => "(&K, &K) -> bool and (V, V) -> V",
        }
    }

    /// How many operands the callback takes (its thunk takes two for a
    /// comparator or a key: see [`Shape::signature`]).
    pub fn arity(self) -> usize {
        match self {
            Shape::Map
            | Shape::Predicate
            | Shape::RefPredicate
            | Shape::Key
            | Shape::Bin
            | Shape::Chain => 1,
            Shape::Fold
            | Shape::Zip
            | Shape::Compare
            | Shape::Same
            | Shape::Probe
            | Shape::ByKey => 2,
        }
    }

    /// The element types (`T`, `U`, `V`) of a thunk type of this shape
    /// ([`Shape::signature`]), or `None` when its parameters and result do
    /// not have the shape
    /// (`(i32, i64) -> i32` for a fold). Whether the element types are
    /// ones the providers take is another question
    /// ([`Element::is_provider_element`]).
    pub fn elements<X: Clone + PartialEq>(
        self,
        params: &[X],
        ret: &X,
        boolean: &X,
    ) -> Option<Vec<X>> {
        match (self, params) {
            (Shape::Fold, [a, b]) if a == b && a == ret => Some(vec![a.clone()]),
            (Shape::Map, [a]) => Some(vec![a.clone(), ret.clone()]),
            (Shape::Zip, [a, b]) => Some(vec![a.clone(), b.clone(), ret.clone()]),
            (Shape::Predicate | Shape::RefPredicate, [a]) if ret == boolean => {
                Some(vec![a.clone()])
            }
            (Shape::Compare | Shape::Key | Shape::Same, [a, b]) if a == b && ret == boolean => {
                Some(vec![a.clone()])
            }
            (Shape::Probe, [a, b]) if ret == boolean => Some(vec![a.clone(), b.clone()]),
            // The bin's type (`usize`) is the caller's to check.
            (Shape::Bin, [a]) => Some(vec![a.clone()]),
            // An indexed chain's second parameter is its index (`usize`:
            // the caller's to check, as a bin's).
            (Shape::Chain, [a] | [a, _]) => Some(vec![a.clone(), ret.clone()]),
            (Shape::ByKey, [k, v]) if v == ret => Some(vec![k.clone(), v.clone()]),
            _ => None,
        }
    }
}

/// A callback's type: `(params...) -> ret`, over elements.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Signature {
    pub params: Vec<Element>,
    pub ret: Element,
}

impl Signature {
    /// `(params...) -> ret` over scalar elements.
    pub fn scalars(params: &[Scalar], ret: Scalar) -> Signature {
        Signature {
            params: params.iter().map(|&s| Element::Scalar(s)).collect(),
            ret: Element::Scalar(ret),
        }
    }

    /// `(T, T) -> T`.
    pub fn fold(t: impl Into<Element>) -> Signature {
        let t = t.into();
        Signature {
            params: vec![t.clone(), t.clone()],
            ret: t,
        }
    }

    /// Whether an operand or the result is a tuple or a struct: the thunk
    /// takes and returns it in memory.
    pub fn has_composite(&self) -> bool {
        self.params
            .iter()
            .chain([&self.ret])
            .any(|e| matches!(e, Element::Composite(_)))
    }

    /// A `par_iter` chain's signature with an `enumerate` stage: `(T,
    /// usize) -> R`, its stage thunk taking each element's index in the
    /// input ([`Shape::Chain`]).
    pub fn indexed_chain(t: impl Into<Element>, r: impl Into<Element>) -> Signature {
        Signature {
            params: vec![t.into(), Element::Scalar(Scalar::Usize)],
            ret: r.into(),
        }
    }

    /// Whether this chain signature is an indexed one (`(T, usize) ->
    /// R`): meaningful for [`Shape::Chain`]'s providers only.
    pub fn is_indexed_chain(&self) -> bool {
        self.params.len() == 2
    }

    /// The element type the data has (the first parameter's).
    pub fn element(&self) -> &Element {
        self.params.first().unwrap_or(&self.ret)
    }

    /// Whether this is a callback type `provider` takes: its shape, over
    /// element types the providers take.
    pub fn fits(&self, provider: Provider) -> bool {
        let boolean = Element::Scalar(Scalar::Bool);
        let chain = provider.shape() == Shape::Chain;
        // A bin is a `usize`, which no element is, and so is a chain's index.
        if provider.shape() == Shape::Bin && self.ret != Element::Scalar(Scalar::Usize) {
            return false;
        }
        if chain && self.params.len() == 2 && self.params[1] != Element::Scalar(Scalar::Usize) {
            return false;
        }
        provider
            .shape()
            .elements(&self.params, &self.ret, &boolean)
            .is_some_and(|e| {
                // A chain's value may be a `bool` (`any`, `all`), or hold
                // an index (`enumerate`).
                e.iter().enumerate().all(|(i, e)| {
                    let composite = matches!(e, Element::Composite(_));
                    (e.is_provider_element() && (!composite || provider.takes_composites()))
                        || (chain && i == 1 && (*e == boolean || e.is_chain_value()))
                })
            })
    }
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params: Vec<&str> = self.params.iter().map(Element::name).collect();
        write!(f, "({}) -> {}", params.join(", "), self.ret.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_provider_is_an_error_naming_the_valid_ones() {
        for p in Provider::ALL {
            assert_eq!(Provider::parse(p.name()), Ok(p));
        }
        let err = Provider::parse("copy").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown provider `copy`; valid: `reduce`, `inclusive_scan`, `exclusive_scan`, \
             `transform`, `transform2`, `segmented_reduce`, `select`, `sort_by`, `segmented_sort_by`, `dedup_by`, `partition`, \
             `partition_point`, `merge_by`, `reduce_by_key`, `scan_by_key`, `histogram`, `chain_reduce`, `chain_pick`, `chain_collect`"
        );
        assert!(Provider::parse("reduce_mut").is_err());
    }

    #[test]
    fn signatures_fit_their_providers() {
        let i32_ = Element::Scalar(Scalar::I32);
        let f64_ = Element::Scalar(Scalar::F64);
        let fold = Signature::fold(Scalar::I32);
        assert!(fold.fits(Provider::Reduce));
        assert!(!fold.fits(Provider::Select));
        let map = Shape::Map.signature(i32_.clone(), f64_);
        assert!(map.fits(Provider::Transform));
        assert_eq!(map.to_string(), "(i32) -> f64");
        let wide = Signature::fold(Scalar::I128);
        assert!(!wide.fits(Provider::Reduce), "i128 is no element type");
        assert_eq!(
            Shape::Compare.signature(i32_.clone(), i32_.clone()).ret,
            Scalar::Bool.into()
        );
        let probe = Shape::Probe.signature(Scalar::F64, Scalar::I32);
        assert_eq!(probe.to_string(), "(f64, i32) -> bool");
        assert!(probe.fits(Provider::PartitionPoint));
        assert!(!Signature::fold(Scalar::F64).fits(Provider::PartitionPoint));
        let bin = Shape::Bin.signature(i32_.clone(), i32_);
        assert_eq!(bin.to_string(), "(i32) -> usize");
        assert!(bin.fits(Provider::Histogram));
        let not_a_bin = Signature::scalars(&[Scalar::I32], Scalar::U64);
        assert!(!not_a_bin.fits(Provider::Histogram), "a bin is a usize");
    }

    #[test]
    fn an_indexed_chain_takes_the_index_and_may_yield_it() {
        let usize_ = Element::Scalar(Scalar::Usize);
        let pair = Element::Composite(crate::Layout {
            name: "(usize, f32)".into(),
            size: 16,
            align: 8,
            fields: vec![
                crate::Field {
                    name: "0".into(),
                    offset: 0,
                    element: usize_.clone(),
                },
                crate::Field {
                    name: "1".into(),
                    offset: 8,
                    element: Element::Scalar(Scalar::F32),
                },
            ],
        });
        for provider in [
            Provider::ChainReduce,
            Provider::ChainPick,
            Provider::ChainCollect,
        ] {
            let arg_min = Signature::indexed_chain(Scalar::F32, pair.clone());
            assert!(arg_min.is_indexed_chain());
            assert_eq!(arg_min.to_string(), "(f32, usize) -> (usize, f32)");
            assert!(arg_min.fits(provider), "{provider}");
            assert!(Signature::indexed_chain(Scalar::U8, usize_.clone()).fits(provider));
            // The second parameter is the index, nothing else.
            let wrong = Shape::Probe.signature(Scalar::F32, Scalar::U64);
            let wrong = Signature {
                ret: Element::Scalar(Scalar::U64),
                ..wrong
            };
            assert!(!wrong.fits(provider), "{wrong}");
            // An element is never a usize; a chain's value may be.
            assert!(!Signature::indexed_chain(usize_.clone(), Scalar::U64).fits(provider));
            assert!(!Shape::Chain
                .signature(Scalar::F32, Scalar::F32)
                .is_indexed_chain());
        }
        assert!(!usize_.is_provider_element() && usize_.is_chain_value());
        assert!(pair.is_chain_value() && !pair.is_provider_element());
        assert!(!Element::Scalar(Scalar::I128).is_chain_value());
    }
}
