// CUB's DeviceReduce::Sum over device-resident int, timed as Gpu::reduce is
// timed by examples/gpu-workspace's `app bench`: host wall clock of one call
// that returns the result to the host (launch, reduce, copy back, sync),
// best of REPS, at 2^10 ... 2^28 elements. The temporary storage is
// allocated once per size, outside the timing (Gpu::reduce keeps its
// workspace too). Built on the GPU machine: nvcc -O3 -arch=sm_90.
#include <cub/device/device_reduce.cuh>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); std::exit(1); } } while (0)

int main(int argc, char **argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 50;
  std::printf("# cub::DeviceReduce::Sum, device-resident int, best of %d\n", reps);
  std::printf("%10s %12s %10s %14s\n", "n", "us", "GB/s", "HtoD copy us");
  unsigned long long state = 7;
  for (int log : {10, 16, 20, 24, 28}) {
    size_t n = size_t(1) << log;
    std::vector<int> host(n);
    for (auto &x : host) {  // the same xorshift as `app bench`
      state ^= state << 13; state ^= state >> 7; state ^= state << 17;
      x = int(state >> 32);
    }
    int want = 0;
    for (int x : host) want = int(unsigned(want) + unsigned(x));
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, sizeof(int)));
    CHECK(cudaMemcpy(d_in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, d_in, d_out, n));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, d_in, d_out, n));
      int got;
      CHECK(cudaMemcpy(&got, d_out, sizeof(int), cudaMemcpyDeviceToHost));
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (got != want) { std::fprintf(stderr, "MISMATCH n=%zu\n", n); return 1; }
      if (s < best) best = s;
    }
    // A plain host-to-device copy of the same bytes from the same pageable
    // vector: what the host-slice form of Gpu::reduce is compared with.
    double copy_best = 1e30;
    for (int r = 0; r < (reps < 20 ? reps : 20); ++r) {
      auto t0 = std::chrono::steady_clock::now();
      CHECK(cudaMemcpy(d_in, host.data(), n * sizeof(int), cudaMemcpyHostToDevice));
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s < copy_best) copy_best = s;
    }
    std::printf("%10zu %12.2f %10.1f %14.2f\n", n, best * 1e6, n * 4.0 / best / 1e9, copy_best * 1e6);
    CHECK(cudaFree(temp)); CHECK(cudaFree(d_in)); CHECK(cudaFree(d_out));
  }
  return 0;
}
