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

/// The scans' tile for `size`-byte elements, as the build's tuning table
/// has it (`manifest::provider::launch_facts`): (threads, items a thread).
pub fn tile(size: u32) -> (usize, usize) {
    let signature = manifest::Signature::fold(match size {
        1 => manifest::Scalar::U8,
        2 => manifest::Scalar::U16,
        4 => manifest::Scalar::U32,
        _ => manifest::Scalar::U64,
    });
    let facts = manifest::provider::launch_facts(
        manifest::Provider::InclusiveScan,
        manifest::Stage::Main,
        &signature,
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
    Ok(checked)
}
