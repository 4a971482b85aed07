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
// out, and the host reproduces it).
//
// Kernel shape: one launch, one block per tile of BLOCK * ITEMS elements,
// tiles in block order; the look-back state is sized by the host
// (`lookback_bytes`) and never cleared between launches (epochs).
//
// Within a tile: the tile is loaded into shared memory (16-byte vectors when
// the input is aligned), each thread takes ITEMS consecutive elements and
// scans them serially (l_j), a Kogge-Stone warp scan combines the threads'
// totals, warp totals combine serially, and the tile's prefix P comes from
// the look-back:
//
//   thread prefix   TP = op(WP_w, WX_t)       WP_w: warps before, WX_t: lanes before
//   full prefix     FP = op(P, TP)
//   inclusive       out_j = op(FP, l_j)
//   exclusive       out_0 = FP, out_j = op(FP, l_j-1), with the seed `init`
//                   as the prefix of tile 0

#ifndef RCB_PROVIDERS_SCAN_CUH
#define RCB_PROVIDERS_SCAN_CUH

namespace rcb {

// Shared memory of one tile pass: the tile's elements, and the warp totals.
template <int BLOCK, int ITEMS, class T>
struct TileStorage {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int WARPS = BLOCK / 32;
    union {
        T items[TILE];
        uint4 vectors[(TILE * sizeof(T) + 15) / 16];
    };
    T warp_total[WARPS];
    int warp_has[WARPS];
    T prefix;
    int has_prefix;
};

// Loads `valid` elements of the tile at `in` into `smem` (warp-striped:
// coalesced), as vectors when the tile is whole and aligned.
template <int BLOCK, int ITEMS, class T>
__device__ __forceinline__ void load_tile(const T *__restrict__ in, u64 valid, TileStorage<BLOCK, ITEMS, T> &smem) {
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int N = VecWidth<T>::N;
    if (valid == (u64)TILE && aligned16(in) && (TILE % N) == 0) {
        constexpr int VECS = TILE / N;
        const uint4 *v = reinterpret_cast<const uint4 *>(in);
#pragma unroll
        for (int k = 0; k < (VECS + BLOCK - 1) / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if (idx < VECS) smem.vectors[idx] = __ldg(v + idx);
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if ((u64)idx < valid) smem.items[idx] = in[idx];
        }
    }
}

// Stores the first `valid` elements of `smem` to `out`, as vectors when the
// tile is whole and aligned.
template <int BLOCK, int ITEMS, class T>
__device__ __forceinline__ void store_tile(T *__restrict__ out, u64 valid, const TileStorage<BLOCK, ITEMS, T> &smem) {
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int N = VecWidth<T>::N;
    if (valid == (u64)TILE && aligned16(out) && (TILE % N) == 0) {
        constexpr int VECS = TILE / N;
        uint4 *v = reinterpret_cast<uint4 *>(out);
#pragma unroll
        for (int k = 0; k < (VECS + BLOCK - 1) / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if (idx < VECS) v[idx] = smem.vectors[idx];
        }
    } else {
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if ((u64)idx < valid) out[idx] = smem.items[idx];
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

// Bytes of look-back state for `num_tiles` tiles of values V.
template <class V>
__host__ __device__ constexpr u64 lookback_bytes(u64 num_tiles) {
    return (num_tiles + (num_tiles + 31) / 32 + (num_tiles + 1023) / 1024) * sizeof(Desc<V>);
}

// One tile of a scan (the block's). `state` holds lookback_bytes(tiles).
template <int BLOCK, int ITEMS, bool EXCLUSIVE, class T, class Op>
__device__ __forceinline__ void scan(const T *__restrict__ input, u64 n, T init, T *__restrict__ output, void *state,
                                     u32 epoch, const Op &op) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "block size");
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int WARPS = BLOCK / 32;
    if (blockDim.x != (unsigned)BLOCK) __trap();
    __shared__ TileStorage<BLOCK, ITEMS, T> smem;
    const u64 tile = blockIdx.x;
    const u64 num_tiles = (n + TILE - 1) / TILE;
    const u64 base = tile * TILE;
    if (base >= n) return;
    const u64 valid = n - base < (u64)TILE ? n - base : (u64)TILE;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    LookbackState<T> st(state, num_tiles, epoch);

    load_tile<BLOCK, ITEMS>(input + base, valid, smem);
    __syncthreads();

    // This thread's ITEMS consecutive elements, scanned serially.
    const u64 first = (u64)threadIdx.x * ITEMS;
    const int mine = first >= valid ? 0 : (valid - first >= (u64)ITEMS ? ITEMS : (int)(valid - first));
    T l[ITEMS];
    T total = T();
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        if (j < mine) {
            const T x = smem.items[first + j];
            l[j] = j == 0 ? x : op(l[j - 1], x);
            total = l[j];
        }
    }
    const bool present = mine > 0;

    // Threads' totals across the warp; present lanes are a prefix of it.
    const unsigned lanes_present = lanes_with_items<ITEMS>(warp, valid);
    const T incl = warp_inclusive_scan(total, lanes_present, op);
    const T lane_before = shfl_up(incl, 1);
    if (lanes_present > 0 && lane == lanes_present - 1) {
        smem.warp_total[warp] = incl;
    }
    if (lane == 0) smem.warp_has[warp] = lanes_present > 0 ? 1 : 0;
    __syncthreads();

    // Warp prefix (serial over the warps before) and the tile's aggregate.
    T tp = T();
    bool has_tp = false;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        if (w < (int)warp) combine_maybe(tp, has_tp, smem.warp_total[w], smem.warp_has[w] != 0, op);
    }
    combine_maybe(tp, has_tp, lane_before, lane > 0 && present, op);

    if (warp == 0) {
        T agg = T();
        bool has_agg = false;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) combine_maybe(agg, has_agg, smem.warp_total[w], smem.warp_has[w] != 0, op);
        // A tile that is not the last of its super-tile is read by later ones.
        if (lane == 0 && tile + 1 < num_tiles && (tile & 31u) != 31u) publish_aggregate(st, tile, agg);
        T prefix;
        bool has_prefix;
        lookback(st, tile, agg, EXCLUSIVE, init, prefix, has_prefix, op);
        if (lane == 0) {
            smem.prefix = prefix;
            smem.has_prefix = has_prefix ? 1 : 0;
        }
    }
    __syncthreads();

    // Outputs, written back over the inputs in shared memory.
    T fp = smem.prefix;
    bool has_fp = smem.has_prefix != 0;
    combine_maybe(fp, has_fp, tp, has_tp, op);
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        if (j < mine) {
            T y;
            if (EXCLUSIVE) {
                y = j == 0 ? fp : op(fp, l[j - 1]);
            } else {
                y = has_fp ? op(fp, l[j]) : l[j];
            }
            smem.items[first + j] = y;
        }
    }
    __syncthreads();
    store_tile<BLOCK, ITEMS>(output + base, valid, smem);
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SCAN_CUH
