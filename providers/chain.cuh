// Native providers: a `par_iter` chain's map/filter stages fused with the
// fold (chain_reduce), the pick (chain_pick) or the compaction
// (chain_collect) of the values they keep, in one launch that reads the
// input once. Needs common.cuh and reduce.cuh (its Partial, load_partial and
// block_reduce), and for chain_collect lookback.cuh, scan.cuh (the tile
// stream) and select.cuh (its CountSum); a translation unit of any chain
// embeds all five.
//
// Contract with callbacks
// -----------------------
// `stage(x, i, &v)`, `bool operator()(T x, u64 i, R *out) const`, runs the
// chain's stages on one element, i its index in the input: it returns
// whether the element is kept, and then v holds its value. A value not kept
// is never read, combined, picked or stored. The stages are pure
// (common.cuh's contract): chain_collect may run them twice on an element
// it keeps, and takes the second value. `Stage::INDEXED` says whether the
// stages read i (an `enumerate`); where they do not, the index passed may
// be anything.
//
// chain_reduce's `combine`, `R operator()(R a, R b) const`, is folded in
// reduce.cuh's shape (pairwise trees per 16-byte vector, strided per thread,
// warp and block trees, per-block partials folded in block order by the last
// block): the result equals the host's sequential fold of the kept values
// for every combine that is associative and commutative, and is
// deterministic for a given (n, pointer alignment, grid size) otherwise.
// `init`, when given, is applied exactly once, as combine(init, fold), or
// alone when nothing is kept.
//
// chain_pick's `pick`, `bool operator()(R earlier, R later) const`, says
// whether the later of two kept values (the one of the larger index) wins
// over the earlier one. Candidates carry their element's index, so that
// whatever the combining order each comparison gets its operands in index
// order: for a pick that is a consistent "later wins" (`later < earlier`
// gives the first minimum, `!(later < earlier)` the last maximum), the
// result is the one a sequential scan gives. A pick whose order holds only
// identical values equal (`static constexpr bool EQUAL_IS_IDENTICAL =
// true`, vocab::Ties::Identical: `max_by(total_cmp)`, an integer's `max`)
// gets the same value whichever of two equal ones it keeps: it runs as
// chain_reduce's fold of `pick(a, b) ? b : a`, its candidates carrying no
// index (the result's index is zero).
//
// chain_collect has no combine (its callback's combine thunk exists and is
// never called): it stores the kept values in input order, as many as it
// counts, and writes the count.
//
// Kernel shapes
// -------------
// chain_reduce and chain_pick: reduce.cuh's. One launch; each block writes
// one partial; the last block to arrive (threadfence + atomic counter) folds
// them and resets the counter to zero. The result is a record: the value,
// whether there is one (and, for a pick, its index).
//
// chain_collect: select.cuh's tile stream (scan.cuh's `tile_stream`, with
// its look-back warp summing the tile counts before each tile). The workers
// load a tile (cp.async), run the stages on each element once, publish the
// tile's count and, once every worker has read its elements, compact what
// the tile keeps at the start of its slot in shared memory; an iteration
// later they store it contiguously (coalesced) after the count of the tiles
// before. What is compacted depends on the types: where an R takes no more
// room than a T (f32 -> bool, i64 -> i8, u32 -> f32) the values themselves,
// so that each stage runs once; where it takes more (f32 -> f64, u8 -> u32)
// the kept values of a tile would not fit in its slot, so the kept elements
// are compacted and the stages run again on each as it is stored: a slot
// sized for R instead would take up to 8x the shared memory (190 KB a block
// for f32 -> f64 at select's 31 items), one block a multiprocessor. Stages
// that read the index (INDEXED) then need each kept element's position in
// its tile too: two bytes an item more (KEEP_POSITIONS). The tile holding
// the last element writes the total count.

#ifndef RCB_PROVIDERS_CHAIN_CUH
#define RCB_PROVIDERS_CHAIN_CUH

namespace rcb {

// chain_reduce's partials and result: reduce.cuh's (value, has) partial,
// 8 bytes for values of up to 4 bytes, 16 for 8-byte values.
template <class R>
using ChainPartial = Partial<R>;

// chain_pick's partials and result: the winner, whether there is one, and
// its element's index. 16 bytes for values of up to 4 bytes, 32 for 8-byte
// values, whole 16-byte words for a composite.
template <class R>
struct alignas(16) PickPartial {
    R value;
    u32 has;
    u64 index;
};

// A pick partial written by another block, read whole from L2 (L1 is not
// coherent): 16-byte accesses (one or two for a scalar R).
template <class R>
__device__ __forceinline__ PickPartial<R> load_pick_partial(const PickPartial<R> *p) {
    constexpr int WORDS = (int)(sizeof(PickPartial<R>) / 16);
    static_assert(WORDS * 16 == sizeof(PickPartial<R>) && WORDS >= 1, "a pick partial is whole 16-byte words");
    union {
        PickPartial<R> partial;
        uint4 u4[WORDS];
    } bits;
#pragma unroll
    for (int w = 0; w < WORDS; ++w) bits.u4[w] = __ldcg(reinterpret_cast<const uint4 *>(p) + w);
    return bits.partial;
}

// (va, ia, ha) := the winner of candidates a and b (either may be empty).
// The earlier one is the pick's first operand whichever side it is on.
template <class R, class Pick>
__device__ __forceinline__ void pick_into(R &va, u64 &ia, bool &ha, R vb, u64 ib, const Pick &pick) {
    bool take_b = true;
    if (ha) {
        const bool b_is_later = ia < ib;
        const bool later_wins = b_is_later ? pick(va, vb) : pick(vb, va);
        take_b = b_is_later == later_wins;
    }
    if (take_b) {
        va = vb;
        ia = ib;
    }
    ha = true;
}

// The kept values of one 16-byte vector, folded as a pairwise tree
// (fold_vector's shape); returns whether any was kept, and its fold in out.
// `at` is the index of the vector's first element.
template <class T, class R, class Stage, class Combine>
__device__ __forceinline__ bool fold_kept(const Vec16<T> &v, u64 at, R &out, const Stage &stage,
                                          const Combine &combine) {
    constexpr int N = VecWidth<T>::N;
    R t[N];
    bool k[N];
#pragma unroll
    for (int i = 0; i < N; ++i) k[i] = stage(v.v[i], at + (u64)i, &t[i]);
#pragma unroll
    for (int width = 1; width < N; width *= 2) {
#pragma unroll
        for (int i = 0; i + width < N; i += 2 * width) {
            if (k[i + width]) {
                t[i] = k[i] ? combine(t[i], t[i + width]) : t[i + width];
                k[i] = true;
            }
        }
    }
    out = t[0];
    return k[0];
}

// The winner among the kept values of one 16-byte vector, by a pairwise
// tree whose left operand is always the earlier; returns whether any was
// kept, the winner in out and its position in the vector in slot. `at` is
// the index of the vector's first element.
template <class T, class R, class Stage, class Pick>
__device__ __forceinline__ bool pick_kept(const Vec16<T> &v, u64 at, R &out, int &slot, const Stage &stage,
                                          const Pick &pick) {
    constexpr int N = VecWidth<T>::N;
    R t[N];
    bool k[N];
    int s[N];
#pragma unroll
    for (int i = 0; i < N; ++i) {
        k[i] = stage(v.v[i], at + (u64)i, &t[i]);
        s[i] = i;
    }
#pragma unroll
    for (int width = 1; width < N; width *= 2) {
#pragma unroll
        for (int i = 0; i + width < N; i += 2 * width) {
            if (k[i + width] && (!k[i] || pick(t[i], t[i + width]))) {
                t[i] = t[i + width];
                s[i] = s[i + width];
            }
            k[i] = k[i] || k[i + width];
        }
    }
    out = t[0];
    slot = s[0];
    return k[0];
}

// Warp tree of pick candidates; lane 0 ends with the warp's winner.
template <class R, class Pick>
__device__ __forceinline__ void warp_pick(R &value, u64 &index, bool &has, const Pick &pick) {
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset >>= 1) {
        const R other = shfl_down(value, offset);
        const u64 other_index = shfl_down(index, offset);
        const int other_has = __shfl_down_sync(0xffffffffu, has ? 1 : 0, offset);
        if (other_has && lane + offset < 32u) pick_into(value, index, has, other, other_index, pick);
    }
}

// Block tree of pick candidates; thread 0 ends with the block's winner.
// Callers that use it twice must separate the calls by a __syncthreads().
template <int BLOCK, class R, class Pick>
__device__ __forceinline__ void block_pick(R &value, u64 &index, bool &has, const Pick &pick) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "block size");
    constexpr int WARPS = BLOCK / 32;
    __shared__ R warp_value[WARPS];
    __shared__ u64 warp_index[WARPS];
    __shared__ int warp_has[WARPS];
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    warp_pick(value, index, has, pick);
    if (lane == 0) {
        warp_value[warp] = value;
        warp_index[warp] = index;
        warp_has[warp] = has ? 1 : 0;
    }
    __syncthreads();
    if (warp == 0) {
        has = lane < (unsigned)WARPS && warp_has[lane] != 0;
        if (has) {
            value = warp_value[lane];
            index = warp_index[lane];
        }
        warp_pick(value, index, has, pick);
    }
}

// Publishes thread 0's `partial` as the block's and says whether this block
// arrived last (then every partial is visible to it). Block-uniform.
template <class P>
__device__ __forceinline__ bool arrive_last(const P &partial, P *partials, u32 *counter) {
    __shared__ bool is_last_block;
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = partial;
        // Release: the partial is visible device-wide before the count.
        __threadfence();
        const u32 arrived = atomicAdd(counter, 1u);
        is_last_block = arrived == gridDim.x - 1;
        // Acquire: with the barrier below, the last block sees every partial.
        __threadfence();
    }
    __syncthreads();
    return is_last_block;
}

// The first PARTIAL_LOADS of a thread's partials are loaded before any is
// folded, as reduce.cuh does: the last block waits for one round trip to L2.
constexpr int CHAIN_PARTIAL_LOADS = 4;

// A chain_reduce partial, or a pick's, read whole from L2.
template <class R>
__device__ __forceinline__ ChainPartial<R> load_chain_partial(const ChainPartial<R> *p) {
    return load_partial(p);
}
template <class R>
__device__ __forceinline__ PickPartial<R> load_chain_partial(const PickPartial<R> *p) {
    return load_pick_partial(p);
}

// The fold, by `combine`, of the values the stages keep, in reduce.cuh's
// shape: partials of type P (`value` and `has` read and written, any other
// field zero), the last block to arrive folding them. Returns true in the
// one thread that holds the total in (acc, has): thread 0 of that block.
template <int BLOCK, int VEC_UNROLL, class T, class R, class P, class Stage, class Combine>
__device__ __forceinline__ bool chain_fold(const T *__restrict__ input, u64 n, P *partials, u32 *counter,
                                           const Stage &stage, const Combine &combine, R &acc, bool &has) {
    static_assert(VEC_UNROLL >= 1, "unroll");
    if (blockDim.x != (unsigned)BLOCK) {
        // The launch does not match the compiled block size: fail loudly.
        __trap();
    }
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK;

    has = false;
    if constexpr (!Vectorized<T>::value) {
        // A composite element: a strided subset of the elements,
        // VEC_UNROLL loads in flight, in index order.
        for_each_strided<VEC_UNROLL>(input, n, tid, stride, [&](const T &e, u64 j) {
            R x;
            if (stage(e, j, &x)) fold_into(acc, has, x, combine);
        });
    } else {
        constexpr int N = VecWidth<T>::N;
        const auto [head, nvec, tail_start, nscalar] = split_vectors<N>(input, n);
        const T *__restrict__ vinput = input + head;
        u64 i = tid;
        if (i < nvec) {
            // The first vector seeds the accumulator: when the stages keep every
            // element, `has` is true from here on and the loop carries no flag.
            has = fold_kept(load16(vinput + i * N), head + i * N, acc, stage, combine);
            i += stride;
            for (; i + (u64)(VEC_UNROLL - 1) * stride < nvec; i += (u64)VEC_UNROLL * stride) {
                Vec16<T> v[VEC_UNROLL];
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) v[u] = load16(vinput + (i + (u64)u * stride) * N);
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) {
                    R x;
                    if (fold_kept(v[u], head + (i + (u64)u * stride) * N, x, stage, combine))
                        fold_into(acc, has, x, combine);
                }
            }
            for (; i < nvec; i += stride) {
                R x;
                if (fold_kept(load16(vinput + i * N), head + i * N, x, stage, combine)) fold_into(acc, has, x, combine);
            }
        }
        if (tid < nscalar) {
            const u64 j = tid < head ? tid : tail_start + (tid - head);
            R x;
            if (stage(input[j], j, &x)) fold_into(acc, has, x, combine);
        }
    }

    block_reduce<BLOCK>(acc, has, combine);

    // One block (small inputs): its fold is the total.
    bool last = gridDim.x == 1;
    if (!last) {
        P p{};
        p.value = acc;
        p.has = has ? 1u : 0u;
        if (!arrive_last(p, partials, counter)) return false;
        // Fixed order: thread t folds partials t, t + BLOCK, ..., then the
        // same tree as above, so the result depends only on the grid size.
        has = false;
        P q[CHAIN_PARTIAL_LOADS];
#pragma unroll
        for (int u = 0; u < CHAIN_PARTIAL_LOADS; ++u) {
            const unsigned b = threadIdx.x + (unsigned)u * BLOCK;
            if (b < gridDim.x) q[u] = load_chain_partial(partials + b);
        }
#pragma unroll
        for (int u = 0; u < CHAIN_PARTIAL_LOADS; ++u) {
            const unsigned b = threadIdx.x + (unsigned)u * BLOCK;
            if (b < gridDim.x && q[u].has != 0u) fold_into(acc, has, q[u].value, combine);
        }
        for (unsigned b = threadIdx.x + CHAIN_PARTIAL_LOADS * BLOCK; b < gridDim.x; b += BLOCK) {
            const P r = load_chain_partial(partials + b);
            if (r.has != 0u) fold_into(acc, has, r.value, combine);
        }
        block_reduce<BLOCK>(acc, has, combine);
        if (threadIdx.x == 0) *counter = 0u;  // ready for the next launch
    }
    return threadIdx.x == 0;
}

// BLOCK threads per block; VEC_UNROLL 16-byte loads of T in flight per
// thread per iteration. `partials` holds at least gridDim.x entries.
template <int BLOCK, int VEC_UNROLL, class T, class R, class Stage, class Combine>
__device__ __forceinline__ void chain_reduce(const T *__restrict__ input, u64 n, R init, u32 has_init,
                                             ChainPartial<R> *partials, u32 *counter, ChainPartial<R> *output,
                                             const Stage &stage, const Combine &combine) {
    R acc;
    bool has;
    if (!chain_fold<BLOCK, VEC_UNROLL>(input, n, partials, counter, stage, combine, acc, has)) return;
    ChainPartial<R> result;
    if (has_init != 0u) {
        result.value = has ? combine(init, acc) : init;
        result.has = 1u;
    } else {
        result.value = has ? acc : R();
        result.has = has ? 1u : 0u;
    }
    *output = result;
}

// Whether a pick's order holds only identical values equal (its
// `static constexpr bool EQUAL_IS_IDENTICAL = true`: vocab::Ties::Identical).
template <class Pick>
__host__ __device__ constexpr auto equal_is_identical(int) -> decltype(Pick::EQUAL_IS_IDENTICAL, bool()) {
    return Pick::EQUAL_IS_IDENTICAL;
}
template <class Pick>
__host__ __device__ constexpr bool equal_is_identical(long) {
    return false;
}

// A pick as a fold, for an order that holds only identical values equal:
// whichever of two equal values it keeps is the same value, so the
// operands' order does not matter and no index is carried.
template <class R, class Pick>
struct PickByValue {
    Pick pick;
    __device__ __forceinline__ R operator()(R a, R b) const { return pick(a, b) ? b : a; }
};

// chain_pick where equal values may differ: each candidate carries its
// element's index.
template <int BLOCK, int VEC_UNROLL, class T, class R, class Stage, class Pick>
__device__ __forceinline__ void chain_pick_by_position(const T *__restrict__ input, u64 n,
                                                       PickPartial<R> *partials, u32 *counter,
                                                       PickPartial<R> *output, const Stage &stage,
                                                       const Pick &pick) {
    static_assert(VEC_UNROLL >= 1, "unroll");
    if (blockDim.x != (unsigned)BLOCK) {
        // The launch does not match the compiled block size: fail loudly.
        __trap();
    }
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK;

    // A thread meets its vectors in index order, so its winner so far is
    // always the earlier operand: no index comparison in the loop.
    R acc;
    u64 at = 0;
    bool has = false;
    if constexpr (!Vectorized<T>::value) {
        // A composite element: a strided subset of the elements,
        // VEC_UNROLL loads in flight, in index order.
        for_each_strided<VEC_UNROLL>(input, n, tid, stride, [&](const T &e, u64 j) {
            R x;
            if (stage(e, j, &x) && (!has || pick(acc, x))) {
                acc = x;
                at = j;
                has = true;
            }
        });
    } else {
        constexpr int N = VecWidth<T>::N;
        const auto [head, nvec, tail_start, nscalar] = split_vectors<N>(input, n);
        const T *__restrict__ vinput = input + head;
        u64 i = tid;
        if (i < nvec) {
            int slot;
            has = pick_kept(load16(vinput + i * N), head + i * N, acc, slot, stage, pick);
            at = head + i * N + (u64)slot;
            i += stride;
            for (; i + (u64)(VEC_UNROLL - 1) * stride < nvec; i += (u64)VEC_UNROLL * stride) {
                Vec16<T> v[VEC_UNROLL];
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) v[u] = load16(vinput + (i + (u64)u * stride) * N);
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) {
                    R x;
                    int s;
                    if (pick_kept(v[u], head + (i + (u64)u * stride) * N, x, s, stage, pick) &&
                        (!has || pick(acc, x))) {
                        acc = x;
                        at = head + (i + (u64)u * stride) * N + (u64)s;
                        has = true;
                    }
                }
            }
            for (; i < nvec; i += stride) {
                R x;
                int s;
                if (pick_kept(load16(vinput + i * N), head + i * N, x, s, stage, pick) && (!has || pick(acc, x))) {
                    acc = x;
                    at = head + i * N + (u64)s;
                    has = true;
                }
            }
        }
        if (tid < nscalar) {
            // A head element precedes the thread's vectors, a tail one follows.
            const u64 j = tid < head ? tid : tail_start + (tid - head);
            R x;
            if (stage(input[j], j, &x)) pick_into(acc, at, has, x, j, pick);
        }
    }

    block_pick<BLOCK>(acc, at, has, pick);

    bool last = gridDim.x == 1;
    if (!last) {
        PickPartial<R> p;
        p.value = acc;
        p.has = has ? 1u : 0u;
        p.index = at;
        if (!arrive_last(p, partials, counter)) return;
        has = false;
        PickPartial<R> q[CHAIN_PARTIAL_LOADS];
#pragma unroll
        for (int u = 0; u < CHAIN_PARTIAL_LOADS; ++u) {
            const unsigned b = threadIdx.x + (unsigned)u * BLOCK;
            if (b < gridDim.x) q[u] = load_pick_partial(partials + b);
        }
#pragma unroll
        for (int u = 0; u < CHAIN_PARTIAL_LOADS; ++u) {
            const unsigned b = threadIdx.x + (unsigned)u * BLOCK;
            if (b < gridDim.x && q[u].has != 0u) pick_into(acc, at, has, q[u].value, q[u].index, pick);
        }
        for (unsigned b = threadIdx.x + CHAIN_PARTIAL_LOADS * BLOCK; b < gridDim.x; b += BLOCK) {
            const PickPartial<R> r = load_pick_partial(partials + b);
            if (r.has != 0u) pick_into(acc, at, has, r.value, r.index, pick);
        }
        block_pick<BLOCK>(acc, at, has, pick);
        if (threadIdx.x == 0) *counter = 0u;  // ready for the next launch
    }
    if (threadIdx.x == 0) {
        PickPartial<R> result;
        result.value = has ? acc : R();
        result.has = has ? 1u : 0u;
        result.index = has ? at : 0ull;
        *output = result;
    }
}

// BLOCK threads per block; VEC_UNROLL 16-byte loads of T in flight per
// thread per iteration. `partials` holds at least gridDim.x entries.
template <int BLOCK, int VEC_UNROLL, class T, class R, class Stage, class Pick>
__device__ __forceinline__ void chain_pick(const T *__restrict__ input, u64 n, PickPartial<R> *partials,
                                           u32 *counter, PickPartial<R> *output, const Stage &stage,
                                           const Pick &pick) {
    if constexpr (equal_is_identical<Pick>(0)) {
        R acc;
        bool has;
        if (!chain_fold<BLOCK, VEC_UNROLL>(input, n, partials, counter, stage, PickByValue<R, Pick>{pick}, acc, has))
            return;
        PickPartial<R> result{};
        result.value = has ? acc : R();
        result.has = has ? 1u : 0u;
        *output = result;
    } else {
        chain_pick_by_position<BLOCK, VEC_UNROLL>(input, n, partials, counter, output, stage, pick);
    }
}

// chain_collect's block storage, in dynamic shared memory (the host
// launches with `manifest::provider::stream_shared_bytes`, which the
// generated kernels assert is enough). Slot k % 3 holds t_k from its load to
// its stored output: first the tile's elements, then, compacted at its
// start, the values it keeps (VALUES_IN_SLOT: an R takes no more room than a
// T) or else the elements it keeps; kept is that tile's count; prefix and
// drawn pass the look-back warp's results of iteration k (k % 2) to the
// iteration after; where the stages read the index (INDEXED) and the kept
// elements are staged again, pos[k % 3] holds their positions in t_k. Its
// size depends on T alone, but for pos (`manifest::provider::tile_stream_bytes`).
template <int BLOCK, int ITEMS, class T, class R, bool INDEXED>
struct CollectStorage {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int WARPS = BLOCK / 32;
    static constexpr bool VALUES_IN_SLOT = sizeof(R) <= sizeof(T);
    static constexpr bool KEEP_POSITIONS = INDEXED && !VALUES_IN_SLOT;
    static_assert(TILE <= 65536, "a position in a tile is 16 bits");
    union Slot {
        TileBuffer<TILE, T> tile;
        R values[VALUES_IN_SLOT ? TILE : 1];
    };
    Slot buf[3];
    u16 pos[KEEP_POSITIONS ? 3 : 1][KEEP_POSITIONS ? TILE : 1];
    u32 kept[3];
    u32 warp_count[WARPS];
    u64 prefix[2];
    u64 drawn[2];
};

// The compaction of the values the stages keep, run by every block of the
// launch, BLOCK + 32 threads each. `state` holds the host's
// lookback_bytes(tiles) of 16-byte descriptors; `output` has room for n
// values; `count` receives the number kept.
template <int BLOCK, int ITEMS, class T, class R, class Stage>
__device__ __forceinline__ void chain_collect(const T *__restrict__ input, u64 n, R *__restrict__ output,
                                              u64 *count, void *state, u32 epoch, const Stage &stage) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 992, "block size");
    static_assert(ITEMS <= 32, "one flag bit per item");
    typedef CollectStorage<BLOCK, ITEMS, T, R, Stage::INDEXED> Storage;
    constexpr int TILE = Storage::TILE;
    constexpr int WARPS = Storage::WARPS;
    constexpr bool IN_SLOT = Storage::VALUES_IN_SLOT;
    constexpr bool POSITIONS = Storage::KEEP_POSITIONS;
    if (blockDim.x != (unsigned)(BLOCK + 32)) __trap();
    Storage &smem = dynamic_storage<Storage>();
    const u64 num_tiles = (n + TILE - 1) / TILE;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    const bool looker = warp == (unsigned)WARPS;
    const LookbackState<u64> st(state, num_tiles, epoch);

    auto valid_of = [&](u64 t) { return n - t * TILE < (u64)TILE ? n - t * TILE : (u64)TILE; };

    auto load = [&](u64 t, int s) { start_tile_load<BLOCK, TILE>(input + t * TILE, valid_of(t), smem.buf[s].tile); };

    // Workers: tile t has landed in slot s; the stages on each element, the
    // tile's count published and into kept[s], and what it keeps compacted
    // at the start of the slot.
    auto reduce = [&](u64 t, int s) {
        cp_async_wait_all();
        workers_sync<BLOCK>();
        const u64 valid = valid_of(t);
        const u64 first = (u64)threadIdx.x * ITEMS;
        const int mine = items_of_thread<ITEMS>(first, valid);
        T x[ITEMS];
        R v[ITEMS];
        u32 flags = 0;  // bit j: the thread's element j is kept
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j < mine) {
                x[j] = smem.buf[s].tile.items[first + j];
                R value;
                if (stage(x[j], t * TILE + first + j, &value)) {
                    v[j] = value;
                    flags |= 1u << j;
                }
            }
        }
        const u32 selected = __popc(flags);
        u32 incl = selected;
#pragma unroll
        for (unsigned d = 1; d < 32; d *= 2) {
            const u32 other = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= d) incl += other;
        }
        if (lane == 31) smem.warp_count[warp] = incl;
        // Past this barrier every worker has read its elements: the slot
        // takes the compacted ones.
        workers_sync<BLOCK>();
        u32 at = incl - selected;
        u32 total = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            const u32 c = smem.warp_count[w];
            if (w < (int)warp) at += c;
            total += c;
        }
        if (threadIdx.x == 0) {
            publish_aggregate(st, t, (u64)total);
            smem.kept[s] = total;
        }
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (flags & (1u << j)) {
                if (IN_SLOT) {
                    smem.buf[s].values[at] = v[j];
                } else {
                    smem.buf[s].tile.items[at] = x[j];
                    if (POSITIONS) smem.pos[s][at] = (u16)(first + j);
                }
                ++at;
            }
        }
    };

    // The look-back warp: the count before tile t.
    auto look = [&](u64 t, int p) {
        u64 prefix;
        bool has_prefix;
        lookback(st, t, true, (u64)0, prefix, has_prefix, CountSum());
        if (lane == 0) smem.prefix[p] = prefix;
    };

    // Workers: tile t's kept values, compacted in slot s, stored after the
    // p-th prefix's count.
    auto write = [&](u64 t, int s, int p) {
        const u64 out_base = smem.prefix[p];
        const u32 kept = smem.kept[s];
        for (u32 k = threadIdx.x; k < kept; k += BLOCK) {
            if (IN_SLOT) {
                output[out_base + k] = smem.buf[s].values[k];
            } else {
                // A kept element: the stages keep it again, with its value
                // (at its index, where they read it).
                const u64 i = POSITIONS ? t * TILE + smem.pos[s][k] : 0;
                R value;
                (void)stage(smem.buf[s].tile.items[k], i, &value);
                output[out_base + k] = value;
            }
        }
        if (threadIdx.x == 0 && t + 1 == num_tiles) *count = out_base + kept;
    };

    tile_stream(num_tiles, st.tickets, smem.drawn, looker, load, reduce, write, look);
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_CHAIN_CUH
