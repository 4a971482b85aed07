// Native provider: i32 reduction for sm_90, parameterised by a functor `Op`
// with `__device__ int operator()(int a, int b) const`.
//
// Contract with callbacks
// -----------------------
// The provider folds the elements in a tree, not left to right: each thread
// folds a strided subset, warps and blocks combine by shuffles, and the last
// block to finish combines the per-block partials in block order. `init` is
// applied exactly once, as `op(init, fold(all elements))` (or `init` alone for
// n == 0). The result therefore equals the host's sequential fold
// `op(...op(op(init, x0), x1)..., xn-1)` for every op that is associative
// and commutative (wrapping add/mul, xor, and, or, min, max). For other ops the
// result is deterministic for a given (n, pointer alignment, grid size) but
// may differ from the host fold. `Op` must be a pure function: it is called
// under divergence and must not use warp-collective operations.
//
// No identity element is assumed (the callback is arbitrary), so every
// partial carries a "has a value" flag and empty lanes are skipped.
//
// Kernel shape: one launch. Each block writes one partial; the last block to
// arrive (threadfence + atomic counter) combines them and resets the counter
// to zero, so the counter must be zero before the first launch and stays
// zero between launches that complete.
//
// This header has no includes, so NVRTC compiles it without any include path.

#ifndef RCB_PROVIDERS_REDUCE_CUH
#define RCB_PROVIDERS_REDUCE_CUH

namespace rcb {

// Handed to thunks of callbacks with no captures: a valid, non-null pointer
// to one byte that the thunk never reads.
static __device__ const unsigned char empty_env[1] = {0};

template <class Op>
__device__ __forceinline__ void fold_into(int &acc, bool &has, int x, const Op &op) {
    acc = has ? op(acc, x) : x;
    has = true;
}

// Warp tree reduction with validity flags; lane 0 ends with the warp's fold.
template <class Op>
__device__ __forceinline__ void warp_reduce(int &acc, bool &has, const Op &op) {
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (unsigned offset = 16; offset > 0; offset >>= 1) {
        const int other = __shfl_down_sync(0xffffffffu, acc, offset);
        const int other_has = __shfl_down_sync(0xffffffffu, has ? 1 : 0, offset);
        if (other_has && lane + offset < 32u) {
            fold_into(acc, has, other, op);
        }
    }
}

// Block reduction; thread 0 ends with the block's fold and its flag.
// Callers that use it twice must separate the calls by a __syncthreads().
template <int BLOCK, class Op>
__device__ __forceinline__ void block_reduce(int &acc, bool &has, const Op &op) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "block size");
    constexpr int WARPS = BLOCK / 32;
    __shared__ int warp_value[WARPS];
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
        acc = has ? warp_value[lane] : 0;
        warp_reduce(acc, has, op);
    }
}

// BLOCK threads per block; VEC_UNROLL int4 loads in flight per thread per
// iteration (items per thread per iteration = 4 * VEC_UNROLL).
// `partials` holds at least gridDim.x entries of (value, has).
template <int BLOCK, int VEC_UNROLL, class Op>
__device__ __forceinline__ void reduce_i32(const int *__restrict__ input, unsigned long long n, int init,
                                           int2 *partials, unsigned int *counter, int *output, const Op &op) {
    static_assert(VEC_UNROLL >= 1, "unroll");
    if (blockDim.x != (unsigned)BLOCK) {
        // The launch does not match the compiled block size: fail loudly.
        __trap();
    }
    // Elements before the first 16-byte boundary are read as scalars, as are
    // the (< 4) elements after the last whole int4.
    const unsigned long long address = reinterpret_cast<unsigned long long>(input);
    unsigned long long head = ((16ull - (address & 15ull)) & 15ull) >> 2;
    if (head > n) head = n;
    const unsigned long long nvec = (n - head) >> 2;
    const unsigned long long tail_start = head + (nvec << 2);
    const unsigned long long nscalar = head + (n - tail_start);
    const int4 *__restrict__ vinput = reinterpret_cast<const int4 *>(input + head);

    const unsigned long long tid = (unsigned long long)blockIdx.x * BLOCK + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * BLOCK;

    int acc = 0;
    bool has = false;
    unsigned long long i = tid;
    if (i < nvec) {
        // The first vector seeds the accumulator, so the hot loop needs no flag.
        const int4 v = __ldg(vinput + i);
        acc = op(op(v.x, v.y), op(v.z, v.w));
        has = true;
        i += stride;
        for (; i + (unsigned long long)(VEC_UNROLL - 1) * stride < nvec; i += (unsigned long long)VEC_UNROLL * stride) {
            int4 v4[VEC_UNROLL];
#pragma unroll
            for (int u = 0; u < VEC_UNROLL; ++u) v4[u] = __ldg(vinput + i + (unsigned long long)u * stride);
#pragma unroll
            for (int u = 0; u < VEC_UNROLL; ++u) acc = op(acc, op(op(v4[u].x, v4[u].y), op(v4[u].z, v4[u].w)));
        }
        for (; i < nvec; i += stride) {
            const int4 w = __ldg(vinput + i);
            acc = op(acc, op(op(w.x, w.y), op(w.z, w.w)));
        }
    }
    if (tid < nscalar) {
        const unsigned long long j = tid < head ? tid : tail_start + (tid - head);
        fold_into(acc, has, __ldg(input + j), op);
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
        partials[blockIdx.x] = make_int2(acc, has ? 1 : 0);
        // Release: the partial is visible device-wide before the count.
        __threadfence();
        const unsigned int arrived = atomicAdd(counter, 1u);
        is_last_block = arrived == gridDim.x - 1;
        // Acquire: with the barrier below, the last block sees every partial.
        __threadfence();
    }
    __syncthreads();
    if (!is_last_block) return;

    // Fixed order: thread t folds partials t, t + BLOCK, ..., then the same
    // tree as above, so the result depends only on the grid size.
    acc = 0;
    has = false;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) {
        const int2 p = __ldcg(partials + b);  // L2: L1 is not coherent
        if (p.y != 0) fold_into(acc, has, p.x, op);
    }
    block_reduce<BLOCK>(acc, has, op);
    if (threadIdx.x == 0) {
        *output = has ? op(init, acc) : init;
        *counter = 0u;  // ready for the next launch
    }
}

// Device-to-device copy with the same load shape, for the bandwidth ceiling.
template <int BLOCK, int VEC_UNROLL>
__device__ __forceinline__ void copy_i32(const int *__restrict__ input, unsigned long long n, int *__restrict__ output) {
    const unsigned long long tid = (unsigned long long)blockIdx.x * BLOCK + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * BLOCK;
    const unsigned long long in_address = reinterpret_cast<unsigned long long>(input);
    const unsigned long long out_address = reinterpret_cast<unsigned long long>(output);
    if (((in_address ^ out_address) & 15ull) != 0) {
        // Different misalignment: no common vector boundary.
        for (unsigned long long i = tid; i < n; i += stride) output[i] = __ldg(input + i);
        return;
    }
    unsigned long long head = ((16ull - (in_address & 15ull)) & 15ull) >> 2;
    if (head > n) head = n;
    const unsigned long long nvec = (n - head) >> 2;
    const unsigned long long tail_start = head + (nvec << 2);
    const unsigned long long nscalar = head + (n - tail_start);
    const int4 *__restrict__ vinput = reinterpret_cast<const int4 *>(input + head);
    int4 *__restrict__ voutput = reinterpret_cast<int4 *>(output + head);
    unsigned long long i = tid;
    for (; i + (unsigned long long)(VEC_UNROLL - 1) * stride < nvec; i += (unsigned long long)VEC_UNROLL * stride) {
        int4 v4[VEC_UNROLL];
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) v4[u] = __ldg(vinput + i + (unsigned long long)u * stride);
#pragma unroll
        for (int u = 0; u < VEC_UNROLL; ++u) voutput[i + (unsigned long long)u * stride] = v4[u];
    }
    for (; i < nvec; i += stride) voutput[i] = __ldg(vinput + i);
    if (tid < nscalar) {
        const unsigned long long j = tid < head ? tid : tail_start + (tid - head);
        output[j] = __ldg(input + j);
    }
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_REDUCE_CUH
