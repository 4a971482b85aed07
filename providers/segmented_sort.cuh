// Native provider: a stable sort of each segment of an input by a
// comparator `Less` (as sort.cuh's, a strict weak order), the elements
// outside every segment left where they are, for sm_90. Needs common.cuh,
// sort.cuh and CUB's headers.
//
// A segmented sort never moves an element out of its segment, so it is one
// stable sort of the whole input by (segment, element): each element is
// tagged with its segment (`Segmented<T>`), the tagged elements are sorted
// in place by sort.cuh's kernels (CUB's merge sort agents) with
// `SegmentedLess`, which orders segments by their index and the elements
// of one segment by the callback, and the sorted elements are untagged
// into the output. Segment `k` (`offsets[k]..offsets[k+1]`) is tagged
// `k + 1`; the elements before the first offset are tagged 0 and those
// from the last one on `segments + 1`, and `SegmentedLess` finds any two
// of those equal, so that the stable sort leaves them in their places.
// Tags are 32-bit: at most 2^32 - 3 segments (and the merge sort's 2^32 - 1
// elements).
//
// Where every segment fits a tile (the runtime checks), there is a faster
// way, which never merges across tiles: the runtime packs consecutive
// segments into packs of at most a tile of elements, and `pack_sort` sorts
// each pack in one block (CUB's BlockMergeSort of its elements tagged in
// registers), reading each element once and writing it once.

#ifndef RCB_PROVIDERS_SEGMENTED_SORT_CUH
#define RCB_PROVIDERS_SEGMENTED_SORT_CUH

#include <cub/block/block_load.cuh>
#include <cub/block/block_merge_sort.cuh>
#include <cub/block/block_store.cuh>

namespace rcb {

template <class T>
struct Segmented {
    u32 segment;
    T value;
};

template <class T, class Less>
struct SegmentedLess {
    Less less;
    // The tag of the elements after the last segment.
    u32 after;
    __device__ __forceinline__ bool operator()(const Segmented<T> &a, const Segmented<T> &b) const {
        if (a.segment != b.segment) {
            return a.segment < b.segment;
        }
        return a.segment != 0 && a.segment != after && less(a.value, b.value);
    }
};

template <class T, class Less>
__device__ __forceinline__ SegmentedLess<T, Less> segmented_less(const Less &less, unsigned long long segments) {
    return SegmentedLess<T, Less>{less, u32(segments + 1)};
}

// Element `i`'s tag: the number of offsets at or before it (a binary search
// of the `segments + 1` offsets), so that an empty segment tags nothing.
template <class T>
__device__ __forceinline__ void segmented_tag(const T *__restrict__ input, u32 len,
                                              const unsigned long long *__restrict__ offsets,
                                              unsigned long long segments, Segmented<T> *__restrict__ tagged) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) {
        return;
    }
    u32 lo = 0, hi = u32(segments + 1);
    while (lo < hi) {
        const u32 mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= i) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    tagged[i].segment = lo;
    tagged[i].value = input[i];
}

template <class T>
__device__ __forceinline__ void segmented_untag(const Segmented<T> *__restrict__ tagged, u32 len,
                                                T *__restrict__ output) {
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) {
        output[i] = tagged[i].value;
    }
}

// Sorts pack `blockIdx.x`: segments `packs[p]..packs[p+1]`, the elements
// `offsets[packs[p]]..offsets[packs[p+1]]` (at most a tile), from `input`
// to `output`. Each element is tagged with its segment's index (a binary
// search of the pack's offsets, tagged `k + 1` as `segmented_tag` tags
// segment `k`); the rest of the tile is padding tagged past every segment,
// which BlockMergeSort keeps at the end.
template <int BLOCK, int ITEMS, class T, class Less>
__device__ __forceinline__ void pack_sort(const T *__restrict__ input, T *__restrict__ output,
                                          const unsigned long long *__restrict__ offsets,
                                          const unsigned int *__restrict__ packs, const Less &less) {
    using Load = cub::BlockLoad<T, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Sort = cub::BlockMergeSort<Segmented<T>, BLOCK, ITEMS>;
    using SortOne = cub::BlockMergeSort<T, BLOCK, ITEMS>;
    using Store = cub::BlockStore<T, BLOCK, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    __shared__ union {
        typename Load::TempStorage load;
        typename Sort::TempStorage sort;
        typename SortOne::TempStorage sort_one;
        typename Store::TempStorage store;
    } storage;
    const u32 first = packs[blockIdx.x], last = packs[blockIdx.x + 1];
    const unsigned long long begin = offsets[first];
    const int valid = int(offsets[last] - begin);
    T values[ITEMS];
    Load(storage.load).Load(input + begin, values, valid);
    if (last - first <= 1) {
        // A pack of one segment needs no tags: its elements are sorted by
        // the callback alone (the padding, never compared with them, stays
        // at the end).
        __syncthreads();
        SortOne(storage.sort_one).Sort(values, less.less, valid, values[0]);
        __syncthreads();
        Store(storage.store).Store(output + begin, values, valid);
        return;
    }
    Segmented<T> keys[ITEMS];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int j = threadIdx.x * ITEMS + k;
        u32 segment = 0xffffffffu;
        if (j < valid) {
            // The last segment of the pack that starts at or before j.
            u32 lo = first, hi = last;
            while (hi - lo > 1) {
                const u32 mid = lo + (hi - lo) / 2;
                if (offsets[mid] - begin <= (unsigned long long)j) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            // Tagged as the tag kernel tags it (tag 0 is for the
            // elements before every segment).
            segment = lo + 1;
        }
        keys[k].segment = segment;
        keys[k].value = values[k];
    }
    Segmented<T> padding;
    padding.segment = 0xffffffffu;
    padding.value = T{};
    __syncthreads();
    Sort(storage.sort).Sort(keys, less, valid, padding);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        values[k] = keys[k].value;
    }
    __syncthreads();
    Store(storage.store).Store(output + begin, values, valid);
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SEGMENTED_SORT_CUH
