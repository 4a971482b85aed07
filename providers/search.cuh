// Native provider: `partition_point`. For each query q of `queries`, the
// index of the first element x of `sorted` (n elements) for which the
// predicate (a functor `__device__ bool operator()(T x, Q q) const`) fails,
// as `slice::partition_point` finds it. Needs common.cuh.
//
// Each thread searches ITEMS queries side by side (a grid-stride loop over
// groups of them: a warp's k-th queries are consecutive). Each search makes
// the probes the standard library's binary search makes (Rust 1.95's
// `binary_search_by`: halve `size` from `base`, move `base` to the middle
// where the predicate holds, then one probe of `base`), branch-free, so the
// index is the host's for every predicate, monotone or not. The last probe
// is the predicate of `base` again, whose answer a search that moved `base`
// knows already (it moved it there because the predicate held; the
// predicate is a pure function): only a search that never moved it reads
// the first element. Every search of n elements takes the same
// ceil(log2(n)) probes before it, so a thread's searches go in lockstep,
// their loads in flight together: a search is a chain of dependent loads.
// The first probes of a warp's searches read the same few elements (the
// middles of the whole input), which the caches hold.

#ifndef RCB_PROVIDERS_SEARCH_CUH
#define RCB_PROVIDERS_SEARCH_CUH

namespace rcb {

template <int BLOCK, int ITEMS, class T, class Q, class Pred>
__device__ __forceinline__ void partition_point(const T *__restrict__ sorted, u64 n, const Q *__restrict__ queries,
                                                u64 count, u64 *__restrict__ output, const Pred &pred) {
    if (blockDim.x != (unsigned)BLOCK) __trap();
    const u64 stride = (u64)gridDim.x * BLOCK;
    for (u64 first = (u64)blockIdx.x * BLOCK + threadIdx.x; first < count; first += stride * ITEMS) {
        Q q[ITEMS];
        u64 base[ITEMS];
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            // A query past the end searches as the first one does; its
            // index is not written.
            const u64 i = first + (u64)k * stride;
            q[k] = queries[i < count ? i : first];
            base[k] = 0;
        }
        if (n > 0) {
            u64 size = n;
            while (size > 1) {
                const u64 half = size / 2;
#pragma unroll
                for (int k = 0; k < ITEMS; ++k) base[k] = pred(sorted[base[k] + half], q[k]) ? base[k] + half : base[k];
                size -= half;
            }
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) base[k] += (base[k] != 0 || pred(sorted[0], q[k])) ? 1 : 0;
        }
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const u64 i = first + (u64)k * stride;
            if (i < count) output[i] = base[k];
        }
    }
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SEARCH_CUH
