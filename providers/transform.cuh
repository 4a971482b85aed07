// Native providers: element-wise maps of one input (`transform`, a functor
// `__device__ U operator()(T x) const`) and of two inputs of equal length
// (`transform2`, `__device__ V operator()(T a, U b) const`) for sm_90. Needs
// common.cuh.
//
// Each thread maps chunks of C consecutive elements, C the widest 16-byte
// vector of the element types (4 for i32 -> i32, 16 for u8 -> f64), with
// UNROLL chunks in flight, in a grid-stride loop; the host launches one
// block per tile (`manifest::provider::launch_facts`: one chunk a thread
// for transform, up to 64 bytes of each input for transform2), so the loop
// runs once. Inputs and output not on 16-byte boundaries take a scalar
// loop. The callback is called once per element.

#ifndef RCB_PROVIDERS_TRANSFORM_CUH
#define RCB_PROVIDERS_TRANSFORM_CUH

namespace rcb {

template <class A, class B, class C = A>
struct ChunkWidth {
    static constexpr int a = 16 / sizeof(A);
    static constexpr int b = 16 / sizeof(B);
    static constexpr int c = 16 / sizeof(C);
    static constexpr int ab = a > b ? a : b;
    static constexpr int N = ab > c ? ab : c;
};

// C elements at `p` (16-byte aligned), as C * sizeof(T) / 16 vector loads.
template <int C, class T>
__device__ __forceinline__ void load_chunk(const T *__restrict__ p, T (&x)[C]) {
    constexpr int VECS = C * sizeof(T) / 16;
    constexpr int PER = 16 / sizeof(T);
#pragma unroll
    for (int v = 0; v < VECS; ++v) {
        const Vec16<T> w = load16(p + v * PER);
#pragma unroll
        for (int k = 0; k < PER; ++k) x[v * PER + k] = w.v[k];
    }
}

template <int C, class T>
__device__ __forceinline__ void store_chunk(T *__restrict__ p, const T (&x)[C]) {
    constexpr int VECS = C * sizeof(T) / 16;
    constexpr int PER = 16 / sizeof(T);
#pragma unroll
    for (int v = 0; v < VECS; ++v) {
        Vec16<T> w;
#pragma unroll
        for (int k = 0; k < PER; ++k) w.v[k] = x[v * PER + k];
        store16(p + v * PER, w);
    }
}

template <int BLOCK, int UNROLL, class T, class U, class Op>
__device__ __forceinline__ void transform(const T *__restrict__ input, u64 n, U *__restrict__ output, const Op &op) {
    if (blockDim.x != (unsigned)BLOCK) __trap();
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK;
    if constexpr (!Vectorized<T>::value || !Vectorized<U>::value) {
        // A composite input or output: one element at a time.
        for (u64 i = tid; i < n; i += stride) output[i] = op(input[i]);
        return;
    } else {
        constexpr int C = ChunkWidth<T, U>::N;
        if (aligned16(input) && aligned16(output)) {
            const u64 chunks = n / C;
            u64 c = tid;
            for (; c + (u64)(UNROLL - 1) * stride < chunks; c += (u64)UNROLL * stride) {
                T x[UNROLL][C];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) load_chunk<C>(input + (c + (u64)u * stride) * C, x[u]);
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    U y[C];
#pragma unroll
                    for (int k = 0; k < C; ++k) y[k] = op(x[u][k]);
                    store_chunk<C>(output + (c + (u64)u * stride) * C, y);
                }
            }
            for (; c < chunks; c += stride) {
                T x[C];
                load_chunk<C>(input + c * C, x);
                U y[C];
#pragma unroll
                for (int k = 0; k < C; ++k) y[k] = op(x[k]);
                store_chunk<C>(output + c * C, y);
            }
            const u64 tail = chunks * C;
            if (tid < n - tail) output[tail + tid] = op(input[tail + tid]);
            return;
        }
        for (u64 i = tid; i < n; i += stride) output[i] = op(input[i]);
    }
}

template <int BLOCK, int UNROLL, class T, class U, class V, class Op>
__device__ __forceinline__ void transform2(const T *__restrict__ a, const U *__restrict__ b, u64 n,
                                           V *__restrict__ output, const Op &op) {
    if (blockDim.x != (unsigned)BLOCK) __trap();
    const u64 tid = (u64)blockIdx.x * BLOCK + threadIdx.x;
    const u64 stride = (u64)gridDim.x * BLOCK;
    if constexpr (!Vectorized<T>::value || !Vectorized<U>::value || !Vectorized<V>::value) {
        // A composite input or output: one element at a time.
        for (u64 i = tid; i < n; i += stride) output[i] = op(a[i], b[i]);
        return;
    } else {
        constexpr int C = ChunkWidth<T, U, V>::N;
        if (aligned16(a) && aligned16(b) && aligned16(output)) {
            const u64 chunks = n / C;
            u64 c = tid;
            for (; c + (u64)(UNROLL - 1) * stride < chunks; c += (u64)UNROLL * stride) {
                T x[UNROLL][C];
                U y[UNROLL][C];
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    load_chunk<C>(a + (c + (u64)u * stride) * C, x[u]);
                    load_chunk<C>(b + (c + (u64)u * stride) * C, y[u]);
                }
#pragma unroll
                for (int u = 0; u < UNROLL; ++u) {
                    V z[C];
#pragma unroll
                    for (int k = 0; k < C; ++k) z[k] = op(x[u][k], y[u][k]);
                    store_chunk<C>(output + (c + (u64)u * stride) * C, z);
                }
            }
            for (; c < chunks; c += stride) {
                T x[C];
                U y[C];
                load_chunk<C>(a + c * C, x);
                load_chunk<C>(b + c * C, y);
                V z[C];
#pragma unroll
                for (int k = 0; k < C; ++k) z[k] = op(x[k], y[k]);
                store_chunk<C>(output + c * C, z);
            }
            const u64 tail = chunks * C;
            if (tid < n - tail) output[tail + tid] = op(a[tail + tid], b[tail + tid]);
            return;
        }
        for (u64 i = tid; i < n; i += stride) output[i] = op(a[i], b[i]);
    }
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_TRANSFORM_CUH
