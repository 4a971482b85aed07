// Native provider: `merge_by`, two inputs each sorted by a comparator
// `Less` (`__device__ bool operator()(T a, T b) const`, a strict weak
// order) merged into one, stably: of equal elements, the first input's
// come first. Needs common.cuh and CUB's headers (as sort.cuh).
//
// These are CUB's own merge kernels (cub::DeviceMerge's, CCCL 13.0) with
// CUB's sm_90 tuning (512 threads, 15 items a thread for 4-byte elements,
// `Nominal4BItemsToItems` of the element's size), instantiated with the
// callback's comparator. The host launches a partition kernel (a thread
// for each of tiles + 1 merge-path splits of the output, each a binary
// search along its diagonal) and a merge kernel (a block a tile: the
// tile's elements of both inputs into shared memory, each thread's merge
// path there, a serial merge of its items). Offsets are 64-bit.

#ifndef RCB_PROVIDERS_MERGE_CUH
#define RCB_PROVIDERS_MERGE_CUH

#include <cub/agent/agent_merge.cuh>
#include <cub/block/block_merge_sort.cuh>

namespace rcb {

template <class T>
struct MergePolicy {
    static constexpr int ITEMS = cub::Nominal4BItemsToItems<char[sizeof(T)]>(15);
    using Agent = cub::detail::merge::agent_policy_t<512, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::LOAD_DEFAULT,
                                                     cub::BLOCK_STORE_WARP_TRANSPOSE>;
};

// Split `index` of the merged output, at `index` tiles: how many of the
// first input's elements come before it.
template <class T, class Less>
__device__ __forceinline__ void merge_partition(const T *a, u64 na, const T *b, u64 nb, u64 num_partitions,
                                                u64 *partitions, const Less &less) {
    const u64 index = (u64)blockDim.x * blockIdx.x + threadIdx.x;
    if (index < num_partitions) {
        const u64 at = index * (u64)MergePolicy<T>::Agent::ITEMS_PER_TILE;
        partitions[index] = cub::MergePath(a, b, na, nb, at < na + nb ? at : na + nb, less);
    }
}

template <class T, class Less>
__device__ __forceinline__ void merge(const T *a, u64 na, const T *b, u64 nb, T *output, u64 *partitions,
                                      const Less &less) {
    using Policy = typename MergePolicy<T>::Agent;
    using Agent = cub::detail::merge::agent_t<Policy, const T *, cub::NullType *, const T *, cub::NullType *, T *,
                                              cub::NullType *, u64, Less>;
    using THRUST_NS_QUALIFIER::cuda_cub::core::detail::make_load_iterator;
    __shared__ typename Agent::TempStorage storage;
    Agent{storage.Alias(),
          make_load_iterator(Policy{}, a),
          make_load_iterator(Policy{}, (cub::NullType *)nullptr),
          na,
          make_load_iterator(Policy{}, b),
          make_load_iterator(Policy{}, (cub::NullType *)nullptr),
          nb,
          output,
          (cub::NullType *)nullptr,
          less,
          partitions}();
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_MERGE_CUH
