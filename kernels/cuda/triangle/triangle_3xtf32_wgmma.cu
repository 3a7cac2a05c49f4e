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
#include "triangle_pack.cuh"
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_BATCHED_ENTRY(triangle_3xtf32_wgmma_small, 64, 6, Adopted)

WGMMA_TMA_BATCHED_ENTRY(triangle_3xtf32_wgmma_large, 128, 4, Adopted)

TRIANGLE_PACK_ENTRIES(triangle_3xtf32_wgmma_pack, triangle_3xtf32_wgmma_unpack)
