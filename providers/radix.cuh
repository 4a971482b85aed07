// Native provider: a stable radix sort of elements T on key fields the
// compiler proved the comparator orders lexicographically
// (`frontend::order`), or of `sort_by_key`'s computed keys each carrying
// its element as CUB's value (`vocab::SortChoice::ComputedKey`: a kernel
// of the manifest's computes the keys with the key thunk first), for
// sm_90. Needs common.cuh and CUB's headers (as sort.cuh).
//
// Elements of 24 bytes and more (vocab::RADIX_GATHER_BYTES) are not
// moved by the passes: a key kernel of the manifest's writes each one's
// key (computed, or its key fields packed) and index, the passes sort
// (key, index) pairs (radix_pass_indexed), and radix_gather moves each
// element once to its place.
//
// These are CUB's own onesweep agents (cub::DeviceRadixSort's kernels,
// CCCL 13.0) with CUB's sm_90 policy for a keys-only sort with 32-bit
// offsets: an upfront histogram of every pass's digits, an exclusive sum of
// each pass's 256 bins, then one onesweep launch a pass of 8 bits (a
// portion of at most 2^28 elements at a time), each ranking a tile's keys
// and scattering them with a decoupled look-back. The element itself is
// CUB's key, so it moves whole; which bits rank it is said by
// `rcb::RadixKey` fields:
// - a scalar element is one `RadixKey` (same bits, same size);
// - a composite element is its bytes, with a decomposer (CUB's interface
//   for custom keys) giving references to its key fields as `RadixKey`s,
//   most significant first. The other bytes (other fields, padding) move
//   with the element and rank nothing.
// A `RadixKey<Bits, Order, Descending>` ranks by the bits of an unsigned
// type of its size, twiddled (cub::NumericTraits, specialised below) so
// that their unsigned order is the field's order: as unsigned, as two's
// complement, or as `total_cmp` orders a float (-0 before +0, NaNs by
// sign and payload, which CUB's own float keys merge or do not do), each
// inverted when descending. So every sort is CUB's ascending sort of
// twiddled bits, and stable.

#ifndef RCB_PROVIDERS_RADIX_CUH
#define RCB_PROVIDERS_RADIX_CUH

#include <cub/agent/agent_radix_sort_histogram.cuh>
#include <cub/agent/agent_radix_sort_onesweep.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/dispatch/tuning/tuning_radix_sort.cuh>
#include <cuda/std/tuple>
#include <cuda/std/type_traits>

namespace rcb {

enum RadixOrder { RADIX_UNSIGNED = 0, RADIX_SIGNED = 1, RADIX_TOTAL = 2 };

template <class Bits, int Order, bool Descending>
struct RadixKey {
    Bits bits;
};

template <class Bits, int Order, bool Descending>
struct RadixTwiddle {
    static constexpr Bits HIGH = Bits(Bits(1) << (sizeof(Bits) * 8 - 1));
    static __host__ __device__ constexpr Bits in(Bits b) {
        const Bits t = Order == RADIX_UNSIGNED ? b
                       : Order == RADIX_SIGNED ? Bits(b ^ HIGH)
                                               : Bits(b ^ ((b & HIGH) ? Bits(~Bits(0)) : HIGH));
        return Descending ? Bits(~t) : t;
    }
    static __host__ __device__ constexpr Bits out(Bits t) {
        const Bits u = Descending ? Bits(~t) : t;
        return Order == RADIX_UNSIGNED ? u
               : Order == RADIX_SIGNED ? Bits(u ^ HIGH)
                                       : Bits(u ^ ((u & HIGH) ? HIGH : Bits(~Bits(0))));
    }
};

}  // namespace rcb

CUB_NAMESPACE_BEGIN
// CUB's customisation point for a radix key type of its own: the bits,
// how they twiddle into an ascending unsigned order and back, and the raw
// keys that twiddle to the lowest and highest (which pad a partial tile).
template <class Bits, int Order, bool Descending>
struct NumericTraits<rcb::RadixKey<Bits, Order, Descending>> {
    using UnsignedBits = Bits;
    using Twiddle = rcb::RadixTwiddle<Bits, Order, Descending>;
    static constexpr Bits LOWEST_KEY = Twiddle::out(Bits(0));
    static constexpr Bits MAX_KEY = Twiddle::out(Bits(~Bits(0)));
    static __host__ __device__ __forceinline__ Bits TwiddleIn(Bits key) { return Twiddle::in(key); }
    static __host__ __device__ __forceinline__ Bits TwiddleOut(Bits key) { return Twiddle::out(key); }

  private:
    friend struct detail::is_primitive_impl;
    static constexpr bool is_primitive = true;
};
CUB_NAMESPACE_END

namespace rcb {

// The `RadixKey` at byte `offset` of an element.
template <class Key, class T>
__host__ __device__ __forceinline__ Key &radix_field(T &element, unsigned offset) {
    return *reinterpret_cast<Key *>(reinterpret_cast<unsigned char *>(&element) + offset);
}

// CUB's sm_90 policy for sorts of `Key` (with values `Value`, or none:
// cub::NullType) with 32-bit offsets.
template <class Key, class Value = cub::NullType>
using RadixPolicy = typename cub::detail::radix::policy_hub<Key, Value, u32>::Policy900;

template <class Key, class Value = cub::NullType>
struct RadixFacts {
    using Policy = RadixPolicy<Key, Value>;
    static constexpr int RADIX_BITS = Policy::ONESWEEP_RADIX_BITS;
    static constexpr int DIGITS = 1 << RADIX_BITS;
    static constexpr int HISTOGRAM_BLOCK = Policy::HistogramPolicy::BLOCK_THREADS;
    static constexpr int SCAN_BLOCK = Policy::ExclusiveSumPolicy::BLOCK_THREADS;
    static constexpr int ONESWEEP_BLOCK = Policy::OnesweepPolicy::BLOCK_THREADS;
    static constexpr int ONESWEEP_ITEMS = Policy::OnesweepPolicy::ITEMS_PER_THREAD;
};

// Counts every pass's digits of the first `len` keys into `bins`
// (passes * DIGITS counters, zero before).
template <class Key, class Decomposer>
__device__ __forceinline__ void radix_histogram(u32 *bins, const Key *keys, u32 len, int end_bit,
                                                Decomposer decomposer) {
    using Agent = cub::detail::radix_sort::AgentRadixSortHistogram<typename RadixPolicy<Key>::HistogramPolicy, false,
                                                                   Key, u32, Decomposer>;
    __shared__ typename Agent::TempStorage storage;
    Agent agent(storage, bins, keys, len, 0, end_bit, decomposer);
    agent.Process();
}

// Where pass `pass` of `passes` reads and writes, the trivial passes
// skipped: the passes that run alternate between the output and the
// buffer so that the last one writes the output, the first reading the
// input (the keys likewise between the two halves of their buffer, the
// first reading the key kernel's). Where every pass is trivial (all keys
// equal), the last runs alone: CUB's short-circuit copies each tile.
//
// The scan's last block computes each pass's route once from the flags
// (radix_route_word) into the word after them, so that a pass's blocks
// read one word, and read it before they take their tile (an atomic in
// the agent's constructor): the two round trips to L2 overlap. The
// word's bits:
//
// The pass runs.
constexpr u32 ROUTE_RUNS = 1u;
// It reads the input (the first pass that runs), else the other of the
// output and the buffer.
constexpr u32 ROUTE_FIRST = 2u;
// It writes the output, else the buffer.
constexpr u32 ROUTE_TO_OUTPUT = 4u;
// It reads the second half of the keys (and writes the first).
constexpr u32 ROUTE_KEYS_SECOND = 8u;
// The last pass that runs writes the second half of the keys and their
// values (the same in every pass's word).
constexpr u32 ROUTE_LAST_IN_SECOND = 16u;

// `trivial` holds the scan's flag for each of the `passes` passes, then a
// route word for each, then the scan's arrival count.
__device__ __forceinline__ u32 radix_route_word(const u32 *trivial, int pass, int passes) {
    int before = 0;
    int live = 0;
    for (int p = 0; p < passes; ++p) {
        const bool runs = __ldcg(trivial + p) == 0u;
        live += runs ? 1 : 0;
        before += runs && p < pass ? 1 : 0;
    }
    bool runs = __ldcg(trivial + pass) == 0u;
    if (live == 0) {
        runs = pass == passes - 1;
        live = 1;
        before = 0;
    }
    u32 word = runs ? ROUTE_RUNS : 0u;
    word |= before == 0 ? ROUTE_FIRST : 0u;
    word |= ((live - 1 - before) & 1) == 0 ? ROUTE_TO_OUTPUT : 0u;
    word |= (before & 1) != 0 ? ROUTE_KEYS_SECOND : 0u;
    // The passes that run alternate, the first writing the second half.
    word |= (live & 1) != 0 ? ROUTE_LAST_IN_SECOND : 0u;
    return word;
}

// Pass `pass`'s route word (radix_route_word), as the scan wrote it.
__device__ __forceinline__ u32 radix_route(const u32 *trivial, int pass, int passes) {
    return __ldcg(trivial + passes + pass);
}

// Each block one pass's bins: their exclusive sum, in place; and whether
// every one of the `len` keys has the same digit in this pass, in
// `trivial[pass]`: such a pass would move every element to where it is,
// and radix_pass skips it. CUB's histogram also counts the keys that pad
// a partial tile, which rank last (their bits all ones, so their digit is
// the pass's highest): that bin's count is the real keys' plus the
// padding, the sum of the bins less `len`. The last block to arrive
// (counted at `trivial[2 * passes]`, zero before) writes every pass's
// route word after the flags (radix_route_word).
template <class Key>
__device__ __forceinline__ void radix_exclusive_sum(u32 *bins, u32 len, int end_bit, u32 *trivial) {
    constexpr int DIGITS = RadixFacts<Key>::DIGITS;
    constexpr int BLOCK = RadixFacts<Key>::SCAN_BLOCK;
    constexpr int PER_THREAD = (DIGITS + BLOCK - 1) / BLOCK;
    using Scan = cub::BlockScan<u32, BLOCK>;
    __shared__ typename Scan::TempStorage storage;
    u32 *pass = bins + blockIdx.x * DIGITS;
    const int bits = end_bit - (int)blockIdx.x * 8 < 8 ? end_bit - (int)blockIdx.x * 8 : 8;
    const int top = (1 << bits) - 1;
    u32 items[PER_THREAD];
    u32 counts[PER_THREAD];
#pragma unroll
    for (int u = 0; u < PER_THREAD; ++u) {
        const int bin = threadIdx.x * PER_THREAD + u;
        items[u] = bin < DIGITS ? pass[bin] : 0;
        counts[u] = items[u];
    }
    u32 total;
    Scan(storage).ExclusiveSum(items, items, total);
    const u32 padding = total - len;
    bool all = false;
#pragma unroll
    for (int u = 0; u < PER_THREAD; ++u) {
        const int bin = threadIdx.x * PER_THREAD + u;
        all = all || (bin < DIGITS && counts[u] - (bin == top ? padding : 0u) == len);
    }
    all = __syncthreads_or(all);
#pragma unroll
    for (int u = 0; u < PER_THREAD; ++u) {
        const int bin = threadIdx.x * PER_THREAD + u;
        if (bin < DIGITS) {
            pass[bin] = items[u];
        }
    }
    // The last block to flag its pass writes every pass's route.
    __shared__ bool last;
    if (threadIdx.x == 0) {
        trivial[blockIdx.x] = all ? 1u : 0u;
        // Release: the flag is visible device-wide before the count.
        __threadfence();
        last = atomicAdd(trivial + 2 * gridDim.x, 1u) == gridDim.x - 1;
        // Acquire: with the barrier below, the last block sees every flag.
        __threadfence();
    }
    __syncthreads();
    if (last && threadIdx.x < gridDim.x) {
        trivial[gridDim.x + threadIdx.x] = radix_route_word(trivial, (int)threadIdx.x, (int)gridDim.x);
    }
}

// One pass of 8 bits from `current_bit` over a portion of `len` keys,
// each moving its value with it (none: `Value` is cub::NullType and the
// value pointers are null), if `route` (radix_route's word) says the pass
// runs. The route is loaded before the agent takes its tile (an atomic in
// its constructor) and tested only through the tile, so that no compiler
// waits for the route before issuing the atomic: the two round trips to
// L2 overlap (the buffers picked from the route are arguments of the
// constructor: set after it, nvJitLink 13.0's `-g` link refuses the
// LTOIR). A trivial pass's blocks take a tile too (each pass has a counter
// of its own) and return.
template <class Key, class Value, class Decomposer>
__device__ __forceinline__ void radix_onesweep(int *lookback, int *counter, u32 *bins_out, const u32 *bins_in,
                                               u32 route, Key *keys_out, const Key *keys_in, Value *values_out,
                                               const Value *values_in, int len, int current_bit, int num_bits,
                                               Decomposer decomposer) {
    using Agent = cub::detail::radix_sort::AgentRadixSortOnesweep<typename RadixPolicy<Key, Value>::OnesweepPolicy,
                                                                  false, Key, Value, u32, int, Decomposer>;
    __shared__ typename Agent::TempStorage storage;
    Agent agent(storage, lookback, counter, bins_out, bins_in, keys_out, keys_in, values_out, values_in, len,
                current_bit, num_bits, decomposer);
    // The tile is never negative: the route, unchanged, read after the
    // atomic.
    route = agent.block_idx < 0 ? 0u : route;
    if ((route & ROUTE_RUNS) == 0u) {
        return;
    }
    agent.Process();
}

// Pass `pass` (of 8 bits, fewer for the last below `end_bit`) over the
// portion of `len` elements from `start`, reading and writing where its
// route says, or nothing if the pass is trivial. `keys` holds two
// halves of `stride` keys (the computed keys; null for a sort of the
// elements themselves, which are then CUB's keys and have no values).
template <class Key, class Value, class T, class Decomposer>
__device__ __forceinline__ void radix_pass(int *lookback, int *counter, u32 *bins_out, const u32 *bins,
                                           const u32 *trivial, Key *keys, u32 stride, T *output, const T *input,
                                           T *buffer, u32 start, int len, int pass, int end_bit,
                                           Decomposer decomposer) {
    const int passes = (end_bit + 7) >> 3;
    const u32 route = radix_route(trivial, pass, passes);
    const int current_bit = pass << 3;
    const int num_bits = end_bit - current_bit < 8 ? end_bit - current_bit : 8;
    // Buffers chosen by flags and selects, not by indexing a local array,
    // comparing an index or multiplying by the half: nvJitLink 13.0's `-g`
    // link refuses the LTOIR of those ("Symbol name with unsupported
    // characters", docs/debug-info.md).
    const bool first = (route & ROUTE_FIRST) != 0u;
    const bool to_output = (route & ROUTE_TO_OUTPUT) != 0u;
    const bool keys_second = (route & ROUTE_KEYS_SECOND) != 0u;
    const T *from = (first ? input : to_output ? buffer : output) + start;
    T *to = to_output ? output : buffer;
    if constexpr (cuda::std::is_same_v<Value, cub::NullType>) {
        radix_onesweep<Key, Value>(lookback, counter, bins_out, bins, route, reinterpret_cast<Key *>(to),
                                   reinterpret_cast<const Key *>(from), (Value *)nullptr, (const Value *)nullptr,
                                   len, current_bit, num_bits, decomposer);
    } else {
        Key *const lower = keys;
        Key *const upper = keys + stride;
        radix_onesweep<Key, Value>(lookback, counter, bins_out, bins, route, keys_second ? lower : upper,
                                   (keys_second ? upper : lower) + start, reinterpret_cast<Value *>(to),
                                   reinterpret_cast<const Value *>(from), len, current_bit, num_bits, decomposer);
    }
}

// Pass `pass` of a sort of (key, index) pairs (elements too wide to move
// at every pass, which radix_gather moves once after): the keys and the
// indices each in two halves of `stride`, read and written as the route
// says, the first pass reading the first halves (the key kernel's).
template <class Key, class Decomposer>
__device__ __forceinline__ void radix_pass_indexed(int *lookback, int *counter, u32 *bins_out, const u32 *bins,
                                                   const u32 *trivial, Key *keys, u32 *indices, u32 stride,
                                                   u32 start, int len, int pass, int end_bit,
                                                   Decomposer decomposer) {
    const int passes = (end_bit + 7) >> 3;
    const u32 route = radix_route(trivial, pass, passes);
    const bool keys_second = (route & ROUTE_KEYS_SECOND) != 0u;
    const int current_bit = pass << 3;
    const int num_bits = end_bit - current_bit < 8 ? end_bit - current_bit : 8;
    radix_onesweep<Key, u32>(lookback, counter, bins_out, bins, route, keys_second ? keys : keys + stride,
                             (keys_second ? keys + stride : keys) + start, keys_second ? indices : indices + stride,
                             (keys_second ? indices + stride : indices) + start, len, current_bit, num_bits,
                             decomposer);
}

// The elements in sorted order: `output[i]` is `input[sorted[i]]`, the
// sorted indices being the half of `indices` (two of `len`) that the last
// pass wrote.
template <class T>
__device__ __forceinline__ void radix_gather(T *output, const T *input, const u32 *indices, const u32 *trivial,
                                             u32 len, int end_bit) {
    const int passes = (end_bit + 7) >> 3;
    const u32 *sorted = (radix_route(trivial, 0, passes) & ROUTE_LAST_IN_SECOND) != 0u ? indices + len : indices;
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < len;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        output[i] = input[__ldg(sorted + i)];
    }
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_RADIX_CUH
