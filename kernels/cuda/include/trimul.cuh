// The triangle multiplicative update's pieces that every trimul variant shares (kernels/cuda/trimul/*.cu, each
// variant its output steps' entries): the epilogues of the products, the entries of steps 1, 2, 4 and 5 (the
// weights' transposes, the input LayerNorm, the contraction, the output LayerNorm) and the walking products' entries
// as macros of a mainloop policy (step 3, the gated input projections; steps 6 and 7), as trimul_3xtf32_wgmma.cu
// describes them.
#pragma once
#include "layernorm_rows.cuh"
#include "wgmma_tma.cuh"

namespace {

using Adopted = wgmma_tma::Policy<true, 2, true>;
// The walking products' consumers on alternate tiles of 128 x 64 (kernel notes of h200-003, section 14): a stage is
// 40 KB, so five fit where the shared tiles take four.
using PingPong = wgmma_tma::Policy<true, 2, true, true>;
using wgmma_tma::TensorMap;

enum : int { BM = 128, STAGES = 4, PINGPONG_STAGES = 5, PAIRS = 32, MAX_HIDDEN = 256 };

__device__ __forceinline__ float sigmoid(float v) { return 1.f / (1.f + __expf(-v)); }

// Where a row of z is: its batch and its pair (u, v) in the order of its half of zz, stepped along the rows.
struct Pair {
    int batch, u, v;
    __device__ __forceinline__ Pair(int row, int n) : batch(row / (n * n)), u(row % (n * n) / n), v(row % n) {}
    __device__ __forceinline__ void next(int d, int n)
    {
        for (v += d; v >= n; v -= n)
            if (++u == n) u = 0, ++batch;
    }
};

// Step 3's epilogue: blockIdx.z 0 takes rows (b, i, k) into A[b h][i][k], 1 rows (b, k, j) into B[b h][k][j].
// Columns 8q .. 8q + 3 are the values of hidden 4q .. 4q + 3, columns 8q + 4 .. 8q + 7 their gates: a thread's
// column pair is one hidden channel's value and gate.
struct GateIn {
    float* __restrict__ a;
    float* __restrict__ b;
    const float* __restrict__ mask;
    int n, hidden, pairs, ld, kb;
};

// A thread's 32 rows: every mask read and address first, then the writes (wgmma_tma::finish says why).
template <int R>
__device__ __forceinline__ void finish(const GateIn& e, int row, int col, const float (&acc)[R])
{
    // no early return for a column past hidden: the block walks on to the next tile's warp-wide wgmma
    const int h = col / 8 * 4 + col % 4;
    const bool live = h < e.hidden, flipped = blockIdx.z == 1;
    const long long nn = static_cast<long long>(e.n) * e.n;
    float keep[R / 2];
    long long at[R / 2];
    Pair p(row, e.n);
#pragma unroll
    for (int i = 0; i < R / 4; ++i, p.next(8, e.n)) {
#pragma unroll
        for (int k = 0; k < 2; ++k) {
            Pair q = p;
            if (k) q.next(1, e.n);
            const int r = row + 8 * i + k;
            const long long plane = static_cast<long long>(q.batch) * e.hidden + h;
            at[2 * i + k] = (plane * (flipped ? e.kb : e.n) + q.u) * e.ld + q.v;
            const long long m = flipped ? q.batch * nn + static_cast<long long>(q.v) * e.n + q.u : r;
            keep[2 * i + k] = live && r < e.pairs ? __ldg(e.mask + m) : 0.f;
        }
    }
    float* dst = flipped ? e.b : e.a;
#pragma unroll
    for (int i = 0; i < R / 4; ++i)
#pragma unroll
        for (int k = 0; k < 2; ++k)
            if (live && row + 8 * i + k < e.pairs)
                dst[at[2 * i + k]] = acc[4 * i + k] * keep[2 * i + k] * sigmoid(acc[4 * i + 2 + k]);
}

// Step 6: out = sigmoid(z g_out^T).
struct GateOut {
    float* __restrict__ out;
    int pairs, channels;
    __device__ __forceinline__ void operator()(int row, int col, const float* v) const
    {
        wgmma_tma::each(row, col, v, pairs, channels, [&](int r, int c, float x) {
            out[static_cast<long long>(r) * channels + c] = sigmoid(x);
        });
    }
};

// Step 7: out *= tn p_out^T, a thread's reads of out first.
struct ProjectOut {
    float* out;  // no __restrict__: trimul_out reads here what GateOut wrote through its own pointer
    int pairs, channels;
};

template <int R>
__device__ __forceinline__ void finish(const ProjectOut& e, int row, int col, const float (&acc)[R])
{
#pragma unroll
    for (int half = 0; half < R; half += R / 2) {  // half the reads in flight at a time: the registers hold that
        float gate[R / 2];
#pragma unroll
        for (int i = 0; i < R / 2; ++i) {
            const int j = half + i, r = row + 8 * (j / 4) + j % 2, c = col + 4 * (j / 2 % 2);
            gate[i] = r < e.pairs && c < e.channels ? e.out[static_cast<long long>(r) * e.channels + c] : 0.f;
        }
#pragma unroll
        for (int i = 0; i < R / 2; ++i) {
            const int j = half + i, r = row + 8 * (j / 4) + j % 2, c = col + 4 * (j / 2 % 2);
            if (r < e.pairs && c < e.channels) e.out[static_cast<long long>(r) * e.channels + c] = gate[i] * acc[j];
        }
    }
}

// Where a thread of a grid-stride loop over an m x cols matrix is: the element `e`'s row and column.
__device__ __forceinline__ void at(long long e, int cols, int& row, int& col)
{
    row = static_cast<int>(e / cols), col = static_cast<int>(e % cols);
}

}  // namespace

// Grid-stride over the three operands: w_in [2][kp][np] (side s, row c, column q: p_in or g_in row s hidden +
// 4 (q / 8) + q % 4, by q % 8 < 4), gt [kp][cl] = g_out^T, pt [hp][cl] = p_out^T; zero past the weights.
extern "C" __global__ void __launch_bounds__(256)
trimul_weights(const float* __restrict__ p_in, const float* __restrict__ g_in, const float* __restrict__ g_out,
               const float* __restrict__ p_out, float* __restrict__ w_in, float* __restrict__ gt,
               float* __restrict__ pt, int channels, int hidden, int kp, int np, int cl, int hp)
{
    const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
    const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (long long e = first; e < 2ll * kp * np; e += stride) {
        int r, q;
        at(e, np, r, q);
        const int side = r / kp, c = r % kp, h = q / 8 * 4 + q % 4;
        const float* w = q % 8 < 4 ? p_in : g_in;
        w_in[e] = c < channels && h < hidden ? w[static_cast<long long>(side * hidden + h) * channels + c] : 0.f;
    }
    for (long long e = first; e < static_cast<long long>(kp) * cl; e += stride) {
        int c, q;
        at(e, cl, c, q);
        gt[e] = c < channels && q < channels ? g_out[static_cast<long long>(q) * channels + c] : 0.f;
    }
    for (long long e = first; e < static_cast<long long>(hp) * cl; e += stride) {
        int h, q;
        at(e, cl, h, q);
        pt[e] = h < hidden && q < channels ? p_out[static_cast<long long>(q) * hidden + h] : 0.f;
    }
}

// A warp a pair (b, i, k) of x: its LayerNorm into row (b, i, k) of z and row `pairs` + (b, k, i) of zz, rows of
// cl floats. Channels a multiple of 4, at most 512.
extern "C" __global__ void __launch_bounds__(256)
trimul_norm_in(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,
               float* __restrict__ zz, int pairs, int n, int channels, int cl, float eps)
{
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * 8 + threadIdx.x / 32;
    if (row >= pairs) return;
    const int quads = channels / 4, nn = n * n, batch = row / nn, q = row % nn;
    float4 v[4];
    const float sum = lnrow::load_row(v, x + static_cast<long long>(row) * channels, quads, lane, true);
    const float inv = 1.f / channels, mean = lnrow::warp_sum(sum) * inv;
    const float rstd = lnrow::row_rstd(v, mean, quads, lane, inv, eps);
    const auto* w4 = reinterpret_cast<const float4*>(weight);
    const auto* b4 = reinterpret_cast<const float4*>(bias);
    const long long flipped = pairs + static_cast<long long>(batch) * nn + (q % n) * n + q / n;
    lnrow::store_row(v, mean, rstd, w4, b4, zz + static_cast<long long>(row) * cl, quads, lane);
    lnrow::store_row(v, mean, rstd, w4, b4, zz + flipped * cl, quads, lane);
}

WGMMA_TMA_BATCHED_ENTRY(trimul_product, BM, STAGES, Adopted)

// A block 32 pairs of one batch by every hidden channel: t's planes read as runs of 32 pairs, each pair then
// normalized by a warp over its channels, written as a row of tn (hl floats).
extern "C" __global__ void __launch_bounds__(256)
trimul_norm_out(const float* __restrict__ t, const float* __restrict__ weight, const float* __restrict__ bias,
                float* __restrict__ tn, int n, int hidden, int hl, float eps)
{
    __shared__ float tile[MAX_HIDDEN][PAIRS + 1];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const long long nn = static_cast<long long>(n) * n;
    const long long q0 = static_cast<long long>(blockIdx.x) * PAIRS, batch = blockIdx.y;
    for (int h = warp; h < hidden; h += 8)
        tile[h][lane] = q0 + lane < nn ? __ldg(t + (batch * hidden + h) * nn + q0 + lane) : 0.f;
    __syncthreads();
    const float inv = 1.f / hidden;
    for (int p = warp; p < PAIRS && q0 + p < nn; p += 8) {
        float sum = 0.f;
        for (int h = lane; h < hidden; h += 32) sum += tile[h][p];
        const float mean = lnrow::warp_sum(sum) * inv;
        float sq = 0.f;
        for (int h = lane; h < hidden; h += 32) sq += (tile[h][p] - mean) * (tile[h][p] - mean);
        const float rstd = rsqrtf(lnrow::warp_sum(sq) * inv + eps);
        float* row = tn + (batch * nn + q0 + p) * hl;
        for (int h = lane; h < hidden; h += 32) row[h] = fmaf((tile[h][p] - mean) * rstd, weight[h], bias[h]);
    }
}

// The walking products' entries, each variant's mainloop POLICY and its STAGES: step 3, the gated input projections
// (a blockIdx.z a side), and steps 6 and 7, the output gate and the output projection.
#define TRIMUL_PROJECT_IN_ENTRY(POLICY, STAGES_)                                                                    \
    extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1) trimul_project_in(                          \
        const __grid_constant__ TensorMap zz, const __grid_constant__ TensorMap w_in, float* __restrict__ a,        \
        float* __restrict__ b, const float* __restrict__ mask, int n, int channels, int hidden, int pairs, int ld,  \
        int kb, int kp, int tiles_x, int tiles)                                                                     \
    {                                                                                                               \
        wgmma_tma::run<BM, STAGES_, POLICY>(wgmma_tma::BatchedMaps{{zz, w_in}, pairs, 0, kp},                       \
                                            GateIn{a, b, mask, n, hidden, pairs, ld, kb}, channels, tiles_x, tiles); \
    }

#define TRIMUL_OUT_ENTRIES(POLICY, STAGES_)                                                                         \
    extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)                                            \
        trimul_gate_out(const __grid_constant__ TensorMap zz, const __grid_constant__ TensorMap gt,                 \
                        float* __restrict__ out, int pairs, int channels, int tiles_x, int tiles)                   \
    {                                                                                                               \
        wgmma_tma::run<BM, STAGES_, POLICY>(wgmma_tma::Maps{zz, gt}, GateOut{out, pairs, channels}, channels,       \
                                            tiles_x, tiles);                                                        \
    }                                                                                                               \
    extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)                                            \
        trimul_project_out(const __grid_constant__ TensorMap tn, const __grid_constant__ TensorMap pt,              \
                           float* __restrict__ out, int pairs, int channels, int hidden, int tiles_x, int tiles)    \
    {                                                                                                               \
        wgmma_tma::run<BM, STAGES_, POLICY>(wgmma_tma::Maps{tn, pt}, ProjectOut{out, pairs, channels}, hidden,      \
                                            tiles_x, tiles);                                                        \
    }
