// matmul_3xtf32_wgmma_tma_128x128 — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 128), ceil(m / 128), 1), block (384, 1, 1), dynamic shared memory as Layout<128, 4>::SHARED.
//   Arguments (TMA map of A, box 128 x 32; TMA map of B, box 32 x 32; both with the 128-byte swizzle; c, m, n, k).
//   Shapes TMA cannot take (n or k not a multiple of 4, k = 0) launch matmul_3xtf32_wgmma_tma_fallback:
//   h200-001's adopted mma.sync kernel, grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1).
//
// Design for sm_90a: a 128 x 128 tile of C a block, 4 stages of K 32 in flight, one producer
//   warpgroup (TMA and the split of A) and two consumer warpgroups of wgmma m64n128k8.
//   The mainloop and its policies: kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_128x128, 128, 4, wgmma_tma::Inline)
