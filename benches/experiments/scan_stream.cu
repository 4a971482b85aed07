// Experiment (session 19): the streaming scan of providers/scan.cuh
// (resident blocks taking tiles from a ticket counter, each loading its next
// tile with cp.async while it writes the current one) against the
// one-tile-per-block kernel it replaced and against CUB, side by side in one
// process; select, which stayed one tile per block, against its previous
// version. (Its first run had a streaming select too, and drew the next
// ticket at the start of a tile: docs/gpu-runs/2026-12-02-s19.) Built on the GPU machine by scripts/gpu-session19-run.sh:
//   nvcc -O3 -std=c++17 -arch=sm_90 -I providers -I OLD scan_stream.cu
// where OLD holds the previous scan.cuh and select.cuh with their names
// suffixed (benches/experiments/old-headers.sh makes them from git).
//
// Checks before timing: integer scans and selects equal the host's; float
// scans of the new kernel are the same bits as the old one's (the combining
// shape depends only on the index) and as its own second run.
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common.cuh"
#include "lookback.cuh"
#include "scan.cuh"
#include "select.cuh"
#include "old_scan.cuh"
#include "old_select.cuh"

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
template <class T> struct Positive {
  __device__ __forceinline__ bool operator()(T x) const { return x > T(0); }
};

template <int ITEMS, int MINB, bool EX, class T>
__global__ void __launch_bounds__(256, MINB) k_new_scan(const T *in, unsigned long long n, T init, T *out, void *st,
                                                        unsigned epoch) {
  rcb::scan<256, ITEMS, EX>(in, n, init, out, st, epoch, Plus{});
}
template <int ITEMS, int MINB, bool EX, class T>
__global__ void __launch_bounds__(256, MINB) k_old_scan(const T *in, unsigned long long n, T init, T *out, void *st,
                                                        unsigned epoch) {
  rcb::scan_old<256, ITEMS, EX>(in, n, init, out, st, epoch, Plus{});
}
template <int ITEMS, int MINB, class T>
__global__ void __launch_bounds__(256, MINB) k_new_select(const T *in, unsigned long long n, T *out,
                                                          unsigned long long *count, void *st, unsigned epoch) {
  rcb::select<256, ITEMS>(in, n, out, count, st, epoch, Positive<T>{});
}
template <int ITEMS, int MINB, class T>
__global__ void __launch_bounds__(256, MINB) k_old_select(const T *in, unsigned long long n, T *out,
                                                          unsigned long long *count, void *st, unsigned epoch) {
  rcb::select_old<256, ITEMS>(in, n, out, count, st, epoch, Positive<T>{});
}

static int sms;
static unsigned epoch_counter = 0;
static void *state;  // zeroed, large
static unsigned long long *dcount;
static int failures = 0, checks = 0;

// One configuration: how to launch it on (in, n) -> out.
struct Runner {
  const char *name;
  int items;
  int minb;
  int resident;  // blocks per SM
  bool streaming;
  void (*launch)(const void *in, unsigned long long n, void *out, int grid, size_t smem);
  size_t smem;
};

template <class F>
static void setup(F f, size_t smem, int &resident) {
  if (smem > 0) CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, f, 256, smem));
}

template <int ITEMS, int MINB, bool EX, class T>
static Runner new_scan(const char *name) {
  Runner r{name, ITEMS, MINB, 0, true, nullptr, sizeof(rcb::ScanStorage<256, ITEMS, T>)};
  setup(k_new_scan<ITEMS, MINB, EX, T>, r.smem, r.resident);
  r.launch = [](const void *in, unsigned long long n, void *out, int grid, size_t smem) {
    k_new_scan<ITEMS, MINB, EX, T><<<grid, 256, smem>>>((const T *)in, n, T(0), (T *)out, state, ++epoch_counter);
  };
  return r;
}
template <int ITEMS, int MINB, bool EX, class T>
static Runner old_scan(const char *name) {
  Runner r{name, ITEMS, MINB, 0, false, nullptr, 0};
  setup(k_old_scan<ITEMS, MINB, EX, T>, 0, r.resident);
  r.launch = [](const void *in, unsigned long long n, void *out, int grid, size_t smem) {
    k_old_scan<ITEMS, MINB, EX, T><<<grid, 256>>>((const T *)in, n, T(0), (T *)out, state, ++epoch_counter);
  };
  return r;
}
template <int ITEMS, int MINB, class T>
static Runner new_select(const char *name) {
  Runner r{name, ITEMS, MINB, 0, false, nullptr, 0};
  setup(k_new_select<ITEMS, MINB, T>, 0, r.resident);
  r.launch = [](const void *in, unsigned long long n, void *out, int grid, size_t smem) {
    k_new_select<ITEMS, MINB, T><<<grid, 256, smem>>>((const T *)in, n, (T *)out, dcount, state, ++epoch_counter);
  };
  return r;
}
template <int ITEMS, int MINB, class T>
static Runner old_select(const char *name) {
  Runner r{name, ITEMS, MINB, 0, false, nullptr, 0};
  setup(k_old_select<ITEMS, MINB, T>, 0, r.resident);
  r.launch = [](const void *in, unsigned long long n, void *out, int grid, size_t smem) {
    k_old_select<ITEMS, MINB, T><<<grid, 256>>>((const T *)in, n, (T *)out, dcount, state, ++epoch_counter);
  };
  return r;
}

static int grid_of(const Runner &r, unsigned long long n) {
  unsigned long long tiles = (n + 256ull * r.items - 1) / (256ull * r.items);
  if (tiles == 0) tiles = 1;
  if (!r.streaming) return (int)tiles;
  unsigned long long cap = (unsigned long long)sms * r.resident;
  return (int)std::min(tiles, cap);
}

template <class T> static T host_value(unsigned long long i, unsigned seed) {
  unsigned x = (unsigned)(i * 2654435761ull) ^ seed;
  x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
  return (T)((int)(x % 2001u) - 1000);
}

enum Algo { INCL, EXCL, SELECT };

template <class T>
static bool run_check(const Runner &r, Algo algo, const T *din, unsigned long long n, T *dout, const T *in,
                      std::vector<T> &expect, unsigned long long expect_count, const std::vector<T> *bits) {
  CK(cudaMemset(dout, 0, (n + 1) * sizeof(T)));
  r.launch(din, n, dout, grid_of(r, n), r.smem);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  unsigned long long m = n;
  if (algo == SELECT) CK(cudaMemcpy(&m, dcount, 8, cudaMemcpyDeviceToHost));
  std::vector<T> got(m);
  CK(cudaMemcpy(got.data(), dout, m * sizeof(T), cudaMemcpyDeviceToHost));
  bool ok = true;
  if (algo == SELECT && m != expect_count) ok = false;
  const std::vector<T> &want = bits ? *bits : expect;
  if (ok && bits == nullptr && (algo == SELECT || !(T(0.5) > T(0)))) {
    ok = memcmp(got.data(), want.data(), m * sizeof(T)) == 0;
  } else if (ok && bits) {
    ok = memcmp(got.data(), bits->data(), m * sizeof(T)) == 0;
  }
  checks++;
  if (!ok) {
    failures++;
    printf("FAIL %s n=%llu misaligned=%d\n", r.name, n, (int)((unsigned long long)din % 16 != 0));
  }
  if (bits == nullptr && T(0.5) > T(0) && algo != SELECT) expect = got;  // floats: the first run's bits
  return ok;
}

static float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <class T>
static void type_block(const char *tname, std::vector<Runner> scans_i, std::vector<Runner> scans_e,
                       std::vector<Runner> selects, int repeats) {
  const bool is_float = T(0.5) > T(0);
  const unsigned long long max_n = 1ull << 28;
  T *din, *dout;
  CK(cudaMalloc(&din, (max_n + 16) * sizeof(T)));
  CK(cudaMalloc(&dout, (max_n + 16) * sizeof(T)));
  std::vector<T> host(max_n + 16);
  for (unsigned long long i = 0; i < host.size(); ++i) host[i] = host_value<T>(i, 7);
  CK(cudaMemcpy(din, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));

  // Correctness, at sizes around tile edges and large ones, aligned and not.
  const unsigned long long sizes[] = {1, 31, 1000, 7936, 7937, 100003, 1000003, 1ull << 24, (1ull << 24) + 5};
  for (int off = 0; off < 2; ++off) {
    for (unsigned long long n : sizes) {
      const T *in = host.data() + off;
      for (int a = 0; a < 3; ++a) {
        std::vector<Runner> &set = a == 0 ? scans_i : a == 1 ? scans_e : selects;
        std::vector<T> expect;
        unsigned long long kept = 0;
        if (!is_float || a == 2) {
          expect.resize(n);
          T acc = T(0);
          for (unsigned long long i = 0; i < n; ++i) {
            if (a == 0) { acc = (T)(acc + in[i]); expect[i] = acc; }
            else if (a == 1) { expect[i] = acc; acc = (T)(acc + in[i]); }
            else if (in[i] > T(0)) expect[kept++] = in[i];
          }
        }
        // Floats: every runner after the first must give the first's bits
        // (old and new share the combining shape only at the same ITEMS,
        // so compare within an items count).
        std::vector<T> first_bits;
        int first_items = -1;
        for (Runner &r : set) {
          if (is_float && a != 2) {
            if (r.items != first_items) {
              first_bits.clear();
              run_check(r, (Algo)a, din + off, n, dout, in, first_bits, 0, (const std::vector<T> *)nullptr);
              first_items = r.items;
              // and its own second run
              run_check(r, (Algo)a, din + off, n, dout, in, first_bits, 0, &first_bits);
            } else {
              run_check(r, (Algo)a, din + off, n, dout, in, first_bits, 0, &first_bits);
            }
          } else {
            run_check(r, (Algo)a, din + off, n, dout, in, expect, kept, (const std::vector<T> *)nullptr);
          }
        }
      }
    }
  }

  // Timing: every runner and CUB at each size, median of `repeats`.
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  for (int logn : {16, 20, 24, 28}) {
    const unsigned long long n = 1ull << logn;
    for (int a = 0; a < 3; ++a) {
      std::vector<Runner> &set = a == 0 ? scans_i : a == 1 ? scans_e : selects;
      size_t temp_bytes = 0;
      void *temp = nullptr;
      auto cub_call = [&](void *t, size_t &b) {
        if (a == 0) return cub::DeviceScan::InclusiveScan(t, b, din, dout, Plus{}, (int)n);
        if (a == 1) return cub::DeviceScan::ExclusiveScan(t, b, din, dout, Plus{}, T(0), (int)n);
        return cub::DeviceSelect::If(t, b, din, dout, dcount, (int)n, Positive<T>{});
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
      const char *an = a == 0 ? "inclusive_scan" : a == 1 ? "exclusive_scan" : "select";
      const double bytes = (double)n * sizeof(T) * (a == 2 ? 1.5 : 2.0);
      printf("%-15s %s 2^%d  cub %9.1f us %7.0f GB/s\n", an, tname, logn, cub_us, bytes / cub_us / 1e3);
      for (Runner &r : set) {
        const int grid = grid_of(r, n);
        const float us = time([&] { r.launch(din, n, dout, grid, r.smem); });
        printf("%-15s %s 2^%d  %-22s %9.1f us %7.0f GB/s  cub/ours %.3f  (grid %d, %d/SM)\n", an, tname, logn,
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
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaMalloc(&state, 64 << 20));
  CK(cudaMemset(state, 0, 64 << 20));
  CK(cudaMalloc(&dcount, 8));
  {
    // The copy ceiling.
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
#ifdef EXP_TILES
  // Larger tiles (fewer look-backs a byte, two blocks a multiprocessor),
  // beside the tuning's; scans only.
  type_block<int>("i32",
                  {new_scan<31, 3, false, int>("new 31"), new_scan<39, 2, false, int>("new 39 x2"),
                   new_scan<47, 2, false, int>("new 47 x2")},
                  {new_scan<31, 3, true, int>("new 31")}, {new_select<31, 3, int>("sel 31")}, repeats);
  type_block<double>("f64",
                     {new_scan<15, 3, false, double>("new 15"), new_scan<19, 2, false, double>("new 19 x2"),
                      new_scan<23, 2, false, double>("new 23 x2")},
                     {new_scan<15, 3, true, double>("new 15")}, {new_select<15, 3, double>("sel 15")}, repeats);
#else
  type_block<int>("i32",
                  {old_scan<31, 3, false, int>("old 31"), new_scan<31, 3, false, int>("new 31"),
                   new_scan<23, 3, false, int>("new 23"), new_scan<15, 4, false, int>("new 15"),
                   new_scan<15, 6, false, int>("new 15 x6")},
                  {old_scan<31, 3, true, int>("old 31"), new_scan<31, 3, true, int>("new 31")},
                  {old_select<31, 3, int>("old 31"), new_select<31, 3, int>("new 31"),
                   new_select<23, 3, int>("new 23")},
                  repeats);
  type_block<float>("f32",
                    {old_scan<31, 3, false, float>("old 31"), new_scan<31, 3, false, float>("new 31"),
                     new_scan<23, 3, false, float>("new 23")},
                    {old_scan<31, 3, true, float>("old 31"), new_scan<31, 3, true, float>("new 31")},
                    {old_select<31, 3, float>("old 31"), new_select<31, 3, float>("new 31")}, repeats);
  type_block<long long>("i64",
                        {old_scan<15, 3, false, long long>("old 15"), new_scan<15, 3, false, long long>("new 15"),
                         new_scan<11, 3, false, long long>("new 11"), new_scan<7, 4, false, long long>("new 7")},
                        {old_scan<15, 3, true, long long>("old 15"), new_scan<15, 3, true, long long>("new 15")},
                        {old_select<15, 3, long long>("old 15"), new_select<15, 3, long long>("new 15"),
                         new_select<11, 3, long long>("new 11")},
                        repeats);
  type_block<double>("f64",
                     {old_scan<15, 3, false, double>("old 15"), new_scan<15, 3, false, double>("new 15"),
                      new_scan<11, 3, false, double>("new 11")},
                     {old_scan<15, 3, true, double>("old 15"), new_scan<15, 3, true, double>("new 15"),
                      new_scan<11, 3, true, double>("new 11")},
                     {old_select<15, 3, double>("old 15"), new_select<15, 3, double>("new 15"),
                      new_select<11, 3, double>("new 11")},
                     repeats);
#endif
  printf("checks: %d, failures: %d\n", checks, failures);
  return failures == 0 && checks > 0 ? 0 : 1;
}
