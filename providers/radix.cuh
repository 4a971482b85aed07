// Native provider: a stable radix sort of elements T on key fields the
// compiler proved the comparator orders lexicographically
// (`frontend::order`), or of `sort_by_key`'s computed keys each carrying
// its element as CUB's value (`vocab::SortChoice::ComputedKey`: a kernel
// of the manifest's computes the keys with the key thunk first), for
// sm_90. Needs common.cuh and CUB's headers (as sort.cuh).
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

// Each block one pass's bins: their exclusive sum, in place.
template <class Key>
__device__ __forceinline__ void radix_exclusive_sum(u32 *bins) {
    constexpr int DIGITS = RadixFacts<Key>::DIGITS;
    constexpr int BLOCK = RadixFacts<Key>::SCAN_BLOCK;
    constexpr int PER_THREAD = (DIGITS + BLOCK - 1) / BLOCK;
    using Scan = cub::BlockScan<u32, BLOCK>;
    __shared__ typename Scan::TempStorage storage;
    u32 *pass = bins + blockIdx.x * DIGITS;
    u32 items[PER_THREAD];
#pragma unroll
    for (int u = 0; u < PER_THREAD; ++u) {
        const int bin = threadIdx.x * PER_THREAD + u;
        items[u] = bin < DIGITS ? pass[bin] : 0;
    }
    Scan(storage).ExclusiveSum(items, items);
#pragma unroll
    for (int u = 0; u < PER_THREAD; ++u) {
        const int bin = threadIdx.x * PER_THREAD + u;
        if (bin < DIGITS) {
            pass[bin] = items[u];
        }
    }
}

// One pass of 8 bits from `current_bit` over a portion of `len` keys,
// each moving its value with it (none: `Value` is cub::NullType and the
// value pointers are null).
template <class Key, class Value, class Decomposer>
__device__ __forceinline__ void radix_onesweep(int *lookback, int *counter, u32 *bins_out, const u32 *bins_in,
                                               Key *keys_out, const Key *keys_in, Value *values_out,
                                               const Value *values_in, int len, int current_bit, int num_bits,
                                               Decomposer decomposer) {
    using Agent = cub::detail::radix_sort::AgentRadixSortOnesweep<typename RadixPolicy<Key, Value>::OnesweepPolicy,
                                                                  false, Key, Value, u32, int, Decomposer>;
    __shared__ typename Agent::TempStorage storage;
    Agent agent(storage, lookback, counter, bins_out, bins_in, keys_out, keys_in, values_out, values_in, len,
                current_bit, num_bits, decomposer);
    agent.Process();
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_RADIX_CUH
