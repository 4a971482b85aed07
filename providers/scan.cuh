// Native provider: inclusive and exclusive scans of T for sm_90, one pass
// over the data (decoupled look-back, lookback.cuh), parameterised by a
// functor `Op` with `__device__ T operator()(T a, T b) const`. Needs
// common.cuh and lookback.cuh.
//
// Contract with callbacks
// -----------------------
// The result equals the host's sequential scan for every associative `op`;
// commutativity is not needed (operands are always combined in index order).
// For other ops (a float sum among them) the result is the same bits on every
// run of the same input: each output is a combination of the inputs before
// it in a shape that depends only on its index (`docs/providers.md` spells it
// out).
//
// Kernel shape: one launch of resident blocks that take tiles of BLOCK *
// ITEMS elements in order from a ticket counter (`TileStream`). A block
// loads its next tile (cp.async, into a second buffer) while it writes the
// current one's outputs. The look-back state is sized by the host
// (`runtime::dispatch::lookback_bytes`) and never cleared between launches
// (epochs); the ticket counter is reset by the block that takes the
// launch's last ticket.
//
// Within a tile: each thread takes ITEMS consecutive elements of the tile in
// shared memory and scans them serially (l_j), a Kogge-Stone warp scan
// combines the threads' totals, warp totals combine serially, and the tile's
// prefix P comes from the look-back:
//
//   thread prefix   TP = op(WP_w, WX_t)       WP_w: warps before, WX_t: lanes before
//   full prefix     FP = op(P, TP)
//   inclusive       out_j = op(FP, l_j)
//   exclusive       out_0 = FP, out_j = op(FP, l_j-1), with the seed `init`
//                   as the prefix of tile 0

#ifndef RCB_PROVIDERS_SCAN_CUH
#define RCB_PROVIDERS_SCAN_CUH

namespace rcb {

// One tile of elements in shared memory.
template <int TILE, class T>
union TileBuffer {
    T items[TILE];
    uint4 vectors[(TILE * sizeof(T) + 15) / 16];
};

// The block's storage, in dynamic shared memory (two tiles exceed the 48 KB
// a kernel may declare statically): the host launches with
// `manifest::provider::stream_shared_bytes`, which the generated kernels
// assert is enough. Traps when the launch gave less.
template <class S>
__device__ __forceinline__ S &dynamic_storage() {
    extern __shared__ uint4 rcb_dynamic_shared[];
    u32 bytes;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    if (bytes < sizeof(S)) __trap();
    return *reinterpret_cast<S *>(rcb_dynamic_shared);
}

__device__ __forceinline__ void cp_async16(void *shared, const void *global) {
    u32 to;
    asm volatile("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(to) : "l"(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(to), "l"(global) : "memory");
}

// Every cp.async of this thread has landed (a barrier then shows them to
// the block).
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// Starts loading the `valid` elements of the tile at `in` into `buf`
// (warp-striped: coalesced): asynchronously, as 16-byte vectors, when the
// tile is whole and aligned; otherwise with plain loads.
template <int BLOCK, int TILE, class T>
__device__ __forceinline__ void start_tile_load(const T *__restrict__ in, u64 valid, TileBuffer<TILE, T> &buf) {
    constexpr int N = VecWidth<T>::N;
    if (valid == (u64)TILE && aligned16(in) && (TILE % N) == 0) {
        constexpr int VECS = TILE / N;
        const uint4 *v = reinterpret_cast<const uint4 *>(in);
#pragma unroll
        for (int k = 0; k < (VECS + BLOCK - 1) / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if (idx < VECS) cp_async16(&buf.vectors[idx], v + idx);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    } else {
#pragma unroll 4
        for (int k = 0; k < TILE / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if ((u64)idx < valid) buf.items[idx] = in[idx];
        }
    }
}

// Stores the first `valid` elements of `buf` to `out`, as vectors when the
// tile is whole and aligned.
template <int BLOCK, int TILE, class T>
__device__ __forceinline__ void store_tile(T *__restrict__ out, u64 valid, const TileBuffer<TILE, T> &buf) {
    constexpr int N = VecWidth<T>::N;
    if (valid == (u64)TILE && aligned16(out) && (TILE % N) == 0) {
        constexpr int VECS = TILE / N;
        uint4 *v = reinterpret_cast<uint4 *>(out);
#pragma unroll
        for (int k = 0; k < (VECS + BLOCK - 1) / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if (idx < VECS) v[idx] = buf.vectors[idx];
        }
    } else {
#pragma unroll 4
        for (int k = 0; k < TILE / BLOCK; ++k) {
            const int idx = k * BLOCK + (int)threadIdx.x;
            if ((u64)idx < valid) out[idx] = buf.items[idx];
        }
    }
}

// How many lanes of warp `warp` hold at least one of the `valid` elements
// when each thread takes ITEMS consecutive ones.
template <int ITEMS>
__device__ __forceinline__ unsigned lanes_with_items(unsigned warp, u64 valid) {
    const u64 warp_first = (u64)warp * 32 * ITEMS;
    if (warp_first >= valid) return 0;
    const u64 lanes = (valid - warp_first + ITEMS - 1) / ITEMS;
    return lanes < 32 ? (unsigned)lanes : 32u;
}

// The elements of a tile this thread takes (ITEMS consecutive ones, from
// `first`): ITEMS, fewer in the last tile, or none.
template <int ITEMS>
__device__ __forceinline__ int items_of_thread(u64 first, u64 valid) {
    return first >= valid ? 0 : (valid - first >= (u64)ITEMS ? ITEMS : (int)(valid - first));
}

// The tiles of `n` elements that one block takes, in the order of the
// tickets it draws from `tickets` (the look-back state's counter), and the
// loads of its next tile. `run(body)` calls `body(tile, valid, stream)` for
// each; on entry `in` holds the tile. Once the tile's look-back is done,
// `body` calls `draw()` in thread 0 and then, after a barrier, `prefetch()`
// in every thread, which starts loading the block's next tile into `in`
// (every thread must have read its elements by then) while `body` writes
// the tile's outputs.
//
// The next ticket is drawn only after the look-back: a tile that a block
// holds but has not begun delays every later tile that waits for its
// aggregate, and a block waiting in a look-back would hold one (drawing at
// the start of a tile made scans of 2^28 elements 1.4x slower on the H200:
// 1226 us against 801 for i32).
//
// Every tile waits only for tiles of smaller index, which were taken
// earlier by blocks that are running, so the launch cannot deadlock
// whatever the grid and however many of its blocks are resident. Each block
// draws exactly one ticket past the last tile, so the launch draws
// num_tiles + gridDim.x tickets, and the block that draws the last one
// resets the counter for the next launch (no other block draws after it).
template <int BLOCK, int TILE, class T>
struct TileStream {
    const T *__restrict__ input;
    u64 n;
    u64 num_tiles;
    u64 *tickets;
    TileBuffer<TILE, T> &in;
    u64 &next_slot;  // in shared memory: thread 0's draw, for the block
    u64 last_ticket;  // thread 0's
    u64 next;

    __device__ __forceinline__ TileStream(const T *__restrict__ input_, u64 n_, u64 *tickets_,
                                          TileBuffer<TILE, T> &in_, u64 &next_slot_)
        : input(input_), n(n_), num_tiles((n_ + TILE - 1) / TILE), tickets(tickets_), in(in_),
          next_slot(next_slot_), last_ticket(0), next(0) {}

    __device__ __forceinline__ u64 valid_of(u64 t) const { return n - t * TILE < (u64)TILE ? n - t * TILE : (u64)TILE; }

    __device__ __forceinline__ void start(u64 t) {
        if (t < num_tiles) start_tile_load<BLOCK, TILE>(input + t * TILE, valid_of(t), in);
    }

    // Thread 0, before a barrier.
    __device__ __forceinline__ void draw() {
        last_ticket = atomicAdd(tickets, 1ull);
        next_slot = last_ticket;
    }

    // Every thread, after that barrier.
    __device__ __forceinline__ void prefetch() {
        next = next_slot;
        start(next);
    }

    template <class Body>
    __device__ __forceinline__ void run(const Body &body) {
        if (threadIdx.x == 0) draw();
        __syncthreads();
        prefetch();
        u64 tile = next;
        while (tile < num_tiles) {
            cp_async_wait_all();
            __syncthreads();
            next = num_tiles;
            body(tile, valid_of(tile), *this);
            tile = next;
        }
        if (threadIdx.x == 0 && last_ticket == num_tiles + gridDim.x - 1) atomicExch(tickets, 0ull);
    }
};

template <int BLOCK, int ITEMS, class T>
struct ScanStorage {
    static constexpr int TILE = BLOCK * ITEMS;
    static constexpr int WARPS = BLOCK / 32;
    TileBuffer<TILE, T> in;   // the tile, then the next one arriving
    TileBuffer<TILE, T> out;  // the tile's outputs, leaving
    T warp_total[WARPS];
    int warp_has[WARPS];
    T prefix;
    int has_prefix;
    u64 next;
};

// The scan, run by every block of the launch. `state` holds the host's
// lookback_bytes(tiles); the kernel has dynamic shared memory for a
// ScanStorage.
template <int BLOCK, int ITEMS, bool EXCLUSIVE, class T, class Op>
__device__ __forceinline__ void scan(const T *__restrict__ input, u64 n, T init, T *__restrict__ output, void *state,
                                     u32 epoch, const Op &op) {
    static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024, "block size");
    constexpr int TILE = BLOCK * ITEMS;
    constexpr int WARPS = BLOCK / 32;
    if (blockDim.x != (unsigned)BLOCK) __trap();
    typedef ScanStorage<BLOCK, ITEMS, T> Storage;
    Storage &smem = dynamic_storage<Storage>();
    const u64 num_tiles = (n + TILE - 1) / TILE;
    const unsigned lane = threadIdx.x & 31u;
    const unsigned warp = threadIdx.x >> 5;
    const LookbackState<T> st(state, num_tiles, epoch);

    typedef TileStream<BLOCK, TILE, T> Stream;
    Stream stream(input, n, st.tickets, smem.in, smem.next);
    stream.run([&](u64 tile, u64 valid, Stream &s) {
        const TileBuffer<TILE, T> &in = s.in;
        const u64 base = tile * TILE;
        // This thread's ITEMS consecutive elements, scanned serially.
        const u64 first = (u64)threadIdx.x * ITEMS;
        const int mine = items_of_thread<ITEMS>(first, valid);
        T l[ITEMS];
        T total = T();
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j < mine) {
                const T x = in.items[first + j];
                l[j] = j == 0 ? x : op(l[j - 1], x);
                total = l[j];
            }
        }
        const bool present = mine > 0;

        // Threads' totals across the warp; present lanes are a prefix of it.
        const unsigned lanes_present = lanes_with_items<ITEMS>(warp, valid);
        const T incl = warp_inclusive_scan(total, lanes_present, op);
        const T lane_before = shfl_up(incl, 1);
        if (lanes_present > 0 && lane == lanes_present - 1) smem.warp_total[warp] = incl;
        if (lane == 0) smem.warp_has[warp] = lanes_present > 0 ? 1 : 0;
        __syncthreads();

        // Warp prefix (serial over the warps before) and the tile's aggregate.
        T tp = T();
        bool has_tp = false;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) {
            if (w < (int)warp) combine_maybe(tp, has_tp, smem.warp_total[w], smem.warp_has[w] != 0, op);
        }
        combine_maybe(tp, has_tp, lane_before, lane > 0 && present, op);

        if (warp == 0) {
            T agg = T();
            bool has_agg = false;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) combine_maybe(agg, has_agg, smem.warp_total[w], smem.warp_has[w] != 0, op);
            // A tile that is not the last of its super-tile is read by later ones.
            if (lane == 0 && tile + 1 < num_tiles && (tile & 31u) != 31u) publish_aggregate(st, tile, agg);
            T prefix;
            bool has_prefix;
            lookback(st, tile, agg, EXCLUSIVE, init, prefix, has_prefix, op);
            if (lane == 0) {
                smem.prefix = prefix;
                smem.has_prefix = has_prefix ? 1 : 0;
                s.draw();
            }
        }
        __syncthreads();
        // Every thread has read its elements: the next tile may arrive.
        s.prefetch();

        T fp = smem.prefix;
        bool has_fp = smem.has_prefix != 0;
        combine_maybe(fp, has_fp, tp, has_tp, op);
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
            if (j < mine) {
                T y;
                if (EXCLUSIVE) {
                    y = j == 0 ? fp : op(fp, l[j - 1]);
                } else {
                    y = has_fp ? op(fp, l[j]) : l[j];
                }
                smem.out.items[first + j] = y;
            }
        }
        __syncthreads();
        store_tile<BLOCK, TILE>(output + base, valid, smem.out);
    });
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_SCAN_CUH
