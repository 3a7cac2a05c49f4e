// matmul_3xtf32_wgmma_tma_splitk — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch, by shape (the launch contract routes; src/fieldnote/ops/matmul.py):
//   - too few tiles to fill the GPU and K long enough to share (`k_splits` > 1): matmul_3xtf32_wgmma_tma_splitk_
//     partials, grid (ceil(n / 128), ceil(m / 64), splits), block (384, 1, 1): slice z of K (ks columns of A from
//     z ks, ks rows of B) into partials z (m x n each); then matmul_3xtf32_wgmma_tma_splitk_reduce, grid
//     (ceil(m n / 1024), 1, 1), block (256, 1, 1), arguments (partials, c, m n / 4, splits): C = the partials
//     summed in order, one float4 a thread.
//   - else as matmul_3xtf32_wgmma_tma: ..._splitk_large (128 x 128 tiles) or ..._splitk_small (64 x 128), and
//     matmul_3xtf32_wgmma_tma_fallback where a row is no 16-byte stride.
//
// Design for sm_90a: at 256^3 the 64 x 128 tiles are 8 blocks on 132 SMs, each through 8 K steps: the time is the
//   pipeline's fill and drain, not its throughput. K sliced four ways makes 32 blocks of 2 steps, the slices' sums
//   added afterwards in a fixed order (the same bits every run, unlike atomics). The slices are batches of the
//   family's batched entry: A's slice starts z ks columns in, B's z ks rows down; TMA reads zeros past k.
//   The mainloop and its policies: kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_splitk_small, 64, 6, Adopted)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_splitk_large, 128, 4, Adopted)

WGMMA_TMA_BATCHED_ENTRY(matmul_3xtf32_wgmma_tma_splitk_partials, 64, 6, Adopted)

WGMMA_TMA_REDUCE_ENTRY(matmul_3xtf32_wgmma_tma_splitk_reduce)
