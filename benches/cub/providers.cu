// The CUB anchor of the providers benchmark: CUB's device-wide algorithms
// with the same operations as C++ functors, as a shared library that
// `gpu-run --providers-bench` loads into its own process, so that CUB and
// the Rust callbacks run on the same device buffers, timed by the same
// loop with the same events (docs/perf.md).
//
// Built on the GPU machine, one object per algorithm in parallel:
//   nvcc -O3 -arch=sm_90 -Xcompiler -fPIC -DRCB_ALGO=N -c providers.cu ...
//   nvcc -shared -o libcubbench.so *.o
// (scripts/gpu/providers-run.sh). RCB_ALGO picks the algorithm a translation
// unit instantiates; without it, all of them (one slow compile).
//
// C ABI, every call asynchronous on the legacy default stream:
//   int rcb_cub_temp_bytes(const char *algo, const char *type, unsigned long long n, size_t *bytes);
//   int rcb_cub_run(const char *algo, const char *type, const void *in, const void *in2, void *out,
//                   unsigned long long n, const unsigned long long *offsets, unsigned long long segments,
//                   void *temp, size_t temp_bytes);
// return 0, 1 for an algorithm or type this library does not have, or
// 100 + the cudaError_t of a failed call. The operations (those of the
// SPEC's CUB table): reduce = max from the type's lowest value, scans = +
// (exclusive from 0), transform = 3x + 1, transform2 = a + b, select = x > 0,
// segmented reduce = + from 0 per segment, merge sort = a < b
// (SortKeysCopy: input to output), dedup_by = Unique (a == b), partition =
// DevicePartition::If with x > 0 (the rejected elements after the kept
// ones, last first), partition_point = Thrust's vectorised lower_bound
// with a < b (CUB has no device-wide search; `in` the sorted data, `in2`
// the queries, 64-bit indices out), histogram = HistogramEven with 257
// levels into 32-bit counters (over every int: levels -2^31 and 2^31 as
// long long; floats: [-1000, 1000)), merge_by = DeviceMerge::MergeKeys
// with a < b (`in` and `in2` sorted, n each, 2n out), radix_sort =
// DeviceRadixSort::SortKeys (input to output), the anchor of a sort_by
// whose order the compiler proved (run with RMIR_SORT=radix),
// segmented_sort_by = DeviceSegmentedSort::StableSortKeys (CUB's only
// segmented sort: a radix sort, ascending; input to output).
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_merge.cuh>
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cub/device/device_transform.cuh>
#include <cuda/std/limits>
#include <cuda/std/tuple>
#include <thrust/binary_search.h>
#include <thrust/execution_policy.h>
#include <cstring>

namespace {

struct Max {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a < b ? b : a; }
};
struct Plus {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
template <class T> struct Affine {
  __device__ __forceinline__ T operator()(T x) const { return T(3) * x + T(1); }
};
template <class T> struct Sum2 {
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
template <class T> struct Positive {
  __device__ __forceinline__ bool operator()(T x) const { return x > T(0); }
};
struct Less {
  template <class T> __device__ __forceinline__ bool operator()(T a, T b) const { return a < b; }
};
struct Equal {
  template <class T> __device__ __forceinline__ bool operator()(T a, T b) const { return a == b; }
};

// 0 ok; 100 + error.
int status(cudaError_t e) { return e == cudaSuccess ? 0 : 100 + int(e); }

template <class T>
int run(int algo, const void *in_, const void *in2_, void *out_, unsigned long long n,
        const unsigned long long *offsets, unsigned long long segments, void *temp, size_t &bytes) {
  const T *in = static_cast<const T *>(in_);
  const T *in2 = static_cast<const T *>(in2_);
  (void)in2;
  (void)offsets;
  (void)segments;
  T *out = static_cast<T *>(out_);
  (void)out;
  // Counts as CUB's users pass them: an int for the algorithms whose
  // count type is a template parameter (their offsets are then 32-bit).
  const int count = int(n);
  (void)count;
  switch (algo) {
#if !defined(RCB_ALGO) || RCB_ALGO == 0
    case 0:
      return status(cub::DeviceReduce::Reduce(temp, bytes, in, out, count, Max{},
                                              ::cuda::std::numeric_limits<T>::lowest()));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 1
    case 1:
      return status(cub::DeviceScan::InclusiveScan(temp, bytes, in, out, Plus{}, count));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 2
    case 2:
      return status(cub::DeviceScan::ExclusiveScan(temp, bytes, in, out, Plus{}, T(0), count));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 3
    case 3:
      if (temp == nullptr) { bytes = 1; return 0; }
      return status(cub::DeviceTransform::Transform(in, out, count, Affine<T>{}));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 4
    case 4:
      if (temp == nullptr) { bytes = 1; return 0; }
      return status(cub::DeviceTransform::Transform(::cuda::std::make_tuple(in, in2), out, count, Sum2<T>{}));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 5
    case 5:
      // The count of kept elements goes to the first word after n elements.
      return status(cub::DeviceSelect::If(temp, bytes, in, out,
                                          reinterpret_cast<unsigned long long *>(out + n), count, Positive<T>{}));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 6
    case 6:
      return status(cub::DeviceSegmentedReduce::Reduce(temp, bytes, in, out, int(segments), offsets, offsets + 1,
                                                        Plus{}, T(0)));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 7
    case 7:
      return status(cub::DeviceMergeSort::SortKeysCopy(temp, bytes, in, out, count, Less{}));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 8
    case 8:
      // As select: the count of kept elements after n elements.
      return status(cub::DeviceSelect::Unique(temp, bytes, in, out, reinterpret_cast<unsigned long long *>(out + n),
                                              count));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 9
    case 9:
      // As select: the count of kept elements after n elements.
      return status(cub::DevicePartition::If(temp, bytes, in, out, reinterpret_cast<unsigned long long *>(out + n),
                                             count, Positive<T>{}));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 10
    case 10: {
      if (temp == nullptr) { bytes = 1; return 0; }
      auto *indices = reinterpret_cast<unsigned long long *>(out_);
      thrust::lower_bound(thrust::cuda::par_nosync, in, in + n, in2, in2 + n, indices, Less{});
      return status(cudaGetLastError());
    }
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 11
    case 11: {
      auto *counts = reinterpret_cast<unsigned int *>(out_);
      if constexpr (::cuda::std::is_floating_point_v<T>) {
        return status(cub::DeviceHistogram::HistogramEven(temp, bytes, in, counts, 257, T(-1000), T(1000), count));
      } else if constexpr (sizeof(T) == 4) {
        return status(cub::DeviceHistogram::HistogramEven(temp, bytes, in, counts, 257, -(1ll << 31), 1ll << 31,
                                                          count));
      } else {
        return 1;
      }
    }
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 12
    case 12:
      return status(cub::DeviceMerge::MergeKeys(temp, bytes, in, count, in2, count, out, Less{}));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 13
    case 13:
      // The keys in `in`, the values in `in2`: the runs' keys, their folds
      // after n elements, the count of runs after 2n.
      return status(cub::DeviceReduce::ReduceByKey(temp, bytes, in, out, in2, out + n,
                                                   reinterpret_cast<unsigned long long *>(out + 2 * n), Plus{},
                                                   count));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 14
    case 14:
      return status(cub::DeviceScan::InclusiveScanByKey(temp, bytes, in, in2, out, Plus{}, count, Equal{}));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 15
    case 15:
      return status(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, count));
#endif
#if !defined(RCB_ALGO) || RCB_ALGO == 16
    case 16:
      return status(cub::DeviceSegmentedSort::StableSortKeys(temp, bytes, in, out, count, int(segments), offsets,
                                                             offsets + 1));
#endif
    default:
      return 1;
  }
}

int algo_index(const char *algo) {
  const char *names[] = {"reduce",  "inclusive_scan", "exclusive_scan", "transform",
                         "transform2", "select", "segmented_reduce", "sort_by",
                         "dedup_by", "partition", "partition_point", "histogram", "merge_by",
                         "reduce_by_key", "scan_by_key", "radix_sort", "segmented_sort_by"};
  for (int i = 0; i < 17; ++i)
    if (std::strcmp(algo, names[i]) == 0) return i;
  return -1;
}

int dispatch(const char *algo, const char *type, const void *in, const void *in2, void *out,
             unsigned long long n, const unsigned long long *offsets, unsigned long long segments, void *temp,
             size_t &bytes) {
  const int a = algo_index(algo);
  if (a < 0) return 1;
  if (std::strcmp(type, "i32") == 0) return run<int>(a, in, in2, out, n, offsets, segments, temp, bytes);
  if (std::strcmp(type, "i64") == 0) return run<long long>(a, in, in2, out, n, offsets, segments, temp, bytes);
  if (std::strcmp(type, "f32") == 0) return run<float>(a, in, in2, out, n, offsets, segments, temp, bytes);
  if (std::strcmp(type, "f64") == 0) return run<double>(a, in, in2, out, n, offsets, segments, temp, bytes);
  return 1;
}

}  // namespace

#if !defined(RCB_ALGO)
#  define RCB_SUFFIX(name) name
#else
#  define RCB_PASTE2(a, b) a##b
#  define RCB_PASTE(a, b) RCB_PASTE2(a, b)
#  define RCB_SUFFIX(name) RCB_PASTE(name, RCB_PASTE(_, RCB_ALGO))
#endif

extern "C" int RCB_SUFFIX(rcb_cub_temp_bytes)(const char *algo, const char *type, unsigned long long n,
                                              size_t *bytes) {
  *bytes = 0;
  return dispatch(algo, type, nullptr, nullptr, nullptr, n, nullptr, n / 1024 + 1, nullptr, *bytes);
}

extern "C" int RCB_SUFFIX(rcb_cub_run)(const char *algo, const char *type, const void *in, const void *in2,
                                       void *out, unsigned long long n, const unsigned long long *offsets,
                                       unsigned long long segments, void *temp, size_t temp_bytes) {
  size_t bytes = temp_bytes;
  return dispatch(algo, type, in, in2, out, n, offsets, segments, temp, bytes);
}
