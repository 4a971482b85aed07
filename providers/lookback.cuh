// Single-pass prefix propagation between tiles (decoupled look-back) whose
// result does not depend on timing. Needs common.cuh.
//
// A tile's exclusive prefix is a combination of the aggregates of all tiles
// before it. CUB's look-back combines whatever predecessors have published
// when it looks, so a non-associative operation (a float sum) gives a
// result that changes from run to run. Here the combination has a fixed
// shape that depends only on the tile's index, so every run gives the same
// bits, and the host can reproduce them:
//
//   tile i, super-tile s = i / 32 (lane r = i % 32),
//   hyper-tile h = i / 1024 (super-tile lane q = s % 32):
//
//   A_i    the tile's aggregate (published by tile i)
//   SA_s   = KS(A_32s .. A_32s+31) at lane 31 (published by tile 32s+31)
//   Q_i    = KS(A_32s .. A_32s+r-1) at lane r-1        (none when r = 0)
//   R_s    = KS(SA_32h .. SA_32h+q-1) at lane q-1      (none when q = 0)
//   HA_h   = KS(SA_32h .. SA_32h+31) at lane 31
//   HI_h   = op(HI_h-1, HA_h), HI_-1 = the seed        (published by tile 1024h+1023)
//   P_i    = op(op(HI_h-1, R_s), Q_i)                   (skipping absent parts)
//
// where KS is the Kogge-Stone warp scan of common.cuh. A tile reads at most
// 31 tile aggregates, 31 super-tile aggregates and one hyper-tile prefix,
// all of older tiles, in three rounds (publishing SA_s after the first, so
// that no super-tile waits on the one before it); the only chain is one
// step per 1024 tiles. Tiles are taken in order by running blocks (from
// the ticket counter of scan.cuh's tile stream, which select.cuh runs too),
// so every value a tile waits for comes from a block that is running or
// has finished.
//
// Descriptors carry the launch's epoch instead of a status flag: a slot is
// valid when its epoch is the launch's, so the state needs no clearing
// between launches (only when the host's epoch counter wraps, and when it is
// allocated: zero is never an epoch).

#ifndef RCB_PROVIDERS_LOOKBACK_CUH
#define RCB_PROVIDERS_LOOKBACK_CUH

// The polling of `wait_for`: nanoseconds asleep before the first re-read,
// doubling up to the cap (experiments compile other values with -D). 16 and
// 64 beat 32 and 512 by 0.5-2% on every scan and select of the H200
// (measured 2026-12-02).
#ifndef RCB_LOOKBACK_FIRST_SLEEP
#define RCB_LOOKBACK_FIRST_SLEEP 16
#endif
#ifndef RCB_LOOKBACK_MAX_SLEEP
#define RCB_LOOKBACK_MAX_SLEEP 64
#endif

namespace rcb {

// A published value: 8 bytes {epoch, value} for values of up to 4 bytes,
// 16 bytes for 8-byte values, each read and written with one access; any
// other value (a tuple or a struct of 3, 5-7 or more than 8 bytes) after
// an 8-byte status in a descriptor of whole 16-byte units, its words
// written before the status is released and read after it is acquired
// (the host's `runtime::dispatch::descriptor_bytes`).
template <class V>
struct DescKind {
    static constexpr int value = sizeof(V) <= 4 ? 0 : sizeof(V) == 8 ? 1 : 2;
};

template <class V, int KIND = DescKind<V>::value>
struct Desc;

template <class V>
struct Desc<V, 0> {
    u64 word;
    static __device__ __forceinline__ Desc make(u32 epoch, V v) {
        union {
            V v;
            u32 u;
        } b;
        b.u = 0;
        b.v = v;
        Desc d;
        d.word = (u64)epoch | ((u64)b.u << 32);
        return d;
    }
    __device__ __forceinline__ u32 epoch() const { return (u32)word; }
    __device__ __forceinline__ V value() const {
        union {
            V v;
            u32 u;
        } b;
        b.u = (u32)(word >> 32);
        return b.v;
    }
    static __device__ __forceinline__ Desc load(const Desc *p) {
        Desc d;
        asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(d.word) : "l"(&p->word) : "memory");
        return d;
    }
    static __device__ __forceinline__ void store(Desc *p, Desc d) {
        asm volatile("st.relaxed.gpu.u64 [%0], %1;" ::"l"(&p->word), "l"(d.word) : "memory");
    }
};

template <class V>
struct Desc<V, 1> {
    u64 status;
    u64 bits;
    static __device__ __forceinline__ Desc make(u32 epoch, V v) {
        union {
            V v;
            u64 u;
        } b;
        b.v = v;
        Desc d;
        d.status = epoch;
        d.bits = b.u;
        return d;
    }
    __device__ __forceinline__ u32 epoch() const { return (u32)status; }
    __device__ __forceinline__ V value() const {
        union {
            V v;
            u64 u;
        } b;
        b.u = bits;
        return b.v;
    }
    static __device__ __forceinline__ Desc load(const Desc *p) {
        Desc d;
        asm volatile("ld.relaxed.gpu.v2.u64 {%0, %1}, [%2];" : "=l"(d.status), "=l"(d.bits) : "l"(p) : "memory");
        return d;
    }
    static __device__ __forceinline__ void store(Desc *p, Desc d) {
        asm volatile("st.relaxed.gpu.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(d.status), "l"(d.bits) : "memory");
    }
};

template <class V>
struct alignas(16) Desc<V, 2> {
    static constexpr int WORDS = (sizeof(V) + 3) / 4;
    u64 status;
    union {
        V value_;
        u32 w[WORDS];
    } bits;
    static __device__ __forceinline__ Desc make(u32 epoch, V v) {
        Desc d;
#pragma unroll
        for (int k = 0; k < WORDS; ++k) d.bits.w[k] = 0;
        d.bits.value_ = v;
        d.status = epoch;
        return d;
    }
    __device__ __forceinline__ u32 epoch() const { return (u32)status; }
    __device__ __forceinline__ V value() const { return bits.value_; }
    static __device__ __forceinline__ Desc load(const Desc *p) {
        Desc d;
        asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(d.status) : "l"(&p->status) : "memory");
#pragma unroll
        for (int k = 0; k < WORDS; ++k) {
            asm volatile("ld.relaxed.gpu.u32 %0, [%1];" : "=r"(d.bits.w[k]) : "l"(&p->bits.w[k]) : "memory");
        }
        return d;
    }
    static __device__ __forceinline__ void store(Desc *p, Desc d) {
#pragma unroll
        for (int k = 0; k < WORDS; ++k) {
            asm volatile("st.relaxed.gpu.u32 [%0], %1;" ::"l"(&p->bits.w[k]), "r"(d.bits.w[k]) : "memory");
        }
        asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(&p->status), "l"(d.status) : "memory");
    }
};

// Where a launch's state lives, in one buffer of the host's
// `runtime::dispatch::lookback_bytes(num_tiles, sizeof(Desc<V>))`: the tile
// ticket counter (16
// bytes, so that it sits at the same place for every launch), then `tiles`
// descriptors for tiles, one per 32 tiles, and one per 1024 tiles.
template <class V>
struct LookbackState {
    u64 *tickets;
    Desc<V> *tiles;
    Desc<V> *supers;
    Desc<V> *hypers;
    u32 epoch;

    __device__ __forceinline__ LookbackState(void *buffer, u64 num_tiles, u32 launch_epoch) {
        const u64 supers_count = (num_tiles + 31) / 32;
        tickets = reinterpret_cast<u64 *>(buffer);
        tiles = reinterpret_cast<Desc<V> *>(reinterpret_cast<unsigned char *>(buffer) + 16);
        supers = tiles + num_tiles;
        hypers = supers + supers_count;
        epoch = launch_epoch;
    }
};

// A slot's first read, issued early so that the reads of the three
// levels are in flight together; `wait_for` finishes it.
template <class V>
__device__ __forceinline__ Desc<V> first_read(const Desc<V> *slot, bool wanted) {
    Desc<V> d;
    if (wanted) {
        d = Desc<V>::load(slot);
    } else {
        d = Desc<V>::make(0, V());
    }
    return d;
}

// Waits (the whole warp) until every lane's slot, where it has one, holds
// this launch's value, and returns it. `d` is the slot's first read.
template <class V>
__device__ __forceinline__ V wait_for(const Desc<V> *slot, bool wanted, Desc<V> d, u32 epoch) {
    bool ready = !wanted || d.epoch() == epoch;
    unsigned backoff = RCB_LOOKBACK_FIRST_SLEEP;
    while (!__all_sync(0xffffffffu, ready)) {
        __nanosleep(backoff);
        if (backoff < RCB_LOOKBACK_MAX_SLEEP) backoff *= 2;
        if (!ready) {
            d = Desc<V>::load(slot);
            ready = d.epoch() == epoch;
        }
    }
    return wanted ? d.value() : V();
}

// x := op(x, y) with either side possibly absent.
template <class V, class Op>
__device__ __forceinline__ void combine_maybe(V &x, bool &has_x, V y, bool has_y, const Op &op) {
    if (has_y) {
        x = has_x ? op(x, y) : y;
        has_x = true;
    }
}

// Run by all 32 lanes of one warp of tile `i`, after the tile's aggregate
// was published with `publish_aggregate` by a thread of the same block and a
// block barrier followed. Returns the tile's exclusive prefix P_i (`has`
// false: none, for tile 0 of a scan without a seed) in every lane, and
// publishes SA / HI where this tile owes them.
//
// The tile's own aggregate is read back from its descriptor (global memory),
// not handed over in shared memory: the look-back warp of scan.cuh and
// select.cuh never joins the workers' named barrier, and compute-sanitizer's
// racecheck reports a race-free shared-memory hand-off from a thread that
// passed a named barrier to one that did not as a hazard
// (benches/experiments/race_probe.cu). The read is issued with the other
// first reads, so it adds no round trip.
template <class V, class Op>
__device__ __forceinline__ void lookback(const LookbackState<V> &st, u64 i, bool has_seed, V seed, V &prefix,
                                         bool &has_prefix, const Op &op) {
    const unsigned lane = threadIdx.x & 31u;
    const u64 s = i >> 5;
    const unsigned r = (unsigned)(i & 31u);
    const u64 h = i >> 10;
    const unsigned q = (unsigned)(s & 31u);
    const bool last_of_super = r == 31u;
    const bool last_of_hyper = last_of_super && q == 31u;

    // The tile aggregates of this super-tile first: SA_s, which later
    // super-tiles wait for, depends on nothing else, so it is published
    // before this tile waits for anything more (waiting first would chain
    // the super-tiles of a hyper-tile one after another).
    const Desc<V> *a_slot = st.tiles + ((s << 5) + lane);
    const Desc<V> *b_slot = st.supers + ((h << 5) + lane);
    const Desc<V> *h_slot = st.hypers + (h - 1);
    const bool want_h = lane == 0 && h > 0;
    const Desc<V> own = first_read(st.tiles + i, lane == r);
    const Desc<V> a_first = first_read(a_slot, lane < r);
    const Desc<V> b_first = first_read(b_slot, lane < q);
    const Desc<V> h_first = first_read(h_slot, want_h);
    V a = wait_for(a_slot, lane < r, a_first, st.epoch);
    if (lane == r) {
        // Published before the block barrier that preceded this call.
        if (own.epoch() != st.epoch) __trap();
        a = own.value();
    }
    a = warp_inclusive_scan(a, r + 1, op);
    const V q_i = shfl(a, (int)((r + 31u) & 31u));  // lane r-1, unused for r = 0
    const V sa = shfl(a, 31);
    if (last_of_super && lane == 0) Desc<V>::store(st.supers + s, Desc<V>::make(st.epoch, sa));

    // Then the super-tile aggregates of this hyper-tile: R_s and, for the
    // last tile of a hyper-tile, HA_h.
    V b = wait_for(b_slot, lane < q, b_first, st.epoch);
    if (last_of_hyper && lane == 31) b = sa;
    b = warp_inclusive_scan(b, q + (last_of_hyper ? 1u : 0u), op);
    const V r_s = shfl(b, (int)((q + 31u) & 31u));  // lane q-1, unused for q = 0
    const V ha = shfl(b, 31);

    // Last the prefix of the hyper-tiles before: the one chain, a step per
    // 1024 tiles.
    V hp = wait_for(h_slot, want_h, h_first, st.epoch);
    hp = shfl(hp, 0);
    V hi = seed;
    bool has_hi = has_seed;
    if (h > 0) {
        hi = hp;
        has_hi = true;
    }
    if (last_of_hyper) {
        V next = hi;
        bool has_next = has_hi;
        combine_maybe(next, has_next, ha, true, op);
        if (lane == 0) Desc<V>::store(st.hypers + h, Desc<V>::make(st.epoch, next));
    }
    prefix = hi;
    has_prefix = has_hi;
    combine_maybe(prefix, has_prefix, r_s, q > 0, op);
    combine_maybe(prefix, has_prefix, q_i, r > 0, op);
}

// Publishes tile `i`'s aggregate: every tile's, the last of a super-tile
// and of the launch included (later tiles never read those, the tile's own
// look-back does).
template <class V>
__device__ __forceinline__ void publish_aggregate(const LookbackState<V> &st, u64 i, V agg) {
    Desc<V>::store(st.tiles + i, Desc<V>::make(st.epoch, agg));
}

}  // namespace rcb

#endif  // RCB_PROVIDERS_LOOKBACK_CUH
