// Native provider: reduction of T for sm_90, parameterised by a functor `Op`
// with `__device__ T operator()(T a, T b) const`. Needs common.cuh.
//
// Contract with callbacks
// -----------------------
// The provider folds the elements in a tree, not left to right: each thread
// folds a strided subset of 16-byte vectors (each vector as a pairwise
// tree), warps and blocks combine by shuffles, and the last block to finish
// combines the per-block partials in block order. `init` is applied exactly
// once, as `op(init, fold(all elements))` (or `init` alone for n == 0). The
// result therefore equals the host's sequential fold
// `op(...op(op(init, x0), x1)..., xn-1)` for every op that is associative
// and commutative (wrapping add/mul, xor, and, or, min, max). For other ops
// (a float sum among them) the result is deterministic for a given
// (n, pointer alignment, grid size), bit for bit on every run, but may differ
// from the host fold.
//
// No identity element is assumed (the callback is arbitrary), so every
// partial carries a "has a value" flag and empty lanes are skipped.
//
// Kernel shape: one launch. Each block writes one partial; the last block to
// arrive (threadfence + atomic counter) combines them and resets the counter
// to zero, so the counter must be zero before the first launch and stays
// zero between launches that complete.

#ifndef RCB_PROVIDERS_REDUCE_CUH
#define RCB_PROVIDERS_REDUCE_CUH

namespace rcb {

// One block's partial: its fold and whether it has one. 8 bytes for
// elements of up to 4 bytes, 16 for 8-byte elements; a composite's is its
// size and the flag, at most 16 bytes more (the runtime's workspace).
template <class T>
struct alignas(sizeof(T) == 8 ? 16 : 8) Partial {
    T value;
    u32 has;
};

// A partial written by another block, read whole from L2 (L1 is not
// coherent): one 8- or 16-byte access, or a composite's 8-byte words.
template <class T>
__device__ __forceinline__ Partial<T> load_partial(const Partial<T> *p) {
    static_assert(sizeof(Partial<T>) % 8 == 0, "a partial is whole 8-byte words");
    constexpr int WORDS = sizeof(Partial<T>) / 8;
    union {
        Partial<T> partial;
        uint2 u2[WORDS];
        uint4 u4;
    } bits;
    if constexpr (sizeof(Partial<T>) == 16) {
        bits.u4 = __ldcg(reinterpret_cast<const uint4 *>(p));
    } else {
#pragma unroll
        for (int w = 0; w < WORDS; ++w) bits.u2[w] = __ldcg(reinterpret_cast<const uint2 *>(p) + w);
    }
    return bits.partial;
}

// Warp tree reduction with validity flags; lane 0 ends with the warp's fold.
template <class T, class Op>
__device__ __forceinline__ void warp_reduce(T &acc, bool &has, const Op &op) {
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset >>= 1) {
        const T other = shfl_down(acc, offset);
        const int other_has = __shfl_down_sync(0xffffffffu, has ? 1 : 0, offset);
        if (other_has && lane + offset < 32u) {
            fold_into(acc, has, other, op);
        }
    }
}

// Block reduction; thread 0 ends with the block's fold and its flag.
// Callers that use it twice must separate the calls by a __syncthreads().
template <int BLOCK, class T, class Op>
__device__ __forceinline__ void block_reduce(T &acc, bool &has, const Op &op) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "block size");
    constexpr int WARPS = BLOCK / 32;
    __shared__ T warp_value[WARPS];
    __shared__ int warp_has[WARPS];
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    warp_reduce(acc, has, op);
    if (lane == 0) {
        warp_value[warp] = acc;
        warp_has[warp] = has ? 1 : 0;
    }
    __syncthreads();
    if (warp == 0) {
        has = lane < (unsigned)WARPS && warp_has[lane] != 0;
        if (has) acc = warp_value[lane];
        warp_reduce(acc, has, op);
    }
}

// BLOCK threads per block; VEC_UNROLL 16-byte loads in flight per thread per
// iteration (items per thread per iteration = VEC_UNROLL * 16 / sizeof(T)).
// `partials` holds at least gridDim.x entries.
template <int BLOCK, int VEC_UNROLL, class T, class Op>
__device__ __forceinline__ void reduce(const T *__restrict__ input, u64 n, T init, Partial<T> *partials,
                                       u32 *counter, T *output, const Op &op) {
    static_assert(VEC_UNROLL >= 1, "unroll");
    if (blockDim.x != (unsigned)BLOCK) {
        // The launch does not match the compiled block size: fail loudly.
        __trap();
    }
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK;

    T acc;
    bool has = false;
    if constexpr (!Vectorized<T>::value) {
        // A composite: a strided subset of the elements, VEC_UNROLL loads
        // in flight, folded in index order.
        for_each_strided<VEC_UNROLL>(input, n, tid, stride, [&](const T &x, u64) { fold_into(acc, has, x, op); });
    } else {
        constexpr int N = VecWidth<T>::N;
        // Elements before the first 16-byte boundary are read as scalars, as are
        // the (< N) elements after the last whole vector.
        const auto [head, nvec, tail_start, nscalar] = split_vectors<N>(input, n);
        const T *__restrict__ vinput = input + head;

        u64 i = tid;
        if (i < nvec) {
            // The first vector seeds the accumulator, so the hot loop needs no flag.
            acc = fold_vector(load16(vinput + i * N), op);
            has = true;
            i += stride;
            for (; i + (u64)(VEC_UNROLL - 1) * stride < nvec; i += (u64)VEC_UNROLL * stride) {
                Vec16<T> v[VEC_UNROLL];
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) v[u] = load16(vinput + (i + (u64)u * stride) * N);
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) acc = op(acc, fold_vector(v[u], op));
            }
            for (; i < nvec; i += stride) {
                acc = op(acc, fold_vector(load16(vinput + i * N), op));
            }
        }
        if (tid < nscalar) {
            const u64 j = tid < head ? tid : tail_start + (tid - head);
            fold_into(acc, has, input[j], op);
        }
    }

    block_reduce<BLOCK>(acc, has, op);

    // One block (small inputs): its total is the result. The same value as
    // the path below would give (one partial, folded alone), without the
    // global round trips of the partial, the fences and the counter.
    if (gridDim.x == 1) {
        if (threadIdx.x == 0) *output = has ? op(init, acc) : init;
        return;
    }

    __shared__ bool is_last_block;
    if (threadIdx.x == 0) {
        Partial<T> p;
        p.value = acc;
        p.has = has ? 1u : 0u;
        partials[blockIdx.x] = p;
        // Release: the partial is visible device-wide before the count.
        __threadfence();
        const u32 arrived = atomicAdd(counter, 1u);
        is_last_block = arrived == gridDim.x - 1;
        // Acquire: with the barrier below, the last block sees every partial.
        __threadfence();
    }
    __syncthreads();
    if (!is_last_block) return;

    // Fixed order: thread t folds partials t, t + BLOCK, ..., then the same
    // tree as above, so the result depends only on the grid size. The
    // first PARTIAL_LOADS of a thread's partials are loaded before any is
    // folded, so the last block waits for one round trip to L2, not one a
    // partial (it is the launch's tail: every other block has finished).
    has = false;
    constexpr int PARTIAL_LOADS = 4;
    Partial<T> p[PARTIAL_LOADS];
#pragma unroll
    for (int u = 0; u < PARTIAL_LOADS; ++u) {
        const unsigned b = threadIdx.x + (unsigned)u * BLOCK;
        if (b < gridDim.x) p[u] = load_partial(partials + b);
    }
#pragma unroll
    for (int u = 0; u < PARTIAL_LOADS; ++u) {
        const unsigned b = threadIdx.x + (unsigned)u * BLOCK;
        if (b < gridDim.x && p[u].has != 0u) fold_into(acc, has, p[u].value, op);
    }
    for (unsigned b = threadIdx.x + PARTIAL_LOADS * BLOCK; b < gridDim.x; b += BLOCK) {
        const Partial<T> q = load_partial(partials + b);
        if (q.has != 0u) fold_into(acc, has, q.value, op);
    }
    block_reduce<BLOCK>(acc, has, op);
    if (threadIdx.x == 0) {
        *output = has ? op(init, acc) : init;
        *counter = 0u;  // ready for the next launch
    }
}

// Device-to-device copy of 32-bit words with the same load shape, for the
// bandwidth ceiling.
template <int BLOCK, int VEC_UNROLL>
__device__ __forceinline__ void copy_i32(const int *__restrict__ input, u64 n, int *__restrict__ output) {
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK;
    const u64 in_address = reinterpret_cast<u64>(input);
    const u64 out_address = reinterpret_cast<u64>(output);
    if (((in_address ^ out_address) & 15ull) != 0) {
        // Different misalignment: no common vector boundary.
        for (u64 i = tid; i < n; i += stride) output[i] = __ldg(input + i);
        return;
    }
    const auto [head, nvec, tail_start, nscalar] = split_vectors<4>(input, n);
    const int4 *__restrict__ vinput = reinterpret_cast<const int4 *>(input + head);
    int4 *__restrict__ voutput = reinterpret_cast<int4 *>(output + head);
    u64 i = tid;
    for (; i + (u64)(VEC_UNROLL - 1) * stride < nvec; i += (u64)VEC_UNROLL * stride) {
        int4 v4[VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) v4[u] = __ldg(vinput + i + (u64)u * stride);
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) voutput[i + (u64)u * stride] = v4[u];
    }
    for (; i < nvec; i += stride) voutput[i] = __ldg(vinput + i);
    if (tid < nscalar) {
        const u64 j = tid < head ? tid : tail_start + (tid - head);
        output[j] = __ldg(input + j);
    }
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_REDUCE_CUH
