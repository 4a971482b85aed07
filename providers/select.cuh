// Native provider: stream compaction (the elements for which a predicate
// holds, in order) for sm_90, one pass over the data, parameterised by a
// functor `Pred` with `__device__ bool operator()(T x) const`. Needs
// common.cuh, lookback.cuh and scan.cuh (the tile loads).
//
// Each tile counts its selected elements; the count before the tile comes
// from the look-back over counts (an exact integer sum); the selected
// elements are compacted in shared memory and stored contiguously. The last
// tile writes the total count. The predicate is called once per element.
//
// One block per tile, in block order, rather than scan.cuh's tile stream:
// select has little to do after its look-back for a next tile's loads to
// overlap, and a block per tile fits four blocks a multiprocessor instead
// of three (2^28 i32 on the H200: 573 us against 596 for the stream; f64:
// 1130 against 1180, benches/experiments/scan_stream.cu).

#ifndef RCB_PROVIDERS_SELECT_CUH
#define RCB_PROVIDERS_SELECT_CUH

namespace rcb {

struct CountSum {
    __device__ __forceinline__ u64 operator()(u64 a, u64 b) const { return a + b; }
};

template <int BLOCK, int ITEMS, class T, class Pred>
__device__ __forceinline__ void select(const T *__restrict__ input, u64 n, T *__restrict__ output, u64 *count,
                                       void *state, u32 epoch, const Pred &pred) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "block size");
    static_assert(ITEMS <= 32, "one flag bit per item");
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int WARPS = BLOCK / 32;
    if (blockDim.x != (unsigned)BLOCK) __trap();
    __shared__ TileBuffer<TILE, T> smem;
    __shared__ u32 warp_count[WARPS];
    __shared__ u64 tile_prefix;
    __shared__ u32 tile_count;
    const u64 tile = blockIdx.x;
    const u64 num_tiles = (n + TILE - 1) / TILE;
    const u64 base = tile * TILE;
    if (base >= n) return;
    const u64 valid = n - base < (u64)TILE ? n - base : (u64)TILE;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    LookbackState<u64> st(state, num_tiles, epoch);

    start_tile_load<BLOCK, TILE>(input + base, valid, smem);
    cp_async_wait_all();
    __syncthreads();

    const u64 first = (u64)threadIdx.x * ITEMS;
    const int mine = items_of_thread<ITEMS>(first, valid);
    T x[ITEMS];
    u32 flags = 0;  // bit j: element j is selected
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        if (j < mine) {
            x[j] = smem.items[first + j];
            if (pred(x[j])) flags |= 1u << j;
        }
    }
    const u32 selected = __popc(flags);

    // Exclusive count of the lanes before, and the warp's count.
    u32 incl = selected;
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
        const u32 other = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += other;
    }
    if (lane == 31) warp_count[warp] = incl;
    __syncthreads();
    u32 before = incl - selected;
    u32 total = 0;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) {
        const u32 c = warp_count[w];
        if (w < (int)warp) before += c;
        total += c;
    }
    if (warp == 0) {
        if (lane == 0 && tile + 1 < num_tiles && (tile & 31u) != 31u) publish_aggregate(st, tile, (u64)total);
        u64 prefix;
        bool has_prefix;
        lookback(st, tile, (u64)total, true, (u64)0, prefix, has_prefix, CountSum());
        if (lane == 0) {
            tile_prefix = prefix;
            tile_count = total;
            if (tile + 1 == num_tiles) *count = prefix + total;
        }
    }
    // Every thread has read its elements: the storage takes the compacted ones.
    __syncthreads();
    u32 at = before;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
        if (flags & (1u << j)) smem.items[at++] = x[j];
    }
    __syncthreads();
    const u64 out_base = tile_prefix;
    const u32 kept = tile_count;
    for (u32 k = threadIdx.x; k < kept; k += BLOCK) output[out_base + k] = smem.items[k];
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SELECT_CUH
