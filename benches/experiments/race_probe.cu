// Experiment: does compute-sanitizer's racecheck report hazards in a race-free hand-off between a
// warp that never joins the workers' named barrier and the workers? V0: no named barrier; V1: the
// workers sync on barrier 1 between their writes; V2: V1 plus the lone warp's lane 0 drawing from a
// global counter; V3: V1 through global memory, as providers/lookback.cuh reads a tile's own aggregate
// (racecheck: none). nvcc -O3 -arch=sm_90 -lineinfo, then racecheck: PROBE=1 scripts/gpu/providers-run.sh
#include <cstdio>
template <int V>
__global__ void k(int *out, unsigned long long *counter, int iters, volatile int *handoff) {
  __shared__ int agg[3];
  __shared__ int x[256];
  __shared__ unsigned long long drawn[2];
  if (threadIdx.x == 0) agg[0] = 1;
  if (V == 3 && threadIdx.x == 0) handoff[blockIdx.x * 3] = 1;
  __syncthreads();
  int acc = 0;
  for (int i = 0; i < iters; ++i) {
    if (threadIdx.x >= 256) {
      acc += V == 3 ? handoff[blockIdx.x * 3 + i % 3] : agg[i % 3];
      if (V == 2 && (threadIdx.x & 31) == 0) drawn[i & 1] = atomicAdd(counter, 1ull);
    } else {
      x[threadIdx.x] = i;
      if (V >= 1) asm volatile("bar.sync 1, 256;" ::: "memory");
      if (threadIdx.x == 0) {
        if (V == 3) {
          handoff[blockIdx.x * 3 + (i + 1) % 3] = x[0] + i;
        } else {
          agg[(i + 1) % 3] = x[0] + i;  // its own write: no race
        }
      }
    }
    __syncthreads();
    if (V == 2) acc += (int)drawn[i & 1];
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
int main() {
  int *out;
  unsigned long long *c;
  cudaMalloc(&out, 64 * 288 * sizeof(int));
  int *h;
  cudaMalloc(&c, 8);
  cudaMalloc(&h, 64 * 3 * sizeof(int));
  k<0><<<64, 288>>>(out, c, 50, h);
  cudaDeviceSynchronize();
  printf("v0 done\n");
  k<1><<<64, 288>>>(out, c, 50, h);
  cudaDeviceSynchronize();
  printf("v1 done\n");
  k<2><<<64, 288>>>(out, c, 50, h);
  cudaDeviceSynchronize();
  printf("v2 done\n");
  k<3><<<64, 288>>>(out, c, 50, h);
  cudaDeviceSynchronize();
  printf("v3 done: %s\n", cudaGetErrorString(cudaGetLastError()));
  return 0;
}
