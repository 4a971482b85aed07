// Native provider: `reduce_by_key` and `scan_by_key` over keys K and
// values V, with two functors: `Same` (`__device__ bool operator()(K a,
// K b) const`, whether a key and the one after it are of one run, an
// equivalence) and `Op` (`__device__ V operator()(V a, V b) const`, the
// fold of a run's values, associative). Needs common.cuh and CUB's headers
// (as sort.cuh).
//
// These are CUB's own agents (cub::DeviceReduce::ReduceByKey's and
// cub::DeviceScan::InclusiveScanByKey's kernels, CCCL 13.0), with the
// sm_90 policy CUB gives an operation that is not one of its own functors
// (`ReduceByKeyPolicy` and `ScanByKeyPolicy` below, which the manifest's
// launch facts repeat and the generated kernels assert), instantiated with
// the callbacks' functors: their speed is CUB's by construction. A block a
// tile, one pass with a decoupled look-back over CUB's tile states, which
// an init kernel prepares first (and, for the scan, each tile's key before
// it). Offsets are 32-bit (as CUB's for an `int` count): fewer than 2^31
// elements.
//
// reduce_by_key writes, for each run, its last key and the fold of its
// values, and the number of runs; scan_by_key the inclusive scan of each
// run's values.

#ifndef RCB_PROVIDERS_BY_KEY_CUH
#define RCB_PROVIDERS_BY_KEY_CUH

#include <cub/agent/agent_reduce_by_key.cuh>
#include <cub/agent/agent_scan_by_key.cuh>

namespace rcb {

template <class K, class V>
struct ReduceByKeyPolicy {
    static constexpr int MAX_BYTES = sizeof(K) > sizeof(V) ? (int)sizeof(K) : (int)sizeof(V);
    static constexpr int COMBINED = (int)(sizeof(K) + sizeof(V));
    static constexpr int CEIL = (6 * 8 + COMBINED - 1) / COMBINED;
    static constexpr int ITEMS = MAX_BYTES <= 8 ? 6 : (CEIL < 1 ? 1 : (CEIL > 6 ? 6 : CEIL));
    static constexpr int BLOCK = 128;
    using Agent = cub::AgentReduceByKeyPolicy<BLOCK, ITEMS, cub::BLOCK_LOAD_DIRECT, cub::LOAD_DEFAULT,
                                              cub::BLOCK_SCAN_WARP_SCANS,
                                              cub::detail::default_reduce_by_key_delay_constructor_t<V, int>>;
};

template <class K, class V>
struct ScanByKeyPolicy {
    // CUB's warp-transposed store, but under -G (`driver build -g`), where
    // that store of a struct value leaves a symbol libNVVM's link-time
    // optimisation refuses ("Symbol name with unsupported characters"):
    // there each thread stores its own items (debug code, not timed; the
    // tile is the same).
#ifdef __CUDACC_DEBUG__
    static constexpr cub::BlockStoreAlgorithm STORE = cub::BLOCK_STORE_DIRECT;
#else
    static constexpr cub::BlockStoreAlgorithm STORE = cub::BLOCK_STORE_WARP_TRANSPOSE;
#endif
    static constexpr int MAX_BYTES = sizeof(K) > sizeof(V) ? (int)sizeof(K) : (int)sizeof(V);
    // CUB's Nominal4BItemsToItemsCombined(9, sizeof(K) + sizeof(V)).
    static constexpr int COMBINED = 9 * 8 / (int)(sizeof(K) + sizeof(V));
    static constexpr int ITEMS = MAX_BYTES <= 8 ? 9 : (COMBINED < 1 ? 1 : (COMBINED > 9 ? 9 : COMBINED));
    static constexpr int BLOCK = 256;
    using Agent = cub::AgentScanByKeyPolicy<BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::LOAD_DEFAULT,
                                            cub::BLOCK_SCAN_WARP_SCANS, STORE,
                                            cub::detail::default_reduce_by_key_delay_constructor_t<V, int>>;
};

// The tile states of both: a (run count, value) pair a tile.
template <class V>
using ByKeyTileState = cub::ReduceByKeyScanTileState<V, int>;

// Whether a tile state keeps its status words and its two values a tile
// in three arrays (a value with its count wider than a descriptor word):
// CUB's `ScanTileState<T, false>`.
template <class S, class = void>
struct SplitTileState : cuda::std::false_type {};
template <class S>
struct SplitTileState<S, cuda::std::void_t<decltype(&S::d_tile_partial)>> : cuda::std::true_type {};

// `bytes` rounded up to CUB's 256-byte alignment of temporaries.
__device__ __forceinline__ size_t aligned256(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

// The tile states of `len` elements in tiles of TILE, over the host's
// `state_bytes` at `state` (traps if CUB needs more). Three arrays are
// sized and placed as CUB's `AllocationSize` and `Init` do
// (`AliasTemporaries`: each 256-byte aligned), without calling them: their
// error path's `CubDebug` calls the device runtime when compiled for
// linking (-rdc), which no link provides (unoptimised, -G, it stays).
template <int TILE, class V>
__device__ __forceinline__ ByKeyTileState<V> by_key_tile_state(void *state, u64 state_bytes, u64 len, int &tiles) {
    using State = ByKeyTileState<V>;
    tiles = (int)((len + TILE - 1) / TILE);
    State st;
    if constexpr (SplitTileState<State>::value) {
        const size_t states = (size_t)tiles + State::TILE_STATUS_PADDING;
        const size_t status = aligned256(states * State::description_bytes_per_tile);
        const size_t payload = aligned256(states * State::payload_bytes_per_tile);
        if (status + 2 * payload + 255 > state_bytes) __trap();
        char *base = reinterpret_cast<char *>(aligned256(reinterpret_cast<size_t>(state)));
        st.d_tile_status = reinterpret_cast<decltype(st.d_tile_status)>(base);
        st.d_tile_partial = reinterpret_cast<decltype(st.d_tile_partial)>(base + status);
        st.d_tile_inclusive = reinterpret_cast<decltype(st.d_tile_inclusive)>(base + status + payload);
    } else {
        size_t need = 0;
        State::AllocationSize(tiles, need);
        if (need > state_bytes) __trap();
        st.Init(tiles, state, state_bytes);
    }
    return st;
}

// The init kernel of reduce_by_key: every tile's state, and the count of
// runs zeroed (an empty input has none).
template <class K, class V>
__device__ __forceinline__ void reduce_by_key_init(void *state, u64 state_bytes, u64 len, u64 *count) {
    constexpr int TILE = ReduceByKeyPolicy<K, V>::BLOCK * ReduceByKeyPolicy<K, V>::ITEMS;
    int tiles;
    ByKeyTileState<V> st = by_key_tile_state<TILE, V>(state, state_bytes, len, tiles);
    st.InitializeStatus(tiles);
    if (blockIdx.x == 0 && threadIdx.x == 0) *count = 0;
}

template <class K, class V, class Same, class Op>
__device__ __forceinline__ void reduce_by_key(const K *keys, const V *values, u64 len, K *unique, V *aggregates,
                                              u64 *count, void *state, u64 state_bytes, const Same &same,
                                              const Op &op) {
    using Policy = ReduceByKeyPolicy<K, V>;
    using Agent = cub::detail::reduce::AgentReduceByKey<typename Policy::Agent, const K *, K *, const V *, V *,
                                                        u64 *, Same, Op, int, V>;
    if (blockDim.x != (unsigned)Policy::BLOCK) __trap();
    __shared__ typename Agent::TempStorage storage;
    int tiles;
    ByKeyTileState<V> st = by_key_tile_state<Policy::BLOCK * Policy::ITEMS, V>(state, state_bytes, len, tiles);
    Agent(storage, keys, unique, values, aggregates, count, same, op).ConsumeRange((int)len, st, 0);
}

// The init kernel of scan_by_key: every tile's state, and each tile's key
// before it (`prev[t]`, the key of element t * TILE - 1, for t > 0).
template <class K, class V>
__device__ __forceinline__ void scan_by_key_init(const K *keys, u64 len, void *state, u64 state_bytes, K *prev) {
    constexpr int TILE = ScanByKeyPolicy<K, V>::BLOCK * ScanByKeyPolicy<K, V>::ITEMS;
    int tiles;
    ByKeyTileState<V> st = by_key_tile_state<TILE, V>(state, state_bytes, len, tiles);
    st.InitializeStatus(tiles);
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t > 0 && t < (u64)tiles) prev[t] = keys[t * TILE - 1];
}

template <class K, class V, class Same, class Op>
__device__ __forceinline__ void scan_by_key(const K *keys, const V *values, u64 len, V *output, void *state,
                                            u64 state_bytes, K *prev, const Same &same, const Op &op) {
    using Policy = ScanByKeyPolicy<K, V>;
    using Agent = cub::detail::scan_by_key::AgentScanByKey<typename Policy::Agent, const K *, const V *, V *, Same,
                                                           Op, cub::NullType, int, V>;
    if (blockDim.x != (unsigned)Policy::BLOCK) __trap();
    __shared__ typename Agent::TempStorage storage;
    int tiles;
    ByKeyTileState<V> st = by_key_tile_state<Policy::BLOCK * Policy::ITEMS, V>(state, state_bytes, len, tiles);
    Agent(storage, keys, prev, values, output, same, op, cub::NullType{}).ConsumeRange((int)len, st, 0);
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_BY_KEY_CUH
