// 2^24 12-byte points sorted by `w` with CUB's decomposer sort, three times
// (ncu's subject beside the pipeline program's field sort).
#include <cub/device/device_radix_sort.cuh>
#include <cuda/std/tuple>
#include <cstdio>
#include <vector>
struct Point { float x, y; unsigned w; };
struct ByW { __host__ __device__ cuda::std::tuple<unsigned &> operator()(Point &p) const { return {p.w}; } };
int main() {
  int n = 1 << 24;
  std::vector<Point> h(n);
  // The pipeline program's points: w = i * 2654435761 (mod 2^32).
  for (int i = 0; i < n; i++) h[i] = Point{float(i), -float(i), unsigned(i) * 2654435761u};
  Point *in, *out; void *temp = nullptr; size_t bytes = 0;
  cudaMalloc(&in, n * sizeof(Point)); cudaMalloc(&out, n * sizeof(Point));
  cudaMemcpy(in, h.data(), n * sizeof(Point), cudaMemcpyHostToDevice);
  cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, ByW{});
  cudaMalloc(&temp, bytes);
  for (int r = 0; r < 3; r++) cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, ByW{});
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(e));
  return e != cudaSuccess;
}
