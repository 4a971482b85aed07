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

static __host__ __device__ unsigned int reduce_mod(unsigned int x, unsigned int m) {
    return m == 0 ? x : x % m;
}

// (a + b) mod m over residues: associative and commutative.
extern "C" __host__ __device__ unsigned int rmir_add_mod(unsigned int a, unsigned int b,
                                                        unsigned int m) {
    unsigned long long s = (unsigned long long)reduce_mod(a, m) + reduce_mod(b, m);
    return (unsigned int)(m == 0 ? s : s % m);
}

extern "C" __host__ __device__ double rmir_weight(double x, float w) {
    return x * (double)w + 0.5;
}
