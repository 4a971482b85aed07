//! The GPU scans' combining order on the host (providers/scan.cuh and
//! providers/lookback.cuh, in docs/providers.md's notation), so that float
//! scans are checked bit for bit: every output is the same tree of `op`
//! calls as the kernel's, which depends only on the index, the length and
//! the tile (`block` threads × `items` elements).
//!
//! Within a tile each thread folds its `items` consecutive elements
//! serially (l_j); a Kogge-Stone scan (KS) combines the threads' totals
//! across each warp; warp totals fold serially. Across tiles the prefix P_i
//! of tile i combines, in this order, the hyper-tile prefix HI_{h-1} (h =
//! i / 1024), the KS of the super-tile aggregates before it in its
//! hyper-tile, and the KS of the tile aggregates before it in its
//! super-tile (i / 32).

/// x := op(x, y), either side possibly absent.
fn combine<T: Copy>(x: Option<T>, y: Option<T>, op: &impl Fn(T, T) -> T) -> Option<T> {
    match (x, y) {
        (Some(a), Some(b)) => Some(op(a, b)),
        (None, y) => y,
        (x, None) => x,
    }
}

/// The Kogge-Stone inclusive scan of up to 32 lanes (common.cuh's
/// `warp_inclusive_scan` with every given lane present).
fn ks<T: Copy>(lanes: &[T], op: &impl Fn(T, T) -> T) -> Vec<T> {
    let mut v = lanes.to_vec();
    let mut d = 1;
    while d < 32 {
        let before = v.clone();
        for lane in d..v.len() {
            v[lane] = op(before[lane - d], v[lane]);
        }
        d *= 2;
    }
    v
}

/// The GPU's inclusive scan of `data`.
pub fn inclusive_scan<T: Copy>(
    data: &[T],
    block: usize,
    items: usize,
    op: impl Fn(T, T) -> T,
) -> Vec<T> {
    scan(data, None, block, items, &op)
}

/// The GPU's exclusive scan of `data` with the seed `init`.
pub fn exclusive_scan<T: Copy>(
    data: &[T],
    init: T,
    block: usize,
    items: usize,
    op: impl Fn(T, T) -> T,
) -> Vec<T> {
    scan(data, Some(init), block, items, &op)
}

/// One tile's thread-level values: each thread's serial prefixes (l), and
/// its thread prefix TP (the warps before, then the lanes before); the
/// tile's aggregate.
struct Tile<T> {
    l: Vec<T>,
    tp: Vec<Option<T>>,
    aggregate: T,
}

fn tile_values<T: Copy>(
    elems: &[T],
    block: usize,
    items: usize,
    op: &impl Fn(T, T) -> T,
) -> Tile<T> {
    let valid = elems.len();
    let mut l = Vec::with_capacity(valid);
    let mut totals: Vec<Option<T>> = Vec::with_capacity(block);
    for thread in 0..block {
        let first = thread * items;
        let mut acc: Option<T> = None;
        for &x in elems.iter().take(valid.min(first + items)).skip(first) {
            let y = match acc {
                Some(a) => op(a, x),
                None => x,
            };
            l.push(y);
            acc = Some(y);
        }
        totals.push(acc);
    }
    // Present threads are a prefix of the block, so present lanes are a
    // prefix of each warp.
    let mut warp_total: Vec<Option<T>> = Vec::new();
    let mut lane_before: Vec<Option<T>> = Vec::with_capacity(block);
    for warp in totals.chunks(32) {
        let present: Vec<T> = warp.iter().map_while(|t| *t).collect();
        let incl = ks(&present, op);
        for lane in 0..warp.len() {
            lane_before.push(if lane > 0 && lane < present.len() {
                Some(incl[lane - 1])
            } else {
                None
            });
        }
        warp_total.push(incl.last().copied());
    }
    let mut tp = Vec::with_capacity(block);
    for thread in 0..block {
        let mut acc: Option<T> = None;
        for w in warp_total.iter().take(thread / 32) {
            acc = combine(acc, *w, op);
        }
        tp.push(combine(acc, lane_before[thread], op));
    }
    let aggregate = warp_total
        .iter()
        .fold(None, |acc, w| combine(acc, *w, op))
        .expect("a tile has an element");
    Tile { l, tp, aggregate }
}

fn scan<T: Copy>(
    data: &[T],
    seed: Option<T>,
    block: usize,
    items: usize,
    op: &impl Fn(T, T) -> T,
) -> Vec<T> {
    let tile_len = block * items;
    let tiles: Vec<Tile<T>> = data
        .chunks(tile_len)
        .map(|c| tile_values(c, block, items, op))
        .collect();
    let a: Vec<T> = tiles.iter().map(|t| t.aggregate).collect();
    // SA_s for each whole super-tile; HI_h for each whole hyper-tile.
    let sa: Vec<T> = a.chunks_exact(32).map(|s| ks(s, op)[31]).collect();
    let mut hi: Vec<Option<T>> = Vec::new();
    let mut before = seed;
    for h in sa.chunks_exact(32) {
        before = combine(before, Some(ks(h, op)[31]), op);
        hi.push(before);
    }
    let mut out = Vec::with_capacity(data.len());
    for (i, t) in tiles.iter().enumerate() {
        let (s, r, h, q) = (i / 32, i % 32, i / 1024, (i / 32) % 32);
        let hp = if h == 0 { seed } else { hi[h - 1] };
        let r_s = (q > 0).then(|| ks(&sa[s - q..s], op)[q - 1]);
        let q_i = (r > 0).then(|| ks(&a[i - r..i], op)[r - 1]);
        let prefix = combine(combine(hp, r_s, op), q_i, op);
        for thread in 0..block {
            let first = thread * items;
            let mine = t.l.len().min(first + items).saturating_sub(first);
            let fp = combine(prefix, t.tp[thread], op);
            for j in 0..mine {
                let y = match seed {
                    // Exclusive: a seed makes every prefix present.
                    Some(_) => {
                        let fp = fp.expect("a seed");
                        if j == 0 {
                            fp
                        } else {
                            op(fp, t.l[first + j - 1])
                        }
                    }
                    None => match fp {
                        Some(fp) => op(fp, t.l[first + j]),
                        None => t.l[first + j],
                    },
                };
                out.push(y);
            }
        }
    }
    out
}

/// Where and how a reduce ran: what its combining order depends on
/// besides the length (providers/reduce.cuh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FoldShape {
    /// Blocks in the grid.
    pub grid: usize,
    /// Threads a block.
    pub block: usize,
    /// The input's device address modulo 16: the elements before the
    /// first 16-byte boundary are read one by one.
    pub misalignment: usize,
}

/// The GPU's reduce of `data` from `init` (providers/reduce.cuh): thread
/// `t` of the grid folds the 16-byte vectors `t`, `t + threads`, … in
/// order (each a pairwise tree), then at most one scalar of the unaligned
/// head or the tail; warps combine by a shuffle tree, warp totals by the
/// same tree in warp 0; each block's total is a partial, and thread `t` of
/// the last block folds partials `t`, `t + block`, … before the same block
/// tree; `init` comes once, first.
pub fn reduce<T: Copy>(data: &[T], init: T, shape: FoldShape, op: impl Fn(T, T) -> T) -> T {
    let op = &op;
    let threads = shape.grid * shape.block;
    let thread_fold = |t: usize| fold_share(data, shape.misalignment, t, threads, op);
    let partials: Vec<Option<T>> = (0..shape.grid)
        .map(|b| {
            let lanes: Vec<Option<T>> = (0..shape.block)
                .map(|t| thread_fold(b * shape.block + t))
                .collect();
            block_reduce(&lanes, op)
        })
        .collect();
    let total = if shape.grid == 1 {
        partials[0]
    } else {
        let lanes: Vec<Option<T>> = (0..shape.block)
            .map(|t| {
                partials
                    .iter()
                    .skip(t)
                    .step_by(shape.block)
                    .fold(None, |acc, p| combine(acc, *p, op))
            })
            .collect();
        block_reduce(&lanes, op)
    };
    combine(Some(init), total, op).expect("init is present")
}

/// The GPU's segmented reduce (providers/segmented_reduce.cuh): segment
/// `s` is `data[offsets[s]..offsets[s + 1]]`, folded as [`reduce`] folds
/// one block's share, by a warp (every segment, when none is longer than
/// `WARP_SEGMENT_LIMIT`) or by a block of `block` threads, its vectors
/// aligned from the segment's own address; `init` comes once, first.
pub fn segmented_reduce<T: Copy>(
    data: &[T],
    offsets: &[usize],
    init: T,
    block: usize,
    misalignment: usize,
    op: impl Fn(T, T) -> T,
) -> Vec<T> {
    let op = &op;
    let size = std::mem::size_of::<T>();
    let longest = offsets.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0);
    let per_block = longest as u64 > manifest::provider::WARP_SEGMENT_LIMIT;
    let lanes = if per_block { block } else { 32 };
    offsets
        .windows(2)
        .map(|w| {
            let address = misalignment + w[0] * size;
            let folds: Vec<Option<T>> = (0..lanes)
                .map(|rank| fold_share(&data[w[0]..w[1]], address, rank, lanes, op))
                .collect();
            let total = if per_block {
                block_reduce(&folds, op)
            } else {
                warp_reduce(&folds, op)
            };
            combine(Some(init), total, op).expect("init is present")
        })
        .collect()
}

/// What thread `rank` of `lanes` folds of `data`, which starts at an
/// address `misalignment` past a 16-byte boundary (segmented_reduce.cuh's
/// `fold_range`; reduce.cuh's loop is the same with one scalar a thread at
/// most, and no thread has more): the 16-byte vectors `rank`,
/// `rank + lanes`, … in order, each a pairwise tree, then the unaligned
/// head's and the tail's scalars `rank`, `rank + lanes`, ….
fn fold_share<T: Copy>(
    data: &[T],
    misalignment: usize,
    rank: usize,
    lanes: usize,
    op: &impl Fn(T, T) -> T,
) -> Option<T> {
    let size = std::mem::size_of::<T>();
    let width = 16 / size;
    let n = data.len();
    let head = ((16 - misalignment % 16) % 16 / size).min(n);
    let nvec = (n - head) / width;
    let tail_start = head + nvec * width;
    let nscalar = head + (n - tail_start);
    let mut acc = None;
    for i in (rank..nvec).step_by(lanes) {
        let at = head + i * width;
        acc = combine(acc, Some(fold_vector(&data[at..at + width], op)), op);
    }
    for k in (rank..nscalar).step_by(lanes) {
        let j = if k < head { k } else { tail_start + (k - head) };
        acc = combine(acc, Some(data[j]), op);
    }
    acc
}

/// common.cuh's `fold_vector`: `((v0 v1) (v2 v3)) …`.
fn fold_vector<T: Copy>(v: &[T], op: &impl Fn(T, T) -> T) -> T {
    let mut t = v.to_vec();
    let mut width = 1;
    while width < t.len() {
        let mut i = 0;
        while i + width < t.len() {
            t[i] = op(t[i], t[i + width]);
            i += 2 * width;
        }
        width *= 2;
    }
    t[0]
}

/// reduce.cuh's `warp_reduce` over 32 lanes (absent ones skipped): lane 0's
/// value after the shuffle tree.
fn warp_reduce<T: Copy>(lanes: &[Option<T>], op: &impl Fn(T, T) -> T) -> Option<T> {
    let mut v: Vec<Option<T>> = lanes.to_vec();
    v.resize(32, None);
    for offset in [16, 8, 4, 2, 1] {
        let before = v.clone();
        for lane in 0..32 - offset {
            if before[lane + offset].is_some() {
                v[lane] = combine(v[lane], before[lane + offset], op);
            }
        }
    }
    v[0]
}

/// reduce.cuh's `block_reduce`: each warp's tree, then the warps' totals
/// by the same tree in warp 0.
fn block_reduce<T: Copy>(lanes: &[Option<T>], op: &impl Fn(T, T) -> T) -> Option<T> {
    let warps: Vec<Option<T>> = lanes.chunks(32).map(|w| warp_reduce(w, op)).collect();
    warp_reduce(&warps, op)
}

/// The reduce's block size for `size`-byte elements, as the build's
/// tuning table has it.
pub fn reduce_block(size: u32) -> usize {
    let facts = manifest::provider::launch_facts(
        manifest::Provider::Reduce,
        manifest::Stage::Main,
        &signature(size),
    );
    facts.block_size as usize
}

fn signature(size: u32) -> manifest::Signature {
    manifest::Signature::fold(match size {
        1 => manifest::Scalar::U8,
        2 => manifest::Scalar::U16,
        4 => manifest::Scalar::U32,
        _ => manifest::Scalar::U64,
    })
}

/// The scans' tile for `size`-byte elements, as the build's tuning table
/// has it (`manifest::provider::launch_facts`): (threads, items a thread).
pub fn tile(size: u32) -> (usize, usize) {
    let facts = manifest::provider::launch_facts(
        manifest::Provider::InclusiveScan,
        manifest::Stage::Main,
        &signature(size),
    );
    (facts.block_size as usize, facts.items_per_thread as usize)
}

/// `validate --check-order` (no GPU): the model against the sequential scan
/// for associative operations, where every tree gives the sequential
/// result, over sizes across the tile, super-tile and hyper-tile edges, on
/// the tuning's tiles and on small ones (which reach 2^10 tiles quickly).
/// The operations: a wrapping sum with a constant (each input combined
/// exactly once), and `(a, b) -> b` (operands in index order). Returns the
/// number of comparisons, or the first difference.
pub fn self_check() -> Result<usize, String> {
    let mut checked = 0;
    let add = |a: u32, b: u32| a.wrapping_add(b).wrapping_add(3);
    let right = |_a: u32, b: u32| b;
    for (block, items) in [tile(4), tile(8), tile(1), (32, 1), (64, 3)] {
        let t = block * items;
        // Hyper-tiles (1024 tiles) only with the small tiles: the check
        // runs in debug builds.
        let sizes = [
            0,
            1,
            31,
            32,
            33,
            t - 1,
            t,
            t + 1,
            32 * t - 1,
            32 * t + 1,
            1024 * t + 5,
            2048 * t + 77,
        ];
        let sizes = if t > 256 { &sizes[..10] } else { &sizes[..] };
        for &n in sizes {
            let data: Vec<u32> = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
                .collect();
            let seq_incl: Vec<u32> = data
                .iter()
                .scan(None, |acc: &mut Option<u32>, &x| {
                    let y = acc.map_or(x, |a| add(a, x));
                    *acc = Some(y);
                    Some(y)
                })
                .collect();
            let seq_excl = |op: &dyn Fn(u32, u32) -> u32| -> Vec<u32> {
                data.iter()
                    .scan(7u32, |acc, &x| {
                        let before = *acc;
                        *acc = op(*acc, x);
                        Some(before)
                    })
                    .collect()
            };
            let runs = [
                (
                    "inclusive sum",
                    inclusive_scan(&data, block, items, add),
                    seq_incl.clone(),
                ),
                (
                    "inclusive right",
                    inclusive_scan(&data, block, items, right),
                    data.clone(),
                ),
                (
                    "exclusive sum",
                    exclusive_scan(&data, 7, block, items, add),
                    seq_excl(&add),
                ),
                (
                    "exclusive right",
                    exclusive_scan(&data, 7, block, items, right),
                    seq_excl(&right),
                ),
            ];
            for (what, got, want) in runs {
                if got != want {
                    let i = got
                        .iter()
                        .zip(&want)
                        .position(|(a, b)| a != b)
                        .unwrap_or(got.len().min(want.len()));
                    return Err(format!(
                        "{what}, {block} x {items} tiles, n = {n}: element {i} differs ({} outputs, {} expected)",
                        got.len(),
                        want.len()
                    ));
                }
                checked += 1;
            }
        }
    }
    checked += fold_self_check()?;
    checked += segments_self_check()?;
    Ok(checked)
}

/// The segmented reduce model against each segment's sequential fold, for
/// the wrapping sum with a constant: segments of a warp and of a block
/// (one longer than `WARP_SEGMENT_LIMIT`), empty ones, every misalignment.
fn segments_self_check() -> Result<usize, String> {
    let mut checked = 0;
    let add = |a: u32, b: u32| a.wrapping_add(b).wrapping_add(3);
    let limit = manifest::provider::WARP_SEGMENT_LIMIT as usize;
    let short = [0, 1, 0, 3, 5, 33, 64, 100, 1000, 2, 0];
    let long = [7, limit + 1, 0, 31, 3 * limit + 5, 4];
    for block in [reduce_block(4), 64] {
        for misalignment in [0, 4, 8, 12] {
            for lengths in [&short[..], &long[..]] {
                let mut offsets = vec![0];
                for len in lengths {
                    offsets.push(offsets.last().unwrap() + len);
                }
                let n = *offsets.last().unwrap();
                let data: Vec<u32> = (0..n as u32)
                    .map(|i| i.wrapping_mul(2_654_435_761) >> 5)
                    .collect();
                let want: Vec<u32> = offsets
                    .windows(2)
                    .map(|w| data[w[0]..w[1]].iter().fold(11u32, |acc, &x| add(acc, x)))
                    .collect();
                let got = segmented_reduce(&data, &offsets, 11, block, misalignment, add);
                if got != want {
                    return Err(format!(
                        "segmented reduce, block {block}, misalignment {misalignment}, \
                         segments {lengths:?}: {got:?}, the sequential folds {want:?}"
                    ));
                }
                checked += 1;
            }
        }
    }
    Ok(checked)
}

/// The reduce model against the sequential fold for a wrapping sum with a
/// constant (associative and commutative, and each element combined
/// exactly once, `init` too), over grids of one block and of many (partials
/// folded by the last block, more partials than its threads too), the
/// tuning's block and small ones, every misalignment of 4-byte elements,
/// and sizes across the head, the vectors and the tail.
fn fold_self_check() -> Result<usize, String> {
    let mut checked = 0;
    let add = |a: u32, b: u32| a.wrapping_add(b).wrapping_add(3);
    for block in [reduce_block(4), 32, 64] {
        for grid in [1, 2, 7, block + 3, 3 * block] {
            for misalignment in [0, 4, 8, 12] {
                let threads = grid * block;
                for n in [
                    0,
                    1,
                    2,
                    3,
                    5,
                    31,
                    33,
                    4 * threads - 1,
                    4 * threads + 5,
                    9 * threads + 2,
                ] {
                    let data: Vec<u32> = (0..n as u32)
                        .map(|i| i.wrapping_mul(2_654_435_761) >> 5)
                        .collect();
                    let want = data.iter().fold(11u32, |acc, &x| add(acc, x));
                    let shape = FoldShape {
                        grid,
                        block,
                        misalignment,
                    };
                    let got = reduce(&data, 11, shape, add);
                    if got != want {
                        return Err(format!(
                            "reduce, {shape:?}, n = {n}: {got}, the sequential fold {want}"
                        ));
                    }
                    checked += 1;
                }
            }
        }
    }
    Ok(checked)
}
