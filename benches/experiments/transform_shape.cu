// Experiment: the transform's access shape. The product's kernel
// (rcb::transform, one block per tile, each thread's UNROLL chunks a whole
// grid apart) at several unrolls against variants of the access shape
// and cache hints, all computing 3x + 1, beside CUB, in one process on the
// same rotated buffers (median of 30 launches, best of 2 passes).
//   nvcc -O3 -std=c++17 -arch=sm_90 -I providers benches/experiments/transform_shape.cu -o /tmp/ts && /tmp/ts
// Every variant's output is compared with CUB's before timing.
#include <cub/device/device_transform.cuh>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
// clang-format off
#include "common.cuh"
#include "transform.cuh"
// clang-format on

using rcb::u64;

template <class T>
struct Affine {
  __device__ __forceinline__ T operator()(T x) const { return T(3) * x + T(1); }
};

// The product's kernel.
template <int UNROLL, class T>
__global__ void __launch_bounds__(256) product(const T *in, u64 n, T *out) {
  rcb::transform<256, UNROLL>(in, n, out, Affine<T>{});
}

__device__ __forceinline__ uint4 ld_plain(const uint4 *p) { return __ldg(p); }
__device__ __forceinline__ uint4 ld_first(const uint4 *p) { return __ldcs(p); }

// Variants on whole 16-byte vectors (n a multiple of the vector here).
// TILED: a block's UNROLL * 256 vectors are one contiguous tile (thread t
// takes t, t + 256, ...), else a whole grid apart as in the product.
// HINT 0: plain loads and stores; 1: streaming stores (st.global.cs);
// 2: streaming loads (ld.global.cs) and stores.
template <int UNROLL, bool TILED, int HINT, class T>
__global__ void __launch_bounds__(256) variant(const T *in, u64 n, T *out) {
  constexpr int PER = 16 / sizeof(T);
  const u64 vecs = n / PER;
  const uint4 *vin = reinterpret_cast<const uint4 *>(in);
  uint4 *vout = reinterpret_cast<uint4 *>(out);
  u64 idx[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    idx[u] = TILED ? (u64)blockIdx.x * (256 * UNROLL) + (u64)u * 256 + threadIdx.x
                   : (u64)blockIdx.x * 256 + threadIdx.x + (u64)u * gridDim.x * 256;
  }
  uint4 v[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (idx[u] < vecs) v[u] = HINT == 2 ? ld_first(vin + idx[u]) : ld_plain(vin + idx[u]);
  }
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) {
    if (idx[u] < vecs) {
      union {
        uint4 raw;
        T t[PER];
      } w;
      w.raw = v[u];
#pragma unroll
      for (int k = 0; k < PER; ++k) w.t[k] = Affine<T>{}(w.t[k]);
      if (HINT >= 1) {
        __stcs(vout + idx[u], w.raw);
      } else {
        vout[idx[u]] = w.raw;
      }
    }
  }
}

#define CHECK(x)                                                                     \
  do {                                                                               \
    cudaError_t e = (x);                                                             \
    if (e != cudaSuccess) {                                                          \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(1);                                                                       \
    }                                                                                \
  } while (0)

struct Timer {
  cudaEvent_t a, b;
  Timer() { CHECK(cudaEventCreate(&a)); CHECK(cudaEventCreate(&b)); }
};

template <class F>
float median_us(F launch, int rotate) {
  Timer t;
  float best = 1e30f;
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<float> ts;
    for (int i = 0; i < 5; ++i) launch(i % rotate);
    for (int i = 0; i < 30; ++i) {
      CHECK(cudaEventRecord(t.a));
      launch(i % rotate);
      CHECK(cudaEventRecord(t.b));
      CHECK(cudaEventSynchronize(t.b));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, t.a, t.b));
      ts.push_back(ms * 1000.f);
    }
    std::sort(ts.begin(), ts.end());
    best = std::min(best, ts[ts.size() / 2]);
  }
  CHECK(cudaGetLastError());
  return best;
}

static int failures = 0;

template <class T>
void run(const char *tname, int log2n) {
  const u64 n = 1ull << log2n;
  const int R = 4;
  T *in[R], *out[R], *ref;
  std::vector<T> h(n);
  srand(log2n * 7 + sizeof(T));
  for (u64 i = 0; i < n; ++i) h[i] = (T)(rand() - RAND_MAX / 2);
  for (int r = 0; r < R; ++r) {
    CHECK(cudaMalloc(&in[r], n * sizeof(T)));
    CHECK(cudaMalloc(&out[r], n * sizeof(T)));
    CHECK(cudaMemcpy(in[r], h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  CHECK(cudaMalloc(&ref, n * sizeof(T)));
  auto cub_launch = [&](int r) { CHECK(cub::DeviceTransform::Transform(in[r], out[r], (int64_t)n, Affine<T>{})); };
  cub_launch(0);
  CHECK(cudaMemcpy(ref, out[0], n * sizeof(T), cudaMemcpyDeviceToDevice));
  std::vector<T> a(n), b(n);
  CHECK(cudaMemcpy(b.data(), ref, n * sizeof(T), cudaMemcpyDeviceToHost));
  auto check = [&](const char *name) {
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(a.data(), out[0], n * sizeof(T), cudaMemcpyDeviceToHost));
    if (a != b) {
      printf("FAIL %s %s 2^%d\n", name, tname, log2n);
      ++failures;
    }
    CHECK(cudaMemset(out[0], 0xA5, n * sizeof(T)));
  };
  const float cub_us = median_us(cub_launch, R);
  const double bytes = 2.0 * n * sizeof(T);
  printf("%-34s %s 2^%d: %8.2f us  %6.0f GB/s\n", "CUB DeviceTransform", tname, log2n, cub_us, bytes / cub_us / 1e3);
  constexpr int PER = 16 / sizeof(T);
  auto report = [&](const char *name, auto launch) {
    CHECK(cudaMemset(out[0], 0xA5, n * sizeof(T)));
    launch(0);
    check(name);
    const float us = median_us(launch, R);
    printf("%-34s %s 2^%d: %8.2f us  %6.0f GB/s  CUB/ours %.3f\n", name, tname, log2n, us, bytes / us / 1e3, cub_us / us);
  };
  // The product: items per thread UNROLL * PER, one block per tile.
  const unsigned grid4 = (unsigned)((n + 256 * 4 * PER - 1) / (256 * 4 * PER));
  const unsigned grid8 = (unsigned)((n + 256 * 8 * PER - 1) / (256 * 8 * PER));
  const unsigned grid1 = (unsigned)((n + 256 * 1 * PER - 1) / (256 * 1 * PER));
  const unsigned grid2 = (unsigned)((n + 256 * 2 * PER - 1) / (256 * 2 * PER));
  report("product (unroll 4)", [&](int r) { product<4><<<grid4, 256>>>(in[r], n, out[r]); });
  report("product (unroll 2)", [&](int r) { product<2><<<grid2, 256>>>(in[r], n, out[r]); });
  report("product (unroll 1)", [&](int r) { product<1><<<grid1, 256>>>(in[r], n, out[r]); });
  report("tiled, plain (unroll 2)", [&](int r) { variant<2, true, 0><<<grid2, 256>>>(in[r], n, out[r]); });
  report("tiled, st.cs (unroll 2)", [&](int r) { variant<2, true, 1><<<grid2, 256>>>(in[r], n, out[r]); });
  report("strided, plain (unroll 4)", [&](int r) { variant<4, false, 0><<<grid4, 256>>>(in[r], n, out[r]); });
  report("strided, st.cs (unroll 4)", [&](int r) { variant<4, false, 1><<<grid4, 256>>>(in[r], n, out[r]); });
  report("strided, ld.cs + st.cs", [&](int r) { variant<4, false, 2><<<grid4, 256>>>(in[r], n, out[r]); });
  report("tiled, plain (unroll 4)", [&](int r) { variant<4, true, 0><<<grid4, 256>>>(in[r], n, out[r]); });
  report("tiled, st.cs (unroll 4)", [&](int r) { variant<4, true, 1><<<grid4, 256>>>(in[r], n, out[r]); });
  report("tiled, ld.cs + st.cs", [&](int r) { variant<4, true, 2><<<grid4, 256>>>(in[r], n, out[r]); });
  report("tiled, plain (unroll 8)", [&](int r) { variant<8, true, 0><<<grid8, 256>>>(in[r], n, out[r]); });
  report("tiled, st.cs (unroll 8)", [&](int r) { variant<8, true, 1><<<grid8, 256>>>(in[r], n, out[r]); });
  for (int r = 0; r < R; ++r) {
    CHECK(cudaFree(in[r]));
    CHECK(cudaFree(out[r]));
  }
  CHECK(cudaFree(ref));
}

int main() {
  for (int log2n : {24, 28}) {
    run<long long>("i64", log2n);
    run<int>("i32", log2n);
  }
  printf("%d failures\n", failures);
  return failures != 0;
}
