//! The GPUs of one host as one: [`GpuSet`] runs each provider over
//! [`Sharded`] data, a shard a GPU, with the callbacks compiled once for
//! the call site (the same cubin serves every device of one architecture).
//! The host's part of each call (how shards combine, the sample sort's
//! splitters and exchange) is [`crate::shard`]'s, tested on the CPU.

use super::{backend, DeviceElement, DeviceVec, Error, ErrorKind, Gpu};
use crate::shard::{self, Place};
use core::cmp::Ordering;
use core::panic::Location;
extern crate std;

use std::format;
use std::string::String;
use std::sync::Mutex;
use std::vec;
use std::vec::Vec;

type Site = &'static Location<'static>;

/// Several GPUs of this host, each with a stream of its own: the devices
/// of [`GpuSet::open`]'s list, in order, a shard each. A device may be
/// listed more than once (its shards then run side by side on its
/// streams, and the sort's exchange between them is a copy); data moves
/// between distinct devices through NCCL, loaded at the first sort that
/// needs it (`RMIR_EXCHANGE=nccl` sends the moves within a device
/// through NCCL too, which checks its path on one GPU).
///
/// Every provider call of a [`Gpu`] that needs no data of another shard
/// runs on each shard at once (`transform`, `transform2`, `select`,
/// `partition`, `segmented_reduce` on segments each inside one shard);
/// the others combine the shards' partial results on the host, in shard
/// order, with the user's own closure (`reduce`, the scans' carries,
/// `dedup_by`'s boundaries) or by adding counts (`histogram`), or
/// exchange data (`sort_by`, `sort_by_key`, `sort`, `sort_unstable`: a
/// sample sort). For a given shard
/// layout the result is the same bits on every run; with one shard it is
/// the single [`Gpu`]'s.
///
/// ```no_run
/// use native::gpu::GpuSet;
/// let gpus = GpuSet::open_all()?;
/// let x = gpus.scatter(&vec![1.5f32; 1 << 20])?;
/// let y = gpus.transform(&x, |v: f32| v * 2.0)?;
/// let s: f32 = gpus.reduce(&y, 0.0, |a: f32, b: f32| a + b)?;
/// let sorted = gpus.sort_by(&y, |a: &f32, b: &f32| a.total_cmp(b))?.gather()?;
/// # let _ = (s, sorted);
/// # Ok::<(), native::gpu::Error>(())
/// ```
pub struct GpuSet {
    gpus: Vec<Gpu>,
    /// NCCL's communicators over the distinct devices, made at the first
    /// exchange between two of them.
    comms: Mutex<Option<backend::Comms>>,
}

/// Data split over the GPUs of a [`GpuSet`], shard `k` on its GPU `k`:
/// made by [`GpuSet::scatter`] and its kin, or as a call's result. The
/// elements in order are the shards' in shard order.
pub struct Sharded<T> {
    shards: Vec<DeviceVec<T>>,
}

impl<T: DeviceElement> Sharded<T> {
    /// Each shard's length.
    pub fn lengths(&self) -> Vec<usize> {
        self.shards.iter().map(DeviceVec::len).collect()
    }

    /// Elements in all shards.
    pub fn len(&self) -> usize {
        self.shards.iter().map(DeviceVec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(|s| s.len() == 0)
    }

    /// The shards, in order: each an input of its own GPU's calls.
    pub fn shards(&self) -> &[DeviceVec<T>] {
        &self.shards
    }

    pub fn into_shards(self) -> Vec<DeviceVec<T>> {
        self.shards
    }

    /// Every element, in order, on the host.
    pub fn gather(&self) -> Result<Vec<T>, Error> {
        let mut out = Vec::with_capacity(self.len());
        let mut part = Vec::new();
        for s in &self.shards {
            s.to_vec_into(&mut part)?;
            out.extend_from_slice(&part);
        }
        Ok(out)
    }
}

/// An error of shard `k`'s call, naming its device.
fn on_shard(k: usize, ordinal: usize, e: Error) -> Error {
    Error {
        kind: e.kind,
        message: format!("shard {k} on device {ordinal}: {}", e.message),
    }
}

fn mismatch(message: String) -> Error {
    Error {
        kind: ErrorKind::Mismatch,
        message,
    }
}

impl GpuSet {
    /// The devices `ordinals`, in order, a shard each (at least one).
    pub fn open(ordinals: &[usize]) -> Result<GpuSet, Error> {
        if ordinals.is_empty() {
            return Err(mismatch("a GpuSet of no devices".into()));
        }
        let gpus = ordinals
            .iter()
            .map(|&o| Gpu::open(o)?.stream())
            .collect::<Result<Vec<Gpu>, Error>>()?;
        Ok(GpuSet {
            gpus,
            comms: Mutex::new(None),
        })
    }

    /// Every device the driver reports, in ordinal order.
    pub fn open_all() -> Result<GpuSet, Error> {
        let n = backend::device_count()?;
        if n == 0 {
            return Err(Error {
                kind: ErrorKind::NoDevice,
                message: "the driver reports no CUDA device".into(),
            });
        }
        GpuSet::open(&(0..n).collect::<Vec<_>>())
    }

    /// How many shards (GPUs, with repeats) the set has.
    pub fn len(&self) -> usize {
        self.gpus.len()
    }

    pub fn is_empty(&self) -> bool {
        self.gpus.is_empty()
    }

    /// The GPU of shard `k`.
    pub fn gpu(&self, k: usize) -> &Gpu {
        &self.gpus[k]
    }

    /// Each shard's device ordinal.
    pub fn ordinals(&self) -> Vec<usize> {
        self.gpus
            .iter()
            .map(|g| backend::ordinal(&g.device))
            .collect()
    }

    /// Waits for every call of every shard.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.each(|_, g| g.synchronize())?;
        Ok(())
    }

    /// `host` split evenly over the shards (the first ones one longer).
    pub fn scatter<T: DeviceElement>(&self, host: &[T]) -> Result<Sharded<T>, Error> {
        self.scatter_by(host, &shard::even_lengths(host.len(), self.len()))
    }

    /// `host` split into shards of `lengths` (one for each GPU, summing to
    /// its length).
    pub fn scatter_by<T: DeviceElement>(
        &self,
        host: &[T],
        lengths: &[usize],
    ) -> Result<Sharded<T>, Error> {
        if lengths.len() != self.len() || lengths.iter().sum::<usize>() != host.len() {
            return Err(mismatch(format!(
                "scatter_by: {} lengths summing to {} for {} GPUs and {} elements",
                lengths.len(),
                lengths.iter().sum::<usize>(),
                self.len(),
                host.len()
            )));
        }
        let at = shard::starts(lengths);
        let shards = self.each(|k, g| g.upload(&host[at[k]..at[k + 1]]))?;
        Ok(Sharded { shards })
    }

    /// `host` split with each segment of `offsets` (ascending boundaries
    /// from 0 to its length, as [`Gpu::segmented_reduce`] takes) whole in
    /// one shard, each shard as close to an even share as whole segments
    /// allow: the layout [`GpuSet::segmented_reduce`] takes.
    pub fn scatter_segments<T: DeviceElement>(
        &self,
        host: &[T],
        offsets: &[usize],
    ) -> Result<Sharded<T>, Error> {
        match shard::segment_lengths(offsets, self.len()) {
            Some((lengths, _)) if offsets.last() == Some(&host.len()) => {
                self.scatter_by(host, &lengths)
            }
            _ => Err(mismatch(format!(
                "scatter_segments: the offsets must ascend from 0 to the data's length, {}",
                host.len()
            ))),
        }
    }

    /// Runs `f` for each shard's GPU, on a thread each where there are
    /// several, and returns the results in shard order: the first error,
    /// with its shard and device named, fails the call.
    fn each<R: Send>(
        &self,
        f: impl Fn(usize, &Gpu) -> Result<R, Error> + Sync,
    ) -> Result<Vec<R>, Error> {
        let named =
            |k: usize, g: &Gpu| f(k, g).map_err(|e| on_shard(k, backend::ordinal(&g.device), e));
        if self.gpus.len() == 1 {
            return Ok(vec![named(0, &self.gpus[0])?]);
        }
        let results: Vec<Result<R, Error>> = std::thread::scope(|scope| {
            let handles: Vec<_> = self
                .gpus
                .iter()
                .enumerate()
                .map(|(k, g)| {
                    let named = &named;
                    scope.spawn(move || named(k, g))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(Error {
                            kind: ErrorKind::Device,
                            message: "a shard's thread panicked".into(),
                        })
                    })
                })
                .collect()
        });
        results.into_iter().collect()
    }

    /// That `data` has one shard for each GPU, on it.
    fn check<T>(&self, what: &str, data: &Sharded<T>) -> Result<(), Error> {
        if data.shards.len() != self.len() {
            return Err(mismatch(format!(
                "{what}: data of {} shards for a GpuSet of {} GPUs",
                data.shards.len(),
                self.len()
            )));
        }
        for (k, (s, g)) in data.shards.iter().zip(&self.gpus).enumerate() {
            let (on, of) = (
                backend::alloc_ordinal(&s.alloc),
                backend::ordinal(&g.device),
            );
            if on != of {
                return Err(mismatch(format!(
                    "{what}: shard {k} lies on device {on}, its GPU is device {of}"
                )));
            }
        }
        Ok(())
    }

    /// `op` of each element ([`Gpu::transform`]), shard by shard.
    #[track_caller]
    #[inline(never)]
    pub fn transform<T, U, F>(&self, data: &Sharded<T>, op: F) -> Result<Sharded<U>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        F: Fn(T) -> U + Sync,
    {
        let site = Location::caller();
        self.check("transform", data)?;
        let shards = self.each(|k, g| g.transform_at(site, &data.shards[k], &op))?;
        Ok(Sharded { shards })
    }

    /// `op` of each pair of elements ([`Gpu::transform2`]): the inputs
    /// must have the same shard lengths.
    #[track_caller]
    #[inline(never)]
    pub fn transform2<T, U, V, F>(
        &self,
        a: &Sharded<T>,
        b: &Sharded<U>,
        op: F,
    ) -> Result<Sharded<V>, Error>
    where
        T: DeviceElement,
        U: DeviceElement,
        V: DeviceElement,
        F: Fn(T, U) -> V + Sync,
    {
        let site = Location::caller();
        self.check("transform2", a)?;
        self.check("transform2", b)?;
        let shards = self.each(|k, g| g.transform2_at(site, &a.shards[k], &b.shards[k], &op))?;
        Ok(Sharded { shards })
    }

    /// The elements `pred` keeps, in order ([`Gpu::select`]): each shard's
    /// stay on its GPU (the result's lengths are the kept counts).
    #[track_caller]
    #[inline(never)]
    pub fn select<T, P>(&self, data: &Sharded<T>, pred: P) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        P: Fn(T) -> bool + Sync,
    {
        let site = Location::caller();
        self.check("select", data)?;
        let shards = self.each(|k, g| g.select_at(site, &data.shards[k], &pred))?;
        Ok(Sharded { shards })
    }

    /// `data` folded with `op` from `init` ([`Gpu::reduce`]): each shard
    /// folded on its GPU (the first non-empty one from `init`, the others
    /// from their first element), then the shards' values combined with
    /// `op` on the host, from the left in shard order. `op` must be
    /// associative and commutative, as for [`Gpu::reduce`]; the result is
    /// the same bits on every run of one shard layout.
    #[track_caller]
    #[inline(never)]
    pub fn reduce<T, F>(&self, data: &Sharded<T>, init: T, op: F) -> Result<T, Error>
    where
        T: DeviceElement,
        F: Fn(T, T) -> T + Sync,
    {
        let site = Location::caller();
        self.check("reduce", data)?;
        let first = data.shards.iter().position(|s| !s.is_empty());
        let partials = self.each(|k, g| {
            let s = &data.shards[k];
            if s.is_empty() {
                return Ok(None);
            }
            let value = if Some(k) == first {
                g.reduce_at(site, s, init, &op)?
            } else {
                g.reduce_at(site, &s.slice(1..), s.get(0)?, &op)?
            };
            Ok(Some(value))
        })?;
        Ok(shard::combine(init, &partials, &op))
    }

    /// The elements with each run that `same` finds the same reduced to
    /// its first ([`Gpu::dedup_by`]): each shard on its GPU, then a
    /// shard's first element dropped where `same` (on the host) finds it
    /// the same as the last element of the shard before it.
    #[track_caller]
    #[inline(never)]
    pub fn dedup_by<T, E>(&self, data: &Sharded<T>, same: E) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        E: Fn(&T, &T) -> bool + Sync,
    {
        let site = Location::caller();
        self.check("dedup_by", data)?;
        // The element before each shard's first, where there is one.
        let mut before: Vec<Option<T>> = Vec::with_capacity(self.len());
        let mut last = None;
        for s in &data.shards {
            before.push(last);
            if !s.is_empty() {
                last = Some(s.get(s.len() - 1)?);
            }
        }
        let shards = self.each(|k, g| {
            let s = &data.shards[k];
            let kept = g.dedup_by_at(site, s, &same)?;
            match before[k] {
                Some(prev) if !kept.is_empty() && same(&s.get(0)?, &prev) => {
                    g.copy(&kept.slice(1..))
                }
                _ => Ok(kept),
            }
        })?;
        Ok(Sharded { shards })
    }

    /// The elements `pred` keeps and those it rejects, each in order
    /// ([`Gpu::partition`]): both halves stay on each shard's GPU.
    #[track_caller]
    #[inline(never)]
    pub fn partition<T, P>(
        &self,
        data: &Sharded<T>,
        pred: P,
    ) -> Result<(Sharded<T>, Sharded<T>), Error>
    where
        T: DeviceElement,
        P: Fn(&T) -> bool + Sync,
    {
        let site = Location::caller();
        self.check("partition", data)?;
        let halves = self.each(|k, g| g.partition_at(site, &data.shards[k], &pred))?;
        let (kept, rejected) = halves.into_iter().unzip();
        Ok((Sharded { shards: kept }, Sharded { shards: rejected }))
    }

    /// Counts of the elements in each of `bins` bins ([`Gpu::histogram`]):
    /// each shard counted on its GPU, the counts added on the host, the
    /// result on the first GPU.
    #[track_caller]
    #[inline(never)]
    pub fn histogram<T, F>(
        &self,
        data: &Sharded<T>,
        bins: usize,
        bin: F,
    ) -> Result<DeviceVec<u64>, Error>
    where
        T: DeviceElement,
        F: Fn(T) -> usize + Sync,
    {
        let site = Location::caller();
        self.check("histogram", data)?;
        let counts =
            self.each(|k, g| g.histogram_at(site, &data.shards[k], bins, &bin)?.to_vec())?;
        let mut total = vec![0u64; bins];
        for c in &counts {
            for (t, n) in total.iter_mut().zip(c) {
                *t += n;
            }
        }
        self.gpus[0].upload(&total)
    }

    /// Every prefix of `data` folded with `op` ([`Gpu::inclusive_scan`]):
    /// each shard scanned on its GPU; then each shard after the first
    /// scanned again from its carry, the earlier shards' totals folded
    /// with `op` on the host, in shard order (two passes over every shard
    /// but the first). `op` must be associative.
    #[track_caller]
    #[inline(never)]
    pub fn inclusive_scan<T, F>(&self, data: &Sharded<T>, op: F) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        F: Fn(T, T) -> T + Sync,
    {
        let site = Location::caller();
        self.check("inclusive_scan", data)?;
        let last = self.len() - 1;
        let scanned = self.each(|k, g| {
            let out = g.inclusive_scan_at(site, &data.shards[k], None, &op)?;
            let total = match out.len() {
                0 => None,
                n if k < last => Some(out.get(n - 1)?),
                _ => None,
            };
            Ok((out, total))
        })?;
        let totals: Vec<Option<T>> = scanned.iter().map(|(_, t)| *t).collect();
        let carries = shard::carries(&totals, &op);
        // Each later shard scanned again from its carry, in place of its
        // first scan.
        let again = self.each(|k, g| {
            carries[k]
                .map(|c| g.inclusive_scan_at(site, &data.shards[k], Some(&c), &op))
                .transpose()
        })?;
        let shards = scanned
            .into_iter()
            .zip(again)
            .map(|((first, _), again)| again.unwrap_or(first))
            .collect();
        Ok(Sharded { shards })
    }

    /// Every prefix before an element, from `init` ([`Gpu::exclusive_scan`]):
    /// each shard's total first (a scan of the shard after its first
    /// element, from it), the seeds folded from `init` with `op` on the
    /// host in shard order, then each shard scanned from its seed. `op`
    /// must be associative.
    #[track_caller]
    #[inline(never)]
    pub fn exclusive_scan<T, F>(
        &self,
        data: &Sharded<T>,
        init: T,
        op: F,
    ) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        F: Fn(T, T) -> T + Sync,
    {
        let site = Location::caller();
        self.check("exclusive_scan", data)?;
        let last = self.len() - 1;
        let totals = self.each(|k, g| {
            let s = &data.shards[k];
            if k == last || s.is_empty() {
                return Ok(None);
            }
            let first = s.get(0)?;
            if s.len() == 1 {
                return Ok(Some(first));
            }
            let before = g.exclusive_scan_at(site, &s.slice(1..), first, &op)?;
            Ok(Some(op(before.get(before.len() - 1)?, s.get(s.len() - 1)?)))
        })?;
        let seeds = shard::seeds(init, &totals, &op);
        let shards = self.each(|k, g| g.exclusive_scan_at(site, &data.shards[k], seeds[k], &op))?;
        Ok(Sharded { shards })
    }

    /// One fold from `init` per segment ([`Gpu::segmented_reduce`]):
    /// `offsets` are the whole data's boundaries, and each segment must
    /// lie inside one shard ([`GpuSet::scatter_segments`] lays data out
    /// so); shard `k`'s result holds its segments' values, in order.
    #[track_caller]
    #[inline(never)]
    pub fn segmented_reduce<T, F>(
        &self,
        data: &Sharded<T>,
        offsets: &[usize],
        init: T,
        op: F,
    ) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        F: Fn(T, T) -> T + Sync,
    {
        let site = Location::caller();
        self.check("segmented_reduce", data)?;
        let lengths = data.lengths();
        if offsets.windows(2).any(|w| w[0] > w[1])
            || offsets.last().is_some_and(|&o| o > data.len())
        {
            return Err(mismatch(format!(
                "segmented_reduce: the offsets must ascend inside the data's {} elements",
                data.len()
            )));
        }
        let owner = shard::segment_shards(offsets, &lengths).map_err(|(i, k)| {
            mismatch(format!(
                "segmented_reduce: segment {i} ({}..{}) crosses the end of shard {k}: a GpuSet \
                 reduces each segment inside one shard (GpuSet::scatter_segments lays data out so)",
                offsets[i],
                offsets[i + 1]
            ))
        })?;
        let at = shard::starts(&lengths);
        self.each(|k, g| {
            let mine: Vec<usize> = (0..owner.len()).filter(|&i| owner[i] == k).collect();
            let (Some(&a), Some(&b)) = (mine.first(), mine.last()) else {
                return g.alloc::<T>(0);
            };
            let local: Vec<usize> = offsets[a..=b + 1].iter().map(|o| o - at[k]).collect();
            g.segmented_reduce_at(site, &data.shards[k], &local, init, &op)
        })
        .map(|shards| Sharded { shards })
    }

    /// The elements stably sorted by `compare`, a total order
    /// ([`Gpu::sort_by`]): a sample sort. Each shard is sorted on its GPU;
    /// splitters are chosen from regular samples of the sorted shards
    /// (compared on the host with `compare`, ties by position); each
    /// shard is cut at them, the buckets exchanged (NCCL between distinct
    /// devices, a copy within one), and each GPU sorts what it received.
    /// The result's shards have the buckets' lengths, near even.
    #[track_caller]
    #[inline(never)]
    pub fn sort_by<T, C>(&self, data: &Sharded<T>, compare: C) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        C: Fn(&T, &T) -> Ordering + Sync,
    {
        let site = Location::caller();
        self.check("sort_by", data)?;
        self.sample_sort(site, data, &compare, &compare)
    }

    /// The elements stably sorted by `key` ([`Gpu::sort_by_key`]): the
    /// sample sort of [`GpuSet::sort_by`], its splitters compared by
    /// `key` on the host.
    #[track_caller]
    #[inline(never)]
    pub fn sort_by_key<T, K, F>(&self, data: &Sharded<T>, key: F) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        K: Ord,
        F: Fn(&T) -> K + Sync,
    {
        let site = Location::caller();
        self.check("sort_by_key", data)?;
        let by_key = |a: &T, b: &T| key(a).cmp(&key(b));
        self.sample_sort(site, data, &key, &by_key)
    }

    /// The elements in ascending order, stably ([`Gpu::sort`]): the sample
    /// sort of [`GpuSet::sort_by`] with the element type's own order.
    #[track_caller]
    #[inline(never)]
    pub fn sort<T: DeviceElement + Ord>(&self, data: &Sharded<T>) -> Result<Sharded<T>, Error> {
        self.sort_natural(Location::caller(), "sort", data)
    }

    /// The elements in ascending order ([`Gpu::sort_unstable`]): for
    /// integers, what [`GpuSet::sort`] gives.
    #[track_caller]
    #[inline(never)]
    pub fn sort_unstable<T: DeviceElement + Ord>(
        &self,
        data: &Sharded<T>,
    ) -> Result<Sharded<T>, Error> {
        self.sort_natural(Location::caller(), "sort_unstable", data)
    }

    /// `sort` and `sort_unstable` at `site`: the comparator is the
    /// compiler's, with no environment.
    fn sort_natural<T: DeviceElement + Ord>(
        &self,
        site: Site,
        what: &str,
        data: &Sharded<T>,
    ) -> Result<Sharded<T>, Error> {
        self.check(what, data)?;
        self.sample_sort(site, data, &(), &|a: &T, b: &T| a.cmp(b))
    }

    /// The sample sort of the call at `site`, whose callback (`C`, the
    /// comparator or key function) each GPU's sort runs; `order` is the
    /// same order on the host.
    fn sample_sort<T, C>(
        &self,
        site: Site,
        data: &Sharded<T>,
        callback: &C,
        order: &(impl Fn(&T, &T) -> Ordering + Sync),
    ) -> Result<Sharded<T>, Error>
    where
        T: DeviceElement,
        C: Sync,
    {
        let sort = |g: &Gpu, input: &DeviceVec<T>| g.sort_at(site, input, callback);
        let sorted = self.each(|k, g| sort(g, &data.shards[k]))?;
        let parts = self.len();
        if parts == 1 {
            return Ok(Sharded { shards: sorted });
        }
        // Splitters from every shard's regular samples.
        let per = shard::samples_per_shard(parts);
        let samples = self.each(|k, _| {
            shard::sample_indices(sorted[k].len(), per)
                .into_iter()
                .map(|i| Ok((sorted[k].get(i)?, Place { shard: k, index: i })))
                .collect::<Result<Vec<_>, Error>>()
        })?;
        let splitters = shard::splitters(samples.concat(), parts, order);
        // Each shard cut at them: a round of reads for each halving.
        let cuts = self.each(|k, _| {
            let s = &sorted[k];
            shard::cuts(
                s.len(),
                k,
                &splitters,
                |mids| mids.iter().map(|&i| s.get(i)).collect(),
                order,
            )
        })?;
        let (lengths, transfers) = shard::exchange(&cuts);
        // Bucket j goes to GPU j (fewer buckets than GPUs where the
        // samples gave fewer splitters: the rest stay empty).
        let received = self.each(|j, g| g.alloc::<T>(lengths.get(j).copied().unwrap_or(0)))?;
        let size = size_of::<T>();
        let moves: Vec<backend::Move<'_>> = transfers
            .iter()
            .map(|t| {
                (
                    (
                        &sorted[t.from].alloc,
                        t.from_start * size,
                        self.gpus[t.from].lane,
                    ),
                    (
                        &received[t.to].alloc,
                        t.to_start * size,
                        self.gpus[t.to].lane,
                    ),
                    t.len * size,
                )
            })
            .collect();
        self.exchange(&moves)?;
        drop(sorted);
        // Each GPU's runs, in shard order, sorted stably into one.
        let shards = self.each(|j, g| sort(g, &received[j]))?;
        Ok(Sharded { shards })
    }

    /// Makes the exchange's moves: copies within a device; NCCL between
    /// distinct ones, its communicators made the first time.
    fn exchange(&self, moves: &[backend::Move<'_>]) -> Result<(), Error> {
        let devices: Vec<backend::Device> = self.gpus.iter().map(|g| g.device).collect();
        let mut comms = self.comms.lock().unwrap_or_else(|p| p.into_inner());
        backend::exchange(&mut comms, &devices, moves)
    }
}
