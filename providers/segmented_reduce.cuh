// Native provider: one reduction per segment for sm_90 (segment i is
// input[offsets[i] .. offsets[i+1]]; an empty one gives `init`), with the
// functor `Op` of reduce.cuh. Needs common.cuh and reduce.cuh.
//
// Two shapes in one kernel, chosen by the host per launch from the longest
// segment (`per_block`): a warp per segment (short segments: no block
// barrier, eight segments in flight per block), or a block per segment
// (long ones). Either way a segment is folded as reduce.cuh folds: strided
// 16-byte vectors (each a pairwise tree), then a shuffle tree, and `init`
// once, as op(init, fold(segment)). So the result equals the host's
// sequential fold for associative and commutative ops, and is the same bits
// on every run of the same input (and shape) otherwise.

#ifndef RCB_PROVIDERS_SEGMENTED_REDUCE_CUH
#define RCB_PROVIDERS_SEGMENTED_REDUCE_CUH

namespace rcb {

// Folds input[lo, hi) over `lanes` threads numbered `rank`: 16-byte vectors
// strided over the threads (VEC_UNROLL in flight), the unaligned head and
// the tail as scalars; a composite's elements one at a time.
template <int VEC_UNROLL, class T, class Op>
__device__ __forceinline__ void fold_range(const T *__restrict__ input, u64 lo, u64 hi, unsigned rank,
                                           unsigned lanes, T &acc, bool &has, const Op &op) {
    const u64 n = hi - lo;
    const T *__restrict__ base = input + lo;
    if constexpr (!Vectorized<T>::value) {
        // A composite: the elements strided over the threads, in order.
        for (u64 k = rank; k < n; k += lanes) fold_into(acc, has, base[k], op);
        return;
    } else {
        constexpr int N = VecWidth<T>::N;
        const auto [head, nvec, tail_start, nscalar] = split_vectors<N>(base, n);
        const T *__restrict__ vbase = base + head;
        u64 i = rank;
        if (i < nvec) {
            T first = fold_vector(load16(vbase + i * N), op);
            acc = has ? op(acc, first) : first;
            has = true;
            i += lanes;
            for (; i + (u64)(VEC_UNROLL - 1) * lanes < nvec; i += (u64)VEC_UNROLL * lanes) {
                Vec16<T> v[VEC_UNROLL];
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) v[u] = load16(vbase + (i + (u64)u * lanes) * N);
#pragma unroll
                for (int u = 0; u < VEC_UNROLL; ++u) acc = op(acc, fold_vector(v[u], op));
            }
            for (; i < nvec; i += lanes) acc = op(acc, fold_vector(load16(vbase + i * N), op));
        }
        for (u64 k = rank; k < nscalar; k += lanes) {
            const u64 j = k < head ? k : tail_start + (k - head);
            fold_into(acc, has, base[j], op);
        }
    }
}

template <int BLOCK, int VEC_UNROLL, class T, class Op>
__device__ __forceinline__ void segmented_reduce(const T *__restrict__ input, const u64 *__restrict__ offsets,
                                                 u64 segments, T init, T *__restrict__ output, u32 per_block,
                                                 const Op &op) {
    if (blockDim.x != (unsigned)BLOCK) __trap();
    if (per_block) {
        for (u64 seg = blockIdx.x; seg < segments; seg += gridDim.x) {
            T acc = T();
            bool has = false;
            fold_range<VEC_UNROLL>(input, offsets[seg], offsets[seg + 1], threadIdx.x, BLOCK, acc, has, op);
            block_reduce<BLOCK>(acc, has, op);
            if (threadIdx.x == 0) output[seg] = has ? op(init, acc) : init;
            __syncthreads();  // block_reduce's shared memory is reused
        }
        return;
    }
    constexpr int WARPS = BLOCK / 32;
    const unsigned lane = threadIdx.x & 31u;
    const u64 warp_id = (u64)blockIdx.x * WARPS + (threadIdx.x >> 5);
    const u64 warps = (u64)gridDim.x * WARPS;
    for (u64 seg = warp_id; seg < segments; seg += warps) {
        T acc = T();
        bool has = false;
        fold_range<VEC_UNROLL>(input, offsets[seg], offsets[seg + 1], lane, 32u, acc, has, op);
        warp_reduce(acc, has, op);
        if (lane == 0) output[seg] = has ? op(init, acc) : init;
    }
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SEGMENTED_REDUCE_CUH
