// Native provider: inclusive and exclusive scans of T for sm_90, one pass
// over the data (decoupled look-back, lookback.cuh), parameterised by a
// functor `Op` with `__device__ T operator()(T a, T b) const`. Needs
// common.cuh and lookback.cuh.
//
// Contract with callbacks
// -----------------------
// The result equals the host's sequential scan for every associative `op`;
// commutativity is not needed (operands are always combined in index order).
// For other ops (a float sum among them) the result is the same bits on every
// run of the same input: each output is a combination of the inputs before
// it in a shape that depends only on its index (`docs/providers.md` spells it
// out).
//
// Kernel shape (`tile_stream`, which select.cuh runs too): one launch of
// resident blocks that take tiles of BLOCK *
// ITEMS elements in order from a ticket counter, with BLOCK worker threads
// and one more warp, the look-back warp, so a block is launched with BLOCK
// + 32 threads (`LaunchFacts::threads`). The workers load tiles (cp.async),
// reduce them and write their outputs; the look-back warp runs each tile's
// look-back and draws the block's tickets. Iteration k of a block, with
// t_k its k-th ticket and three tile slots (k % 3):
//
//   look-back warp   look-back of t_k (its aggregate published at k - 1),
//                    then draw t_k+2
//   workers          start loading t_k+1 (drawn at k - 1), write t_k-1's
//                    outputs, wait for t_k+1, reduce it, publish its
//                    aggregate
//   barrier (the whole block)
//
// so a tile's look-back overlaps the loads, the reduction and the outputs
// of the tiles around it. A drawn tile's aggregate never waits for a
// look-back: it is drawn after its block's look-back of t_k and loaded and
// reduced in iteration k + 1, which has no block barrier before its end.
// (Tiles that waited on look-backs before their aggregate convoyed, 1.4x
// slower on the H200; with the look-back warp 2^28 i32 scans run at 1.27x
// CUB, 76% of the copy ceiling: docs/perf.md.)
//
// Every tile waits only for tiles of smaller index, which were taken
// earlier by blocks that are running, so the launch cannot deadlock
// whatever the grid and however many of its blocks are resident. Each block
// draws exactly one ticket past the last tile, so the launch draws
// num_tiles + gridDim.x tickets, and the block that draws the last one
// resets the counter for the next launch (no other block draws after it).
// The look-back state is sized by the host
// (`runtime::dispatch::lookback_bytes`) and never cleared between launches
// (epochs).
//
// Within a tile: each thread takes ITEMS consecutive elements of the tile in
// shared memory and scans them serially (l_j), a Kogge-Stone warp scan
// combines the threads' totals, warp totals combine serially, and the tile's
// prefix P comes from the look-back:
//
//   thread prefix   TP = op(WP_w, WX_t)       WP_w: warps before, WX_t: lanes before
//   full prefix     FP = op(P, TP)
//   inclusive       out_j = op(FP, l_j)
//   exclusive       out_0 = FP, out_j = op(FP, l_j-1), with the seed `init`
//                   as the prefix of tile 0
//   seeded          an inclusive scan given a seed (`seeded`: a shard's
//                   carry from the shards before it) takes it as tile 0's
//                   prefix too; an exclusive scan is always seeded

#ifndef RCB_PROVIDERS_SCAN_CUH
#define RCB_PROVIDERS_SCAN_CUH

namespace rcb {

// One tile of elements in shared memory.
template <int TILE, class T>
union TileBuffer {
    T items[TILE];
    uint4 vectors[(TILE * sizeof(T) + 15) / 16];
};

// A block's storage, in dynamic shared memory (a scan's three tiles exceed
// the 48 KB a kernel may declare statically): the host launches with
// `manifest::provider::stream_shared_bytes`, which the generated kernels
// assert is enough. Traps when the launch gave less.
template <class S>
__device__ __forceinline__ S &dynamic_storage() {
    extern __shared__ uint4 rcb_dynamic_shared[];
    u32 bytes;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    if (bytes < sizeof(S)) __trap();
    return *reinterpret_cast<S *>(rcb_dynamic_shared);
}

__device__ __forceinline__ void cp_async16(void *shared, const void *global) {
    u32 to;
    asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(to) : "l"(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
}

// Every cp.async of this thread has landed (a barrier then shows them to
// the block).
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Starts loading the `valid` elements of the tile at `in` into `buf`
// (warp-striped: coalesced): asynchronously, as 16-byte vectors, when the
// tile is whole and aligned; otherwise with plain loads.
template <int BLOCK, int TILE, class T>
__device__ __forceinline__ void start_tile_load(const T *__restrict__ in, u64 valid, TileBuffer<TILE, T> &buf) {
    // Whole 16-byte vectors: every scalar tile, and a composite's (any
    // size) when its bytes divide into them.
    constexpr u64 BYTES = (u64)TILE * sizeof(T);
    if (valid == (u64)TILE && aligned16(in) && (BYTES % 16) == 0) {
        constexpr int VECS = (int)(BYTES / 16);
        const uint4 *v = reinterpret_cast<const uint4 *>(in);
#pragma unroll
        for (int k = 0; k < (VECS + BLOCK - 1) / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if (idx < VECS) cp_async16(&buf.vectors[idx], v + idx);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    } else {
#pragma unroll 4
        for (int k = 0; k < TILE / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if ((u64)idx < valid) buf.items[idx] = in[idx];
        }
    }
}

// Stores the first `valid` elements of `buf` to `out`, as vectors when the
// tile is whole and aligned.
template <int BLOCK, int TILE, class T>
__device__ __forceinline__ void store_tile(T *__restrict__ out, u64 valid, const TileBuffer<TILE, T> &buf) {
    constexpr u64 BYTES = (u64)TILE * sizeof(T);
    if (valid == (u64)TILE && aligned16(out) && (BYTES % 16) == 0) {
        constexpr int VECS = (int)(BYTES / 16);
        uint4 *v = reinterpret_cast<uint4 *>(out);
#pragma unroll
        for (int k = 0; k < (VECS + BLOCK - 1) / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if (idx < VECS) v[idx] = buf.vectors[idx];
        }
    } else {
#pragma unroll 4
        for (int k = 0; k < TILE / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if ((u64)idx < valid) out[idx] = buf.items[idx];
        }
    }
}

// How many lanes of warp `warp` hold at least one of the `valid` elements
// when each thread takes ITEMS consecutive ones.
template <int ITEMS>
__device__ __forceinline__ unsigned lanes_with_items(unsigned warp, u64 valid) {
    const u64 warp_first = (u64)warp * 32 * ITEMS;
    if (warp_first >= valid) return 0;
    const u64 lanes = (valid - warp_first + ITEMS - 1) / ITEMS;
    return lanes < 32 ? (unsigned)lanes : 32u;
}

// The elements of a tile this thread takes (ITEMS consecutive ones, from
// `first`): ITEMS, fewer in the last tile, or none.
template <int ITEMS>
__device__ __forceinline__ int items_of_thread(u64 first, u64 valid) {
    return first >= valid ? 0 : (valid - first >= (u64)ITEMS ? ITEMS : (int)(valid - first));
}

// A barrier of the BLOCK worker threads alone (named barrier 1; the whole
// block's is barrier 0, __syncthreads), which the look-back warp never joins.
template <int BLOCK>
__device__ __forceinline__ void workers_sync() {
    asm volatile("bar.sync 1, %0;" ::"n"(BLOCK) : "memory");
}

// The schedule of a tile stream (the comment at the top of this file), run
// by every thread of a block of BLOCK workers and one look-back warp
// (`looker`): tickets from `tickets` (the look-back state's counter), tile
// slots k % 3, the look-back's results in slot k % 2. The steps, each run
// by the threads named:
//   load(t, s)       workers: start loading tile t into slot s
//   reduce(t, s)     workers: wait for slot s, reduce tile t, publish its
//                    aggregate
//   look(t, p)       the look-back warp: tile t's prefix into slot p
//   write(t, s, p)   workers: tile t's outputs from slot s and prefix p
// `drawn` is two u64 of the block's shared memory.
template <class Load, class Reduce, class Write, class Look>
__device__ __forceinline__ void tile_stream(u64 num_tiles, u64 *tickets, u64 *drawn, bool looker, const Load &load,
                                            const Reduce &reduce, const Write &write, const Look &look) {
    const u64 end = num_tiles;
    const unsigned lane = threadIdx.x & 31u;
    u64 last_ticket = 0;  // the look-back warp's lane 0
    auto draw = [&]() {
        last_ticket = atomicAdd(tickets, 1ull);
        return last_ticket;
    };

    // Prologue: the first two tickets; the first tile loaded and reduced.
    if (looker && lane == 0) {
        const u64 a = draw();
        drawn[0] = a;
        drawn[1] = a < end ? draw() : end;
    }
    __syncthreads();
    u64 t_prev = end, t_cur = drawn[0], t_next = drawn[1];
    if (!looker && t_cur < end) {
        load(t_cur, 0);
        reduce(t_cur, 0);
    }
    __syncthreads();

    for (u32 k = 0;; ++k) {
        if (t_cur >= end && t_prev >= end) break;
        const int s_next = (int)((k + 1) % 3u), s_prev = (int)((k + 2) % 3u);  // t_k sits in k % 3
        if (looker) {
            if (t_cur < end) look(t_cur, (int)(k & 1u));
            if (lane == 0) drawn[k & 1u] = t_next < end ? draw() : end;
        } else {
            if (t_next < end) load(t_next, s_next);
            if (t_prev < end) write(t_prev, s_prev, (int)((k + 1) & 1u));
            if (t_next < end) reduce(t_next, s_next);
        }
        __syncthreads();
        t_prev = t_cur;
        t_cur = t_next;
        t_next = drawn[k & 1u];
    }
    if (looker && lane == 0 && last_ticket == num_tiles + gridDim.x - 1) atomicExch(tickets, 0ull);
}

// A scan block's storage. Slot k % 3 holds t_k from its load to its
// outputs (written in place); tp the same tile's thread prefixes (its
// aggregate goes to the look-back warp through its descriptor: lookback.cuh
// says why); prefix and drawn pass the look-back warp's results of
// iteration k (k % 2) to the iteration after.
template <int BLOCK, int ITEMS, class T>
struct ScanStorage {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int WARPS = BLOCK / 32;
    TileBuffer<TILE, T> buf[3];
    T tp[3][BLOCK];  // each thread's prefix within its tile (none for thread 0)
    T warp_total[WARPS];
    int warp_has[WARPS];
    T prefix[2];
    int has_prefix[2];
    u64 drawn[2];
};

// The scan, run by every block of the launch, BLOCK + 32 threads each.
// `state` holds the host's lookback_bytes(tiles); the kernel has dynamic
// shared memory for a ScanStorage.
template <int BLOCK, int ITEMS, bool EXCLUSIVE, class T, class Op>
__device__ __forceinline__ void scan(const T *__restrict__ input, u64 n, T init, bool seeded, T *__restrict__ output,
                                           void *state, u32 epoch, const Op &op) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 992, "block size");
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int WARPS = BLOCK / 32;
    if (blockDim.x != (unsigned)(BLOCK + 32)) __trap();
    typedef ScanStorage<BLOCK, ITEMS, T> Storage;
    Storage &smem = dynamic_storage<Storage>();
    const u64 num_tiles = (n + TILE - 1) / TILE;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    const bool looker = warp == (unsigned)WARPS;
    const LookbackState<T> st(state, num_tiles, epoch);

    auto valid_of = [&](u64 t) { return n - t * TILE < (u64)TILE ? n - t * TILE : (u64)TILE; };

    // Workers: tile t has landed in slot s; its thread prefixes into tp[s],
    // its aggregate published (the look-back warp reads it back).
    auto reduce = [&](u64 t, int s) {
        cp_async_wait_all();
        workers_sync<BLOCK>();
        const u64 valid = valid_of(t);
        const u64 first = (u64)threadIdx.x * ITEMS;
        const int mine = items_of_thread<ITEMS>(first, valid);
        T total = T();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j < mine) {
                const T x = smem.buf[s].items[first + j];
                total = j == 0 ? x : op(total, x);
            }
        }
        const unsigned lanes_present = lanes_with_items<ITEMS>(warp, valid);
        const T incl = warp_inclusive_scan(total, lanes_present, op);
        const T lane_before = shfl_up(incl, 1);
        if (lanes_present > 0 && lane == lanes_present - 1) smem.warp_total[warp] = incl;
        if (lane == 0) smem.warp_has[warp] = lanes_present > 0 ? 1 : 0;
        workers_sync<BLOCK>();
        T tp = T();
        bool has_tp = false;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            if (w < (int)warp) combine_maybe(tp, has_tp, smem.warp_total[w], smem.warp_has[w] != 0, op);
        }
        combine_maybe(tp, has_tp, lane_before, lane > 0 && mine > 0, op);
        smem.tp[s][threadIdx.x] = tp;
        if (threadIdx.x == 0) {
            T agg = T();
            bool has_agg = false;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) combine_maybe(agg, has_agg, smem.warp_total[w], smem.warp_has[w] != 0, op);
            publish_aggregate(st, t, agg);
        }
    };

    // Workers: tile t's outputs, in place in slot s, then to global memory.
    auto write = [&](u64 t, int s, int p) {
        const u64 valid = valid_of(t);
        const u64 first = (u64)threadIdx.x * ITEMS;
        const int mine = items_of_thread<ITEMS>(first, valid);
        T fp = smem.prefix[p];
        bool has_fp = smem.has_prefix[p] != 0;
        combine_maybe(fp, has_fp, smem.tp[s][threadIdx.x], threadIdx.x > 0 && mine > 0, op);
        T l = T();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j < mine) {
                const T x = smem.buf[s].items[first + j];
                const T lj = j == 0 ? x : op(l, x);
                T y;
                if (EXCLUSIVE) {
                    y = j == 0 ? fp : op(fp, l);
                } else {
                    y = has_fp ? op(fp, lj) : lj;
                }
                l = lj;
                smem.buf[s].items[first + j] = y;
            }
        }
        workers_sync<BLOCK>();
        store_tile<BLOCK, TILE>(output + t * TILE, valid, smem.buf[s]);
    };

    // The look-back warp: t's prefix, for the outputs of the iteration after.
    auto look = [&](u64 t, int p) {
        T prefix;
        bool has_prefix;
        lookback(st, t, seeded, init, prefix, has_prefix, op);
        if (lane == 0) {
            smem.prefix[p] = prefix;
            smem.has_prefix[p] = has_prefix ? 1 : 0;
        }
    };
    auto load = [&](u64 t, int s) { start_tile_load<BLOCK, TILE>(input + t * TILE, valid_of(t), smem.buf[s]); };

    tile_stream(num_tiles, st.tickets, smem.drawn, looker, load, reduce, write, look);
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SCAN_CUH
