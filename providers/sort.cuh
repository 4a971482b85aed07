// Native provider: stable merge sort of T by a comparator `Less` with
// `__device__ bool operator()(T a, T b) const` (a strict weak order), for
// sm_90. Needs common.cuh and CUB's headers (the only provider that
// includes anything: NVRTC gets CCCL's include folder for it).
//
// These are CUB's own merge sort agents (cub::DeviceMergeSort's kernels,
// CCCL 13.0) with CUB's sm_90 tuning, 256 threads and 17 items a thread
// for elements of up to 4 bytes (8 for 8-byte ones), instantiated with the
// callback's comparator: its speed is CUB's by construction. The host runs
// CUB's dispatch: one block-sort launch over tiles of 256 * ITEMS elements,
// then ceil(log2(tiles)) passes of a partition launch (merge-path splits)
// and a merge launch, ping-ponging between the output and a buffer of n
// elements so that the last pass writes the output. Offsets are 32-bit (as
// CUB's for an `int` count): at most 2^32 - 1 elements.

#ifndef RCB_PROVIDERS_SORT_CUH
#define RCB_PROVIDERS_SORT_CUH

#include <cub/agent/agent_merge_sort.cuh>

namespace rcb {

template <class T>
struct SortPolicy {
    static constexpr int ITEMS = cub::Nominal4BItemsToItems<T>(17);
    using Agent = cub::AgentMergeSortPolicy<256, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE, cub::LOAD_DEFAULT,
                                            cub::BLOCK_STORE_WARP_TRANSPOSE>;
};

template <class T, class Less>
__device__ __forceinline__ void sort_block(bool ping, const T *input, T *output, u32 n, T *buffer, const Less &less) {
    using Agent = cub::detail::merge_sort::AgentBlockSort<typename SortPolicy<T>::Agent, const T *, cub::NullType *,
                                                          T *, cub::NullType *, u32, Less, T, cub::NullType>;
    __shared__ typename Agent::TempStorage storage;
    Agent agent(ping, storage, input, (cub::NullType *)nullptr, n, output, (cub::NullType *)nullptr, buffer,
                (cub::NullType *)nullptr, less);
    agent.Process();
}

template <class T, class Less>
__device__ __forceinline__ void sort_partition(bool ping, T *output, T *buffer, u32 n, u32 num_partitions,
                                               u32 *partitions, u32 target_merged_tiles, int items_per_tile,
                                               const Less &less) {
    const u32 index = blockDim.x * blockIdx.x + threadIdx.x;
    if (index < num_partitions) {
        cub::detail::merge_sort::AgentPartition<T *, u32, Less, T> agent(
            ping, output, buffer, n, index, partitions, less, target_merged_tiles, items_per_tile, num_partitions);
        agent.Process();
    }
}

template <class T, class Less>
__device__ __forceinline__ void sort_merge(bool ping, T *output, u32 n, T *buffer, u32 *partitions,
                                           u32 target_merged_tiles, const Less &less) {
    using Agent = cub::detail::merge_sort::AgentMerge<typename SortPolicy<T>::Agent, T *, cub::NullType *, u32, Less,
                                                      T, cub::NullType>;
    __shared__ typename Agent::TempStorage storage;
    Agent agent(ping, storage, output, (cub::NullType *)nullptr, buffer, (cub::NullType *)nullptr, n, buffer,
                (cub::NullType *)nullptr, output, (cub::NullType *)nullptr, less, partitions, target_merged_tiles);
    agent.Process();
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SORT_CUH
