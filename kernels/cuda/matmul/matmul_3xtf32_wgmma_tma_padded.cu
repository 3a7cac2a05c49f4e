// matmul_3xtf32_wgmma_tma_padded — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch, by shape (the launch contract routes; src/fieldnote/ops/matmul.py):
//   - rows of 16-byte strides (n and k multiples of 4): as matmul_3xtf32_wgmma_tma, through the entries
//     matmul_3xtf32_wgmma_tma_padded_large (128 x 128 tiles, once they fill the GPU) and ..._padded_small (64 x 128).
//   - any other shape with k > 0: first matmul_3xtf32_wgmma_tma_padded_copy twice, grid (ceil(rows * ld / 1024),
//     1, 1), block (256, 1, 1), arguments (src, dst, rows, cols, ld): A into a scratch m x k4 and B into a
//     scratch k x n4 (k4, n4: k and n rounded up to 4, the new columns zero); then the same entries on the
//     copies, with the true m, n, k.
//   - k = 0: matmul_3xtf32_wgmma_tma_fallback (the family's mma.sync kernel), which writes zeros.
//
// Design for sm_90a: TMA needs rows of 16-byte strides; where the operands' are not, one pass makes copies whose
//   are (A and B read once and written once: 16.8 MB at 1023 x 1025 x 1027) and the wgmma path takes them, in
//   place of the mma.sync kernel that ran there at 1.15 times cuBLAS.
//   The mainloop and its policies: kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_padded_small, 64, 6, Adopted)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_padded_large, 128, 4, Adopted)

WGMMA_TMA_COPY_ENTRY(matmul_3xtf32_wgmma_tma_padded_copy)
