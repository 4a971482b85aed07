// Pieces every provider shares: the element types, 16-byte vector loads,
// warp shuffles of any element type, and the "maybe a value" fold that lets a
// provider combine without an identity element (the callback is arbitrary:
// it has none in general).
//
// Contract with callbacks, for every provider: the operation is a pure
// function. It is called under divergence, so it must not use
// warp-collective operations, and it is never called on a value that is not
// an element, an initial value or a result of earlier calls (a callback whose
// arithmetic traps on overflow must not trap on padding).
//
// No includes: NVRTC compiles this with no include path.

#ifndef RCB_PROVIDERS_COMMON_CUH
#define RCB_PROVIDERS_COMMON_CUH

namespace rcb {

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;

// Handed to thunks of callbacks with no captures: a valid, non-null pointer
// to one byte that the thunk never reads.
static __device__ const unsigned char empty_env[1] = {0};

// 16 bytes read as elements of T.
template <class T>
union Vec16 {
    uint4 raw;
    T v[16 / sizeof(T)];
};

template <class T>
struct VecWidth {
    static constexpr int N = 16 / sizeof(T);
};

// Whether elements of T are read and written as 16-byte vectors: those
// whose size is their alignment and divides 16 (every scalar). Any other
// element (a tuple or a struct, which the generated code declares as
// `struct alignas(A) { W words[S / sizeof(W)]; }`, W an unsigned word of
// the alignment (at most 8 bytes), or with RCB_BYTE_COMPOSITES (`-g`
// builds) `unsigned char bytes[S]`, in rustc's layout) is
// moved one element at a time.
template <class T>
struct Vectorized {
    static constexpr bool value = sizeof(T) == alignof(T) && sizeof(T) <= 16 && 16 % sizeof(T) == 0;
};

template <class T>
__device__ __forceinline__ Vec16<T> load16(const T *p) {
    Vec16<T> r;
    r.raw = __ldg(reinterpret_cast<const uint4 *>(p));
    return r;
}

template <class T>
__device__ __forceinline__ void store16(T *p, const Vec16<T> &v) {
    *reinterpret_cast<uint4 *>(p) = v.raw;
}

// Whether `p` sits on a 16-byte boundary.
template <class T>
__device__ __forceinline__ bool aligned16(const T *p) {
    return (reinterpret_cast<u64>(p) & 15ull) == 0;
}

// Elements before the first 16-byte boundary of `p` (at most n).
template <class T>
__device__ __forceinline__ u64 head_elements(const T *p, u64 n) {
    const u64 address = reinterpret_cast<u64>(p);
    const u64 head = ((16ull - (address & 15ull)) & 15ull) / sizeof(T);
    return head < n ? head : n;
}

// How `n` elements from `p` split into 16-byte vectors of N elements:
// `head` scalars before the first boundary, `nvec` whole vectors from
// there, the rest from `tail_start`; `nscalar` counts both ends' scalars.
struct VectorSplit {
    u64 head, nvec, tail_start, nscalar;
};

template <int N, class T>
__device__ __forceinline__ VectorSplit split_vectors(const T *p, u64 n) {
    const u64 head = head_elements(p, n);
    const u64 nvec = (n - head) / N;
    const u64 tail_start = head + nvec * N;
    return VectorSplit{head, nvec, tail_start, head + (n - tail_start)};
}

// Warp shuffles of every element type (the intrinsics take 32- and 64-bit
// values; narrower ones travel widened).
__device__ __forceinline__ signed char shfl(signed char v, int src) { return (signed char)__shfl_sync(0xffffffffu, (int)v, src); }
__device__ __forceinline__ unsigned char shfl(unsigned char v, int src) { return (unsigned char)__shfl_sync(0xffffffffu, (unsigned)v, src); }
__device__ __forceinline__ short shfl(short v, int src) { return (short)__shfl_sync(0xffffffffu, (int)v, src); }
__device__ __forceinline__ unsigned short shfl(unsigned short v, int src) { return (unsigned short)__shfl_sync(0xffffffffu, (unsigned)v, src); }
__device__ __forceinline__ int shfl(int v, int src) { return __shfl_sync(0xffffffffu, v, src); }
__device__ __forceinline__ unsigned shfl(unsigned v, int src) { return __shfl_sync(0xffffffffu, v, src); }
__device__ __forceinline__ long long shfl(long long v, int src) { return __shfl_sync(0xffffffffu, v, src); }
__device__ __forceinline__ unsigned long long shfl(unsigned long long v, int src) { return __shfl_sync(0xffffffffu, v, src); }
__device__ __forceinline__ float shfl(float v, int src) { return __shfl_sync(0xffffffffu, v, src); }
__device__ __forceinline__ double shfl(double v, int src) { return __shfl_sync(0xffffffffu, v, src); }

// A composite element's shuffle: its bytes as 32-bit words (its padding
// travels too, and is never read as a value).
template <class T>
__device__ __forceinline__ T shfl(const T &v, int src) {
    constexpr int W = (sizeof(T) + 3) / 4;
    union Words {
        T value;
        unsigned w[W];
    } in, out;
    in.value = v;
#pragma unroll
    for (int i = 0; i < W; ++i) out.w[i] = __shfl_sync(0xffffffffu, in.w[i], src);
    return out.value;
}

template <class T>
__device__ __forceinline__ T shfl_down(T v, unsigned delta) {
    return shfl(v, (int)(((threadIdx.x & 31u) + delta) & 31u));
}

template <class T>
__device__ __forceinline__ T shfl_up(T v, unsigned delta) {
    return shfl(v, (int)(((threadIdx.x & 31u) - delta) & 31u));
}

// A value-initialised T (zero for a scalar, zero bytes for a composite),
// for a kernel's argument where no element is meant (`signed char()` is
// not C++; `rcb::value_init<signed char>()` is).
template <class T>
__device__ __forceinline__ T value_init() {
    return T();
}

// Calls visit(x, i) on input[i] for i = first, first + stride, ... below
// n, in index order, UNROLL loads in flight: how a thread reads its share
// of elements that do not move as 16-byte vectors (`Vectorized<T>`).
template <int UNROLL, class T, class Visit>
__device__ __forceinline__ void for_each_strided(const T *__restrict__ input, u64 n, u64 first, u64 stride,
                                                 const Visit &visit) {
    u64 i = first;
    for (; i + (u64)(UNROLL - 1) * stride < n; i += (u64)UNROLL * stride) {
        T v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) v[u] = input[i + (u64)u * stride];
#pragma unroll
        for (int u = 0; u < UNROLL; ++u) visit(v[u], i + (u64)u * stride);
    }
    for (; i < n; i += stride) visit(input[i], i);
}

// acc := has ? op(acc, x) : x.
template <class T, class Op>
__device__ __forceinline__ void fold_into(T &acc, bool &has, T x, const Op &op) {
    acc = has ? op(acc, x) : x;
    has = true;
}

// Pairwise tree over the elements of one vector: ((v0 v1) (v2 v3)) ...
template <class T, class Op>
__device__ __forceinline__ T fold_vector(const Vec16<T> &v, const Op &op) {
    constexpr int N = VecWidth<T>::N;
    T t[N];
#pragma unroll
    for (int i = 0; i < N; ++i) t[i] = v.v[i];
#pragma unroll
    for (int width = 1; width < N; width *= 2) {
#pragma unroll
        for (int i = 0; i + width < N; i += 2 * width) t[i] = op(t[i], t[i + width]);
    }
    return t[0];
}

// Kogge-Stone inclusive scan across a warp: after it, lane l holds the
// combination of lanes 0..l in a shape that depends only on l. Lanes at or
// beyond `present` (the values there are not elements) are neither combined
// nor read by a lane below `present`.
template <class T, class Op>
__device__ __forceinline__ T warp_inclusive_scan(T v, unsigned present, const Op &op) {
    const unsigned lane = threadIdx.x & 31u;
#pragma unroll
    for (unsigned d = 1; d < 32; d *= 2) {
        const T other = shfl_up(v, d);
        if (lane >= d && lane < present) v = op(other, v);
    }
    return v;
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_COMMON_CUH
