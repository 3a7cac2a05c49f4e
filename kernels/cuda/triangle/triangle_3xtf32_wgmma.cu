// triangle_3xtf32_wgmma — triangle contraction over the shared edge index k, FP32, contiguous.
//
//   out[i][j][c] = sum_k a[i][k][c] * b[j][k][c]        a, b, out: n x n x channels
//
// Launch (the launch contract's steps, on one stream; src/fieldnote/ops/triangle.py):
//   1. triangle_3xtf32_wgmma_pack twice, grid (ceil(ld / 32), rows, ceil(channels / 32)), block (256, 1, 1),
//      arguments (src, dst, n, channels, rows, ld, swap): a into A = channels x n x ld (A[c][i][k] = a[i][k][c])
//      and b into B = channels x kb x ld (B[c][k][j] = b[j][k][c]); ld = n rounded up to 4 and at least 32,
//      kb = n rounded up to 32, every element past n zero.
//   2. triangle_3xtf32_wgmma_small (64 x 128 tiles) or ..._large (128 x 128, once they fill the GPU), grid
//      (ceil(n / 128), ceil(n / BM), channels), block (384, 1, 1): the batched product C[c] = A[c] B[c] with
//      TMA maps of A as (channels n) x ld and of B as (channels kb) x ld, into C = channels x n x n.
//   3. triangle_3xtf32_wgmma_unpack, grid (ceil(n / 32), n, ceil(channels / 32)), block (256, 1, 1): C back to
//      out[i][j][c].
//
// Design for sm_90a: per channel the contraction is one n x n x n product, A_c B_c^T; torch runs it as cuBLAS's
//   FP32 SGEMM behind two layout copies, and h200-001's kernels ran it on CUDA cores or with mma.sync tiles too
//   small to reuse what they load (ncu at n = 512: 4.3 times cuBLAS's DRAM bytes). Here the layout copies are
//   ours, and the product is the matmul family's wgmma mainloop (3xTF32, TMA, a producer warpgroup and two
//   consumer warpgroups) with the channels as a batch: 32 channels of 512^3 make 512 tiles of 128 x 128.
//   B is packed transposed, so the product is the family's C = A B; its rows are padded per channel to a whole
//   K step so that no TMA box of one channel reads the next.
//   The mainloop and its policies: kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_BATCHED_ENTRY(triangle_3xtf32_wgmma_small, 64, 6, Adopted)

WGMMA_TMA_BATCHED_ENTRY(triangle_3xtf32_wgmma_large, 128, 4, Adopted)

namespace {

enum : int { TILE = 32, ROWS_A_PASS = 8 };  // a 32 x 32 tile, 256 threads: 8 rows of it a pass

}  // namespace

// dst[c][row][q] = src[x][y][c] with (x, y) = (row, q), or (q, row) with swap; zero where row or q >= n. A block
// moves 32 q x 32 channels of one row: read as 32 runs of the channels (128 bytes each at 32 channels), written
// as a run of 32 q a channel, through a padded shared tile.
extern "C" __global__ void __launch_bounds__(256)
triangle_3xtf32_wgmma_pack(const float* __restrict__ src, float* __restrict__ dst, int n, int channels, int rows,
                           int ld, int swap)
{
    __shared__ float tile[TILE][TILE + 1];  // [q][channel]
    const int q0 = blockIdx.x * TILE, row = blockIdx.y, c0 = blockIdx.z * TILE;
    const int lane = threadIdx.x % TILE, pass = threadIdx.x / TILE;
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int q = q0 + t, c = c0 + lane;
        float v = 0.f;
        if (row < n && q < n && c < channels) {
            const long long x = swap ? q : row, y = swap ? row : q;
            v = __ldg(src + (x * n + y) * channels + c);
        }
        tile[t][lane] = v;
    }
    __syncthreads();
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int c = c0 + t, q = q0 + lane;
        if (c < channels && q < ld) dst[(static_cast<long long>(c) * rows + row) * ld + q] = tile[lane][t];
    }
}

// out[i][j][c] = src[c][i][j]: a block moves 32 j x 32 channels of one i, read as a run of 32 j a channel,
// written as 32 runs of the channels.
extern "C" __global__ void __launch_bounds__(256)
triangle_3xtf32_wgmma_unpack(const float* __restrict__ src, float* __restrict__ out, int n, int channels)
{
    __shared__ float tile[TILE][TILE + 1];  // [channel][j]
    const int j0 = blockIdx.x * TILE, i = blockIdx.y, c0 = blockIdx.z * TILE;
    const int lane = threadIdx.x % TILE, pass = threadIdx.x / TILE;
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int c = c0 + t, j = j0 + lane;
        if (c < channels && j < n) tile[t][lane] = __ldg(src + (static_cast<long long>(c) * n + i) * n + j);
    }
    __syncthreads();
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int j = j0 + t, c = c0 + lane;
        if (c < channels && j < n) out[(static_cast<long long>(i) * n + j) * channels + c] = tile[lane][t];
    }
}
