// The bodies `core` keeps to itself, written again for the GPU side.
//
// Optimised MIR inlines most of `core`'s iterator code into the callback,
// but keeps calls to some generic functions (`Range::fold`, `try_fold`,
// `StepBy::new`, …) and builds some of `core`'s own closures (`map_fold`'s,
// `Sum::sum`'s, `any`'s `check`), whose bodies stable rustc never prints.
// `frontend::core_model` compiles this file to MIR with the user's rustc and
// profile, and routes those calls and closures here: each function below
// has the meaning of the `core` item it names, written in plain Rust this
// project's lowering handles. Types named `…Model` stand for `core`'s own
// (`RangeInclusiveModel` is `std::ops::RangeInclusive`): their fields, in
// `core`'s order, are ours to lay out, as for every value inside a
// callback. Nothing here is copied from `core`; each body follows the
// documented behaviour of the item it models.
#![allow(dead_code, clippy::all)]

use core::cmp::Ordering;
use core::marker::PhantomData;
use core::ops::{Add, ControlFlow, Mul, Range};

/// `std::ops::RangeInclusive`: `exhausted` is set once the last value
/// was yielded from either end.
pub struct RangeInclusiveModel<Idx> {
    pub start: Idx,
    pub end: Idx,
    pub exhausted: bool,
}

/// `std::iter::StepBy`, for ranges: the range left, the step less one,
/// and whether the next value is the first (taken without a step).
pub struct StepByModel<I> {
    pub iter: I,
    pub step_minus_one: usize,
    pub first_take: bool,
}

/// `std::iter::Filter`, fields in `core`'s order.
pub struct FilterModel<I, P> {
    pub iter: I,
    pub predicate: P,
}

/// `std::iter::Rev`.
pub struct RevModel<I> {
    pub iter: I,
}

/// `std::iter::Zip` of two ranges, fields in `core`'s order.
pub struct ZipModel<A, B> {
    pub a: A,
    pub b: B,
    pub index: usize,
    pub len: usize,
    pub a_len: usize,
}

// ---- `core`'s closures. Each captures what `core`'s captures, in the
// same order (the order of first mention), so a closure value `core`'s
// inlined code builds is this closure's value.

/// `Iterator::map`'s `map_fold`.
pub fn rmir_map_fold<T, B, Acc, F: FnMut(T) -> B, G: FnMut(Acc, B) -> Acc>(
    mut f: F,
    mut g: G,
) -> impl FnMut(Acc, T) -> Acc {
    move |acc, elt| g(acc, f(elt))
}

/// `Iterator::filter`'s `filter_fold`.
pub fn rmir_filter_fold<T, Acc, P: FnMut(&T) -> bool, Fold: FnMut(Acc, T) -> Acc>(
    mut predicate: P,
    mut fold: Fold,
) -> impl FnMut(Acc, T) -> Acc {
    move |acc, item| if predicate(&item) { fold(acc, item) } else { acc }
}

/// `Enumerate::fold`'s `enumerate`: the count rises after each call,
/// with the profile's overflow checks.
pub fn rmir_enumerate<T, Acc, R: FnMut(Acc, (usize, T)) -> Acc>(
    mut count: usize,
    mut fold: R,
) -> impl FnMut(Acc, T) -> Acc {
    move |acc, item| {
        let acc = fold(acc, (count, item));
        count += 1;
        acc
    }
}

/// `Sum::sum` of numbers: `+`, with the profile's overflow checks.
pub fn rmir_sum<T: Add<Output = T>, I>() -> impl FnMut(T, T) -> T {
    |a, b| a + b
}

/// `Product::product` of numbers.
pub fn rmir_product<T: Mul<Output = T>, I>() -> impl FnMut(T, T) -> T {
    |a, b| a * b
}

/// `Iterator::any`'s `check`.
pub fn rmir_any_check<T, F: FnMut(T) -> bool>(mut f: F) -> impl FnMut((), T) -> ControlFlow<()> {
    move |(), x| {
        if f(x) {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// `Iterator::all`'s `check`.
pub fn rmir_all_check<T, F: FnMut(T) -> bool>(mut f: F) -> impl FnMut((), T) -> ControlFlow<()> {
    move |(), x| {
        if f(x) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    }
}

/// `Iterator::find`'s and `DoubleEndedIterator::rfind`'s `check`.
pub fn rmir_find_check<T, P: FnMut(&T) -> bool>(
    mut predicate: P,
) -> impl FnMut((), T) -> ControlFlow<T> {
    move |(), x| {
        if predicate(&x) {
            ControlFlow::Break(x)
        } else {
            ControlFlow::Continue(())
        }
    }
}

/// `Iterator::position`'s `check`: the count rises with the profile's
/// overflow checks.
pub fn rmir_position_check<'a, T, P: FnMut(T) -> bool + 'a>(
    mut predicate: P,
    acc: &'a mut usize,
) -> impl FnMut((), T) -> ControlFlow<usize, ()> + 'a {
    move |_, x| {
        if predicate(x) {
            ControlFlow::Break(*acc)
        } else {
            *acc += 1;
            ControlFlow::Continue(())
        }
    }
}

/// `Iterator::any`: `try_fold` broke.
pub fn rmir_is_break(c: ControlFlow<()>) -> bool {
    matches!(c, ControlFlow::Break(()))
}

/// `Iterator::all`: `try_fold` ran to the end.
pub fn rmir_is_continue(c: ControlFlow<()>) -> bool {
    matches!(c, ControlFlow::Continue(()))
}

/// `min_by`'s choice: the first of equal values.
pub fn rmir_min_by_fold<T, F: FnMut(&T, &T) -> Ordering>(mut compare: F) -> impl FnMut(T, T) -> T {
    move |x, y| match compare(&x, &y) {
        Ordering::Less | Ordering::Equal => x,
        Ordering::Greater => y,
    }
}

/// `max_by`'s choice: the last of equal values.
pub fn rmir_max_by_fold<T, F: FnMut(&T, &T) -> Ordering>(mut compare: F) -> impl FnMut(T, T) -> T {
    move |x, y| match compare(&x, &y) {
        Ordering::Less | Ordering::Equal => y,
        Ordering::Greater => x,
    }
}

// ---- `Option` and `Result` methods that take a closure, where optimised
// MIR keeps the call (`Option::map_or`). Each is called with the closure
// by `FnMut`, the way the GPU side calls every closure (through a
// pointer): an `Fn` closure is one too.

/// `Option::map`.
pub fn rmir_option_map<T, U, F: FnMut(T) -> U>(o: Option<T>, mut f: F) -> Option<U> {
    match o {
        Some(x) => Some(f(x)),
        None => None,
    }
}

/// `Range::contains` (and `RangeBounds::contains` of a `Range`):
/// `start <= item && item < end`, as `PartialOrd` says (a NaN is in no
/// range).
pub fn rmir_range_contains<T: PartialOrd<U>, U: PartialOrd<T>>(r: &Range<T>, item: &U) -> bool {
    PartialOrd::le(&r.start, item) && PartialOrd::lt(item, &r.end)
}

/// `RangeInclusive::contains`: `start <= item && item <= end`, the end
/// excluded once the range is exhausted (as its `end_bound` says).
pub fn rmir_range_inclusive_contains<T: PartialOrd<U>, U: PartialOrd<T>>(
    r: &RangeInclusiveModel<T>,
    item: &U,
) -> bool {
    PartialOrd::le(&r.start, item)
        && if r.exhausted {
            PartialOrd::lt(item, &r.end)
        } else {
            PartialOrd::le(item, &r.end)
        }
}

/// `Option::map_or`.
pub fn rmir_option_map_or<T, U, F: FnMut(T) -> U>(o: Option<T>, default: U, mut f: F) -> U {
    match o {
        Some(x) => f(x),
        None => default,
    }
}

/// `Option::map_or_else`.
pub fn rmir_option_map_or_else<T, U, D: FnMut() -> U, F: FnMut(T) -> U>(
    o: Option<T>,
    mut default: D,
    mut f: F,
) -> U {
    match o {
        Some(x) => f(x),
        None => default(),
    }
}

/// `Option::and_then`.
pub fn rmir_option_and_then<T, U, F: FnMut(T) -> Option<U>>(o: Option<T>, mut f: F) -> Option<U> {
    match o {
        Some(x) => f(x),
        None => None,
    }
}

/// `Option::unwrap_or_else`.
pub fn rmir_option_unwrap_or_else<T, F: FnMut() -> T>(o: Option<T>, mut f: F) -> T {
    match o {
        Some(x) => x,
        None => f(),
    }
}

/// `Option::is_some_and`.
pub fn rmir_option_is_some_and<T, F: FnMut(T) -> bool>(o: Option<T>, mut f: F) -> bool {
    match o {
        Some(x) => f(x),
        None => false,
    }
}

/// `Option::is_none_or`.
pub fn rmir_option_is_none_or<T, F: FnMut(T) -> bool>(o: Option<T>, mut f: F) -> bool {
    match o {
        Some(x) => f(x),
        None => true,
    }
}

/// `Option::filter`.
pub fn rmir_option_filter<T, P: FnMut(&T) -> bool>(o: Option<T>, mut predicate: P) -> Option<T> {
    if let Some(x) = o {
        if predicate(&x) {
            return Some(x);
        }
    }
    None
}

/// `Option::or_else`.
pub fn rmir_option_or_else<T, F: FnMut() -> Option<T>>(o: Option<T>, mut f: F) -> Option<T> {
    match o {
        Some(x) => Some(x),
        None => f(),
    }
}

/// `Option::ok_or_else`.
pub fn rmir_option_ok_or_else<T, E, F: FnMut() -> E>(o: Option<T>, mut err: F) -> Result<T, E> {
    match o {
        Some(x) => Ok(x),
        None => Err(err()),
    }
}

/// `Result::map`.
pub fn rmir_result_map<T, E, U, F: FnMut(T) -> U>(r: Result<T, E>, mut op: F) -> Result<U, E> {
    match r {
        Ok(t) => Ok(op(t)),
        Err(e) => Err(e),
    }
}

/// `Result::map_err`.
pub fn rmir_result_map_err<T, E, F, O: FnMut(E) -> F>(r: Result<T, E>, mut op: O) -> Result<T, F> {
    match r {
        Ok(t) => Ok(t),
        Err(e) => Err(op(e)),
    }
}

/// `Result::and_then`.
pub fn rmir_result_and_then<T, E, U, F: FnMut(T) -> Result<U, E>>(
    r: Result<T, E>,
    mut op: F,
) -> Result<U, E> {
    match r {
        Ok(t) => op(t),
        Err(e) => Err(e),
    }
}

/// `Result::unwrap_or_else`.
pub fn rmir_result_unwrap_or_else<T, E, F: FnMut(E) -> T>(r: Result<T, E>, mut op: F) -> T {
    match r {
        Ok(t) => t,
        Err(e) => op(e),
    }
}

/// `Result::map_or`.
pub fn rmir_result_map_or<T, E, U, F: FnMut(T) -> U>(r: Result<T, E>, default: U, mut f: F) -> U {
    match r {
        Ok(t) => f(t),
        Err(_) => default,
    }
}

/// `Result::is_ok_and`.
pub fn rmir_result_is_ok_and<T, E, F: FnMut(T) -> bool>(r: Result<T, E>, mut f: F) -> bool {
    match r {
        Ok(t) => f(t),
        Err(_) => false,
    }
}

// ---- `std::slice::Iter` over an array the callback owns (a `const`
// table, a captured or local array). `frontend::slices` gives the slice its
// array's length and makes `NonNull<T>` a `*const T`, so the iterator is
// two thin pointers: the next element's and the end's. Elements are never
// zero-sized here (`core_model` routes no iterator over a zero-sized
// type, whose `end_or_len` is a length). A length is counted by stepping,
// as the arrays are short and no intrinsic is needed.

/// `std::slice::Iter`, fields in `core`'s order.
pub struct SliceIterModel<T> {
    pub ptr: *const T,
    pub end_or_len: *const T,
    pub _marker: PhantomData<*const T>,
}

/// `std::iter::Copied`.
pub struct CopiedModel<I> {
    pub it: I,
}

/// `std::iter::Take`, fields in `core`'s order.
pub struct TakeModel<I> {
    pub iter: I,
    pub n: usize,
}

/// How many elements lie from `p` up to `end`.
fn rmir_slice_len<T>(mut p: *const T, end: *const T) -> usize {
    let mut n = 0usize;
    while p != end {
        // SAFETY: `p` is below `end`, in the array the iterator borrows.
        p = unsafe { p.add(1) };
        n += 1;
    }
    n
}

/// `<slice::Iter<T> as Iterator>::fold`.
pub fn rmir_slice_fold<'a, T: 'a, B, F: FnMut(B, &'a T) -> B>(
    it: SliceIterModel<T>,
    init: B,
    mut f: F,
) -> B {
    let (mut p, end) = (it.ptr, it.end_or_len);
    let mut acc = init;
    while p != end {
        // SAFETY: `p` is below `end`, in the array the iterator borrows.
        let x = unsafe { &*p };
        p = unsafe { p.add(1) };
        acc = f(acc, x);
    }
    acc
}

/// `<slice::Iter<T> as DoubleEndedIterator>::rfold`.
pub fn rmir_slice_rfold<'a, T: 'a, B, F: FnMut(B, &'a T) -> B>(
    it: SliceIterModel<T>,
    init: B,
    mut f: F,
) -> B {
    let (p, mut end) = (it.ptr, it.end_or_len);
    let mut acc = init;
    while p != end {
        // SAFETY: `end` is above `p`, one past an element of the array.
        end = unsafe { end.offset(-1) };
        acc = f(acc, unsafe { &*end });
    }
    acc
}

/// `<slice::Iter<T> as Iterator>::try_fold`.
pub fn rmir_slice_try_fold<'a, T: 'a, B, F: FnMut(B, &'a T) -> ControlFlow<X, B>, X>(
    it: &mut SliceIterModel<T>,
    init: B,
    mut f: F,
) -> ControlFlow<X, B> {
    let mut acc = init;
    while it.ptr != it.end_or_len {
        // SAFETY: `it.ptr` is below the end, in the array.
        let x = unsafe { &*it.ptr };
        it.ptr = unsafe { it.ptr.add(1) };
        match f(acc, x) {
            ControlFlow::Continue(b) => acc = b,
            ControlFlow::Break(e) => return ControlFlow::Break(e),
        }
    }
    ControlFlow::Continue(acc)
}

/// `<slice::Iter<T> as Iterator>::any`.
pub fn rmir_slice_any<'a, T: 'a, F: FnMut(&'a T) -> bool>(
    it: &mut SliceIterModel<T>,
    mut f: F,
) -> bool {
    while it.ptr != it.end_or_len {
        // SAFETY: `it.ptr` is below the end, in the array.
        let x = unsafe { &*it.ptr };
        it.ptr = unsafe { it.ptr.add(1) };
        if f(x) {
            return true;
        }
    }
    false
}

/// `<slice::Iter<T> as Iterator>::all`.
pub fn rmir_slice_all<'a, T: 'a, F: FnMut(&'a T) -> bool>(
    it: &mut SliceIterModel<T>,
    mut f: F,
) -> bool {
    while it.ptr != it.end_or_len {
        // SAFETY: `it.ptr` is below the end, in the array.
        let x = unsafe { &*it.ptr };
        it.ptr = unsafe { it.ptr.add(1) };
        if !f(x) {
            return false;
        }
    }
    true
}

/// `<slice::Iter<T> as Iterator>::position`.
pub fn rmir_slice_position<'a, T: 'a, F: FnMut(&'a T) -> bool>(
    it: &mut SliceIterModel<T>,
    mut f: F,
) -> Option<usize> {
    let mut i = 0usize;
    while it.ptr != it.end_or_len {
        // SAFETY: `it.ptr` is below the end, in the array.
        let x = unsafe { &*it.ptr };
        it.ptr = unsafe { it.ptr.add(1) };
        if f(x) {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// `<slice::Iter<T> as Iterator>::reduce` (`min`, `max` of references).
pub fn rmir_slice_reduce<'a, T: 'a, F: FnMut(&'a T, &'a T) -> &'a T>(
    it: SliceIterModel<T>,
    mut f: F,
) -> Option<&'a T> {
    let (mut p, end) = (it.ptr, it.end_or_len);
    if p == end {
        return None;
    }
    // SAFETY: `p` is below `end`, in the array.
    let mut acc = unsafe { &*p };
    p = unsafe { p.add(1) };
    while p != end {
        let x = unsafe { &*p };
        p = unsafe { p.add(1) };
        acc = f(acc, x);
    }
    Some(acc)
}

/// `<Copied<slice::Iter<T>> as Iterator>::reduce` (`min`, `max`).
pub fn rmir_copied_reduce<T: Copy, F: FnMut(T, T) -> T>(
    it: CopiedModel<SliceIterModel<T>>,
    mut f: F,
) -> Option<T> {
    let (mut p, end) = (it.it.ptr, it.it.end_or_len);
    if p == end {
        return None;
    }
    // SAFETY: `p` is below `end`, in the array.
    let mut acc = unsafe { *p };
    p = unsafe { p.add(1) };
    while p != end {
        let x = unsafe { *p };
        p = unsafe { p.add(1) };
        acc = f(acc, x);
    }
    Some(acc)
}

/// `<slice::Iter<T> as Iterator>::zip` of two slice iterators: `Zip`'s
/// fields as `core` sets them for iterators with random access.
pub fn rmir_slice_zip<T, U>(
    a: SliceIterModel<T>,
    b: SliceIterModel<U>,
) -> ZipModel<SliceIterModel<T>, SliceIterModel<U>> {
    let a_len = rmir_slice_len(a.ptr, a.end_or_len);
    let b_len = rmir_slice_len(b.ptr, b.end_or_len);
    let len = if a_len < b_len { a_len } else { b_len };
    ZipModel {
        a,
        b,
        index: 0,
        len,
        a_len,
    }
}

/// `ZipImpl::fold` of two slice iterators.
pub fn rmir_slice_zip_fold<'a, T: 'a, U: 'a, B, F: FnMut(B, (&'a T, &'a U)) -> B>(
    z: ZipModel<SliceIterModel<T>, SliceIterModel<U>>,
    init: B,
    mut f: F,
) -> B {
    let mut acc = init;
    let mut i = z.index;
    while i < z.len {
        // SAFETY: `i` is below both lengths.
        let pair = unsafe { (&*z.a.ptr.add(i), &*z.b.ptr.add(i)) };
        i += 1;
        acc = f(acc, pair);
    }
    acc
}

/// `<Filter<slice::Iter<T>, P> as Iterator>::count`.
pub fn rmir_slice_filter_count<'a, T: 'a, P: FnMut(&&'a T) -> bool>(
    it: FilterModel<SliceIterModel<T>, P>,
) -> usize {
    let FilterModel { iter, mut predicate } = it;
    let (mut p, end) = (iter.ptr, iter.end_or_len);
    let mut n = 0usize;
    while p != end {
        // SAFETY: `p` is below `end`, in the array.
        let x: &'a T = unsafe { &*p };
        p = unsafe { p.add(1) };
        if predicate(&x) {
            n += 1;
        }
    }
    n
}

/// `<Take<slice::Iter<T>> as SpecTake>::spec_fold`.
pub fn rmir_slice_take_fold<'a, T: 'a, B, F: FnMut(B, &'a T) -> B>(
    it: TakeModel<SliceIterModel<T>>,
    init: B,
    mut f: F,
) -> B {
    let (mut p, end) = (it.iter.ptr, it.iter.end_or_len);
    let mut n = it.n;
    let mut acc = init;
    while n > 0 && p != end {
        // SAFETY: `p` is below `end`, in the array.
        let x = unsafe { &*p };
        p = unsafe { p.add(1) };
        n -= 1;
        acc = f(acc, x);
    }
    acc
}

/// `core::array`'s by-value iterator state (`PolymorphicIter`), fields in
/// `core`'s order, its elements' `MaybeUninit` gone (`frontend::slices`).
pub struct PolymorphicIterModel<D> {
    pub alive: IndexRangeModel,
    pub data: D,
}

/// `core::ops::IndexRange`.
pub struct IndexRangeModel {
    pub start: usize,
    pub end: usize,
}

/// `PolymorphicIter::<[MaybeUninit<T>]>::next` of an array's `IntoIter`
/// (`for v in ARRAY`): the elements before `alive.start` were taken.
pub fn rmir_array_iter_next<T: Copy, const N: usize>(
    it: &mut PolymorphicIterModel<[T; N]>,
) -> Option<T> {
    if it.alive.start < it.alive.end {
        let i = it.alive.start;
        it.alive.start = i + 1;
        // SAFETY: `i` is below `alive.end`, at most `N`.
        Some(unsafe { *(&raw const it.data as *const T).add(i) })
    } else {
        None
    }
}

/// `core::mem::ManuallyDrop`, which holds its value in a `MaybeDangling`.
pub struct ManuallyDropModel<T> {
    pub value: MaybeDanglingModel<T>,
}

/// `core::mem::MaybeDangling` (a tuple struct in `core`; named here, so
/// that the model has no constructor function).
pub struct MaybeDanglingModel<T> {
    pub value: T,
}

/// `core::array::IntoIter`, an array's by-value iterator.
pub struct ArrayIntoIterModel<T, const N: usize> {
    pub inner: ManuallyDropModel<PolymorphicIterModel<[T; N]>>,
}

/// The element `i` of an array's by-value iterator's data.
fn rmir_array_element<T: Copy, const N: usize>(it: &PolymorphicIterModel<[T; N]>, i: usize) -> T {
    // SAFETY: callers pass `i` below `alive.end`, at most `N`.
    unsafe { *(&raw const it.data as *const T).add(i) }
}

/// `<array::IntoIter<T, N> as Iterator>::fold`.
pub fn rmir_array_fold<T: Copy, const N: usize, B, F: FnMut(B, T) -> B>(
    it: ArrayIntoIterModel<T, N>,
    init: B,
    mut f: F,
) -> B {
    let p = it.inner.value.value;
    let mut acc = init;
    let mut i = p.alive.start;
    while i < p.alive.end {
        let x = rmir_array_element(&p, i);
        i += 1;
        acc = f(acc, x);
    }
    acc
}

/// `<array::IntoIter<T, N> as DoubleEndedIterator>::rfold`.
pub fn rmir_array_rfold<T: Copy, const N: usize, B, F: FnMut(B, T) -> B>(
    it: ArrayIntoIterModel<T, N>,
    init: B,
    mut f: F,
) -> B {
    let p = it.inner.value.value;
    let mut acc = init;
    let mut end = p.alive.end;
    while p.alive.start < end {
        end -= 1;
        acc = f(acc, rmir_array_element(&p, end));
    }
    acc
}

/// `<Filter<array::IntoIter<T, N>, P> as Iterator>::count`.
pub fn rmir_array_filter_count<T: Copy, const N: usize, P: FnMut(&T) -> bool>(
    it: FilterModel<ArrayIntoIterModel<T, N>, P>,
) -> usize {
    let FilterModel { iter, mut predicate } = it;
    let p = iter.inner.value.value;
    let mut n = 0usize;
    let mut i = p.alive.start;
    while i < p.alive.end {
        let x = rmir_array_element(&p, i);
        i += 1;
        if predicate(&x) {
            n += 1;
        }
    }
    n
}

/// `<Filter<Copied<slice::Iter<T>>, P> as Iterator>::count`.
pub fn rmir_copied_filter_count<T: Copy, P: FnMut(&T) -> bool>(
    it: FilterModel<CopiedModel<SliceIterModel<T>>, P>,
) -> usize {
    let FilterModel { iter, mut predicate } = it;
    let (mut p, end) = (iter.it.ptr, iter.it.end_or_len);
    let mut n = 0usize;
    while p != end {
        // SAFETY: `p` is below `end`, in the array.
        let x = unsafe { *p };
        p = unsafe { p.add(1) };
        if predicate(&x) {
            n += 1;
        }
    }
    n
}

/// `Copied`'s `copy_fold`.
pub fn rmir_copy_fold<T: Copy, Acc, F: FnMut(Acc, T) -> Acc>(
    mut f: F,
) -> impl FnMut(Acc, &T) -> Acc {
    move |acc, &elt| f(acc, elt)
}

/// `Copied`'s `copy_try_fold`.
pub fn rmir_copy_try_fold<T: Copy, Acc, R, F: FnMut(Acc, T) -> R>(
    mut f: F,
) -> impl FnMut(Acc, &T) -> R {
    move |acc, &elt| f(acc, elt)
}

/// `Sum::sum` of references to numbers.
pub fn rmir_sum_ref<T: Add<Output = T> + Copy, I>() -> impl FnMut(T, &T) -> T {
    |a, b| a + *b
}

/// `Product::product` of references to numbers.
pub fn rmir_product_ref<T: Mul<Output = T> + Copy, I>() -> impl FnMut(T, &T) -> T {
    |a, b| a * *b
}

// ---- Ranges of each integer type: one module per type, so that no
// body needs a trait to step (`Step` is unstable, and a trait of this
// file would need impl resolution the GPU side does not do here).
macro_rules! ranges {
    ($($m:ident: $t:ty, $counted:expr, |$x:ident, $n:ident| $forward_by:expr;)*) => {$(
        pub mod $m {
            use super::{FilterModel, RangeInclusiveModel, RevModel, StepByModel, ZipModel};

            /// Whether `core` keeps a `StepBy` of this range type counted.
            const COUNTED: bool = $counted;
            use core::ops::{ControlFlow, Range};

            /// The value `n` steps above `x`, if `$t` holds it.
            fn forward_by($x: $t, $n: usize) -> Option<$t> {
                $forward_by
            }

            /// `<Range<T> as Iterator>::fold`.
            pub fn fold<B, F: FnMut(B, $t) -> B>(r: Range<$t>, init: B, mut f: F) -> B {
                let (mut i, end) = (r.start, r.end);
                let mut acc = init;
                while i < end {
                    let x = i;
                    i = x + 1;
                    acc = f(acc, x);
                }
                acc
            }

            /// `<Range<T> as DoubleEndedIterator>::rfold`.
            pub fn rfold<B, F: FnMut(B, $t) -> B>(r: Range<$t>, init: B, mut f: F) -> B {
                let (start, mut e) = (r.start, r.end);
                let mut acc = init;
                while start < e {
                    e = e - 1;
                    acc = f(acc, e);
                }
                acc
            }

            /// `<Range<T> as Iterator>::try_fold`.
            pub fn try_fold<B, F: FnMut(B, $t) -> ControlFlow<X, B>, X>(
                r: &mut Range<$t>,
                init: B,
                mut f: F,
            ) -> ControlFlow<X, B> {
                let mut acc = init;
                while r.start < r.end {
                    let x = r.start;
                    r.start = x + 1;
                    match f(acc, x) {
                        ControlFlow::Continue(b) => acc = b,
                        ControlFlow::Break(e) => return ControlFlow::Break(e),
                    }
                }
                ControlFlow::Continue(acc)
            }

            /// `<Range<T> as DoubleEndedIterator>::try_rfold`.
            pub fn try_rfold<B, F: FnMut(B, $t) -> ControlFlow<X, B>, X>(
                r: &mut Range<$t>,
                init: B,
                mut f: F,
            ) -> ControlFlow<X, B> {
                let mut acc = init;
                while r.start < r.end {
                    r.end = r.end - 1;
                    match f(acc, r.end) {
                        ControlFlow::Continue(b) => acc = b,
                        ControlFlow::Break(e) => return ControlFlow::Break(e),
                    }
                }
                ControlFlow::Continue(acc)
            }

            /// `<Range<T> as Iterator>::max`: the last value.
            pub fn max(r: Range<$t>) -> Option<$t> {
                if r.start < r.end {
                    Some(r.end - 1)
                } else {
                    None
                }
            }

            /// `<Range<T> as Iterator>::min`: the first value.
            pub fn min(r: Range<$t>) -> Option<$t> {
                if r.start < r.end {
                    Some(r.start)
                } else {
                    None
                }
            }

            /// `<Range<T> as Clone>::clone`.
            pub fn clone(r: &Range<$t>) -> Range<$t> {
                r.start..r.end
            }

            /// `<RangeInclusive<T> as Clone>::clone`.
            pub fn inclusive_clone(r: &RangeInclusiveModel<$t>) -> RangeInclusiveModel<$t> {
                RangeInclusiveModel {
                    start: r.start,
                    end: r.end,
                    exhausted: r.exhausted,
                }
            }

            /// `<Range<T> as Iterator>::nth` (`spec_nth`).
            pub fn nth(r: &mut Range<$t>, n: usize) -> Option<$t> {
                if let Some(x) = forward_by(r.start, n) {
                    if x < r.end {
                        r.start = x + 1;
                        return Some(x);
                    }
                }
                r.start = r.end;
                None
            }

            fn inclusive_is_empty(r: &RangeInclusiveModel<$t>) -> bool {
                r.exhausted || !(r.start <= r.end)
            }

            /// `RangeInclusive`'s `next` (`spec_next`).
            pub fn inclusive_next(r: &mut RangeInclusiveModel<$t>) -> Option<$t> {
                if inclusive_is_empty(r) {
                    return None;
                }
                Some(if r.start < r.end {
                    let x = r.start;
                    r.start = x + 1;
                    x
                } else {
                    r.exhausted = true;
                    r.start
                })
            }

            /// `RangeInclusive`'s `next_back` (`spec_next_back`).
            pub fn inclusive_next_back(r: &mut RangeInclusiveModel<$t>) -> Option<$t> {
                if inclusive_is_empty(r) {
                    return None;
                }
                Some(if r.start < r.end {
                    let x = r.end;
                    r.end = x - 1;
                    x
                } else {
                    r.exhausted = true;
                    r.end
                })
            }

            /// `<RangeInclusive<T> as Iterator>::fold`.
            pub fn inclusive_fold<B, F: FnMut(B, $t) -> B>(
                mut r: RangeInclusiveModel<$t>,
                init: B,
                mut f: F,
            ) -> B {
                let mut acc = init;
                while let Some(x) = inclusive_next(&mut r) {
                    acc = f(acc, x);
                }
                acc
            }

            /// `<RangeInclusive<T> as DoubleEndedIterator>::rfold`.
            pub fn inclusive_rfold<B, F: FnMut(B, $t) -> B>(
                mut r: RangeInclusiveModel<$t>,
                init: B,
                mut f: F,
            ) -> B {
                let mut acc = init;
                while let Some(x) = inclusive_next_back(&mut r) {
                    acc = f(acc, x);
                }
                acc
            }

            /// `<RangeInclusive<T> as Iterator>::try_fold`.
            pub fn inclusive_try_fold<B, F: FnMut(B, $t) -> ControlFlow<X, B>, X>(
                r: &mut RangeInclusiveModel<$t>,
                init: B,
                mut f: F,
            ) -> ControlFlow<X, B> {
                let mut acc = init;
                while let Some(x) = inclusive_next(r) {
                    match f(acc, x) {
                        ControlFlow::Continue(b) => acc = b,
                        ControlFlow::Break(e) => return ControlFlow::Break(e),
                    }
                }
                ControlFlow::Continue(acc)
            }

            /// `<RangeInclusive<T> as DoubleEndedIterator>::try_rfold`.
            pub fn inclusive_try_rfold<B, F: FnMut(B, $t) -> ControlFlow<X, B>, X>(
                r: &mut RangeInclusiveModel<$t>,
                init: B,
                mut f: F,
            ) -> ControlFlow<X, B> {
                let mut acc = init;
                while let Some(x) = inclusive_next_back(r) {
                    match f(acc, x) {
                        ControlFlow::Continue(b) => acc = b,
                        ControlFlow::Break(e) => return ControlFlow::Break(e),
                    }
                }
                ControlFlow::Continue(acc)
            }

            /// `StepBy::new` of a range: a step of 0 panics. For the
            /// unsigned types `core` keeps the range's end as the number of
            /// values left (its `SpecRangeSetup`), and optimised MIR may
            /// inline `core`'s code that reads it so: the model keeps it so
            /// too (`COUNTED`).
            pub fn step_by_new(mut r: Range<$t>, step: usize) -> StepByModel<Range<$t>> {
                assert!(step != 0);
                if COUNTED {
                    let len = if r.start < r.end { (r.end - r.start) as usize } else { 0 };
                    let count = len / step + (len % step != 0) as usize;
                    r.end = count as $t;
                }
                StepByModel {
                    iter: r,
                    step_minus_one: step - 1,
                    first_take: true,
                }
            }

            /// The step as `$t`, or its largest value when the step is
            /// larger (then at most one value is left).
            fn counted_step(s: &StepByModel<Range<$t>>) -> $t {
                let step = s.step_minus_one as u128 + 1;
                if step > <$t>::MAX as u128 { <$t>::MAX } else { step as $t }
            }

            /// `StepBy`'s `next` (`spec_next`).
            pub fn step_by_next(s: &mut StepByModel<Range<$t>>) -> Option<$t> {
                if COUNTED {
                    let step = counted_step(s);
                    let remaining = s.iter.end;
                    if remaining > 0 {
                        let val = s.iter.start;
                        s.iter.start = val.wrapping_add(step);
                        s.iter.end = remaining - 1;
                        return Some(val);
                    }
                    return None;
                }
                let n = if s.first_take { 0 } else { s.step_minus_one };
                s.first_take = false;
                nth(&mut s.iter, n)
            }

            /// `StepBy`'s `fold` (`spec_fold`).
            pub fn step_by_fold<B, F: FnMut(B, $t) -> B>(
                mut s: StepByModel<Range<$t>>,
                init: B,
                mut f: F,
            ) -> B {
                let mut acc = init;
                while let Some(x) = step_by_next(&mut s) {
                    acc = f(acc, x);
                }
                acc
            }

            /// `StepBy`'s `try_fold` (`spec_try_fold`).
            pub fn step_by_try_fold<B, F: FnMut(B, $t) -> ControlFlow<X, B>, X>(
                s: &mut StepByModel<Range<$t>>,
                init: B,
                mut f: F,
            ) -> ControlFlow<X, B> {
                let mut acc = init;
                while let Some(x) = step_by_next(s) {
                    match f(acc, x) {
                        ControlFlow::Continue(b) => acc = b,
                        ControlFlow::Break(e) => return ControlFlow::Break(e),
                    }
                }
                ControlFlow::Continue(acc)
            }

            /// `Iterator::zip` of two ranges of this type, as `core` lays it
            /// out for iterators with random access (the code optimised MIR
            /// may inline reads these fields): the next index, the length
            /// of the shorter, the length of the first.
            pub fn zip(a: Range<$t>, b: Range<$t>) -> ZipModel<Range<$t>, Range<$t>> {
                let a_len = if a.start < a.end { (a.end - a.start) as usize } else { 0 };
                let b_len = if b.start < b.end { (b.end - b.start) as usize } else { 0 };
                let len = if a_len < b_len { a_len } else { b_len };
                ZipModel { a, b, index: 0, len, a_len }
            }

            /// `Zip`'s `fold`, for two ranges of this type.
            pub fn zip_fold<Acc, F: FnMut(Acc, ($t, $t)) -> Acc>(
                z: ZipModel<Range<$t>, Range<$t>>,
                init: Acc,
                mut f: F,
            ) -> Acc {
                let mut acc = init;
                let mut i = z.index;
                while i < z.len {
                    let x = (z.a.start as i128 + i as i128) as $t;
                    let y = (z.b.start as i128 + i as i128) as $t;
                    i += 1;
                    acc = f(acc, (x, y));
                }
                acc
            }

            /// `Filter::count` over `..=`.
            pub fn inclusive_filter_count<P: FnMut(&$t) -> bool>(
                f: FilterModel<RangeInclusiveModel<$t>, P>,
            ) -> usize {
                let (mut p, mut r) = (f.predicate, f.iter);
                let mut n = 0usize;
                while let Some(x) = inclusive_next(&mut r) {
                    if p(&x) {
                        n += 1;
                    }
                }
                n
            }

            /// `Filter::count` over `(a..b).rev()`.
            pub fn rev_filter_count<P: FnMut(&$t) -> bool>(
                f: FilterModel<RevModel<Range<$t>>, P>,
            ) -> usize {
                let mut p = f.predicate;
                let (start, mut e) = (f.iter.iter.start, f.iter.iter.end);
                let mut n = 0usize;
                while start < e {
                    e = e - 1;
                    if p(&e) {
                        n += 1;
                    }
                }
                n
            }

            /// `Filter::count` over `(a..=b).rev()`.
            pub fn rev_inclusive_filter_count<P: FnMut(&$t) -> bool>(
                f: FilterModel<RevModel<RangeInclusiveModel<$t>>, P>,
            ) -> usize {
                let (mut p, mut r) = (f.predicate, f.iter.iter);
                let mut n = 0usize;
                while let Some(x) = inclusive_next_back(&mut r) {
                    if p(&x) {
                        n += 1;
                    }
                }
                n
            }

            /// `Filter::count` over `(a..b).step_by(k)`.
            pub fn step_by_filter_count<P: FnMut(&$t) -> bool>(
                f: FilterModel<StepByModel<Range<$t>>, P>,
            ) -> usize {
                let (mut p, mut s) = (f.predicate, f.iter);
                let mut n = 0usize;
                while let Some(x) = step_by_next(&mut s) {
                    if p(&x) {
                        n += 1;
                    }
                }
                n
            }

            /// `Filter::count` over a range.
            pub fn filter_count<P: FnMut(&$t) -> bool>(f: FilterModel<Range<$t>, P>) -> usize {
                let mut p = f.predicate;
                let (mut i, end) = (f.iter.start, f.iter.end);
                let mut n = 0usize;
                while i < end {
                    let x = i;
                    i = x + 1;
                    if p(&x) {
                        n += 1;
                    }
                }
                n
            }
        }
    )*};
}

ranges! {
    rmir_range_u8: u8, true, |x, n| if n <= u8::MAX as usize { x.checked_add(n as u8) } else { None };
    rmir_range_u16: u16, true, |x, n| if n <= u16::MAX as usize { x.checked_add(n as u16) } else { None };
    rmir_range_u32: u32, true, |x, n| if n <= u32::MAX as usize { x.checked_add(n as u32) } else { None };
    rmir_range_u64: u64, true, |x, n| x.checked_add(n as u64);
    rmir_range_usize: usize, true, |x, n| x.checked_add(n);
    rmir_range_u128: u128, false, |x, n| x.checked_add(n as u128);
    rmir_range_i8: i8, false, |x, n| { let v = x as i128 + n as i128; if v <= i8::MAX as i128 { Some(v as i8) } else { None } };
    rmir_range_i16: i16, false, |x, n| { let v = x as i128 + n as i128; if v <= i16::MAX as i128 { Some(v as i16) } else { None } };
    rmir_range_i32: i32, false, |x, n| { let v = x as i128 + n as i128; if v <= i32::MAX as i128 { Some(v as i32) } else { None } };
    rmir_range_i64: i64, false, |x, n| { let v = x as i128 + n as i128; if v <= i64::MAX as i128 { Some(v as i64) } else { None } };
    rmir_range_isize: isize, false, |x, n| { let v = x as i128 + n as i128; if v <= isize::MAX as i128 { Some(v as isize) } else { None } };
    rmir_range_i128: i128, false, |x, n| x.checked_add(n as i128);
}

/// `Ord::cmp` of an integer element type: the comparator that `sort` and
/// `sort_unstable` compile as their callback (`frontend::registry::
/// natural_order_fn` names them), as `sort_by(|a, b| a.cmp(b))` would.
macro_rules! natural_orders {
    ($($name:ident: $t:ty;)*) => {$(
        pub fn $name(a: &$t, b: &$t) -> Ordering {
            a.cmp(b)
        }
    )*};
}

natural_orders! {
    rmir_natural_order_i8: i8;
    rmir_natural_order_i16: i16;
    rmir_natural_order_i32: i32;
    rmir_natural_order_i64: i64;
    rmir_natural_order_u8: u8;
    rmir_natural_order_u16: u16;
    rmir_natural_order_u32: u32;
    rmir_natural_order_u64: u64;
}

/// Keeps the imports of the closures' bounds in use.
fn _uses(_: Range<u8>, _: Ordering) {}
