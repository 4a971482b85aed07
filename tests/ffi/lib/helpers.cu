// The device library of the FFI cases (tests/ffi): `extern "C"` helpers
// that Rust callbacks call. `__host__ __device__` so that the host
// reference compiles them too.

extern "C" __host__ __device__ int ffi_leaf(int x);  // tests/ffi/lib/leaf.cu

extern "C" __host__ __device__ unsigned int ffi_mix(unsigned int x, unsigned int key) {
    x ^= key;
    x *= 0x9E3779B1u;
    return x ^ (x >> 15);
}

extern "C" __host__ __device__ long long ffi_wide(long long a, long long b) {
    return a > b ? a : b;
}

extern "C" __host__ __device__ double ffi_weight(double x, float w) {
    return x * (double)w;
}

// Calls into the other library.
extern "C" __host__ __device__ int ffi_twice(int x) {
    return ffi_leaf(ffi_leaf(x));
}
