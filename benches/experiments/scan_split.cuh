// Experiment (session 20): the scan with a look-back warp of its own.
// BLOCK worker threads load, reduce and write tiles; one more warp (warp
// BLOCK / 32) runs each tile's look-back and draws the block's tickets, so a
// tile's look-back overlaps the loads, the reduction and the outputs of the
// tiles around it. Launched with BLOCK + 32 threads. The combining shape is
// scan.cuh's, so float results are the same bits as rcb::scan's at the same
// ITEMS. Needs common.cuh, lookback.cuh and scan.cuh.
//
// Iteration k of a block (t_k: its k-th ticket, three tile slots, k % 3):
//   look-back warp: look-back of t_k (its aggregate published at k - 1),
//                   then draw t_k+2
//   workers:        start loading t_k+1 (drawn at k - 1), write t_k-1's
//                   outputs, wait for t_k+1, reduce it, publish its aggregate
//   barrier
// A drawn tile's aggregate is published before its block waits on anything
// but its own loads (drawn after the look-back of t_k, it is loaded and
// reduced in iteration k + 1, which has no barrier before its end), so no
// tile's aggregate waits for a look-back (drawing tiles that then waited on
// look-backs convoyed, docs/gpu-runs/2026-12-02-s19 run 1).

#ifndef RCB_EXP_SCAN_SPLIT_CUH
#define RCB_EXP_SCAN_SPLIT_CUH

namespace rcb {

template <int BLOCK>
__device__ __forceinline__ void workers_sync() {
    asm volatile("bar.sync 1, %0;" ::"n"(BLOCK) : "memory");
}

template <int BLOCK, int ITEMS, class T>
struct SplitStorage {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int WARPS = BLOCK / 32;
    TileBuffer<TILE, T> buf[3];
    T tp[3][BLOCK];  // each thread's prefix within its tile (none for thread 0)
    T warp_total[WARPS];
    int warp_has[WARPS];
    T agg[3];
    T prefix[2];
    int has_prefix[2];
    u64 drawn[2];
};

template <int BLOCK, int ITEMS, bool EXCLUSIVE, class T, class Op>
__device__ __forceinline__ void scan_split(const T *__restrict__ input, u64 n, T init, T *__restrict__ output,
                                           void *state, u32 epoch, const Op &op) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 992, "block size");
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int WARPS = BLOCK / 32;
    if (blockDim.x != (unsigned)(BLOCK + 32)) __trap();
    typedef SplitStorage<BLOCK, ITEMS, T> Storage;
    Storage &smem = dynamic_storage<Storage>();
    const u64 num_tiles = (n + TILE - 1) / TILE;
    const u64 end = num_tiles;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    const bool looker = warp == (unsigned)WARPS;
    const LookbackState<T> st(state, num_tiles, epoch);
    u64 last_ticket = 0;  // the look-back warp's lane 0

    auto valid_of = [&](u64 t) { return n - t * TILE < (u64)TILE ? n - t * TILE : (u64)TILE; };

    // Workers: tile t has landed in slot s; its thread prefixes into tp[s],
    // its aggregate into agg[s] and, where later tiles read it, published.
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
            if (t + 1 < num_tiles && (t & 31u) != 31u) publish_aggregate(st, t, agg);
            smem.agg[s] = agg;
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

    auto draw = [&]() {
        last_ticket = atomicAdd(st.tickets, 1ull);
        return last_ticket;
    };

    // Prologue: the first two tickets; the first tile loaded and reduced.
    if (looker && lane == 0) {
        const u64 a = draw();
        smem.drawn[0] = a;
        smem.drawn[1] = a < end ? draw() : end;
    }
    __syncthreads();
    u64 t_prev = end, t_cur = smem.drawn[0], t_next = smem.drawn[1];
    if (!looker && t_cur < end) {
        start_tile_load<BLOCK, TILE>(input + t_cur * TILE, valid_of(t_cur), smem.buf[0]);
        reduce(t_cur, 0);
    }
    __syncthreads();

    for (u32 k = 0;; ++k) {
        if (t_cur >= end && t_prev >= end) break;
        const int s_cur = (int)(k % 3u), s_next = (int)((k + 1) % 3u), s_prev = (int)((k + 2) % 3u);
        if (looker) {
            if (t_cur < end) {
                T prefix;
                bool has_prefix;
                lookback(st, t_cur, smem.agg[s_cur], EXCLUSIVE, init, prefix, has_prefix, op);
                if (lane == 0) {
                    smem.prefix[k & 1u] = prefix;
                    smem.has_prefix[k & 1u] = has_prefix ? 1 : 0;
                }
            }
            if (lane == 0) smem.drawn[k & 1u] = t_next < end ? draw() : end;
        } else {
            if (t_next < end) start_tile_load<BLOCK, TILE>(input + t_next * TILE, valid_of(t_next), smem.buf[s_next]);
            if (t_prev < end) write(t_prev, s_prev, (int)((k + 1) & 1u));
            if (t_next < end) reduce(t_next, s_next);
        }
        __syncthreads();
        t_prev = t_cur;
        t_cur = t_next;
        t_next = smem.drawn[k & 1u];
    }
    if (looker && lane == 0 && last_ticket == num_tiles + gridDim.x - 1) atomicExch(st.tickets, 0ull);
}

}  // namespace rcb

#endif  // RCB_EXP_SCAN_SPLIT_CUH
