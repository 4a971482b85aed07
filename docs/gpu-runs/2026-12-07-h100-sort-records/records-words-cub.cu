// Sorting records of N bytes by a 4-byte key at their end, every way CUB
// offers, same data, one run: which design should sort_by_key use?
#include <cub/cub.cuh>
#include <cuda/std/tuple>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); std::exit(1); } } while (0)
template <int N> struct alignas(4) Rec { unsigned int b[N / 4]; __host__ __device__ unsigned &w() { return b[N / 4 - 1]; } __host__ __device__ unsigned w() const { return b[N / 4 - 1]; } };
template <int N> struct Dec { __host__ __device__ cuda::std::tuple<unsigned &> operator()(Rec<N> &p) const { return {p.w()}; } };
template <int N> __global__ void keys_of(const Rec<N> *p, unsigned *k, int n, int shift) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) k[i] = p[i].w() >> shift;
}
template <int N> __global__ void keys_iota(const Rec<N> *p, unsigned *k, unsigned *idx, int n, int shift) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) { k[i] = p[i].w() >> shift; idx[i] = i; }
}
template <int N> __global__ void gather(const Rec<N> *in, const unsigned *idx, Rec<N> *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = in[idx[i]];
}
// Split: the key and the other N - 4 bytes (for N = 12: a u64).
__global__ void split(const Rec<12> *in, unsigned *k, unsigned long long *rest, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    Rec<12> p = in[i]; k[i] = p.w(); unsigned long long r; std::memcpy(&r, p.b, 8); rest[i] = r; }
}
__global__ void join(const unsigned *k, const unsigned long long *rest, Rec<12> *out, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    Rec<12> p; unsigned long long r = rest[i]; std::memcpy(p.b, &r, 8); p.w() = k[i]; out[i] = p; }
}
template <class F> float best(int reps, F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); float m = 1e30f; f(); CHECK(cudaDeviceSynchronize());
  for (int r = 0; r < reps; r++) { cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); m = std::min(m, ms); }
  CHECK(cudaGetLastError());
  return m * 1000.0f;
}
template <int N> void run(int log) {
  const int grid = 132 * 8;
  using R = Rec<N>;
  int n = 1 << log; size_t bytes = size_t(n) * N;
  std::vector<R> h(n); unsigned s = 12345;
  for (auto &p : h) { for (int j = 0; j < N; j += 4) { s = s * 1664525u + 1013904223u; std::memcpy(reinterpret_cast<unsigned char *>(p.b) + j, &s, 4); } }
  R *p, *out; unsigned *k, *k2, *idx, *idx2; unsigned long long *v = nullptr, *v2 = nullptr;
  CHECK(cudaMalloc(&p, bytes)); CHECK(cudaMalloc(&out, bytes));
  CHECK(cudaMalloc(&k, n * 4)); CHECK(cudaMalloc(&k2, n * 4)); CHECK(cudaMalloc(&idx, n * 4)); CHECK(cudaMalloc(&idx2, n * 4));
  if (N == 12) { CHECK(cudaMalloc(&v, size_t(n) * 8)); CHECK(cudaMalloc(&v2, size_t(n) * 8)); }
  CHECK(cudaMemcpy(p, h.data(), bytes, cudaMemcpyHostToDevice));
  size_t t[4] = {0}; void *tmp;
  cub::DeviceRadixSort::SortPairs(nullptr, t[0], k, k2, v, v2, n);
  cub::DeviceRadixSort::SortKeys(nullptr, t[1], p, out, n, Dec<N>{});
  cub::DeviceRadixSort::SortPairs(nullptr, t[2], k, k2, p, out, n);
  cub::DeviceRadixSort::SortPairs(nullptr, t[3], k, k2, idx, idx2, n);
  CHECK(cudaMalloc(&tmp, *std::max_element(t, t + 4)));
  for (int shift : {0, 8}) {
    int bits = 32 - shift;
    std::vector<R> ref = h;
    std::stable_sort(ref.begin(), ref.end(), [&](const R &a, const R &b) { return (a.w() >> shift) < (b.w() >> shift); });
    auto report = [&](const char *what, float us, bool checked) {
      bool ok = true;
      if (checked) { std::vector<R> g(n); CHECK(cudaMemcpy(g.data(), out, bytes, cudaMemcpyDeviceToHost)); ok = std::memcmp(g.data(), ref.data(), bytes) == 0; }
      std::printf("N=%2d log2 %d key w>>%d %-46s %9.1f us%s\n", N, log, shift, what, us, checked ? (ok ? "  ok" : "  WRONG") : "");
    };
    if (shift == 0) {
      if constexpr (N == 12) {
        split<<<grid, 256>>>((const Rec<12> *)p, k, v, n);
        report("A SortPairs(u32, u64) of split data", best(10, [&] { cub::DeviceRadixSort::SortPairs(tmp, t[0], k, k2, v, v2, n); }), false);
        report("F split + SortPairs(u32, u64) + join", best(10, [&] { split<<<grid, 256>>>((const Rec<12> *)p, k, v, n); cub::DeviceRadixSort::SortPairs(tmp, t[0], k, k2, v, v2, n); join<<<grid, 256>>>(k2, v2, (Rec<12> *)out, n); }), true);
      }
      report("B SortKeys(record, decomposer)", best(10, [&] { cub::DeviceRadixSort::SortKeys(tmp, t[1], p, out, n, Dec<N>{}); }), true);
    }
    for (int b : {32, bits}) {
      char what[64];
      std::snprintf(what, 64, "D keys + SortPairs(u32, record) %d bits", b);
      report(what, best(10, [&] { keys_of<N><<<grid, 256>>>(p, k, n, shift); cub::DeviceRadixSort::SortPairs(tmp, t[2], k, k2, p, out, n, 0, b); }), true);
      std::snprintf(what, 64, "E keys,iota + SortPairs(u32, u32) + gather %d", b);
      report(what, best(10, [&] { keys_iota<N><<<grid, 256>>>(p, k, idx, n, shift); cub::DeviceRadixSort::SortPairs(tmp, t[3], k, k2, idx, idx2, n, 0, b); gather<N><<<grid, 256>>>(p, idx2, out, n); }), true);
      if (b == bits) break;
    }
    if (shift == 0) {
      report("  keys,iota kernel alone", best(10, [&] { keys_iota<N><<<grid, 256>>>(p, k, idx, n, shift); }), false);
      report("  SortPairs(u32, u32) alone", best(10, [&] { cub::DeviceRadixSort::SortPairs(tmp, t[3], k, k2, idx, idx2, n); }), false);
      report("  gather alone", best(10, [&] { gather<N><<<grid, 256>>>(p, idx2, out, n); }), false);
    }
  }
  cudaFree(p); cudaFree(out); cudaFree(k); cudaFree(k2); cudaFree(idx); cudaFree(idx2); cudaFree(v); cudaFree(v2); cudaFree(tmp);
}
int main() {
  run<12>(24); run<16>(24); run<24>(24); run<32>(24);
}
