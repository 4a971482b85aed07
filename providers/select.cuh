// Native provider: stream compaction (the elements a rule keeps, in order)
// for sm_90, one pass over the data. The rule is `KeepIf` (select: a
// functor `Pred` with `__device__ bool operator()(T x) const`) or
// `KeepFirst` (dedup_by: the first element and each that a functor `Same`,
// `__device__ bool operator()(T later, T earlier) const`, does not find the
// same as the one before it). With a `rejected` array (partition), the
// elements the rule does not keep go there, in order too: the element at
// index i with k kept before it is the (i - k)-th rejected one. Needs
// common.cuh, lookback.cuh and scan.cuh (the tile loads and the tile
// stream's schedule).
//
// A tile stream like the scans' (scan.cuh), with its look-back warp: the
// workers load a tile (cp.async), call the predicate once per element and
// keep the flags and each thread's position in shared memory, publish the
// tile's count; the look-back warp finds the count before the tile (an
// exact integer sum over the tiles before it); an iteration later the
// workers compact the tile's kept elements in place in shared memory and
// store them contiguously. The tile holding the last element writes the
// total count.
//
// Before this, select ran a block per tile, with warp 0's look-back on
// every tile's critical path: 0.92x CUB for 8-byte elements at 2^28 on the
// H200, 70% of the copy ceiling (docs/perf.md).

#ifndef RCB_PROVIDERS_SELECT_CUH
#define RCB_PROVIDERS_SELECT_CUH

namespace rcb {

struct CountSum {
    __device__ __forceinline__ u64 operator()(u64 a, u64 b) const { return a + b; }
};

// Select's rule: the element at `local` of the tile `items`, which starts
// at `global - local` of `input`, is kept where the predicate holds.
template <class Pred>
struct KeepIf {
    Pred pred;
    template <class T>
    __device__ __forceinline__ bool operator()(const T *items, u32 local, const T *input, u64 global) const {
        return pred(items[local]);
    }
};

// dedup_by's rule: the first element is kept, and each one that `same`
// does not find the same as the one before it (Vec::dedup_by's argument
// order: the later one first). A tile's first element reads the one before
// it from global memory; the others read it from the tile.
template <class Same>
struct KeepFirst {
    Same same;
    template <class T>
    __device__ __forceinline__ bool operator()(const T *items, u32 local, const T *input, u64 global) const {
        if (local > 0) return !same(items[local], items[local - 1]);
        return global == 0 || !same(items[0], input[global - 1]);
    }
};

// A select block's storage, in dynamic shared memory (the host launches with
// `manifest::provider::stream_shared_bytes`, which the generated kernels
// assert is enough). Slot k % 3 holds t_k from its load to its stored
// output; flags, before and kept are that tile's; prefix and drawn pass the
// look-back warp's results of iteration k (k % 2) to the iteration after.
template <int BLOCK, int ITEMS, class T>
struct SelectStorage {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int WARPS = BLOCK / 32;
    TileBuffer<TILE, T> buf[3];
    u32 flags[3][BLOCK];   // bit j: the thread's element j is kept
    u32 before[3][BLOCK];  // kept elements of the tile before the thread's
    u32 kept[3];           // kept elements of the tile
    u32 warp_count[WARPS];
    u64 prefix[2];  // kept elements of the tiles before
    u64 drawn[2];
};

template <class Pred>
__device__ __forceinline__ KeepIf<Pred> keep_if(const Pred &pred) {
    return KeepIf<Pred>{pred};
}

template <class Same>
__device__ __forceinline__ KeepFirst<Same> keep_first(const Same &same) {
    return KeepFirst<Same>{same};
}

// The compaction, run by every block of the launch, BLOCK + 32 threads each.
// `state` holds the host's lookback_bytes(tiles) of 16-byte descriptors;
// `count` receives the number of kept elements; `keep` is the rule
// (`KeepIf`, `KeepFirst`); `rejected` (REJECTS: partition) receives the
// elements it does not keep.
template <int BLOCK, int ITEMS, bool REJECTS = false, class T, class Keep>
__device__ __forceinline__ void select(const T *__restrict__ input, u64 n, T *__restrict__ output, u64 *count,
                                       void *state, u32 epoch, const Keep &keep,
                                       T *__restrict__ rejected = nullptr) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 992, "block size");
    static_assert(ITEMS <= 32, "one flag bit per item");
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int WARPS = BLOCK / 32;
    if (blockDim.x != (unsigned)(BLOCK + 32)) __trap();
    typedef SelectStorage<BLOCK, ITEMS, T> Storage;
    Storage &smem = dynamic_storage<Storage>();
    const u64 num_tiles = (n + TILE - 1) / TILE;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    const bool looker = warp == (unsigned)WARPS;
    const LookbackState<u64> st(state, num_tiles, epoch);

    auto valid_of = [&](u64 t) { return n - t * TILE < (u64)TILE ? n - t * TILE : (u64)TILE; };

    auto load = [&](u64 t, int s) { start_tile_load<BLOCK, TILE>(input + t * TILE, valid_of(t), smem.buf[s]); };

    // Workers: tile t has landed in slot s (every worker's copies: a rule
    // may read another thread's element); each thread's flags and position
    // into the slot's, the tile's count into kept[s] and published.
    auto reduce = [&](u64 t, int s) {
        cp_async_wait_all();
        workers_sync<BLOCK>();
        const u64 valid = valid_of(t);
        const u64 first = (u64)threadIdx.x * ITEMS;
        const int mine = items_of_thread<ITEMS>(first, valid);
        u32 flags = 0;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j < mine && keep(smem.buf[s].items, (u32)(first + j), input, t * TILE + first + j)) flags |= 1u << j;
        }
        const u32 selected = __popc(flags);
        u32 incl = selected;
#pragma unroll
        for (unsigned d = 1; d < 32; d *= 2) {
            const u32 other = __shfl_up_sync(0xffffffffu, incl, d);
            if (lane >= d) incl += other;
        }
        if (lane == 31) smem.warp_count[warp] = incl;
        workers_sync<BLOCK>();
        u32 before = incl - selected;
        u32 total = 0;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            const u32 c = smem.warp_count[w];
            if (w < (int)warp) before += c;
            total += c;
        }
        smem.flags[s][threadIdx.x] = flags;
        smem.before[s][threadIdx.x] = before;
        if (threadIdx.x == 0) {
            publish_aggregate(st, t, (u64)total);
            smem.kept[s] = total;
        }
    };

    // The look-back warp: the count before tile t.
    auto look = [&](u64 t, int p) {
        u64 prefix;
        bool has_prefix;
        lookback(st, t, true, (u64)0, prefix, has_prefix, CountSum());
        if (lane == 0) smem.prefix[p] = prefix;
    };

    // Workers: tile t's kept elements compacted in place in slot s (and,
    // REJECTS, the others after them), then stored after the p-th prefix's
    // count (the others after the t * TILE - prefix rejected before).
    auto write = [&](u64 t, int s, int p) {
        const u64 first = (u64)threadIdx.x * ITEMS;
        const u32 flags = smem.flags[s][threadIdx.x];
        const int mine = REJECTS ? items_of_thread<ITEMS>(first, valid_of(t)) : ITEMS;
        T x[ITEMS];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (REJECTS ? j < mine : (flags & (1u << j)) != 0) x[j] = smem.buf[s].items[first + j];
        }
        // Every thread holds its kept elements: the slot takes them compacted.
        workers_sync<BLOCK>();
        u32 at = smem.before[s][threadIdx.x];
        // REJECTS: the slot takes the rejected ones after the tile's kept
        // ones, the thread's after those before it (its first index less
        // the kept ones before it).
        u32 other = REJECTS ? smem.kept[s] + (u32)first - at : 0;
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (flags & (1u << j)) {
                smem.buf[s].items[at++] = x[j];
            } else if (REJECTS && j < mine) {
                smem.buf[s].items[other++] = x[j];
            }
        }
        workers_sync<BLOCK>();
        const u64 out_base = smem.prefix[p];
        const u32 kept = smem.kept[s];
        for (u32 k = threadIdx.x; k < kept; k += BLOCK) output[out_base + k] = smem.buf[s].items[k];
        if (REJECTS) {
            const u64 rejected_base = t * TILE - out_base;
            const u32 valid = (u32)valid_of(t);
            for (u32 k = kept + threadIdx.x; k < valid; k += BLOCK)
                rejected[rejected_base + (k - kept)] = smem.buf[s].items[k];
        }
        if (threadIdx.x == 0 && t + 1 == num_tiles) *count = out_base + kept;
    };

    tile_stream(num_tiles, st.tickets, smem.drawn, looker, load, reduce, write, look);
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SELECT_CUH
