// The sm_90a matmul family of h200-002: C = A B in FP32 from warpgroup MMA (wgmma) with the 3xTF32 split, fed by
// the tensor memory accelerator (TMA) through a multistage shared-memory pipeline, warps specialized by role.
//
// TF32 wgmma reads a shared-memory operand only K-major, and B (k x n, row-major) is not. So the block computes
// C^T = B^T A^T: wgmma's register operand is a 64 x 8 slice of B^T, read from B's tile with scalar loads, and its
// shared operand is A's tile as it lies (K-major rows of 128 bytes, the 128-byte swizzle TMA writes).
//
// A block is three warpgroups and owns a BM x 128 tile of C (as the first variants have it; the policies below
// change who issues the loads, how hi is split and how many stages a partial tile sums):
//   producer   one thread issues the TMA loads of stage s + STAGES - 1 (A: one BM x 32 box; B: four 32 x 32
//              boxes) on the stage's `full` barrier; the warpgroup then splits A's tile in place (hi = x rounded
//              to TF32, lo = x - hi into a tile of its own, same layout), fences the async proxy and arrives on
//              `ready`. It runs ahead of the consumers by up to STAGES - 1 stages, on 40 registers.
//   consumers  two warpgroups, 64 columns of C each (wgmma's M) by BM rows (wgmma's N). Per stage of K 32: load
//              the B^T fragments, split them in registers, issue 12 wgmma (hi*lo, lo*hi, hi*hi per k slice of
//              8) summed from zero into a partial tile, and while they run load the next stage's fragments; then
//              add the partial tile to the result in FP32 (the tensor core's FP32 accumulation truncates: a chain
//              through it as long as K drifts, h200-001's masksplit) and release the stage on `empty`.
// The B^T rows a warp takes are permuted within its 32 columns (fragment row g -> column g % 4 + 16 (g / 4),
// row g + 8 four columns on) so that, with TMA's swizzle, its 32 scalar loads hit 32 banks.
// TMA fills rows and columns past the matrix with zeros, so any m, n, k with 16-byte row strides (n and k
// multiples of 4) runs here; the launch contract sends other shapes to the mma.sync family (tf32x3_mma.cuh).
#pragma once
#include "tf32x3_mma.cuh"  // RoundInt, the split shared with the mma.sync family
#include "wgmma_tf32.cuh"  // the wgmma instruction and its register pins

namespace wgmma_tma {

struct __align__(64) TensorMap {  // CUtensorMap, encoded on the host (launch.py), passed by value
    unsigned long long word[16];
};

enum : int { BN = 128, BK = 32, THREADS = 384 };  // registers: producer 40, consumers 232 (setmaxnreg, below)

template <int BM, int STAGES, int COLS = BN>
struct Layout {
    static constexpr int A_BYTES = BM * BK * 4;                // A's tile: BM rows of 128 bytes, swizzled
    static constexpr int B_BYTES = BK * COLS * 4;              // B's tile: COLS / 32 boxes of 32 x 32, 4096 bytes
    static constexpr int STAGE_BYTES = 2 * A_BYTES + B_BYTES;  // A (hi in place), A's lo, B
    // + alignment, three barriers a stage and, tiles of 64 columns (PINGPONG), the two turns
    static constexpr int SHARED = STAGES * STAGE_BYTES + 1024 + 8 * (3 * STAGES + (COLS < BN ? 2 : 0));
};

__device__ __forceinline__ void barrier_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void arrive_expecting(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void wait(unsigned bar, unsigned parity)
{
    unsigned done;
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

// A box of the tensor at (x innermost, y) into shared memory, completing on `bar`'s transaction count.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap& map, int x, int y, unsigned bar)
{
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::
            "r"(dst),
        "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(bar)
        : "memory");
}

// wgmma's descriptor of a K-major tile with the 128-byte swizzle: 8-row groups 1024 bytes apart (stride byte
// offset), the leading byte offset unused; the tile starts on 1024 bytes.
__device__ __forceinline__ unsigned long long descriptor(unsigned addr)
{
    return static_cast<unsigned long long>((addr & 0x3ffff) >> 4) | (1ull << 16) | (64ull << 32) | (1ull << 62);
}

using wgmma_tf32::pin;
using wgmma_tf32::wgmma;

// What the variants change (CUTLASS's way: one mainloop, policies as parameters):
//   ISSUE_WARP  false: thread 0 of the producer warpgroup issues the loads between its splits, waiting there for
//               the consumers to free a slot; true: warp 0 only issues, warps 1 to 3 only split.
//   CHAIN       stages whose wgmma sum into one partial tile before it is added to the result in FP32: the
//               consumer drains its wgmma (wait_group 0) once a chain; between, stage s is issued before stage
//               s - 1 is waited for (wait_group 1), the fragments of the two in two sets of registers.
//   TRUNCATE    false: A's hi rounded to TF32 and written back; true: hi left as loaded (the tensor core reads
//               the top 19 bits of a TF32 operand) and lo = x - (x with its low 13 bits cleared), one tile
//               written a stage instead of two.
//   PINGPONG    false: the two consumer warpgroups share each BM x 128 tile, 64 columns each; true (blocks that
//               walk their tiles, TMA only): a tile is BM x 64 and the consumers take the block's tiles in turn,
//               one's products while the other runs its epilogue (CUTLASS's ping-pong schedule), each waiting for
//               the other's last products to be issued before it starts its mainloop (`turn`).
template <bool ISSUE_WARP_, int CHAIN_, bool TRUNCATE_, bool PINGPONG_ = false>
struct Policy {
    static_assert(CHAIN_ == 1 || CHAIN_ == 2, "a chain is one stage or two");
    static constexpr bool ISSUE_WARP = ISSUE_WARP_, TRUNCATE = TRUNCATE_, PINGPONG = PINGPONG_;
    static constexpr int CHAIN = CHAIN_;
};
using Inline = Policy<false, 1, false>;  // h200-002's first two variants

// Where the tiles come from:
//   Maps      TMA boxes of A and B (rows of 16-byte strides), issued by one thread, completing on `full`'s
//             transaction count.
//   Pointers  A and B as they lie, any shape: two warps copy the tiles element by element with cp.async (zeros
//             past the matrix), into the layout TMA's swizzle gives, each thread's copies arriving on `full` as
//             they land. The split then writes hi back too (no TRUNCATE): every word the tensor core reads was
//             last written by a thread that fenced the async proxy after writing it.
struct Maps {
    static constexpr bool TMA = true;
    const TensorMap& a;
    const TensorMap& b;
};

// Maps of batches, a batch a blockIdx.z: batch z's A begins at row z * a_rows and column z * a_cols of map a,
// its B at row z * b_rows of map b. Stacked matrices (a_cols = 0: the triangle's channels) need b_rows a
// multiple of BK, zero rows past k, so that no K step reads into the next batch; rows of A past m may be the next
// batch's, and reach no output. Slices of K (a_rows = 0, a_cols = b_rows = the slice) give split-K's partial
// products.
struct BatchedMaps : Maps {
    int a_rows, a_cols, b_rows;
};

struct Pointers {
    static constexpr bool TMA = false;
    const float* __restrict__ a;
    const float* __restrict__ b;
    int m, n, k;
};

__device__ __forceinline__ void copy4(unsigned dst, const float* src, bool in)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(in ? 4 : 0) : "memory");
}

// A consumer thread's results handed to the epilogue: its rows row + 8 i (+ 0 and 1) at columns col and col + 4,
// acc[4 i + 2 h + e] at (row + 8 i + e, col + 4 h), one call of the epilogue per i. An epilogue that reads memory
// a value overloads `finish` for its type (found by argument-dependent lookup), so that it can issue every read of
// the thread before the first write: a call per i waits a memory latency per i, as nothing tells the compiler that
// the epilogue's writes and reads are apart.
template <class E, int R>
__device__ __forceinline__ void finish(const E& epilogue, int row, int col, const float (&acc)[R])
{
#pragma unroll
    for (int i = 0; i < R / 4; ++i) epilogue(row + 8 * i, col, acc + 4 * i);
}

template <int BM, int STAGES, class P, class S>
struct Block {
    static constexpr int ROWS = BM, COLS = P::PINGPONG ? BN / 2 : BN;  // a tile: a consumer's columns or both's
    using L = Layout<BM, STAGES, COLS>;
    static_assert(S::TMA || (P::ISSUE_WARP && !P::TRUNCATE), "cp.async loads take warps of their own and no TRUNCATE");
    static_assert(S::TMA || !P::PINGPONG, "the ping-pong schedule is TMA's");
    // The producer warpgroup's threads: the first LOADERS issue loads, the rest split A's tile.
    static constexpr int LOADERS = S::TMA ? (P::ISSUE_WARP ? 32 : 0) : 64, SPLITTERS = 128 - LOADERS;
    // Who releases a stage: a lane per consumer warp where TMA refills it; where cp.async threads refill it, every
    // consumer thread, so that each thread's reads of B are ordered before the refill by its own arrival
    // (racecheck, tracking cp.async writes, reported the one-lane release as WAR hazards at K 520).
    static constexpr int EMPTY_ARRIVALS = S::TMA ? (P::PINGPONG ? 4 : 8) : THREADS - 128;
    unsigned base;  // shared address of stage 0, 1024-aligned
    unsigned char* generic;
    int steps, row0, col0;
    int first;  // the K steps this block's pipeline took before this tile (walk's earlier tiles)

    // Where the tile's K step s is in the ring of stages, and the parity of its use of that slot.
    __device__ int slot(int s) const { return (first + s) % STAGES; }
    __device__ unsigned parity(int s) const { return ((first + s) / STAGES) & 1; }
    // Whether the slot of step s was used before (its consumers' release is waited for), and that use's parity.
    __device__ bool reused(int s) const { return first + s >= STAGES; }
    __device__ unsigned released(int s) const { return ((first + s) / STAGES - 1) & 1; }

    __device__ unsigned stage(int s) const { return base + s * L::STAGE_BYTES; }
    __device__ unsigned char* stage_ptr(int s) const { return generic + s * L::STAGE_BYTES; }
    __device__ unsigned full(int s) const { return base + STAGES * L::STAGE_BYTES + 8 * s; }
    __device__ unsigned ready(int s) const { return full(STAGES + s); }
    __device__ unsigned empty(int s) const { return full(2 * STAGES + s); }
    // PINGPONG: consumer w's turn to run its mainloop, completed by the other's 128 threads as they issue their
    // tile's last products; after the ring's barriers (wgmma_tma_shared_bytes counts two more for 64 columns).
    __device__ unsigned turn(int w) const { return full(3 * STAGES + w); }

    __device__ void init() const
    {
        for (int s = 0; s < STAGES; ++s) {
            barrier_init(full(s), S::TMA ? 1 : LOADERS);
            barrier_init(ready(s), SPLITTERS);
            barrier_init(empty(s), EMPTY_ARRIVALS);
        }
        if constexpr (P::PINGPONG) {
            barrier_init(turn(0), 128);
            barrier_init(turn(1), 128);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }

    // The shared offset of element (row, col) of a tile of rows of 128 bytes, with TMA's 128-byte swizzle.
    static __device__ unsigned swizzled(int row, int col)
    {
        return row * 128 + ((((col >> 2) ^ (row & 7))) << 4) + (col & 3) * 4;
    }

    __device__ void load(const Maps& src, int q, int) const
    {
        const int at = slot(q), k0 = q * BK;
        if (reused(q)) wait(empty(at), released(q));  // the consumers are done with the slot's last stage
        arrive_expecting(full(at), L::A_BYTES + L::B_BYTES);
        tma_load(stage(at), src.a, k0, row0, full(at));
#pragma unroll
        for (int box = 0; box < COLS / 32; ++box)
            tma_load(stage(at) + 2 * L::A_BYTES + 4096 * box, src.b, col0 + 32 * box, k0, full(at));
    }

    __device__ void load(const BatchedMaps& src, int q, int) const
    {
        const int at = slot(q), k0 = q * BK, z = blockIdx.z;
        if (reused(q)) wait(empty(at), released(q));
        arrive_expecting(full(at), L::A_BYTES + L::B_BYTES);
        tma_load(stage(at), src.a, z * src.a_cols + k0, z * src.a_rows + row0, full(at));
#pragma unroll
        for (int box = 0; box < COLS / 32; ++box)
            tma_load(stage(at) + 2 * L::A_BYTES + 4096 * box, src.b, col0 + 32 * box, z * src.b_rows + k0,
                     full(at));
    }

    __device__ void load(const Pointers& src, int q, int loader) const
    {
        const int at = slot(q), k0 = q * BK;
        if (reused(q)) wait(empty(at), released(q));
#pragma unroll 4
        for (int j = 0; j < BM * BK / LOADERS; ++j) {  // a warp copies a 128-byte row of A
            const int e = loader + LOADERS * j, r = e / BK, col = e % BK;
            const bool in = row0 + r < src.m && k0 + col < src.k;
            copy4(stage(at) + swizzled(r, col), in ? src.a + static_cast<long long>(row0 + r) * src.k + k0 + col : src.a,
                  in);
        }
#pragma unroll 4
        for (int j = 0; j < BK * BN / LOADERS; ++j) {  // and a 128-byte piece of a row of B
            const int e = loader + LOADERS * j, kr = e / BN, col = e % BN;
            const bool in = k0 + kr < src.k && col0 + col < src.n;
            copy4(stage(at) + 2 * L::A_BYTES + 4096 * (col / 32) + swizzled(kr, col % 32),
                  in ? src.b + static_cast<long long>(k0 + kr) * src.n + col0 + col : src.b, in);
        }
        asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(full(at)) : "memory");
    }

    __device__ void split(int slot, int from) const
    {
        float4* hi = reinterpret_cast<float4*>(stage_ptr(slot));
        float4* lo = reinterpret_cast<float4*>(stage_ptr(slot) + L::A_BYTES);
#pragma unroll
        for (int i = from; i < BM * BK / 4; i += SPLITTERS) {  // element-wise: both tiles have one swizzle
            const float4 v = hi[i];
            if constexpr (P::TRUNCATE) {
                using S = tf32x3::Truncate;
                lo[i] = make_float4(__uint_as_float(S::split(v.x).y), __uint_as_float(S::split(v.y).y),
                                    __uint_as_float(S::split(v.z).y), __uint_as_float(S::split(v.w).y));
            } else {
                using S = tf32x3::RoundInt;
                const uint2 x = S::split(v.x), y = S::split(v.y), z = S::split(v.z), w = S::split(v.w);
                hi[i] = make_float4(__uint_as_float(x.x), __uint_as_float(y.x), __uint_as_float(z.x),
                                    __uint_as_float(w.x));
                lo[i] = make_float4(__uint_as_float(x.y), __uint_as_float(y.y), __uint_as_float(z.y),
                                    __uint_as_float(w.y));
            }
        }
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // for the tensor core's reads
    }

    __device__ void produce(const S& src, int tid) const
    {
        if constexpr (LOADERS > 0) {
            if (tid < LOADERS) {
                if (!S::TMA || tid == 0)
                    for (int q = 0; q < steps; ++q) load(src, q, tid);
                return;
            }
        } else if (tid == 0) {
            for (int q = 0; q < STAGES - 1 && q < steps; ++q) load(src, q, tid);
        }
        for (int s = 0; s < steps; ++s) {
            wait(full(slot(s)), parity(s));
            split(slot(s), tid - LOADERS);
            arrive(ready(slot(s)));
            const int q = s + STAGES - 1;  // into the slot the consumers release after stage s - 1
            if (LOADERS == 0 && tid == 0 && q < steps) load(src, q, tid);
        }
    }

    // This thread's B^T fragments of one stage, FP32: [k slice][a0..a3] as mma.m16n8k8's A layout, rows permuted.
    __device__ void fetch(float (&raw)[4][4], int slot, int chunk, int col) const
    {
        const float* b = reinterpret_cast<const float*>(stage_ptr(slot) + 2 * L::A_BYTES) + 1024 * chunk;
        const int t = threadIdx.x % 4;
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int kr = 8 * kk + t + 4 * (e / 2), nc = col + 4 * (e % 2);
                raw[kk][e] = b[32 * kr + ((((nc >> 2) ^ (kr & 7)) << 2) | (nc & 3))];
            }
    }

    static constexpr int R = BM / 2;  // accumulator registers a thread: 64 x BM over 128 threads
    struct Consumer {
        float acc[R], part[R], raw[4][4];
        unsigned hi[2][4][4], lo[2][4][4];  // the fragments of two stages: one in flight while the next is split
        int chunk, col;
        unsigned handoff;  // PINGPONG: the other consumer's turn, given as this one's last products are issued
    };

    // Stage s: split the fetched fragments into set Q, issue its 12 wgmma into the partial tile (from zero at a
    // chain's first stage), fetch stage s + 1's.
    template <int Q>
    __device__ void issue(Consumer& c, int s, int accumulate) const
    {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const uint2 x = tf32x3::RoundInt::split(c.raw[kk][e]);
                c.hi[Q][kk][e] = x.x, c.lo[Q][kk][e] = x.y;
            }
        const unsigned long long da = descriptor(stage(slot(s))), dl = descriptor(stage(slot(s)) + L::A_BYTES);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {  // a k slice of 8 is 32 bytes on along the swizzled rows
            wgmma<BM>(c.part, c.hi[Q][kk], dl + 2 * kk, kk > 0 || accumulate);
            wgmma<BM>(c.part, c.lo[Q][kk], da + 2 * kk, 1);
            wgmma<BM>(c.part, c.hi[Q][kk], da + 2 * kk, 1);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        if (s + 1 < steps) {
            wait(full(slot(s + 1)), parity(s + 1));
            wait(ready(slot(s + 1)), parity(s + 1));
            fetch(c.raw, slot(s + 1), c.chunk, c.col);
        }
    }

    // Stage s's wgmma have completed: its fragment set Q may be overwritten and its slot refilled.
    template <int Q>
    __device__ void release(Consumer& c, int s) const
    {
        pin(c.hi[Q]), pin(c.lo[Q]);
        if constexpr (S::TMA) {
            __syncwarp();
            if (threadIdx.x % 32 == 0) arrive(empty(slot(s)));
        } else {
            arrive(empty(slot(s)));
        }
    }

    // Whether stage s begins or ends a chain is known at compile time: a wait or a read of the partial tile that
    // ptxas cannot place makes it drain every wgmma (C7517), or serialize them.
    template <int Q, bool FIRST, bool LAST>
    __device__ void step(Consumer& c, int s) const
    {
        issue<Q>(c, s, !FIRST);
        if constexpr (LAST) {
            // PINGPONG: every wait of this tile has passed, so the other consumer may issue its products under the
            // drain of these and their sum (CUTLASS's ping-pong gives the turn there too)
            if constexpr (P::PINGPONG)
                if (s + 1 == steps) arrive(c.handoff);
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
            if constexpr (!FIRST) release<Q ^ 1>(c, s - 1);
            release<Q>(c, s);
            pin(c.part);
#pragma unroll
            for (int i = 0; i < R; ++i) c.acc[i] += c.part[i];
        } else {
            asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
            if constexpr (!FIRST) release<Q ^ 1>(c, s - 1);
        }
    }

    // Consumer w's mainloop and epilogue of the block's job-th tile. PINGPONG: a consumer's step waits on `full` and
    // `ready` by the parity of that slot's use alone, which is sound only once every earlier use of the slot has
    // completed; the turns make it so: the other consumer issued its last products on the tile before, every one
    // of its waits passed, before this one's mainloop begins.
    template <class E>
    __device__ void consume(const E& epilogue, int w, int tid, int job) const
    {
        const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
        Consumer c;
        c.chunk = (P::PINGPONG ? 0 : 2 * w) + warp / 2;     // this warp's 32-column box of B
        c.col = 8 * (warp % 2) + 16 * (g / 4) + g % 4;      // fragment row g's column in the box; g + 8: +4
#pragma unroll
        for (int i = 0; i < R; ++i) c.acc[i] = 0.f;
        c.handoff = turn(w ^ 1);
        if constexpr (P::PINGPONG)
            if (job > 0) wait(turn(w), ((job - 1) / 2) & 1);  // the other's tile job - 1: its waits have passed
        if (steps > 0) {  // k = 0: C is zeros
            wait(full(slot(0)), parity(0));
            wait(ready(slot(0)), parity(0));
            fetch(c.raw, slot(0), c.chunk, c.col);
        }
        constexpr bool ONE = P::CHAIN == 1;
        int s = 0;
        for (; s + 1 < steps; s += 2) {  // two stages an iteration: the fragment sets by compile-time index
            step<0, true, ONE>(c, s);
            step<1, ONE, true>(c, s + 1);
        }
        if (s < steps) step<0, true, true>(c, s);
        if constexpr (P::PINGPONG)
            if (steps == 0) arrive(c.handoff);  // no products: the turn passes at once
        // The accumulator of m64nBMk8: warp rows 16 warp + g + 8h (C's columns, permuted as loaded), register
        // 4i + 2h + e at wgmma column 8i + 2t + e (C's row).
        const int n0 = col0 + (P::PINGPONG ? 0 : 64 * w) + 32 * (warp / 2) + c.col;
        finish(epilogue, row0 + 2 * t, n0, c.acc);
    }
};

// Where the consumers' results go: an epilogue is called for each pair of rows of a thread's and its pair of
// columns, v[2h + e] belonging at (row + e, col + 4h), col % 8 < 4; so an op's own epilogue can combine two columns
// of one row (trimul's gates: a value and its gate side by side). `each` visits the four inside an m x n matrix.
template <class F>
__device__ __forceinline__ void each(int row, int col, const float* v, int m, int n, F f)
{
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int r = row + e, cc = col + 4 * h;
            if (r < m && cc < n) f(r, cc, v[2 * h + e]);
        }
}

struct Store {  // C, m x n, row-major: the matmul family's
    float* __restrict__ c;
    int m, n;
    __device__ __forceinline__ void operator()(int row, int col, const float* v) const
    {
        each(row, col, v, m, n, [&](int r, int cc, float x) { c[static_cast<long long>(r) * n + cc] = x; });
    }
};

// A role's tiles: the block's own, (blockIdx.x, blockIdx.y), where `tiles` is 0; else it walks the tiles_x-wide
// grid of `tiles` tiles of its blockIdx.z from tile blockIdx.x on, gridDim.x at a time, so that the producer runs
// ahead into the next tile's loads and splits while the consumers finish one (for products of few K steps, whose
// blocks otherwise wait a load's latency and then their epilogue's, tile after tile: trimul's projections, K 128).
// PINGPONG: the producer loads every tile of the block in turn, consumer w takes the block's tiles w, w + 2, ...
template <bool PRODUCER, class B, class S, class E>
__device__ __forceinline__ void walk(B block, int tiles_x, int tiles, const S& src, const E& epilogue, int wg, int tid)
{
    constexpr bool PINGPONG = B::COLS < BN;
    for (int job = 0, tile = blockIdx.x;; ++job, tile += gridDim.x, block.first += block.steps) {
        if (tiles > 0) {
            if (tile >= tiles) return;
            block.row0 = tile / tiles_x * B::ROWS, block.col0 = tile % tiles_x * B::COLS;
        }
        if constexpr (PRODUCER) block.produce(src, tid);
        else if (!PINGPONG || job % 2 == wg - 1) block.consume(epilogue, wg - 1, tid, job);
        if (tiles == 0) return;
    }
}

// Dynamic shared memory from its first 1024-aligned byte: the ring's start, as a shared address and a pointer.
struct Shared {
    unsigned addr;
    unsigned char* generic;
};

__device__ __forceinline__ Shared aligned_shared()
{
    extern __shared__ unsigned char shared[];
    const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    const unsigned pad = (1024 - (raw & 1023)) & 1023;
    return {raw + pad, shared + pad};
}

// The block of a launch: the ring at the start of dynamic shared memory, 1024-aligned, initialized.
template <class B>
__device__ __forceinline__ B begin(int k)
{
    const Shared at = aligned_shared();
    const B block{at.addr, at.generic, (k + BK - 1) / BK, static_cast<int>(blockIdx.y) * B::ROWS,
                  static_cast<int>(blockIdx.x) * B::COLS};
    if (threadIdx.x == 0) block.init();
    __syncthreads();
    return block;
}

struct Alone {  // run's finale where the block's tile is its own: nothing after the roles' work
    __device__ void producer() const {}
    __device__ void consumer(int) const {}
};

template <int BM, int STAGES, class P, class S, class E, class F = Alone>
__device__ __forceinline__ void run(const S& src, const E& epilogue, int k, int tiles_x = 1, int tiles = 0,
                                    const F& finale = F{})
{
    using B = Block<BM, STAGES, P, S>;
    const B block = begin<B>(k);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    // Registers: 128 x 40 + 256 x 232 <= 64 Ki; the cp.async loaders' address arithmetic spills below 64, so
    // there 128 x 64 + 256 x 216. ptxas gives the code a setmaxnreg dominates its count: each role's work, the
    // finale's included, is inside.
    if (wg == 0) {
        if constexpr (S::TMA) asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        else asm volatile("setmaxnreg.dec.sync.aligned.u32 64;");
        walk<true>(block, tiles_x, tiles, src, epilogue, wg, tid);
        finale.producer();
    } else {
        if constexpr (S::TMA) asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        else asm volatile("setmaxnreg.inc.sync.aligned.u32 216;");
        walk<false>(block, tiles_x, tiles, src, epilogue, wg, tid);
        finale.consumer(threadIdx.x - 128);
    }
}

// Split-K in one launch: the SPLITS blocks of a cluster (1, 1, SPLITS) take the slices of K of one tile, rank z the
// z-th. Each stashes its partial tile in its own shared memory; after the cluster's barrier each sums a SPLITS-th of
// the tile's rows over every block's stash (distributed shared memory, in rank order: the same bits every run) into
// C, and a second barrier keeps each stash alive until the others have read it. No partials in global memory and
// no second kernel: where the tiles leave most SMs idle (256^3: 8 tiles), those are most of split-K's time.
namespace cluster {

__device__ __forceinline__ void sync()  // every thread of the cluster's blocks; not aligned: the roles diverge
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ int rank()
{
    int r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// The float4 at shared address `addr` of the cluster's block `rank`.
__device__ __forceinline__ float4 load(unsigned addr, int rank)
{
    unsigned remote;
    float4 v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(remote)
                 : "memory");
    return v;
}

}  // namespace cluster

// A stash row's floats: four past the tile's, so that the four lanes of a fragment column (rows 2t apart) write
// four banks apart.
enum : int { STASH_LD = BN + 4 };

struct Stash {  // the consumers' epilogue in a cluster: the partial tile into the block's stash, tile-relative
    float* tile;
    int row0, col0;
    __device__ __forceinline__ void operator()(int row, int col, const float* v) const
    {
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e) tile[(row - row0 + e) * STASH_LD + col - col0 + 4 * h] = v[2 * h + e];
    }
};

template <int BM, int SPLITS>
struct ClusterSum {  // run's finale in a cluster: the two barriers, and between them the consumers' sum
    unsigned stash;  // this block's, a shared address
    float* __restrict__ c;
    int m, n, row0, col0;

    __device__ void producer() const
    {
        cluster::sync();
        cluster::sync();
    }

    __device__ void consumer(int tid) const
    {
        constexpr int ROWS = BM / SPLITS, QUADS = ROWS * BN / 4;
        cluster::sync();
        const int first = cluster::rank() * ROWS;
        for (int q = tid; q < QUADS; q += THREADS - 128) {
            const int r = first + q / (BN / 4), col = 4 * (q % (BN / 4));
            const unsigned at = stash + 4 * (r * STASH_LD + col);
            float4 sum = cluster::load(at, 0);
#pragma unroll
            for (int z = 1; z < SPLITS; ++z) {
                const float4 v = cluster::load(at, z);
                sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
            }
            const float v[4] = {sum.x, sum.y, sum.z, sum.w};
            if (row0 + r < m)
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col0 + col + j < n) c[static_cast<long long>(row0 + r) * n + col0 + col + j] = v[j];
        }
        cluster::sync();
    }
};

// The shared memory of a block of split_in_cluster: the ring (Layout's), then its stash 256 bytes past the ring's end.
template <int BM, int STAGES>
struct ClusterLayout {
    static constexpr int STASH = STAGES * Layout<BM, STAGES>::STAGE_BYTES + 256;
    static constexpr int SHARED = Layout<BM, STAGES>::SHARED + 256 + BM * STASH_LD * 4;
};

// C = A B from TMA maps of A and B (rows of 16-byte strides), block (x, y)'s tile summed over the cluster's SPLITS
// slices of K of `slice` each (a multiple of BK), slice blockIdx.z as a batch of BatchedMaps.
template <int BM, int STAGES, int SPLITS, class P>
__device__ __forceinline__ void split_in_cluster(const TensorMap& map_a, const TensorMap& map_b, float* __restrict__ c,
                                                 int m, int n, int k, int slice)
{
    using L = ClusterLayout<BM, STAGES>;
    const Shared at = aligned_shared();
    const int from = blockIdx.z * slice, row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    run<BM, STAGES, P>(BatchedMaps{{map_a, map_b}, 0, slice, slice},
                       Stash{reinterpret_cast<float*>(at.generic + L::STASH), row0, col0}, max(0, min(k - from, slice)),
                       1, 0, ClusterSum<BM, SPLITS>{at.addr + L::STASH, c, m, n, row0, col0});
}

// Two products into each tile, one after the other through the same ring, each with its own operands, K and
// epilogue (the second's may read what the first's wrote: the same thread writes and reads each element). The
// block walks the tiles as `walk` does; the producer loads a tile's second product, and then the next tile's first,
// under the consumers' epilogues. One mainloop serves both, a pass at a time (the epilogue by `Either`): two
// inlined one after the other kept values of both alive and spilled.
template <class E, class E2>
struct Either {  // the epilogues by value: references to them put them in local memory
    E first;
    E2 second;
    int pass;
};

template <class E, class E2, int R>
__device__ __forceinline__ void finish(const Either<E, E2>& e, int row, int col, const float (&acc)[R])
{
    if (e.pass == 0) finish(e.first, row, col, acc);
    else finish(e.second, row, col, acc);
}

template <bool PRODUCER, class B, class S, class E, class E2>
__device__ __forceinline__ void walk_two(B block, int tiles_x, int tiles, const S& src, const E& epilogue, int k,
                                         const S& src2, const E2& epilogue2, int k2, int wg, int tid)
{
    for (int job = 0;; ++job, block.first += block.steps) {  // a tile's two products, then the next tile's
        const int tile = blockIdx.x + job / 2 * gridDim.x, pass = job % 2;
        if (tile >= tiles) return;
        block.row0 = tile / tiles_x * B::ROWS, block.col0 = tile % tiles_x * BN;
        block.steps = ((pass ? k2 : k) + BK - 1) / BK;
        static_assert(B::COLS == BN, "two products a tile share it between the consumers");
        if constexpr (!PRODUCER) block.consume(Either<E, E2>{epilogue, epilogue2, pass}, wg - 1, tid, job);
        else if (pass) block.produce(src2, tid);  // a call each: a Maps chosen at run time went to local memory
        else block.produce(src, tid);
    }
}

template <int BM, int STAGES, class P, class S, class E, class E2>
__device__ __forceinline__ void run_two(const S& src, const E& epilogue, int k, const S& src2, const E2& epilogue2,
                                        int k2, int tiles_x, int tiles)
{
    using B = Block<BM, STAGES, P, S>;
    const B block = begin<B>(k);
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;
    if (wg == 0) {  // the registers as run's
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        walk_two<true>(block, tiles_x, tiles, src, epilogue, k, src2, epilogue2, k2, wg, tid);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        walk_two<false>(block, tiles_x, tiles, src, epilogue, k, src2, epilogue2, k2, wg, tid);
    }
}

template <int BM, int STAGES, class P = Inline, class S = Maps>
__device__ __forceinline__ void matmul(const S& src, float* __restrict__ c, int m, int n, int k)
{
    static_assert(!P::PINGPONG, "the ping-pong schedule takes the tiles of a walk (run's `tiles`)");
    run<BM, STAGES, P, S>(src, Store{c, m, n}, k);
}

// dst (rows x ld) = src (rows x cols), columns cols .. ld - 1 zero; ld a multiple of 4. A thread writes one float4
// of dst from four scalar reads of src (neighbouring threads, neighbouring addresses): the padded kernels' copies
// of A and B into rows of 16-byte strides.
__device__ __forceinline__ void copy_padded(const float* __restrict__ src, float* __restrict__ dst, int rows, int cols,
                                            int ld)
{
    const long long quad = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int per_row = ld / 4;
    if (quad >= static_cast<long long>(rows) * per_row) return;
    const int r = static_cast<int>(quad / per_row), c = static_cast<int>(quad % per_row) * 4;
    const float* from = src + static_cast<long long>(r) * cols + c;
    float4 v;
    v.x = c < cols ? __ldg(from) : 0.f;
    v.y = c + 1 < cols ? __ldg(from + 1) : 0.f;
    v.z = c + 2 < cols ? __ldg(from + 2) : 0.f;
    v.w = c + 3 < cols ? __ldg(from + 3) : 0.f;
    reinterpret_cast<float4*>(dst)[quad] = v;
}

// C = the split-K slices' partial products summed in order (the same bits every run, unlike atomics), one float4 a
// thread.
__device__ __forceinline__ void sum_slices(const float4* __restrict__ partials, float4* __restrict__ c, int quads,
                                           int splits)
{
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= quads) return;
    float4 sum = __ldg(partials + q);
    for (int z = 1; z < splits; ++z) {
        const float4 v = __ldg(partials + static_cast<long long>(z) * quads + q);
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
    }
    c[q] = sum;
}

}  // namespace wgmma_tma

// A variant's entry: kernel NAME, a BM x 128 tile, STAGES stages, then its wgmma_tma::Policy (commas and all), TMA
// maps of A (box BM x 32) and B (box 32 x 32).
#define WGMMA_TMA_ENTRY(NAME, BM, STAGES, ...)                                                                    \
    extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)                                           \
        NAME(const __grid_constant__ wgmma_tma::TensorMap map_a, const __grid_constant__ wgmma_tma::TensorMap map_b, \
             float* __restrict__ c, int m, int n, int k)                                                           \
    {                                                                                                              \
        wgmma_tma::matmul<BM, STAGES, __VA_ARGS__>(wgmma_tma::Maps{map_a, map_b}, c, m, n, k);                      \
    }

// Split-K in a cluster of SPLITS blocks (wgmma_tma::split_in_cluster): kernel NAME, 64 x 128 tiles, STAGES stages,
// then its wgmma_tma::Policy; grid (ceil(n / 128), ceil(m / 64), SPLITS), block (384, 1, 1), dynamic shared memory
// ClusterLayout<64, STAGES>::SHARED; arguments TMA maps of A (box 64 x 32) and B (box 32 x 32), c, m, n, k, and
// each slice's K, a multiple of 32.
#define WGMMA_TMA_CLUSTER_ENTRY(NAME, STAGES, SPLITS, ...)                                                        \
    extern "C" __global__ void __cluster_dims__(1, 1, SPLITS) __launch_bounds__(wgmma_tma::THREADS, 1)            \
        NAME(const __grid_constant__ wgmma_tma::TensorMap map_a, const __grid_constant__ wgmma_tma::TensorMap map_b, \
             float* __restrict__ c, int m, int n, int k, int slice)                                                \
    {                                                                                                              \
        wgmma_tma::split_in_cluster<64, STAGES, SPLITS, __VA_ARGS__>(map_a, map_b, c, m, n, k, slice);             \
    }

// In every cubin of the family, for the shapes TMA cannot take (a row of A or B not a 16-byte stride): h200-001's
// adopted mma.sync kernel, grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1).
extern "C" __global__ void __launch_bounds__(128)
matmul_3xtf32_wgmma_tma_fallback(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<128, 32, tf32x3::SplitOnLoad<tf32x3::RoundInt>, false, true>(a, b, c, m, n, k);
}

// A batched entry: as WGMMA_TMA_ENTRY, batch blockIdx.z of A and B where BatchedMaps says, C's batches m x n
// each, one after another.
#define WGMMA_TMA_BATCHED_ENTRY(NAME, BM, STAGES, ...)                                                            \
    extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)                                           \
        NAME(const __grid_constant__ wgmma_tma::TensorMap map_a, const __grid_constant__ wgmma_tma::TensorMap map_b, \
             float* __restrict__ c, int m, int n, int k, int a_rows, int a_cols, int b_rows)                       \
    {                                                                                                              \
        wgmma_tma::matmul<BM, STAGES, __VA_ARGS__, wgmma_tma::BatchedMaps>(                                        \
            wgmma_tma::BatchedMaps{{map_a, map_b}, a_rows, a_cols, b_rows},                                        \
            c + static_cast<long long>(blockIdx.z) * m * n, m, n, k);                                              \
    }

// The padded kernels' copy (grid (ceil(rows * ld / 1024), 1, 1), block (256, 1, 1); arguments src, dst, rows,
// cols, ld) and the split-K kernels' sum of the slices (grid (ceil(m n / 1024), 1, 1), block (256, 1, 1);
// arguments partials, c, m n / 4, splits).
#define WGMMA_TMA_COPY_ENTRY(NAME)                                                                                 \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        NAME(const float* __restrict__ src, float* __restrict__ dst, int rows, int cols, int ld)                   \
    {                                                                                                              \
        wgmma_tma::copy_padded(src, dst, rows, cols, ld);                                                          \
    }

#define WGMMA_TMA_REDUCE_ENTRY(NAME)                                                                               \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        NAME(const float4* __restrict__ partials, float4* __restrict__ c, int quads, int splits)                   \
    {                                                                                                              \
        wgmma_tma::sum_slices(partials, c, quads, splits);                                                         \
    }
