// Device helpers that Rust callbacks call through `extern "C"`
// (examples/ffi/ffi.rs). They are `__host__ __device__` so that the host
// reference of a `--bundle` build compiles them too (as plain C++).

extern "C" __host__ __device__ unsigned int rmir_mix32(unsigned int x, unsigned int key) {
    x ^= key;
    x *= 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    return x;
}

// (a + b) mod m over residues: associative and commutative. 32-bit
// arithmetic only (a 64-bit remainder would be a SASS subroutine call).
// m == 0 means plain wrapping addition.
extern "C" __host__ __device__ unsigned int rmir_add_mod(unsigned int a, unsigned int b,
                                                        unsigned int m) {
    if (m == 0) {
        return a + b;
    }
    unsigned int ra = a % m, rb = b % m;
    unsigned int s = ra + rb;
    // The true sum is in [0, 2m): one subtraction, also when it wrapped.
    return (s < ra || s >= m) ? s - m : s;
}

extern "C" __host__ __device__ double rmir_weight(double x, float w) {
    return x * (double)w + 0.5;
}
