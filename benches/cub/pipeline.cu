// The CUB and cudaMemcpy anchor of examples/gpu-providers/pipeline: the
// same calls written in C++ as a CUB user writes them, timed the same way
// (host wall time, best of REPS), printing `cub NAME SIZE MICROSECONDS`
// lines that scripts/gpu/pipeline-run.sh sets beside the Rust program's.
//
//   nvcc -O3 -arch=sm_90 -o pipeline_cub benches/cub/pipeline.cu
//   ./pipeline_cub [REPS]            every row
//   ./pipeline_cub REPS launches     the launch rows alone
//
// Device memory comes from the stream-ordered pool with its release
// threshold raised (as the Rust runtime does); intermediates stay on the
// device; a host result goes to a new std::vector, as a Rust call's
// `to_vec` makes a new Vec.
#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/device/device_transform.cuh>
#include <thrust/iterator/transform_iterator.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda/std/limits>
#include <cuda/std/tuple>
#include <vector>

#define CHECK(x)                                                                             \
  do {                                                                                       \
    cudaError_t e_ = (x);                                                                    \
    if (e_ != cudaSuccess) {                                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                          \
    }                                                                                        \
  } while (0)

struct Affine {
  float g;
  __device__ __forceinline__ float operator()(float v) const { return v * g + 1.0f; }
};
struct Max {
  __device__ __forceinline__ float operator()(float a, float b) const { return a < b ? b : a; }
};
struct Above {
  float t;
  __device__ __forceinline__ bool operator()(float v) const { return v > t; }
};
struct Sum {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};
// `map(v * g + 1).filter(v > t)`, counted: 1 for a kept element.
struct AffineAbove {
  float g, t;
  __device__ __forceinline__ unsigned long long operator()(float v) const { return v * g + 1.0f > t ? 1ull : 0ull; }
};
struct Abs {
  __device__ __forceinline__ float operator()(float v) const { return fabsf(v); }
};

// Composite elements, as the Rust program's tuples and structs (the same
// layouts: `(f32, u32)` is a float then an unsigned, `Point` three 4-byte
// fields).
struct Pair {
  float v;
  unsigned i;
};
struct ArgMin {
  __device__ __forceinline__ Pair operator()(Pair a, Pair b) const {
    return (b.v < a.v || (b.v == a.v && b.i < a.i)) ? b : a;
  }
};
struct Point {
  float x, y;
  unsigned w;
};
struct Extent {
  __device__ __forceinline__ Point operator()(Point a, Point b) const {
    return Point{a.x < b.x ? b.x : a.x, b.y < a.y ? b.y : a.y, a.w + b.w};
  }
};
// `a.x.total_cmp(&b.x) == Less` for the values the program sorts (no NaN,
// no negative zero among them: `<` agrees with total_cmp there).
struct ByX {
  __device__ __forceinline__ bool operator()(const Point &a, const Point &b) const { return a.x < b.x; }
};
struct Norm {
  __device__ __forceinline__ float operator()(Point p) const { return p.x * p.x + p.y * p.y; }
};
// The points' key for DeviceRadixSort's custom-type sort: `w`.
struct ByW {
  __host__ __device__ cuda::std::tuple<unsigned &> operator()(Point &p) const { return {p.w}; }
};
struct Bucket {
  __device__ __forceinline__ unsigned operator()(const Point &p) const { return p.w >> 8; }
};
struct NearOrigin {
  __device__ __forceinline__ bool operator()(const Point &p) const { return p.x * p.x + p.y * p.y < 0.25f; }
};

// Records of 24 and 32 bytes, as the Rust program's `Wide` and `Wider`,
// sorted by their 4-byte `w`.
struct Wide {
  unsigned long long id;
  float x, y;
  unsigned w;
  int tag;
};
struct Wider {
  unsigned long long id;
  double a;
  unsigned long long b;
  unsigned w;
  short tag;
  unsigned char k;
};
template <class R> struct ByRecordW {
  __host__ __device__ cuda::std::tuple<unsigned &> operator()(R &r) const { return {r.w}; }
};
template <class R> __global__ void record_keys(const R *in, unsigned *keys, unsigned *index, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    keys[i] = in[i].w;
    index[i] = unsigned(i);
  }
}
template <class R> __global__ void gather_records(const R *in, const unsigned *index, R *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[index[i]];
}

static std::vector<float> data(size_t n, unsigned long long seed) {
  unsigned long long s = (seed * 0x9E3779B97F4A7C15ull) | 1;
  std::vector<float> out(n);
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    out[i] = float(s >> 40) / float(1ull << 24) * 2.0f - 1.0f;
  }
  return out;
}

template <class F> static double best(int reps, F f) {
  double b = 1e300;
  for (int r = 0; r < reps; r++) {
    auto t = std::chrono::steady_clock::now();
    f();
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t).count();
    if (us < b) b = us;
  }
  return b;
}

static void *dalloc(size_t bytes, cudaStream_t s) {
  void *p = nullptr;
  CHECK(cudaMallocAsync(&p, bytes < 1 ? 1 : bytes, s));
  return p;
}

// The pipeline: upload, transform, running maximum, the values above t,
// their maximum, the selection back on the host.
static std::pair<std::vector<float>, float> pipeline(const std::vector<float> &host, float g, float t,
                                                     cudaStream_t s) {
  size_t n = host.size();
  float *x = (float *)dalloc(n * 4, s), *y = (float *)dalloc(n * 4, s), *c = (float *)dalloc(n * 4, s);
  float *k = (float *)dalloc(n * 4, s), *r = (float *)dalloc(4, s);
  unsigned long long *count = (unsigned long long *)dalloc(8, s);
  CHECK(cudaMemcpyAsync(x, host.data(), n * 4, cudaMemcpyHostToDevice, s));
  CHECK(cub::DeviceTransform::Transform(x, y, n, Affine{g}, s));
  size_t b1 = 0, b2 = 0, b3 = 0;
  CHECK(cub::DeviceScan::InclusiveScan(nullptr, b1, y, c, Max{}, n, s));
  CHECK(cub::DeviceSelect::If(nullptr, b2, c, k, count, n, Above{t}, s));
  CHECK(cub::DeviceReduce::Reduce(nullptr, b3, k, r, n, Max{}, ::cuda::std::numeric_limits<float>::lowest(), s));
  size_t bytes = b1 > b2 ? b1 : b2;
  bytes = bytes > b3 ? bytes : b3;
  void *temp = dalloc(bytes, s);
  CHECK(cub::DeviceScan::InclusiveScan(temp, b1, y, c, Max{}, n, s));
  CHECK(cub::DeviceSelect::If(temp, b2, c, k, count, n, Above{t}, s));
  unsigned long long kept = 0;
  CHECK(cudaMemcpyAsync(&kept, count, 8, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cub::DeviceReduce::Reduce(temp, b3, k, r, kept, Max{}, ::cuda::std::numeric_limits<float>::lowest(), s));
  float result = 0;
  CHECK(cudaMemcpyAsync(&result, r, 4, cudaMemcpyDeviceToHost, s));
  std::vector<float> out(kept);
  CHECK(cudaMemcpyAsync(out.data(), k, kept * 4, cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  for (void *p : {(void *)x, (void *)y, (void *)c, (void *)k, (void *)r, (void *)count, temp})
    CHECK(cudaFreeAsync(p, s));
  return {std::move(out), result};
}

// Records sorted by `w` into a new buffer, both ways CUB offers (checked
// to agree): its fastest for records this wide (the keys and indices
// written by a kernel, SortPairs of them, the records gathered: `NAME`),
// and SortKeys of the records with a decomposer naming `w`
// (`NAME_records`). docs/perf.md, "Records as words".
template <class R>
static void wide_sorts(const char *name, size_t n, int log, int reps, cudaStream_t s) {
  std::vector<R> host(n);
  for (size_t i = 0; i < n; i++) {
    R r{};
    r.id = i;
    r.w = unsigned(i) * 2654435761u;
    host[i] = r;
  }
  R *in = (R *)dalloc(n * sizeof(R), s);
  unsigned *keys = (unsigned *)dalloc(n * 4, s), *keys_out = (unsigned *)dalloc(n * 4, s);
  unsigned *index = (unsigned *)dalloc(n * 4, s), *index_out = (unsigned *)dalloc(n * 4, s);
  CHECK(cudaMemcpyAsync(in, host.data(), n * sizeof(R), cudaMemcpyHostToDevice, s));
  size_t b1 = 0, b2 = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b1, keys, keys_out, index, index_out, (int)n, 0, 32, s));
  CHECK(cub::DeviceRadixSort::SortKeys(nullptr, b2, in, (R *)nullptr, (int)n, ByRecordW<R>{}, s));
  void *temp = dalloc(b1 > b2 ? b1 : b2, s);
  const int grid = 132 * 8;
  // Each way into `out`, then `out` back on the host (last run only).
  std::vector<R> gathered(n), sorted(n);
  R *out = nullptr;
  auto by_index = [&] {
    out = (R *)dalloc(n * sizeof(R), s);
    record_keys<R><<<grid, 256, 0, s>>>(in, keys, index, (int)n);
    CHECK(cub::DeviceRadixSort::SortPairs(temp, b1, keys, keys_out, index, index_out, (int)n, 0, 32, s));
    gather_records<R><<<grid, 256, 0, s>>>(in, index_out, out, (int)n);
    CHECK(cudaStreamSynchronize(s));
  };
  auto by_records = [&] {
    out = (R *)dalloc(n * sizeof(R), s);
    CHECK(cub::DeviceRadixSort::SortKeys(temp, b2, in, out, (int)n, ByRecordW<R>{}, s));
    CHECK(cudaStreamSynchronize(s));
  };
  auto back = [&](std::vector<R> &into) {
    CHECK(cudaMemcpy(into.data(), out, n * sizeof(R), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(out));
  };
  double us = best(reps, [&] {
    by_index();
    CHECK(cudaFreeAsync(out, s));
  });
  std::printf("cub %s_sort_by_key %d %.1f\n", name, log, us);
  by_index();
  back(gathered);
  us = best(reps, [&] {
    by_records();
    CHECK(cudaFreeAsync(out, s));
  });
  std::printf("cub %s_sort_by_key_records %d %.1f\n", name, log, us);
  by_records();
  back(sorted);
  if (std::memcmp(gathered.data(), sorted.data(), n * sizeof(R)) != 0) {
    std::printf("cub %s: the two sorts disagree\n", name);
    std::exit(1);
  }
  for (void *v : {(void *)in, (void *)keys, (void *)keys_out, (void *)index, (void *)index_out, temp})
    CHECK(cudaFreeAsync(v, s));
}

// The same affine map as a hand-written kernel, one element a thread: the
// floor of a launch for a C++ program that calls no library.
__global__ void affine_bare(const float *x, float *out, int n, Affine op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = op(x[i]);
}

// Launch overhead: 1,000 calls on 2^10 device-resident elements, then one
// wait (into one buffer; into a new buffer each), and the bare kernel's
// 1,000 launches beside them.
static void launches(int reps, cudaStream_t s) {
  size_t n = 1 << 10;
  std::vector<float> host = data(n, 4);
  float *x = (float *)dalloc(n * 4, s), *out = (float *)dalloc(n * 4, s);
  CHECK(cudaMemcpyAsync(x, host.data(), n * 4, cudaMemcpyHostToDevice, s));
  CHECK(cudaStreamSynchronize(s));
  double us = best(reps, [&] {
    for (int i = 0; i < 1000; i++) CHECK(cub::DeviceTransform::Transform(x, out, n, Affine{3.0f}, s));
    CHECK(cudaStreamSynchronize(s));
  });
  std::printf("cub launch_1000 10 %.1f\n", us);
  us = best(reps, [&] {
    for (int i = 0; i < 1000; i++) {
      float *y = (float *)dalloc(n * 4, s);
      CHECK(cub::DeviceTransform::Transform(x, y, n, Affine{3.0f}, s));
      CHECK(cudaFreeAsync(y, s));
    }
    CHECK(cudaStreamSynchronize(s));
  });
  std::printf("cub launch_1000_fresh 10 %.1f\n", us);
  us = best(reps, [&] {
    for (int i = 0; i < 1000; i++) {
      affine_bare<<<(int(n) + 255) / 256, 256, 0, s>>>(x, out, int(n), Affine{3.0f});
      CHECK(cudaGetLastError());
    }
    CHECK(cudaStreamSynchronize(s));
  });
  std::printf("cub launch_1000_bare 10 %.1f\n", us);
  CHECK(cudaFreeAsync(x, s));
  CHECK(cudaFreeAsync(out, s));
  CHECK(cudaStreamSynchronize(s));
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 10;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  unsigned long long threshold = ~0ull;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  if (argc > 2 && std::strcmp(argv[2], "launches") == 0) {
    launches(reps, s);
    return 0;
  }
  for (int log : {20, 24, 28}) {
    size_t bytes = size_t(1) << log, n = bytes / 4;
    std::vector<float> host = data(n, 1);
    float *d;
    CHECK(cudaMalloc(&d, bytes));
    double us = best(reps, [&] { CHECK(cudaMemcpy(d, host.data(), bytes, cudaMemcpyHostToDevice)); });
    std::printf("cub upload_pageable %d %.1f\n", log, us);
    us = best(reps, [&] {
      std::vector<float> out(n);
      CHECK(cudaMemcpy(out.data(), d, bytes, cudaMemcpyDeviceToHost));
    });
    std::printf("cub to_vec %d %.1f\n", log, us);
    std::vector<float> reused(n);
    us = best(reps, [&] { CHECK(cudaMemcpy(reused.data(), d, bytes, cudaMemcpyDeviceToHost)); });
    std::printf("cub to_vec_into %d %.1f\n", log, us);
    float *pinned;
    CHECK(cudaMallocHost(&pinned, bytes));
    std::memcpy(pinned, host.data(), bytes);
    us = best(reps, [&] { CHECK(cudaMemcpy(d, pinned, bytes, cudaMemcpyHostToDevice)); });
    std::printf("cub upload_pinned %d %.1f\n", log, us);
    us = best(reps, [&] { CHECK(cudaMemcpy(pinned, d, bytes, cudaMemcpyDeviceToHost)); });
    std::printf("cub download_pinned %d %.1f\n", log, us);
    CHECK(cudaFreeHost(pinned));
    CHECK(cudaFree(d));
  }
  for (int log : {24, 28}) {
    std::vector<float> host = data(size_t(1) << log, 2);
    double us = best(reps, [&] { pipeline(host, 1.5f, 1.25f, s); });
    std::printf("cub pipeline %d %.1f\n", log, us);
  }
  for (int log : {20, 24, 28}) {
    size_t n = size_t(1) << log;
    std::vector<float> host = data(n, 3);
    float *x = (float *)dalloc(n * 4, s), *out = (float *)dalloc(n * 4, s);
    CHECK(cudaMemcpyAsync(x, host.data(), n * 4, cudaMemcpyHostToDevice, s));
    double us = best(reps, [&] {
      CHECK(cub::DeviceTransform::Transform(x, out, n, Affine{3.0f}, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub transform_into_wait %d %.1f\n", log, us);
    us = best(reps, [&] {
      float *y = (float *)dalloc(n * 4, s);
      CHECK(cub::DeviceTransform::Transform(x, y, n, Affine{3.0f}, s));
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaFreeAsync(y, s));
    });
    std::printf("cub transform_wait %d %.1f\n", log, us);
    CHECK(cudaFreeAsync(x, s));
    CHECK(cudaFreeAsync(out, s));
  }
  launches(reps, s);
  // The `par_iter` chains of the Rust program as a CUB user fuses them:
  // DeviceReduce::TransformReduce, its temporary storage allocated once,
  // the value copied back to the host.
  for (int log : {24, 28}) {
    size_t n = size_t(1) << log;
    std::vector<float> host = data(n, 30);
    float *x = (float *)dalloc(n * 4, s), *r = (float *)dalloc(8, s);
    unsigned long long *count = (unsigned long long *)dalloc(8, s);
    CHECK(cudaMemcpyAsync(x, host.data(), n * 4, cudaMemcpyHostToDevice, s));
    size_t b1 = 0, b2 = 0, b3 = 0;
    CHECK(cub::DeviceReduce::TransformReduce(nullptr, b1, x, r, n, Sum{}, Affine{3.0f}, 0.0f, s));
    CHECK(cub::DeviceReduce::TransformReduce(nullptr, b2, x, count, n, Sum{}, AffineAbove{3.0f, 1.25f}, 0ull, s));
    CHECK(cub::DeviceReduce::TransformReduce(nullptr, b3, x, r, n, Max{}, Abs{}, 0.0f, s));
    size_t bytes = b1 > b2 ? b1 : b2;
    bytes = bytes > b3 ? bytes : b3;
    void *temp = dalloc(bytes, s);
    CHECK(cudaStreamSynchronize(s));
    float value = 0;
    unsigned long long kept = 0;
    double us = best(reps, [&] {
      CHECK(cub::DeviceReduce::TransformReduce(temp, b1, x, r, n, Sum{}, Affine{3.0f}, 0.0f, s));
      CHECK(cudaMemcpyAsync(&value, r, 4, cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub chain_map_sum %d %.1f\n", log, us);
    us = best(reps, [&] {
      CHECK(cub::DeviceReduce::TransformReduce(temp, b2, x, count, n, Sum{}, AffineAbove{3.0f, 1.25f}, 0ull, s));
      CHECK(cudaMemcpyAsync(&kept, count, 8, cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub chain_map_filter_count %d %.1f\n", log, us);
    us = best(reps, [&] {
      CHECK(cub::DeviceReduce::TransformReduce(temp, b3, x, r, n, Max{}, Abs{}, 0.0f, s));
      CHECK(cudaMemcpyAsync(&value, r, 4, cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub chain_map_max_by %d %.1f\n", log, us);
    // `map(v * g + 1).filter(v > t).collect()`: a select over a transform
    // iterator into a new buffer, its count copied back.
    auto mapped = thrust::make_transform_iterator(x, Affine{3.0f});
    size_t b4 = 0;
    float *kept_values = nullptr;
    CHECK(cub::DeviceSelect::If(nullptr, b4, mapped, kept_values, count, n, Above{1.25f}, s));
    void *temp4 = dalloc(b4, s);
    us = best(reps, [&] {
      float *out = (float *)dalloc(n * 4, s);
      CHECK(cub::DeviceSelect::If(temp4, b4, mapped, out, count, n, Above{1.25f}, s));
      CHECK(cudaMemcpyAsync(&kept, count, 8, cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaFreeAsync(out, s));
    });
    std::printf("cub chain_map_filter_collect %d %.1f\n", log, us);
    CHECK(cudaFreeAsync(temp4, s));
    // `enumerate().min_by(total_cmp)`: the first least value and its
    // index, CUB's DeviceReduce::ArgMin (64-bit index), both copied back.
    float *least = (float *)dalloc(4, s);
    long long *where = (long long *)dalloc(8, s);
    size_t b5 = 0;
    CHECK(cub::DeviceReduce::ArgMin(nullptr, b5, x, least, where, (long long)n, s));
    void *temp5 = dalloc(b5, s);
    long long at = 0;
    us = best(reps, [&] {
      CHECK(cub::DeviceReduce::ArgMin(temp5, b5, x, least, where, (long long)n, s));
      CHECK(cudaMemcpyAsync(&value, least, 4, cudaMemcpyDeviceToHost, s));
      CHECK(cudaMemcpyAsync(&at, where, 8, cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub chain_enumerate_arg_min %d %.1f\n", log, us);
    for (void *p : {(void *)least, (void *)where, temp5}) CHECK(cudaFreeAsync(p, s));
    for (void *p : {(void *)x, (void *)r, (void *)count, temp}) CHECK(cudaFreeAsync(p, s));
  }
  // Tuples and structs: an arg-min reduce of (value, index) pairs, a
  // field-wise reduce of points, a map of points to their squared norms;
  // each result copied back (the reduces) or waited for (the map).
  for (int log : {24, 28}) {
    size_t n = size_t(1) << log;
    std::vector<float> values = data(n, 31);
    std::vector<Pair> pairs(n);
    std::vector<Point> points(n);
    for (size_t i = 0; i < n; i++) {
      pairs[i] = Pair{values[i], unsigned(i)};
      points[i] = Point{values[i], -values[i], unsigned(i) * 2654435761u};
    }
    Pair *p = (Pair *)dalloc(n * sizeof(Pair), s), *pr = (Pair *)dalloc(sizeof(Pair), s);
    Point *q = (Point *)dalloc(n * sizeof(Point), s), *qr = (Point *)dalloc(sizeof(Point), s);
    float *norms = (float *)dalloc(n * 4, s);
    CHECK(cudaMemcpyAsync(p, pairs.data(), n * sizeof(Pair), cudaMemcpyHostToDevice, s));
    CHECK(cudaMemcpyAsync(q, points.data(), n * sizeof(Point), cudaMemcpyHostToDevice, s));
    const float inf = ::cuda::std::numeric_limits<float>::infinity();
    const Pair none{inf, 0xffffffffu};
    const Point empty{-inf, inf, 0u};
    size_t b1 = 0, b2 = 0;
    CHECK(cub::DeviceReduce::Reduce(nullptr, b1, p, pr, n, ArgMin{}, none, s));
    CHECK(cub::DeviceReduce::Reduce(nullptr, b2, q, qr, n, Extent{}, empty, s));
    void *temp = dalloc(b1 > b2 ? b1 : b2, s);
    CHECK(cudaStreamSynchronize(s));
    Pair pv;
    Point qv;
    double us = best(reps, [&] {
      CHECK(cub::DeviceReduce::Reduce(temp, b1, p, pr, n, ArgMin{}, none, s));
      CHECK(cudaMemcpyAsync(&pv, pr, sizeof(Pair), cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub composite_arg_min %d %.1f\n", log, us);
    us = best(reps, [&] {
      CHECK(cub::DeviceReduce::Reduce(temp, b2, q, qr, n, Extent{}, empty, s));
      CHECK(cudaMemcpyAsync(&qv, qr, sizeof(Point), cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub composite_extent %d %.1f\n", log, us);
    us = best(reps, [&] {
      CHECK(cub::DeviceTransform::Transform(q, norms, n, Norm{}, s));
      CHECK(cudaStreamSynchronize(s));
    });
    std::printf("cub composite_norms %d %.1f\n", log, us);
    // The points a predicate keeps, into a new buffer (as the Rust call's
    // result), the count back on the host.
    {
      unsigned long long *count = (unsigned long long *)dalloc(8, s), kept = 0;
      size_t b4 = 0;
      CHECK(cub::DeviceSelect::If(nullptr, b4, q, (Point *)nullptr, count, n, NearOrigin{}, s));
      void *temp4 = dalloc(b4, s);
      us = best(reps, [&] {
        Point *out = (Point *)dalloc(n * sizeof(Point), s);
        CHECK(cub::DeviceSelect::If(temp4, b4, q, out, count, n, NearOrigin{}, s));
        CHECK(cudaMemcpyAsync(&kept, count, 8, cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaFreeAsync(out, s));
      });
      std::printf("cub composite_select %d %.1f\n", log, us);
      for (void *v : {(void *)count, temp4}) CHECK(cudaFreeAsync(v, s));
    }
    // The running extent of the points, into a new buffer.
    {
      size_t b5 = 0;
      CHECK(cub::DeviceScan::InclusiveScan(nullptr, b5, q, (Point *)nullptr, Extent{}, n, s));
      void *temp5 = dalloc(b5, s);
      us = best(reps, [&] {
        Point *out = (Point *)dalloc(n * sizeof(Point), s);
        CHECK(cub::DeviceScan::InclusiveScan(temp5, b5, q, out, Extent{}, n, s));
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaFreeAsync(out, s));
      });
      std::printf("cub composite_scan %d %.1f\n", log, us);
      CHECK(cudaFreeAsync(temp5, s));
    }
    if (log == 24) {
      // A stable sort into a new buffer, as the Rust call's result.
      Point *sorted = (Point *)dalloc(n * sizeof(Point), s);
      size_t b3 = 0;
      CHECK(cub::DeviceMergeSort::StableSortKeysCopy(nullptr, b3, q, sorted, n, ByX{}, s));
      void *temp3 = dalloc(b3, s);
      us = best(reps, [&] {
        CHECK(cub::DeviceMergeSort::StableSortKeysCopy(temp3, b3, q, sorted, n, ByX{}, s));
        CHECK(cudaStreamSynchronize(s));
      });
      std::printf("cub composite_sort_by %d %.1f\n", log, us);
      for (void *v : {(void *)sorted, temp3}) CHECK(cudaFreeAsync(v, s));
    }
    // The points sorted by `w` as a CUB user sorts records by a key: the
    // keys and the other 8 bytes of each point in two arrays,
    // DeviceRadixSort::SortPairs into two new ones (the same bytes moved
    // as the Rust call's 12-byte points).
    {
      std::vector<unsigned> hk(n);
      std::vector<unsigned long long> hv(n);
      for (size_t i = 0; i < n; i++) {
        hk[i] = points[i].w;
        std::memcpy(&hv[i], &points[i], 8);
      }
      unsigned *keys = (unsigned *)dalloc(n * 4, s), *keys_out = (unsigned *)dalloc(n * 4, s);
      unsigned long long *vals = (unsigned long long *)dalloc(n * 8, s);
      unsigned long long *vals_out = (unsigned long long *)dalloc(n * 8, s);
      CHECK(cudaMemcpyAsync(keys, hk.data(), n * 4, cudaMemcpyHostToDevice, s));
      CHECK(cudaMemcpyAsync(vals, hv.data(), n * 8, cudaMemcpyHostToDevice, s));
      size_t b6 = 0;
      CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b6, keys, keys_out, vals, vals_out, (int)n, 0, 32, s));
      void *temp6 = dalloc(b6, s);
      CHECK(cudaStreamSynchronize(s));
      us = best(reps, [&] {
        CHECK(cub::DeviceRadixSort::SortPairs(temp6, b6, keys, keys_out, vals, vals_out, (int)n, 0, 32, s));
        CHECK(cudaStreamSynchronize(s));
      });
      std::printf("cub composite_sort_by_key %d %.1f\n", log, us);
      for (void *v : {(void *)keys, (void *)keys_out, (void *)vals, (void *)vals_out, temp6}) CHECK(cudaFreeAsync(v, s));
    }
    // The same points sorted by `w` where they are, as a CUB user sorts
    // an array of records on a field: DeviceRadixSort::SortKeys of the
    // points with a decomposer naming `w` (the Rust call's input and
    // result layout; CUB's design for custom keys, which the Rust call's
    // radix sort also uses), into a new buffer.
    {
      size_t b8 = 0;
      CHECK(cub::DeviceRadixSort::SortKeys(nullptr, b8, q, (Point *)nullptr, (int)n, ByW{}, s));
      void *temp8 = dalloc(b8, s);
      us = best(reps, [&] {
        Point *out = (Point *)dalloc(n * sizeof(Point), s);
        CHECK(cub::DeviceRadixSort::SortKeys(temp8, b8, q, out, (int)n, ByW{}, s));
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaFreeAsync(out, s));
      });
      std::printf("cub composite_sort_by_key_records %d %.1f\n", log, us);
      CHECK(cudaFreeAsync(temp8, s));
    }
    // The points sorted by a computed key, `w >> 8`, as a CUB user does
    // it: the keys computed by DeviceTransform, then SortPairs of the
    // keys and the whole points, into a new buffer (the Rust call's
    // result).
    {
      unsigned *keys = (unsigned *)dalloc(n * 4, s), *keys_out = (unsigned *)dalloc(n * 4, s);
      size_t b7 = 0;
      CHECK(cub::DeviceRadixSort::SortPairs(nullptr, b7, keys, keys_out, q, (Point *)nullptr, (int)n, 0, 32, s));
      void *temp7 = dalloc(b7, s);
      us = best(reps, [&] {
        Point *out = (Point *)dalloc(n * sizeof(Point), s);
        CHECK(cub::DeviceTransform::Transform(q, keys, n, Bucket{}, s));
        CHECK(cub::DeviceRadixSort::SortPairs(temp7, b7, keys, keys_out, q, out, (int)n, 0, 32, s));
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaFreeAsync(out, s));
      });
      std::printf("cub computed_sort_by_key %d %.1f\n", log, us);
      for (void *v : {(void *)keys, (void *)keys_out, temp7}) CHECK(cudaFreeAsync(v, s));
    }
    for (void *v : {(void *)p, (void *)pr, (void *)q, (void *)qr, (void *)norms, temp}) CHECK(cudaFreeAsync(v, s));
    if (log == 24) {
      wide_sorts<Wide>("wide24", n, log, reps, s);
      wide_sorts<Wider>("wide32", n, log, reps, s);
    }
  }
  // The pipeline's result, for the Rust program's check.
  std::vector<float> host = data(1 << 20, 5);
  auto [k, r] = pipeline(host, 1.5f, 1.25f, s);
  std::printf("cub check %zu %.6f\n", k.size(), r);
  return 0;
}
