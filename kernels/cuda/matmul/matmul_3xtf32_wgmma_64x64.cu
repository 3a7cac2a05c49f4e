// matmul_3xtf32_wgmma_64x64 — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1), 38912 B static shared. Built for sm_90a.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90a: the 3xTF32 product of matmul_3xtf32_mma_64x64_presplit (x = hi + lo, three TF32 products,
//   each K step's products summed from zero and then added in FP32) on warpgroup mma: one warpgroup computes
//   the 64 x 64 tile with wgmma.mma_async m64n64k8, A from registers, B read by the tensor core from shared
//   memory through a descriptor. mma.sync kept the tensor pipe busy 46% of the time in blocked (ncu): every
//   operand passed through the issuing warps. Here the mma of a K step run while the warps split and store the
//   next tile.
//   - TF32 wgmma takes both operands K-major (the PTX ISA transposes only f16 and bf16), so B is transposed as it
//     is stored: hi and lo each in core matrices of 8 columns x 4 k (16 bytes a column), no swizzle. Element
//     (n, k) sits at word 144 (n / 8) + 36 (k / 4) + 4 (n % 8) + k % 4: the descriptor's leading byte offset
//     (between core matrices along k) is 144 B, its stride byte offset (between groups of 8 columns) 576 B,
//     padded from 128 and 512 so that a warp's 32 scalar stores of the transpose hit 32 banks.
//   - A as (hi, lo) pairs in shared memory (as presplit: stride 20 pairs, conflict-free 64-bit loads) and from
//     there into the mma.m16n8k8 fragment layout, which is wgmma's for A in registers, warp w taking rows 16w.
//   - K steps of 16: six wgmma a step, the first with scale-d = 0 (D = A B), so the partial sums need no zeroing.
//   - Shared writes are made visible to the tensor core's async proxy with fence.proxy.async before the barrier.
#include "tf32x3_mma.cuh"  // the family's guarded loads and round-to-nearest split
#include "wgmma_tf32.cuh"   // the wgmma instruction and its register pins

namespace {

using tf32x3::load4;
constexpr auto split = tf32x3::RoundInt::split;

enum : int {
    BM = 64, BN = 64, BK = 16,
    THREADS = 128,
    A_STRIDE = BK + 4,   // As[row][k] (hi, lo) pairs
    B_LEAD = 36,         // words between core matrices along k (144 B)
    B_STRIDE = 144,      // words between groups of 8 columns (576 B)
    B_WORDS = 8 * B_STRIDE,
};

struct Tiles {
    uint2 a[2][BM * A_STRIDE];
    unsigned bhi[2][B_WORDS];
    unsigned blo[2][B_WORDS];
};

__device__ __forceinline__ unsigned long long descriptor(const unsigned* tile)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    return static_cast<unsigned long long>((addr & 0x3ffff) >> 4) |
           (static_cast<unsigned long long>((B_LEAD * 4) >> 4) << 16) |
           (static_cast<unsigned long long>((B_STRIDE * 4) >> 4) << 32);  // no swizzle, base offset 0
}

using wgmma_tf32::pin;
using wgmma_tf32::wgmma_n64;

// One K tile of A (64 x 16) and B (16 x 64) in registers: two quads each per thread.
struct Stage {
    float4 a[2], b[2];
};

__device__ __forceinline__ void fetch(Stage& s, const float* a, const float* b, int m, int n, int k, int row0,
                                      int col0, int k0, bool fast)
{
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 2; ++i)  // A: rows t/4 + 32i, k quad t%4
        s.a[i] = load4(a, row0 + t / 4 + 32 * i, k0 + (t % 4) * 4, m, k, k, fast);
#pragma unroll
    for (int i = 0; i < 2; ++i)  // B: k row t%16, column quad t/16 + 8i (a warp spans 16 k: conflict-free stores)
        s.b[i] = load4(b, k0 + t % 16, col0 + (t / 16 + 8 * i) * 4, k, n, n, fast);
}

__device__ __forceinline__ void store(const Stage& s, uint2* as, unsigned* bhi, unsigned* blo)
{
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        uint2* at = as + (t / 4 + 32 * i) * A_STRIDE + (t % 4) * 4;
        const float4 v = s.a[i];
        const uint2 p0 = split(v.x), p1 = split(v.y), p2 = split(v.z), p3 = split(v.w);
        reinterpret_cast<uint4*>(at)[0] = make_uint4(p0.x, p0.y, p1.x, p1.y);
        reinterpret_cast<uint4*>(at)[1] = make_uint4(p2.x, p2.y, p3.x, p3.y);
    }
    const int kr = t % 16;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const float v[4] = {s.b[i].x, s.b[i].y, s.b[i].z, s.b[i].w};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const int col = (t / 16 + 8 * i) * 4 + e;
            const int w = B_STRIDE * (col / 8) + B_LEAD * (kr / 4) + 4 * (col % 8) + kr % 4;
            const uint2 p = split(v[e]);
            bhi[w] = p.x;
            blo[w] = p.y;
        }
    }
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // for the tensor core's reads
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 2)
matmul_3xtf32_wgmma_64x64(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                          int n, int k)
{
    __shared__ __align__(128) Tiles tiles;

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;  // the fragment's group and thread-in-group
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    using u64 = unsigned long long;
    const bool aligned = ((reinterpret_cast<u64>(a) | reinterpret_cast<u64>(b)) & 15ull) == 0 && k % 4 == 0 &&
                         n % 4 == 0;
    const bool full_mn = aligned && row0 + BM <= m && col0 + BN <= n;

    float acc[32] = {};
    float part[32] = {};  // written whole by each K step's first wgmma (scale-d = 0)
    Stage stage;
    const int steps = (k + BK - 1) / BK;
    fetch(stage, a, b, m, n, k, row0, col0, 0, full_mn && BK <= k);
    store(stage, tiles.a[0], tiles.bhi[0], tiles.blo[0]);
    __syncthreads();

    for (int s = 0; s < steps; ++s) {
        const int cur = s & 1;
        if (s + 1 < steps) {
            const int k0 = (s + 1) * BK;
            fetch(stage, a, b, m, n, k, row0, col0, k0, full_mn && k0 + BK <= k);
        }
        unsigned ahi[2][4], alo[2][4];
#pragma unroll
        for (int kk = 0; kk < 2; ++kk) {
            const uint2* ap = tiles.a[cur] + (16 * warp + g) * A_STRIDE + 8 * kk + t;
            const uint2 x0 = ap[0], x1 = ap[8 * A_STRIDE], x2 = ap[4], x3 = ap[8 * A_STRIDE + 4];
            ahi[kk][0] = x0.x, alo[kk][0] = x0.y;  // (g,     t)
            ahi[kk][1] = x1.x, alo[kk][1] = x1.y;  // (g + 8, t)
            ahi[kk][2] = x2.x, alo[kk][2] = x2.y;  // (g,     t + 4)
            ahi[kk][3] = x3.x, alo[kk][3] = x3.y;  // (g + 8, t + 4)
        }
        const u64 bh = descriptor(tiles.bhi[cur]), bl = descriptor(tiles.blo[cur]);
        const u64 next_k = (2 * B_LEAD * 4) >> 4;  // the second k slice of 8: two core matrices on, along k
        pin(part);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
        wgmma_n64(part, alo[0], bh, 0);
        wgmma_n64(part, ahi[0], bl, 1);
        wgmma_n64(part, ahi[0], bh, 1);
        wgmma_n64(part, alo[1], bh + next_k, 1);
        wgmma_n64(part, ahi[1], bl + next_k, 1);
        wgmma_n64(part, ahi[1], bh + next_k, 1);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        if (s + 1 < steps) store(stage, tiles.a[cur ^ 1], tiles.bhi[cur ^ 1], tiles.blo[cur ^ 1]);
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        pin(part);
        pin(ahi[0]), pin(ahi[1]), pin(alo[0]), pin(alo[1]);
#pragma unroll
        for (int i = 0; i < 32; ++i) acc[i] += part[i];
        __syncthreads();
    }

    // The accumulator of m64nNk8: warp w holds rows 16w + g and 16w + g + 8; register 4j + 2h + e is column
    // 8j + 2t + e of row 16w + g + 8h.
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int rr = row0 + 16 * warp + g + 8 * h, col = col0 + 8 * j + 2 * t;
            if (rr < m && col < n) c[(long long)rr * n + col] = acc[4 * j + 2 * h];
            if (rr < m && col + 1 < n) c[(long long)rr * n + col + 1] = acc[4 * j + 2 * h + 1];
        }
}
