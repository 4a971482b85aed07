// Experiment (session 20), run at 99f74aa, whose providers/scan.cuh was the
// tile stream ("cur" below; providers/scan.cuh has since taken this
// kernel, so rebuild against `git show 99f74aa:providers/scan.cuh`):
// the scan with a look-back warp of its own
// (scan_split.cuh) against providers/scan.cuh's tile stream and CUB, side by
// side in one process. Built on the GPU machine:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I providers -I benches/experiments scan_split.cu
// Checks before timing: integer scans equal the host's; float scans are the
// same bits as rcb::scan's at the same ITEMS and as their own second run.
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common.cuh"
#include "lookback.cuh"
#include "scan.cuh"
#include "scan_split.cuh"

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e = (x);                                                                   \
    if (e != cudaSuccess) {                                                                \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
      exit(2);                                                                             \
    }                                                                                      \
  } while (0)

struct Plus {
  template <class T> __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

template <int ITEMS, int MINB, bool EX, class T>
__global__ void __launch_bounds__(256, MINB) k_cur(const T *in, unsigned long long n, T init, T *out, void *st,
                                                   unsigned epoch) {
  rcb::scan<256, ITEMS, EX>(in, n, init, out, st, epoch, Plus{});
}
template <int ITEMS, int MINB, bool EX, class T>
__global__ void __launch_bounds__(288, MINB) k_split(const T *in, unsigned long long n, T init, T *out, void *st,
                                                     unsigned epoch) {
  rcb::scan_split<256, ITEMS, EX>(in, n, init, out, st, epoch, Plus{});
}

static int sms;
static unsigned epoch_counter = 0;
static void *state;
static int failures = 0, checks = 0;
static bool quick = false;  // argv[2] "quick": sizes up to 100003, no timing (for compute-sanitizer)

struct Runner {
  const char *name;
  int items;
  int threads;
  int resident;
  void (*launch)(const void *in, unsigned long long n, void *out, int grid, size_t smem);
  size_t smem;
};

template <class F>
static void setup(F f, int threads, size_t smem, int &resident) {
  CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, f, threads, smem));
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, f));
  printf("  kernel threads %d smem %zu: %d registers, %d resident a multiprocessor\n", threads, smem, a.numRegs,
         resident);
}

template <int ITEMS, int MINB, bool EX, class T>
static Runner cur(const char *name) {
  Runner r{name, ITEMS, 256, 0, nullptr, sizeof(rcb::ScanStorage<256, ITEMS, T>)};
  setup(k_cur<ITEMS, MINB, EX, T>, 256, r.smem, r.resident);
  r.launch = [](const void *in, unsigned long long n, void *out, int grid, size_t smem) {
    k_cur<ITEMS, MINB, EX, T><<<grid, 256, smem>>>((const T *)in, n, T(0), (T *)out, state, ++epoch_counter);
  };
  return r;
}
template <int ITEMS, int MINB, bool EX, class T>
static Runner split(const char *name) {
  Runner r{name, ITEMS, 288, 0, nullptr, sizeof(rcb::SplitStorage<256, ITEMS, T>)};
  setup(k_split<ITEMS, MINB, EX, T>, 288, r.smem, r.resident);
  r.launch = [](const void *in, unsigned long long n, void *out, int grid, size_t smem) {
    k_split<ITEMS, MINB, EX, T><<<grid, 288, smem>>>((const T *)in, n, T(0), (T *)out, state, ++epoch_counter);
  };
  return r;
}

static int grid_of(const Runner &r, unsigned long long n) {
  unsigned long long tiles = (n + 256ull * r.items - 1) / (256ull * r.items);
  if (tiles == 0) tiles = 1;
  return (int)std::min(tiles, (unsigned long long)sms * r.resident);
}

template <class T> static T host_value(unsigned long long i, unsigned seed) {
  unsigned x = (unsigned)(i * 2654435761ull) ^ seed;
  x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
  return (T)((int)(x % 2001u) - 1000);
}

template <class T>
static void run_check(const Runner &r, const T *din, unsigned long long n, T *dout, const std::vector<T> &want,
                      bool misaligned) {
  CK(cudaMemset(dout, 0, (n + 1) * sizeof(T)));
  r.launch(din, n, dout, grid_of(r, n), r.smem);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<T> got(n);
  CK(cudaMemcpy(got.data(), dout, n * sizeof(T), cudaMemcpyDeviceToHost));
  checks++;
  if (memcmp(got.data(), want.data(), n * sizeof(T)) != 0) {
    failures++;
    printf("FAIL %s n=%llu misaligned=%d\n", r.name, n, (int)misaligned);
  }
}

template <class T>
static std::vector<T> bits_of(const Runner &r, const T *din, unsigned long long n, T *dout) {
  r.launch(din, n, dout, grid_of(r, n), r.smem);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<T> got(n);
  CK(cudaMemcpy(got.data(), dout, n * sizeof(T), cudaMemcpyDeviceToHost));
  return got;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// sets[0]: inclusive runners, sets[1]: exclusive; each set's first runner is
// rcb::scan, the reference bits for floats of the runners with its ITEMS.
template <class T>
static void type_block(const char *tname, std::vector<Runner> incl, std::vector<Runner> excl, int repeats) {
  const bool is_float = T(0.5) > T(0);
  const unsigned long long max_n = quick ? (1ull << 20) : (1ull << 28);
  T *din, *dout;
  CK(cudaMalloc(&din, (max_n + 16) * sizeof(T)));
  CK(cudaMalloc(&dout, (max_n + 16) * sizeof(T)));
  std::vector<T> host(max_n + 16);
  for (unsigned long long i = 0; i < host.size(); ++i) host[i] = host_value<T>(i, 7);
  CK(cudaMemcpy(din, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));

  const unsigned long long sizes[] = {1, 31, 1000, 3840, 3841, 5888, 7936, 7937, 100003, 1000003,
                                      1ull << 24, (1ull << 24) + 5};
  for (int off = 0; off < 2; ++off) {
    for (unsigned long long n : sizes) {
      if (quick && n > 100003) continue;
      for (int a = 0; a < 2; ++a) {
        std::vector<Runner> &set = a == 0 ? incl : excl;
        if (!is_float) {
          std::vector<T> expect(n);
          T acc = T(0);
          for (unsigned long long i = 0; i < n; ++i) {
            const T x = host[i + off];
            if (a == 0) { acc = (T)(acc + x); expect[i] = acc; } else { expect[i] = acc; acc = (T)(acc + x); }
          }
          for (Runner &r : set) run_check(r, din + off, n, dout, expect, off != 0);
        } else {
          // Reference bits: the first runner of each ITEMS (rcb::scan where
          // the set has one), checked against its own second run.
          for (size_t i = 0; i < set.size(); ++i) {
            size_t ref = i;
            for (size_t j = 0; j < i; ++j) if (set[j].items == set[i].items) { ref = j; break; }
            const std::vector<T> want = bits_of(set[ref], din + off, n, dout);
            run_check(set[i], din + off, n, dout, want, off != 0);
          }
        }
      }
    }
  }

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int logn : {16, 20, 24, 28}) {
    if (quick) break;
    const unsigned long long n = 1ull << logn;
    for (int a = 0; a < 2; ++a) {
      std::vector<Runner> &set = a == 0 ? incl : excl;
      size_t temp_bytes = 0;
      void *temp = nullptr;
      auto cub_call = [&](void *t, size_t &b) {
        if (a == 0) return cub::DeviceScan::InclusiveScan(t, b, din, dout, Plus{}, (int)n);
        return cub::DeviceScan::ExclusiveScan(t, b, din, dout, Plus{}, T(0), (int)n);
      };
      CK(cub_call(nullptr, temp_bytes));
      CK(cudaMalloc(&temp, temp_bytes + 16));
      auto time = [&](auto &&launch) {
        std::vector<float> ts;
        launch();
        for (int k = 0; k < repeats; ++k) {
          CK(cudaEventRecord(e0));
          launch();
          CK(cudaEventRecord(e1));
          CK(cudaEventSynchronize(e1));
          float ms;
          CK(cudaEventElapsedTime(&ms, e0, e1));
          ts.push_back(ms * 1000.f);
        }
        CK(cudaGetLastError());
        return median(ts);
      };
      const float cub_us = time([&] { CK(cub_call(temp, temp_bytes)); });
      const char *an = a == 0 ? "inclusive_scan" : "exclusive_scan";
      const double bytes = (double)n * sizeof(T) * 2.0;
      printf("%-15s %s 2^%d  cub %9.1f us %7.0f GB/s\n", an, tname, logn, cub_us, bytes / cub_us / 1e3);
      for (Runner &r : set) {
        const int grid = grid_of(r, n);
        const float us = time([&] { r.launch(din, n, dout, grid, r.smem); });
        printf("%-15s %s 2^%d  %-14s %9.1f us %7.0f GB/s  cub/ours %.3f  (grid %d, %d/SM)\n", an, tname, logn,
               r.name, us, bytes / us / 1e3, cub_us / us, grid, r.resident);
      }
      CK(cudaFree(temp));
    }
  }
  CK(cudaFree(din));
  CK(cudaFree(dout));
}

int main(int argc, char **argv) {
  int repeats = argc > 1 ? atoi(argv[1]) : 20;
  quick = argc > 2 && strcmp(argv[2], "quick") == 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaMalloc(&state, 64 << 20));
  CK(cudaMemset(state, 0, 64 << 20));
  {
    const size_t bytes = (size_t)1 << 30;
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ts;
    for (int k = 0; k < 10; ++k) {
      CK(cudaEventRecord(e0));
      CK(cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice));
      CK(cudaEventRecord(e1));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      ts.push_back(ms);
    }
    printf("copy ceiling: %.0f GB/s (1 GiB read + 1 GiB written)\n", 2.0 * bytes / median(ts) / 1e6);
    CK(cudaFree(a));
    CK(cudaFree(b));
  }
  printf("i32\n");
  type_block<int>("i32",
                  {cur<31, 3, false, int>("cur 31"), split<31, 2, false, int>("split 31"),
                   split<23, 3, false, int>("split 23"), split<15, 4, false, int>("split 15"),
                   split<19, 3, false, int>("split 19")},
                  {cur<31, 3, true, int>("cur 31"), split<31, 2, true, int>("split 31"),
                   split<23, 3, true, int>("split 23")},
                  repeats);
  printf("f32\n");
  type_block<float>("f32",
                    {cur<31, 3, false, float>("cur 31"), split<31, 2, false, float>("split 31"),
                     cur<23, 3, false, float>("cur 23"), split<23, 3, false, float>("split 23")},
                    {cur<31, 3, true, float>("cur 31"), split<31, 2, true, float>("split 31"),
                     cur<23, 3, true, float>("cur 23"), split<23, 3, true, float>("split 23")},
                    repeats);
  printf("i64\n");
  type_block<long long>("i64",
                        {cur<15, 3, false, long long>("cur 15"), split<15, 2, false, long long>("split 15"),
                         split<11, 3, false, long long>("split 11"), split<7, 4, false, long long>("split 7")},
                        {cur<15, 3, true, long long>("cur 15"), split<15, 2, true, long long>("split 15"),
                         split<11, 3, true, long long>("split 11")},
                        repeats);
  printf("f64\n");
  type_block<double>("f64",
                     {cur<15, 3, false, double>("cur 15"), split<15, 2, false, double>("split 15"),
                      cur<11, 3, false, double>("cur 11"), split<11, 3, false, double>("split 11")},
                     {cur<15, 3, true, double>("cur 15"), split<15, 2, true, double>("split 15"),
                      cur<11, 3, true, double>("cur 11"), split<11, 3, true, double>("split 11")},
                     repeats);
  printf("checks: %d, failures: %d\n", checks, failures);
  return failures == 0 && checks > 0 ? 0 : 1;
}
