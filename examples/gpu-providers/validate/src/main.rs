//! Every GPU provider over every element type, checked against the CPU
//! reference (`native::*`, the same closures run by the host) at every
//! size of the list, from host data and from misaligned device
//! slices.
//!
//! `validate [--max-size N] [--only PROVIDER] [--type T]`. Integer results
//! must equal the reference exactly; so must float results of operations
//! that are exact whatever the grouping (max, selections, maps). A float
//! sum is checked twice: two runs must give the same bits (the providers
//! combine in a fixed order), and the difference from the sequential fold
//! must stay within the a-priori bound of any summation order,
//! 2 (n + 1) eps sum |x|, and a float scan or reduce must equal, bit for
//! bit, the host's model of the GPU's combining order (order.rs; a reduce's
//! depends on the grid and the input's alignment, which the call reports in
//! `Gpu::last_launch`). A run in which no case ran fails.
//!
//! `validate --check-order` needs no GPU: it checks the models against the
//! sequential scan and fold for associative operations.

mod cases;
mod order;

use native::gpu::{Error, Gpu, Input};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::process::ExitCode;
use std::time::Instant;

type In<'a, T> = &'a dyn Input<T>;

/// A case's two functions: the GPU call and the CPU reference.
pub enum Op<T: 'static> {
    /// reduce: (data, init, k).
    Fold(
        fn(&Gpu, In<'_, T>, T, T) -> Result<T, Error>,
        fn(&[T], T, T) -> T,
    ),
    /// inclusive_scan: (data, unused init, k).
    InclusiveScan(
        fn(&Gpu, In<'_, T>, T, T) -> Result<Vec<T>, Error>,
        fn(&[T], T, T) -> Vec<T>,
    ),
    /// exclusive_scan: (data, init, k).
    Scan(
        fn(&Gpu, In<'_, T>, T, T) -> Result<Vec<T>, Error>,
        fn(&[T], T, T) -> Vec<T>,
    ),
    /// transform to T, select: (data, k).
    Map(
        fn(&Gpu, In<'_, T>, T) -> Result<Vec<T>, Error>,
        fn(&[T], T) -> Vec<T>,
    ),
    /// transform to f64.
    MapF64(
        fn(&Gpu, In<'_, T>) -> Result<Vec<f64>, Error>,
        fn(&[T]) -> Vec<f64>,
    ),
    /// transform2 of two T: (a, b, k).
    Zip(
        fn(&Gpu, In<'_, T>, In<'_, T>, T) -> Result<Vec<T>, Error>,
        fn(&[T], &[T], T) -> Vec<T>,
    ),
    /// transform2 of T and u8 to f32.
    ZipMixed(
        fn(&Gpu, In<'_, T>, In<'_, u8>) -> Result<Vec<f32>, Error>,
        fn(&[T], &[u8]) -> Vec<f32>,
    ),
    /// segmented_reduce: (data, offsets, init).
    Seg(
        fn(&Gpu, In<'_, T>, &[usize], T) -> Result<Vec<T>, Error>,
        fn(&[T], &[usize], T) -> Vec<T>,
    ),
    /// sort_by.
    Sort(
        fn(&Gpu, In<'_, T>) -> Result<Vec<T>, Error>,
        fn(&[T]) -> Vec<T>,
    ),
    /// segmented_sort_by: (data, offsets).
    SegSort(
        fn(&Gpu, In<'_, T>, &[usize]) -> Result<Vec<T>, Error>,
        fn(&[T], &[usize]) -> Vec<T>,
    ),
    /// partition_point: (the data sorted, the queries, k).
    Search(
        fn(&Gpu, In<'_, T>, In<'_, T>, T) -> Result<Vec<usize>, Error>,
        fn(&[T], &[T], T) -> Vec<usize>,
    ),
    /// merge_by: (the data sorted, the second input sorted).
    Merge(
        fn(&Gpu, In<'_, T>, In<'_, T>) -> Result<Vec<T>, Error>,
        fn(&[T], &[T]) -> Vec<T>,
    ),
    /// reduce_by_key (each run's key, then each run's fold) and
    /// scan_by_key: (keys in runs, values, k).
    ByKey(
        fn(&Gpu, In<'_, T>, In<'_, T>, T) -> Result<Vec<T>, Error>,
        fn(&[T], &[T], T) -> Vec<T>,
    ),
    /// histogram: (data, k), its bins the case's own.
    Histogram(
        fn(&Gpu, In<'_, T>, T) -> Result<Vec<u64>, Error>,
        fn(&[T], T) -> Vec<u64>,
    ),
}

pub struct Case<T: 'static> {
    pub name: &'static str,
    pub provider: &'static str,
    /// Whether the result must equal the reference bit for bit.
    pub exact: bool,
    pub op: Op<T>,
    /// A float sum in the GPU's combining order (order.rs): the result
    /// must equal it bit for bit too.
    pub order: Option<Order<T>>,
}

/// The host's model of a provider's combining order for one case.
pub enum Order<T: 'static> {
    /// A scan's outputs, from the data, init and k alone.
    Scan(fn(&[T], T, T) -> Vec<T>),
    /// A reduce's result, which also depends on the grid the call ran on
    /// and on its input's alignment (`Gpu::last_launch`).
    Fold(fn(&[T], T, T, order::FoldShape) -> T),
    /// A segmented reduce's results, from the data, the offsets and init,
    /// the block and the input's alignment.
    Segments(fn(&[T], &[usize], T, order::FoldShape) -> Vec<T>),
}

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// An element type: how to make data, and how to compare results.
trait Elem: native::gpu::DeviceElement + PartialOrd + Debug + Send + Sync + 'static {
    const NAME: &'static str;
    const EPS: f64;
    fn random(r: &mut Rng) -> Self;
    /// The captured `k` (small, nonzero).
    fn k() -> Self;
    fn init() -> Self;
    /// select keeps elements above this (about half of them).
    fn threshold() -> Self;
    fn as_f64(self) -> f64;
    /// The key of segment `s`: keys in runs, consecutive segments' keys
    /// different (an integer's wrap around).
    fn key(s: usize) -> Self;
    fn cases() -> Vec<Case<Self>>;
}

macro_rules! int_elem {
    ($($t:ident $threshold:expr),*) => {$(
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const EPS: f64 = 0.0;
            fn random(r: &mut Rng) -> Self { r.next() as $t }
            fn k() -> Self { 3 as $t }
            fn init() -> Self { 7 as $t }
            fn threshold() -> Self { $threshold }
            fn as_f64(self) -> f64 { self as f64 }
            fn key(s: usize) -> Self { s as $t }
            fn cases() -> Vec<Case<Self>> { paste_cases!($t) }
        }
    )*};
}

macro_rules! float_elem {
    ($($t:ident),*) => {$(
        impl Elem for $t {
            const NAME: &'static str = stringify!($t);
            const EPS: f64 = $t::EPSILON as f64;
            fn random(r: &mut Rng) -> Self { ((r.next() % 2_000_001) as f64 / 1000.0 - 1000.0) as $t }
            fn k() -> Self { 0.75 }
            fn init() -> Self { 0.5 }
            fn threshold() -> Self { 0.0 }
            fn as_f64(self) -> f64 { self as f64 }
            fn key(s: usize) -> Self { s as $t }
            fn cases() -> Vec<Case<Self>> { paste_cases!($t) }
        }
    )*};
}

macro_rules! paste_cases {
    (i8) => { cases::cases_i8() };
    (i16) => { cases::cases_i16() };
    (i32) => { cases::cases_i32() };
    (i64) => { cases::cases_i64() };
    (u8) => { cases::cases_u8() };
    (u16) => { cases::cases_u16() };
    (u32) => { cases::cases_u32() };
    (u64) => { cases::cases_u64() };
    (f32) => { cases::cases_f32() };
    (f64) => { cases::cases_f64() };
}

int_elem!(i8 0, i16 0, i32 0, i64 0, u8 u8::MAX / 2, u16 u16::MAX / 2, u32 u32::MAX / 2, u64 u64::MAX / 2);
float_elem!(f32, f64);

/// What a case returns: elements of its type, or f64 / f32 for the maps
/// that change it, indices (partition_point) or counts (histogram).
enum Output<T> {
    Same(Vec<T>),
    F64(Vec<f64>),
    F32(Vec<f32>),
    Index(Vec<usize>),
    Counts(Vec<u64>),
}

/// The bytes of a slice of scalars (no padding, every bit pattern valid).
fn bytes_of<X: Copy>(v: &[X]) -> &[u8] {
    // SAFETY: X is a scalar element type; its bytes are initialised.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

impl<T: Elem> Output<T> {
    fn len(&self) -> usize {
        match self {
            Output::Same(v) => v.len(),
            Output::F64(v) => v.len(),
            Output::F32(v) => v.len(),
            Output::Index(v) => v.len(),
            Output::Counts(v) => v.len(),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Output::Same(v) => bytes_of(v),
            Output::F64(v) => bytes_of(v),
            Output::F32(v) => bytes_of(v),
            Output::Index(v) => bytes_of(v),
            Output::Counts(v) => bytes_of(v),
        }
    }

    fn value(&self, i: usize) -> f64 {
        match self {
            Output::Same(v) => v[i].as_f64(),
            Output::F64(v) => v[i],
            Output::F32(v) => v[i] as f64,
            Output::Index(v) => v[i] as f64,
            Output::Counts(v) => v[i] as f64,
        }
    }
}

/// Where a case's input lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// A host `Vec` (copied to the device by the call).
    Host,
    /// A device slice starting this many elements into an allocation.
    Device(usize),
}

/// The sizes, and 100,003 (tens of tiles for the look-back and the
/// merge passes, small enough for the sanitizers).
const SIZES: [usize; 12] = [
    0,
    1,
    31,
    32,
    33,
    1023,
    1024,
    1025,
    100_003,
    1_000_003,
    1 << 24,
    1 << 28,
];

/// Sorts stop at 2^26.
const SORT_MAX: usize = 1 << 26;

#[derive(Default)]
struct Tally {
    /// (provider, type) → (passed, failed).
    counts: BTreeMap<(String, String), (usize, usize)>,
    failures: Vec<String>,
}

impl Tally {
    fn record(&mut self, provider: &str, ty: &str, outcome: Result<(), String>) {
        let c = self
            .counts
            .entry((provider.to_string(), ty.to_string()))
            .or_default();
        match outcome {
            Ok(()) => c.0 += 1,
            Err(e) => {
                c.1 += 1;
                if self.failures.len() < 40 {
                    eprintln!("FAIL {e}");
                }
                self.failures.push(e);
            }
        }
    }
}

/// Segment boundaries over `n` elements: random lengths (empty ones
/// among them), 1024-element segments, or three long ones.
fn offsets(n: usize, pattern: usize, rng: &mut Rng) -> Vec<usize> {
    let mut v = vec![0usize];
    match pattern {
        0 => {
            let mut at = 0;
            while at < n {
                at = (at + (rng.next() % 75) as usize).min(n);
                v.push(at);
            }
            v.push(n); // a trailing empty segment
        }
        1 => {
            let mut at = 0;
            loop {
                at = (at + 1024).min(n);
                v.push(at);
                if at == n {
                    break;
                }
            }
        }
        2 => v.extend([n / 3, n / 3, n]),
        // Elements before the first segment and after the last (which a
        // segmented sort leaves in place), and an empty segment.
        _ => v = vec![n / 5, n / 2, n / 2, n - n / 7],
    }
    v
}

/// Compares a GPU output with the reference: bit for bit, or, for a float
/// sum (`bounds` given), element `i` within `bounds(i)`.
fn compare<T: Elem>(
    got: &Output<T>,
    want: &Output<T>,
    bounds: Option<&dyn Fn(usize) -> f64>,
) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{} elements, the reference has {}", got.len(), want.len()));
    }
    if got.bytes() == want.bytes() {
        return Ok(());
    }
    let size = got.bytes().len() / got.len().max(1);
    let first = got
        .bytes()
        .chunks(size.max(1))
        .zip(want.bytes().chunks(size.max(1)))
        .position(|(a, b)| a != b)
        .unwrap_or(0);
    let Some(bound) = bounds else {
        return Err(format!(
            "element {first} of {}: {}, the reference {}",
            got.len(),
            got.value(first),
            want.value(first)
        ));
    };
    for i in first..got.len() {
        let (a, b) = (got.value(i), want.value(i));
        let limit = bound(i);
        if !((a - b).abs() <= limit) {
            return Err(format!(
                "element {i} of {}: {a}, the reference {b}, beyond the bound {limit:e}",
                got.len()
            ));
        }
    }
    Ok(())
}

/// The bound of a float sum of `terms` values whose magnitudes add up to
/// `magnitude`: any two orders of summing differ by at most
/// 2 terms eps magnitude (each within (terms - 1) eps magnitude of the
/// exact sum, to first order).
fn sum_bound<T: Elem>(terms: usize, magnitude: f64) -> f64 {
    2.0 * terms as f64 * T::EPS * magnitude
}

struct Job<'a, T: 'static> {
    case: &'a Case<T>,
    /// Segment pattern, for segmented reduce and the by-keys' keys.
    pattern: usize,
}

/// How many segment patterns a provider's cases run with: the three that
/// cover every element for segmented reduce and the by-keys' keys, and the
/// fourth besides (elements outside every segment) for the segmented sort.
fn patterns_of(provider: &str) -> usize {
    match provider {
        "segmented_reduce" | "reduce_by_key" | "scan_by_key" => 3,
        "segmented_sort_by" => 4,
        _ => 1,
    }
}

/// Whether a provider's cases run once per segment pattern.
fn per_pattern(provider: &str) -> bool {
    patterns_of(provider) > 1
}

/// `extra` keys, then a key per element: segment `s` of `offsets` (over
/// the elements after `extra`) has `T::key(s)`.
fn keys_of<T: Elem>(extra: usize, offsets: &[usize]) -> Vec<T> {
    let n = offsets.last().copied().unwrap_or(0);
    let mut keys = vec![T::key(0); extra + n];
    for (s, w) in offsets.windows(2).enumerate() {
        keys[extra + w[0]..extra + w[1]].fill(T::key(s));
    }
    keys
}

fn run_type<T: Elem>(gpu: &Gpu, max_size: usize, only: Option<&str>, tally: &mut Tally) -> Result<(), Error> {
    let cases: Vec<Case<T>> = T::cases()
        .into_iter()
        .filter(|c| only.is_none_or(|o| o == c.provider))
        .collect();
    if cases.is_empty() {
        return Ok(());
    }
    let started = Instant::now();
    let mut checked = 0usize;
    for (s, &n) in SIZES.iter().enumerate().filter(|(_, &n)| n <= max_size) {
        let placements: &[Placement] = if n <= 1 << 24 {
            &[Placement::Host, Placement::Device(1), Placement::Device(3)]
        } else {
            &[Placement::Host]
        };
        for &placement in placements {
            let seed = (s as u64) << 8 | placement_id(placement);
            let seed = seed ^ T::NAME.len() as u64 * 0x1000_0001;
            let mut rng = Rng::new(seed);
            let extra = match placement {
                Placement::Host => 0,
                Placement::Device(o) => o,
            };
            let all: Vec<T> = random(n + extra, seed, T::random);
            let all_b: Vec<T> = random(n + extra, seed ^ 0xB, T::random);
            let all_u8: Vec<u8> = random(n + extra, seed ^ 0xC, |r| r.next() as u8);
            let data = &all[extra..];
            let data_b = &all_b[extra..];
            let data_u8 = &all_u8[extra..];
            // partition_point searches the data in ascending order (no
            // NaN among it) for fewer queries than elements (the second
            // input's first three quarters); merge_by merges the sorted
            // data with those queries, sorted too.
            let searching = cases.iter().any(|c| matches!(c.op, Op::Search(..) | Op::Merge(..)));
            let (mut all_sorted, mut host_queries, mut all_sorted_b) = (Vec::new(), Vec::new(), Vec::new());
            let ascending = |x: &T, y: &T| x.partial_cmp(y).expect("no NaN in the data");
            if searching {
                all_sorted = all.clone();
                all_sorted[extra..].sort_unstable_by(ascending);
                host_queries = data_b[..n - n / 4].to_vec();
                all_sorted_b = all_b[..extra + host_queries.len()].to_vec();
                all_sorted_b[extra..].sort_unstable_by(ascending);
            }
            let sorted = all_sorted.get(extra..).unwrap_or_default();
            let sorted_b = all_sorted_b.get(extra..).unwrap_or_default();
            let queries = &host_queries[..];
            let patterns: Vec<Vec<usize>> = (0..4).map(|p| offsets(n, p, &mut rng)).collect();
            // The by-keys' keys: a run a segment of each pattern that
            // covers every element.
            let keyed = cases.iter().any(|c| matches!(c.op, Op::ByKey(..)));
            let all_keys: Vec<Vec<T>> = match keyed {
                true => patterns[..patterns_of("reduce_by_key")].iter().map(|p| keys_of(extra, p)).collect(),
                false => Vec::new(),
            };
            let host_keys: Vec<&[T]> = all_keys.iter().map(|k| &k[extra..]).collect();
            let jobs: Vec<Job<'_, T>> = cases
                .iter()
                .filter(|c| !c.provider.starts_with("sort") || n <= SORT_MAX)
                .flat_map(|c| {
                    let count = patterns_of(c.provider);
                    (0..count).map(move |pattern| Job { case: c, pattern })
                })
                .collect();
            // The inputs where the calls read them.
            let device = match placement {
                Placement::Host => None,
                Placement::Device(_) => Some((
                    gpu.upload(&all)?,
                    gpu.upload(&all_b)?,
                    gpu.upload(&all_u8)?,
                    gpu.upload(&all_sorted)?,
                    gpu.upload(&all_sorted_b)?,
                )),
            };
            // (Without a search among the cases, the data stands for the
            // sorted data no case reads.)
            let slices = device.as_ref().map(|(a, b, c, s, sb)| {
                let inputs = (a.slice(extra..), b.slice(extra..), c.slice(extra..));
                let (sorted, sorted_b) = if searching {
                    (s.slice(extra..), sb.slice(extra..))
                } else {
                    (a.slice(extra..), b.slice(extra..))
                };
                (inputs, sorted, b.slice(extra..extra + queries.len()), sorted_b)
            });
            // Host data is the whole vector (no offset).
            let (ia, ib, iu): (In<'_, T>, In<'_, T>, In<'_, u8>) = match &slices {
                Some(((a, b, c), _, _, _)) => (a, b, c),
                None => (&all, &all_b, &all_u8),
            };
            let search: (In<'_, T>, In<'_, T>, In<'_, T>) = match &slices {
                Some((_, s, q, sb)) => (s, q, sb),
                None => (&all_sorted, &host_queries, &all_sorted_b),
            };
            // The keys where the calls read them, from the same offset.
            let device_keys = match placement {
                Placement::Device(_) => all_keys.iter().map(|k| gpu.upload(k)).collect::<Result<Vec<_>, _>>()?,
                Placement::Host => Vec::new(),
            };
            let key_slices: Vec<_> = device_keys.iter().map(|k| k.slice(extra..)).collect();
            let key_inputs: Vec<In<'_, T>> = match placement {
                Placement::Device(_) => key_slices.iter().map(|k| k as In<'_, T>).collect(),
                Placement::Host => all_keys.iter().map(|k| k as In<'_, T>).collect(),
            };
            // The references, in parallel, while the GPU runs the cases.
            std::thread::scope(|scope| -> Result<(), Error> {
                let handles: Vec<_> = jobs
                    .iter()
                    .map(|job| {
                        let patterns = &patterns;
                        let host_keys = &host_keys;
                        scope.spawn(move || {
                            let model = match job.case.order {
                                Some(Order::Scan(m)) => Some(m(data, T::init(), T::k())),
                                _ => None,
                            };
                            let inputs = (data, data_b, data_u8);
                            (reference(job, inputs, (sorted, queries, sorted_b), patterns, host_keys), model)
                        })
                    })
                    .collect();
                for (job, handle) in jobs.iter().zip(handles) {
                    let got = gpu_run(gpu, job, (ia, ib, iu), search, &patterns, &key_inputs)?;
                    let shape = fold_shape(gpu);
                    let again = if job.case.exact {
                        None
                    } else {
                        Some(gpu_run(gpu, job, (ia, ib, iu), search, &patterns, &key_inputs)?)
                    };
                    let (want, mut model) = handle.join().expect("the reference does not panic");
                    if let Some(order @ (Order::Fold(_) | Order::Segments(_))) = &job.case.order {
                        let segments = &patterns[job.pattern];
                        model = match (order, shape) {
                            (Order::Fold(m), Some(shape)) => Some(vec![m(data, T::init(), T::k(), shape)]),
                            (Order::Segments(m), Some(shape)) => Some(m(data, segments, T::init(), shape)),
                            // No segments: nothing launched, and no output.
                            (Order::Segments(_), None) if segments.len() < 2 => Some(Vec::new()),
                            _ => {
                                tally.record(
                                    job.case.provider,
                                    T::NAME,
                                    Err(format!("{} {} n={n}: the call reported no launch", job.case.name, T::NAME)),
                                );
                                continue;
                            }
                        };
                    }
                    let mut outcome = if job.case.exact {
                        compare(&got, &want, None)
                    } else {
                        let limits = sum_limits(job, data, &patterns[job.pattern]);
                        let bound = |i: usize| limits.get(i).copied().unwrap_or(0.0);
                        compare(&got, &want, Some(&bound))
                    };
                    if let (Ok(()), Some(model), Output::Same(got)) = (&outcome, &model, &got) {
                        let size = std::mem::size_of::<T>();
                        let differs = bytes_of(got)
                            .chunks(size)
                            .zip(bytes_of(model).chunks(size))
                            .position(|(a, b)| a != b);
                        if let Some(i) = differs {
                            outcome = Err(format!(
                                "element {i}: {:?}, the GPU-order model {:?} (not the same bits)",
                                got[i], model[i]
                            ));
                        } else if got.len() != model.len() {
                            outcome = Err(format!("{} elements, the GPU-order model {}", got.len(), model.len()));
                        }
                    }
                    if let Some(again) = again {
                        if again.bytes() != got.bytes() {
                            outcome = Err("two runs on the same input differ".into());
                        }
                    }
                    let outcome = outcome.map_err(|e| {
                        format!(
                            "{} {} n={n} {placement:?}{}: {e}",
                            job.case.name,
                            T::NAME,
                            if per_pattern(job.case.provider) {
                                format!(" segments#{}", job.pattern)
                            } else {
                                String::new()
                            }
                        )
                    });
                    tally.record(job.case.provider, T::NAME, outcome);
                    checked += 1;
                }
                Ok(())
            })?;
        }
    }
    println!(
        "{}: {checked} cases in {:.1} s",
        T::NAME,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The shape of the reduce that just ran on this thread: its one launch's
/// grid and block, and its input's alignment.
fn fold_shape(gpu: &Gpu) -> Option<order::FoldShape> {
    let launch = gpu.last_launch()?;
    let &[(_, grid, block)] = launch.kernels.as_slice() else {
        return None;
    };
    Some(order::FoldShape {
        grid: grid as usize,
        block: block as usize,
        misalignment: (launch.input_address % 16) as usize,
    })
}

fn placement_id(p: Placement) -> u64 {
    match p {
        Placement::Host => 0,
        Placement::Device(o) => o as u64,
    }
}

/// The GPU's output.
fn gpu_run<T: Elem>(
    gpu: &Gpu,
    job: &Job<'_, T>,
    (a, b, u): (In<'_, T>, In<'_, T>, In<'_, u8>),
    (sorted, queries, sorted_b): (In<'_, T>, In<'_, T>, In<'_, T>),
    patterns: &[Vec<usize>],
    keys: &[In<'_, T>],
) -> Result<Output<T>, Error> {
    let (k, init) = (T::k(), T::init());
    let threshold = if matches!(job.case.provider, "select" | "partition") { T::threshold() } else { k };
    Ok(match &job.case.op {
        Op::Fold(g, _) => Output::Same(vec![g(gpu, a, init, k)?]),
        Op::InclusiveScan(g, _) | Op::Scan(g, _) => Output::Same(g(gpu, a, init, k)?),
        Op::Map(g, _) => Output::Same(g(gpu, a, threshold)?),
        Op::MapF64(g, _) => Output::F64(g(gpu, a)?),
        Op::Zip(g, _) => Output::Same(g(gpu, a, b, k)?),
        Op::ZipMixed(g, _) => Output::F32(g(gpu, a, u)?),
        Op::Seg(g, _) => Output::Same(g(gpu, a, &patterns[job.pattern], init)?),
        Op::Sort(g, _) => Output::Same(g(gpu, a)?),
        Op::SegSort(g, _) => Output::Same(g(gpu, a, &patterns[job.pattern])?),
        Op::Search(g, _) => Output::Index(g(gpu, sorted, queries, k)?),
        Op::Merge(g, _) => Output::Same(g(gpu, sorted, sorted_b)?),
        Op::Histogram(g, _) => Output::Counts(g(gpu, a, k)?),
        Op::ByKey(g, _) => Output::Same(g(gpu, keys[job.pattern], a, k)?),
    })
}

/// The reference output.
fn reference<T: Elem>(
    job: &Job<'_, T>,
    (a, b, u): (&[T], &[T], &[u8]),
    (sorted, queries, sorted_b): (&[T], &[T], &[T]),
    patterns: &[Vec<usize>],
    keys: &[&[T]],
) -> Output<T> {
    let (k, init) = (T::k(), T::init());
    let threshold = if matches!(job.case.provider, "select" | "partition") { T::threshold() } else { k };
    match &job.case.op {
        Op::Fold(_, h) => Output::Same(vec![h(a, init, k)]),
        Op::InclusiveScan(_, h) | Op::Scan(_, h) => Output::Same(h(a, init, k)),
        Op::Map(_, h) => Output::Same(h(a, threshold)),
        Op::MapF64(_, h) => Output::F64(h(a)),
        Op::Zip(_, h) => Output::Same(h(a, b, k)),
        Op::ZipMixed(_, h) => Output::F32(h(a, u)),
        Op::Seg(_, h) => Output::Same(h(a, &patterns[job.pattern], init)),
        Op::Sort(_, h) => Output::Same(h(a)),
        Op::SegSort(_, h) => Output::Same(h(a, &patterns[job.pattern])),
        Op::Search(_, h) => Output::Index(h(sorted, queries, k)),
        Op::Merge(_, h) => Output::Same(h(sorted, sorted_b)),
        Op::Histogram(_, h) => Output::Counts(h(a, k)),
        Op::ByKey(_, h) => Output::Same(h(keys[job.pattern], a, k)),
    }
}

/// Each output's bound ([`sum_bound`]) for a float sum: a reduce sums
/// init and every element; an inclusive scan's output `i` elements `0..=i`
/// (an extra term of slack, as before init was counted); an exclusive
/// scan's init and the elements before `i`; a segmented reduce's output
/// `s` init and segment `s`.
fn sum_limits<T: Elem>(job: &Job<'_, T>, a: &[T], offsets: &[usize]) -> Vec<f64> {
    let init = T::init().as_f64().abs();
    let magnitude = |xs: &[T]| xs.iter().map(|x| x.as_f64().abs()).sum::<f64>();
    let mut s = 0.0;
    match &job.case.op {
        Op::Fold(..) => vec![sum_bound::<T>(a.len() + 1, init + magnitude(a))],
        Op::InclusiveScan(..) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                s += x.as_f64().abs();
                sum_bound::<T>(i + 2, s)
            })
            .collect(),
        Op::Scan(..) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                let before = init + s;
                s += x.as_f64().abs();
                sum_bound::<T>(i + 2, before)
            })
            .collect(),
        Op::Seg(..) => offsets
            .windows(2)
            .map(|w| sum_bound::<T>(w[1] - w[0] + 1, init + magnitude(&a[w[0]..w[1]])))
            .collect(),
        _ => Vec::new(),
    }
}

/// `n` random elements, generated in parallel chunks (each from its own
/// seed, so the data depends only on the seed and `n`).
fn random<X: Send>(n: usize, seed: u64, make: fn(&mut Rng) -> X) -> Vec<X> {
    const CHUNK: usize = 1 << 20;
    let chunks = n.div_ceil(CHUNK);
    let mut parts: Vec<Vec<X>> = (0..chunks).map(|_| Vec::new()).collect();
    std::thread::scope(|scope| {
        let threads = std::thread::available_parallelism().map_or(4, |p| p.get());
        for (t, group) in parts.chunks_mut(chunks.div_ceil(threads).max(1)).enumerate() {
            scope.spawn(move || {
                let per = chunks.div_ceil(threads).max(1);
                for (j, part) in group.iter_mut().enumerate() {
                    let c = t * per + j;
                    let len = CHUNK.min(n - c * CHUNK);
                    let mut rng = Rng::new(seed ^ (c as u64).wrapping_mul(0xD134_2543_DE82_EF95));
                    *part = (0..len).map(|_| make(&mut rng)).collect();
                }
            });
        }
    });
    parts.into_iter().flatten().collect()
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut max_size = usize::MAX;
    let mut only: Option<String> = None;
    let mut only_type: Option<String> = None;
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned();
        match (args[i].as_str(), value) {
            ("--max-size", Some(v)) => match v.parse() {
                Ok(n) => max_size = n,
                Err(_) => {
                    eprintln!("validate: --max-size takes a number, not `{v}`");
                    return ExitCode::from(2);
                }
            },
            ("--only", Some(v)) => only = Some(v),
            ("--type", Some(v)) => only_type = Some(v),
            ("--check-order", _) => {
                return match order::self_check() {
                    Ok(n) if n > 0 => {
                        println!("the GPU-order models: {n} scans and reduces equal the sequential ones");
                        ExitCode::SUCCESS
                    }
                    Ok(_) => {
                        eprintln!("validate: the order check compared nothing");
                        ExitCode::from(1)
                    }
                    Err(e) => {
                        eprintln!("validate: the GPU-order model differs: {e}");
                        ExitCode::from(1)
                    }
                };
            }
            (other, _) => {
                eprintln!("validate: unknown argument `{other}` (--max-size N, --only PROVIDER, --type T, --check-order)");
                return ExitCode::from(2);
            }
        }
        i += 2;
    }
    let gpu = match Gpu::open(0) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("validate: {e}");
            return ExitCode::from(1);
        }
    };
    println!("device: {}", gpu.name());
    let mut tally = Tally::default();
    let started = Instant::now();
    let result = (|| -> Result<(), Error> {
        let only = only.as_deref();
        let want = |t: &str| only_type.as_deref().is_none_or(|o| o == t);
        macro_rules! each {
            ($($t:ident),*) => {$(
                if want(stringify!($t)) {
                    run_type::<$t>(&gpu, max_size, only, &mut tally)?;
                }
            )*};
        }
        each!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);
        Ok(())
    })();
    if let Err(e) = result {
        eprintln!("validate: a GPU call failed: {e}");
        return ExitCode::from(1);
    }
    let (mut passed, mut failed) = (0, 0);
    println!("{:<18} {:>6} {:>6} {:>6}", "provider", "type", "passed", "failed");
    for ((provider, ty), (p, f)) in &tally.counts {
        println!("{provider:<18} {ty:>6} {p:>6} {f:>6}");
        passed += p;
        failed += f;
    }
    println!(
        "{passed} passed, {failed} failed, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if failed > 0 || passed == 0 {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
