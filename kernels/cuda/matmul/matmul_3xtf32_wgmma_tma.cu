// matmul_3xtf32_wgmma_tma — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch, by shape (the launch contract routes; src/fieldnote/ops/matmul.py):
//   - n and k multiples of 4, k > 0, and at least a full wave of 128 x 128 tiles (one a multiprocessor):
//     matmul_3xtf32_wgmma_tma_large, grid (ceil(n / 128), ceil(m / 128), 1), block (384, 1, 1), dynamic shared
//     memory Layout<128, 4>::SHARED; arguments (TMA map of A, box 128 x 32; of B, box 32 x 32; c, m, n, k).
//   - n and k multiples of 4, k > 0, fewer tiles: matmul_3xtf32_wgmma_tma_small, 64 x 128 tiles, grid
//     (ceil(n / 128), ceil(m / 64), 1), Layout<64, 6>::SHARED, A's box 64 x 32.
//   - any other shape (a row of A or B not a 16-byte stride, or k = 0): matmul_3xtf32_wgmma_tma_fallback,
//     h200-001's mma.sync kernel, grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1), arguments (a, b, c,
//     m, n, k). The same mainloop fed by 4-byte cp.async instead ran 3.4 times slower than it
//     (matmul_3xtf32_wgmma_cpasync_64x128, docs/h200-002-kernel-notes.md).
//
// Design for sm_90a: the two fastest of h200-002's wgmma_tma variants, each at the shapes where it led
//   (docs/h200-002-kernel-notes.md): 128 x 128 tiles where there are enough of them to fill the chip, 64 x 128
//   where there are not; both with a warp issuing TMA loads, chains of two stages and A's hi as loaded.
//   The mainloop and its policies: kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_small, 64, 6, Adopted)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_large, 128, 4, Adopted)
