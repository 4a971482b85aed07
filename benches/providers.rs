//! The providers benchmark's callbacks: CUB's operations (benches/cub/providers.cu)
//! written as Rust closures, one registration per provider and element type.
//! `driver build benches/providers.rs -o DIR`, then on a GPU machine
//! `gpu-run --providers-bench DIR --cub libcubbench.so` (docs/perf.md).
//! Plain functions, no captures: CUB's functors are stateless too.
use std::cmp::Ordering;

pub fn reduce_i32(d: &[i32]) -> i32 {
    native::reduce(d, i32::MIN, |a, b| a.max(b))
}

pub fn inclusive_scan_i32(d: &[i32]) -> Vec<i32> {
    native::inclusive_scan(d, |a, b| a.wrapping_add(b))
}

pub fn exclusive_scan_i32(d: &[i32]) -> Vec<i32> {
    native::exclusive_scan(d, 0, |a, b| a.wrapping_add(b))
}

pub fn transform_i32(d: &[i32]) -> Vec<i32> {
    native::transform(d, |x| x.wrapping_mul(3).wrapping_add(1))
}

pub fn transform2_i32(a: &[i32], b: &[i32]) -> Vec<i32> {
    native::transform2(a, b, |x, y| x.wrapping_add(y))
}

pub fn select_i32(d: &[i32]) -> Vec<i32> {
    native::select(d, |x| x > 0)
}

pub fn segmented_reduce_i32(d: &[i32], offsets: &[usize]) -> Vec<i32> {
    native::segmented_reduce(d, offsets, 0, |a, b| a.wrapping_add(b))
}

pub fn sort_by_i32(d: &[i32]) -> Vec<i32> {
    native::sort_by(d, |a, b| a.cmp(b))
}

pub fn dedup_by_i32(d: &[i32]) -> Vec<i32> {
    native::dedup_by(d, |a, b| a == b)
}

pub fn partition_i32(d: &[i32]) -> (Vec<i32>, Vec<i32>) {
    native::partition(d, |x| *x > 0)
}

pub fn reduce_i64(d: &[i64]) -> i64 {
    native::reduce(d, i64::MIN, |a, b| a.max(b))
}

pub fn inclusive_scan_i64(d: &[i64]) -> Vec<i64> {
    native::inclusive_scan(d, |a, b| a.wrapping_add(b))
}

pub fn exclusive_scan_i64(d: &[i64]) -> Vec<i64> {
    native::exclusive_scan(d, 0, |a, b| a.wrapping_add(b))
}

pub fn transform_i64(d: &[i64]) -> Vec<i64> {
    native::transform(d, |x| x.wrapping_mul(3).wrapping_add(1))
}

pub fn transform2_i64(a: &[i64], b: &[i64]) -> Vec<i64> {
    native::transform2(a, b, |x, y| x.wrapping_add(y))
}

pub fn select_i64(d: &[i64]) -> Vec<i64> {
    native::select(d, |x| x > 0)
}

pub fn segmented_reduce_i64(d: &[i64], offsets: &[usize]) -> Vec<i64> {
    native::segmented_reduce(d, offsets, 0, |a, b| a.wrapping_add(b))
}

pub fn sort_by_i64(d: &[i64]) -> Vec<i64> {
    native::sort_by(d, |a, b| a.cmp(b))
}

pub fn dedup_by_i64(d: &[i64]) -> Vec<i64> {
    native::dedup_by(d, |a, b| a == b)
}

pub fn partition_i64(d: &[i64]) -> (Vec<i64>, Vec<i64>) {
    native::partition(d, |x| *x > 0)
}

pub fn reduce_f32(d: &[f32]) -> f32 {
    native::reduce(d, f32::MIN, |a, b| a.max(b))
}

pub fn inclusive_scan_f32(d: &[f32]) -> Vec<f32> {
    native::inclusive_scan(d, |a, b| a + b)
}

pub fn exclusive_scan_f32(d: &[f32]) -> Vec<f32> {
    native::exclusive_scan(d, 0.0, |a, b| a + b)
}

pub fn transform_f32(d: &[f32]) -> Vec<f32> {
    native::transform(d, |x| x * 3.0 + 1.0)
}

pub fn transform2_f32(a: &[f32], b: &[f32]) -> Vec<f32> {
    native::transform2(a, b, |x, y| x + y)
}

pub fn select_f32(d: &[f32]) -> Vec<f32> {
    native::select(d, |x| x > 0.0)
}

pub fn segmented_reduce_f32(d: &[f32], offsets: &[usize]) -> Vec<f32> {
    native::segmented_reduce(d, offsets, 0.0, |a, b| a + b)
}

pub fn sort_by_f32(d: &[f32]) -> Vec<f32> {
    // CUB's `a < b`, as a comparator: `Less` exactly where `a < b`.
    native::sort_by(d, |a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal))
}

pub fn dedup_by_f32(d: &[f32]) -> Vec<f32> {
    native::dedup_by(d, |a, b| a == b)
}

pub fn partition_f32(d: &[f32]) -> (Vec<f32>, Vec<f32>) {
    native::partition(d, |x| *x > 0.0)
}

pub fn reduce_f64(d: &[f64]) -> f64 {
    native::reduce(d, f64::MIN, |a, b| a.max(b))
}

pub fn inclusive_scan_f64(d: &[f64]) -> Vec<f64> {
    native::inclusive_scan(d, |a, b| a + b)
}

pub fn exclusive_scan_f64(d: &[f64]) -> Vec<f64> {
    native::exclusive_scan(d, 0.0, |a, b| a + b)
}

pub fn transform_f64(d: &[f64]) -> Vec<f64> {
    native::transform(d, |x| x * 3.0 + 1.0)
}

pub fn transform2_f64(a: &[f64], b: &[f64]) -> Vec<f64> {
    native::transform2(a, b, |x, y| x + y)
}

pub fn select_f64(d: &[f64]) -> Vec<f64> {
    native::select(d, |x| x > 0.0)
}

pub fn segmented_reduce_f64(d: &[f64], offsets: &[usize]) -> Vec<f64> {
    native::segmented_reduce(d, offsets, 0.0, |a, b| a + b)
}

pub fn sort_by_f64(d: &[f64]) -> Vec<f64> {
    // CUB's `a < b`, as a comparator: `Less` exactly where `a < b`.
    native::sort_by(d, |a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal))
}

pub fn dedup_by_f64(d: &[f64]) -> Vec<f64> {
    native::dedup_by(d, |a, b| a == b)
}

pub fn partition_f64(d: &[f64]) -> (Vec<f64>, Vec<f64>) {
    native::partition(d, |x| *x > 0.0)
}

// Where each query goes in sorted data: CUB's anchor is Thrust's
// vectorised `lower_bound` with `a < b` (CUB has no device-wide search).
pub fn partition_point_i32(sorted: &[i32], queries: &[i32]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x < q)
}

pub fn partition_point_i64(sorted: &[i64], queries: &[i64]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x < q)
}

pub fn partition_point_f32(sorted: &[f32], queries: &[f32]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x < q)
}

pub fn partition_point_f64(sorted: &[f64], queries: &[f64]) -> Vec<usize> {
    native::partition_point(sorted, queries, |x, q| x < q)
}

// 256 even bins, as CUB's `HistogramEven` with 257 levels computes them:
// over every i32 (levels from -2^31 to 2^31, in 64-bit arithmetic), and
// over the floats' [-1000, 1000) (the reciprocal of the bin width in the
// element's type, as CUB's; values outside it not counted).
pub fn histogram_i32(d: &[i32]) -> Vec<u64> {
    native::histogram(d, 256, |x| ((i64::from(x) + (1 << 31)) >> 24) as usize)
}

pub fn histogram_f32(d: &[f32]) -> Vec<u64> {
    native::histogram(d, 256, |x| {
        if x >= -1000.0 && x < 1000.0 {
            ((x - -1000.0) * (256.0 / 2000.0)) as usize
        } else {
            usize::MAX
        }
    })
}

pub fn histogram_f64(d: &[f64]) -> Vec<u64> {
    native::histogram(d, 256, |x| {
        if x >= -1000.0 && x < 1000.0 {
            ((x - -1000.0) * (256.0 / 2000.0)) as usize
        } else {
            usize::MAX
        }
    })
}

// Two sorted inputs merged, against CUB's `DeviceMerge::MergeKeys` with
// `a < b`.
pub fn merge_by_i32(a: &[i32], b: &[i32]) -> Vec<i32> {
    native::merge_by(a, b, |x, y| x.cmp(y))
}

pub fn merge_by_i64(a: &[i64], b: &[i64]) -> Vec<i64> {
    native::merge_by(a, b, |x, y| x.cmp(y))
}

pub fn merge_by_f32(a: &[f32], b: &[f32]) -> Vec<f32> {
    // CUB's `a < b`, as a comparator: `Less` exactly where `a < b`.
    native::merge_by(a, b, |x, y| x.partial_cmp(y).unwrap_or(Ordering::Equal))
}

pub fn merge_by_f64(a: &[f64], b: &[f64]) -> Vec<f64> {
    native::merge_by(a, b, |x, y| x.partial_cmp(y).unwrap_or(Ordering::Equal))
}

// Keys in runs and their values: each run's sum, and the running sum
// restarting at each run, against CUB's `DeviceReduce::ReduceByKey` (its
// `==`) and `DeviceScan::InclusiveScanByKey` with `a == b`, both with
// `a + b`.
pub fn reduce_by_key_i32(k: &[i32], v: &[i32]) -> (Vec<i32>, Vec<i32>) {
    native::reduce_by_key(k, v, |a, b| a == b, |x, y| x.wrapping_add(y))
}

pub fn reduce_by_key_i64(k: &[i64], v: &[i64]) -> (Vec<i64>, Vec<i64>) {
    native::reduce_by_key(k, v, |a, b| a == b, |x, y| x.wrapping_add(y))
}

pub fn reduce_by_key_f32(k: &[f32], v: &[f32]) -> (Vec<f32>, Vec<f32>) {
    native::reduce_by_key(k, v, |a, b| a == b, |x, y| x + y)
}

pub fn reduce_by_key_f64(k: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
    native::reduce_by_key(k, v, |a, b| a == b, |x, y| x + y)
}

pub fn scan_by_key_i32(k: &[i32], v: &[i32]) -> Vec<i32> {
    native::scan_by_key(k, v, |a, b| a == b, |x, y| x.wrapping_add(y))
}

pub fn scan_by_key_i64(k: &[i64], v: &[i64]) -> Vec<i64> {
    native::scan_by_key(k, v, |a, b| a == b, |x, y| x.wrapping_add(y))
}

pub fn scan_by_key_f32(k: &[f32], v: &[f32]) -> Vec<f32> {
    native::scan_by_key(k, v, |a, b| a == b, |x, y| x + y)
}

pub fn scan_by_key_f64(k: &[f64], v: &[f64]) -> Vec<f64> {
    native::scan_by_key(k, v, |a, b| a == b, |x, y| x + y)
}

// Each segment of 1024 sorted, against CUB's
// `DeviceSegmentedSort::StableSortKeys` (a radix sort, ascending).
pub fn segmented_sort_by_i32(d: &[i32], offsets: &[usize]) -> Vec<i32> {
    native::segmented_sort_by(d, offsets, |a, b| a.cmp(b))
}

pub fn segmented_sort_by_i64(d: &[i64], offsets: &[usize]) -> Vec<i64> {
    native::segmented_sort_by(d, offsets, |a, b| a.cmp(b))
}

pub fn segmented_sort_by_f32(d: &[f32], offsets: &[usize]) -> Vec<f32> {
    native::segmented_sort_by(d, offsets, |a, b| a.total_cmp(b))
}

pub fn segmented_sort_by_f64(d: &[f64], offsets: &[usize]) -> Vec<f64> {
    native::segmented_sort_by(d, offsets, |a, b| a.total_cmp(b))
}
