// Native provider: `histogram`. How many of the n elements the bin
// function (a functor `__device__ u64 operator()(T x) const`) maps to each
// of `bins` 64-bit counters; an index at or past `bins` is not counted.
// Needs common.cuh.
//
// The host zeroes the counters before the launch. With at most
// SHARED_BINS bins, each block counts in shared memory (32-bit counters,
// one shared atomic an element), then adds its non-zero counts to the
// global ones: one global atomic a bin a block, on resident blocks that
// stride over the whole input. With more bins every element's count goes
// to global memory. Elements move as 16-byte vectors where they are
// scalars (the head and tail before and after the aligned middle one at a
// time), composites one at a time; the callback is called once per
// element. The counts are the same whatever the order of the atomics.

#ifndef RCB_PROVIDERS_HISTOGRAM_CUH
#define RCB_PROVIDERS_HISTOGRAM_CUH

namespace rcb {

// Bins a block counts in shared memory (32 KiB of counters).
constexpr u64 SHARED_BINS = 8192;

template <int BLOCK, int VEC_UNROLL, class T, class Bin>
__device__ __forceinline__ void histogram(const T *__restrict__ input, u64 n, u64 bins,
                                          unsigned long long *__restrict__ output, const Bin &bin) {
    if (blockDim.x != (unsigned)BLOCK) __trap();
    __shared__ unsigned int counts[SHARED_BINS];
    const bool in_shared = bins <= SHARED_BINS;
    if (in_shared) {
        for (u64 b = threadIdx.x; b < bins; b += BLOCK) counts[b] = 0;
        __syncthreads();
    }
    const auto count = [&](const T &x) {
        const u64 b = bin(x);
        if (b < bins) {
            if (in_shared) {
                atomicAdd(&counts[b], 1u);
            } else {
                atomicAdd(&output[b], 1ull);
            }
        }
    };
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK;
    if constexpr (!Vectorized<T>::value) {
        for_each_strided<VEC_UNROLL>(input, n, tid, stride, [&](const T &x, u64) { count(x); });
    } else {
        constexpr int N = VecWidth<T>::N;
        const auto [head, nvec, tail_start, nscalar] = split_vectors<N>(input, n);
        const T *__restrict__ vinput = input + head;
        u64 i = tid;
        for (; i + (u64)(VEC_UNROLL - 1) * stride < nvec; i += (u64)VEC_UNROLL * stride) {
            Vec16<T> v[VEC_UNROLL];
#pragma unroll
            for (int u = 0; u < VEC_UNROLL; ++u) v[u] = load16(vinput + (i + (u64)u * stride) * N);
#pragma unroll
            for (int u = 0; u < VEC_UNROLL; ++u) {
#pragma unroll
                for (int k = 0; k < N; ++k) count(v[u].v[k]);
            }
        }
        for (; i < nvec; i += stride) {
            const Vec16<T> v = load16(vinput + i * N);
#pragma unroll
            for (int k = 0; k < N; ++k) count(v.v[k]);
        }
        if (tid < nscalar) count(input[tid < head ? tid : tail_start + (tid - head)]);
    }
    if (in_shared) {
        __syncthreads();
        for (u64 b = threadIdx.x; b < bins; b += BLOCK) {
            const unsigned int c = counts[b];
            if (c != 0) atomicAdd(&output[b], (unsigned long long)c);
        }
    }
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_HISTOGRAM_CUH
