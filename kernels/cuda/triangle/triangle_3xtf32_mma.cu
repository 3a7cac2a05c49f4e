// triangle_3xtf32_mma — triangle contraction over the shared edge index k, FP32, contiguous.
//
//   out[i][j][c] = sum_k a[i][k][c] * b[j][k][c]        a, b, out: n x n x channels
//
// Launch: grid (ceil(n / 16), ceil(n / 32), ceil(channels / 8)), block (256, 1, 1), 36864 B static shared.
//   Arguments (a, b, out, n, channels).
//
// Design for sm_90: per channel the contraction is A_c B_c^T with A_c[i][k] = a[i][k][c] and B_c[j][k] =
//   b[j][k][c], which is exactly the operand order of mma.sync m16n8k8 .row.col. A block owns 32 i x 16 j for
//   8 channels, one warp a channel (2 x 2 mma tiles). Tensor cores with the 3xTF32 split of
//   matmul_3xtf32_mma_64x64_blocked: hi rounded to nearest by integer operations, lo = x - hi, three products,
//   and each k step's three mma summed from zero and then added in FP32, because the tensor core truncates
//   its accumulation.
//   - Loads: each (i, k) brings the block's 8 channels as two float4 (one 32-byte sector); k steps of 8 go
//     through registers into two shared buffers, stored channel-major (a_s[c][i][k], rows padded to 12 floats),
//     so each warp's fragment reads hit 32 distinct banks.
//   - Output: staged through shared memory, so each (i, j) leaves as its 8 channels, two float4, not as 4-byte
//     stores 128 bytes apart.

#include "tf32x3_mma.cuh"  // the 3xTF32 split and the mma of the matmul family

#include "triangle_runs.cuh"

namespace {

enum : int {
    TI = 32, TJ = 16, CC = 8, BK = 8,
    THREADS = 256,
    ROW = BK + 4,              // floats per (c, i) row of a k step in shared memory
    A_C = TI * ROW,            // floats per channel of the a tile
    B_C = TJ * ROW,
    TILE = CC * (A_C + B_C),   // one buffer: 4608 floats
    OUT_STRIDE = CC + 1,       // floats per (i, j) of the staged output, padded against bank conflicts
};

// A thread's share of one k step: the 8 channels of one (i, k) of a as two float4, and one float4 of b.
struct Stage {
    float4 a[2], b;
};

__device__ __forceinline__ void split(float x, unsigned& hi, unsigned& lo)
{
    const uint2 parts = tf32x3::RoundInt::split(x);
    hi = parts.x, lo = parts.y;
}

using tf32x3::mma;

using triangle::load4;

// Pair f of a tile is (row f / 8, k f % 8), its 8 channels two float4 (halves h). The a tile's 256 pairs are one a
// thread; the b tile's 128 pairs are half a pair a thread.
__device__ __forceinline__ void fetch(Stage& s, const float* a, const float* b, int n, int channels, int i0, int j0,
                                      int c0, int k0, bool fast)
{
    const int f = threadIdx.x;
#pragma unroll
    for (int h = 0; h < 2; ++h) s.a[h] = load4(a, i0 + f / 8, k0 + f % 8, c0 + 4 * h, n, channels, fast);
    const int fb = threadIdx.x / 2, hb = threadIdx.x % 2;
    s.b = load4(b, j0 + fb / 8, k0 + fb % 8, c0 + 4 * hb, n, channels, fast);
}

__device__ __forceinline__ void put(float* base, int per_channel, int row, int k, int h, float4 v)
{
    float* p = base + (4 * h) * per_channel + row * ROW + k;
    p[0] = v.x;
    p[per_channel] = v.y;
    p[2 * per_channel] = v.z;
    p[3 * per_channel] = v.w;
}

__device__ __forceinline__ void store(const Stage& s, float* tile)
{
    const int f = threadIdx.x;
#pragma unroll
    for (int h = 0; h < 2; ++h) put(tile, A_C, f / 8, f % 8, h, s.a[h]);
    const int fb = threadIdx.x / 2, hb = threadIdx.x % 2;
    put(tile + CC * A_C, B_C, fb / 8, fb % 8, hb, s.b);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
triangle_3xtf32_mma(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int n,
                    int channels)
{
    __shared__ __align__(16) float tiles[2 * TILE];

    const int j0 = blockIdx.x * TJ, i0 = blockIdx.y * TI, c0 = blockIdx.z * CC;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;  // warp = this warp's channel in the block
    const int g = lane / 4, t = lane % 4;

    using u64 = unsigned long long;
    const bool fast = ((reinterpret_cast<u64>(a) | reinterpret_cast<u64>(b)) & 15ull) == 0 && channels % 8 == 0 &&
                      i0 + TI <= n && j0 + TJ <= n;

    float acc[2][2][4] = {};
    Stage stage;
    const int steps = (n + BK - 1) / BK;
    fetch(stage, a, b, n, channels, i0, j0, c0, 0, fast && BK <= n);
    store(stage, tiles);
    __syncthreads();

    for (int s = 0; s < steps; ++s) {
        const int cur = s & 1;
        if (s + 1 < steps) {
            const int k0 = (s + 1) * BK;
            fetch(stage, a, b, n, channels, i0, j0, c0, k0, fast && k0 + BK <= n);
        }
        const float* as = tiles + cur * TILE + warp * A_C;
        const float* bs = tiles + cur * TILE + CC * A_C + warp * B_C;
        unsigned ahi[2][4], alo[2][4], bhi[2][2], blo[2][2];
#pragma unroll
        for (int m = 0; m < 2; ++m) {
            const float* ap = as + (16 * m + g) * ROW + t;
            split(ap[0], ahi[m][0], alo[m][0]);                // (i = g,     k = t)
            split(ap[8 * ROW], ahi[m][1], alo[m][1]);          // (i = g + 8, k = t)
            split(ap[4], ahi[m][2], alo[m][2]);                // (i = g,     k = t + 4)
            split(ap[8 * ROW + 4], ahi[m][3], alo[m][3]);      // (i = g + 8, k = t + 4)
        }
#pragma unroll
        for (int q = 0; q < 2; ++q) {
            const float* bp = bs + (8 * q + g) * ROW + t;
            split(bp[0], bhi[q][0], blo[q][0]);                // (k = t,     j = g)
            split(bp[4], bhi[q][1], blo[q][1]);                // (k = t + 4, j = g)
        }
        float part[2][2][4] = {};  // this k step's sums: three mma through the tensor core
#pragma unroll
        for (int m = 0; m < 2; ++m)
#pragma unroll
            for (int q = 0; q < 2; ++q) mma(part[m][q], alo[m], bhi[q]);
#pragma unroll
        for (int m = 0; m < 2; ++m)
#pragma unroll
            for (int q = 0; q < 2; ++q) mma(part[m][q], ahi[m], blo[q]);
#pragma unroll
        for (int m = 0; m < 2; ++m)
#pragma unroll
            for (int q = 0; q < 2; ++q) mma(part[m][q], ahi[m], bhi[q]);
#pragma unroll
        for (int m = 0; m < 2; ++m)
#pragma unroll
            for (int q = 0; q < 2; ++q)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[m][q][e] += part[m][q][e];
        if (s + 1 < steps) store(stage, tiles + (cur ^ 1) * TILE);
        __syncthreads();
    }

    // Stage the block's 32 x 16 x 8 outputs as out_s[i][j][c], then write each (i, j)'s 8 channels together.
    float* out_s = tiles;
#pragma unroll
    for (int m = 0; m < 2; ++m)
#pragma unroll
        for (int q = 0; q < 2; ++q)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int i = 16 * m + g + 8 * (e / 2), j = 8 * q + 2 * t + e % 2;
                out_s[(i * TJ + j) * OUT_STRIDE + warp] = acc[m][q][e];
            }
    __syncthreads();
    for (int p = threadIdx.x; p < TI * TJ; p += THREADS) {
        const int i = i0 + p / TJ, j = j0 + p % TJ;
        if (i >= n || j >= n) continue;
        const float* v = out_s + p * OUT_STRIDE;
        float* o = out + ((long long)i * n + j) * channels + c0;
        if (channels % 8 == 0 && (reinterpret_cast<u64>(out) & 15ull) == 0) {
            reinterpret_cast<float4*>(o)[0] = make_float4(v[0], v[1], v[2], v[3]);
            reinterpret_cast<float4*>(o)[1] = make_float4(v[4], v[5], v[6], v[7]);
        } else {
            for (int e = 0; e < CC && c0 + e < channels; ++e) o[e] = v[e];
        }
    }
}
