// A second device library: what `ffi_twice` in helpers.cu calls.
extern "C" __host__ __device__ int ffi_leaf(int x) {
    return x ^ (x >> 3);
}
