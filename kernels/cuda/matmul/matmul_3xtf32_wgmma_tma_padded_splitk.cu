// matmul_3xtf32_wgmma_tma_padded_splitk — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch, by shape (the launch contract routes; src/fieldnote/registry/ops/matmul.py, padded_split_k): as
//   matmul_3xtf32_wgmma_tma_splitk where TMA takes the operands (K sliced where the tiles leave SMs idle, then the
//   slices summed in order), and as matmul_3xtf32_wgmma_tma_padded where it does not (A and B copied into rows of
//   16-byte strides first); k = 0: matmul_3xtf32_wgmma_tma_fallback. Each entry's grid, block and arguments are
//   those of the kernel it is taken from.
//
// Design for sm_90a: the H100's bench (kernel notes of h200-003, section 10) had the split-K kernel ahead of the
//   padded one at 256^3 and 512^3 and behind it at 255 x 257 x 259, where TMA cannot read the operands as they
//   lie; so each shape takes the route that led there. The mainloop and its policies, the copy and the sum:
//   kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_padded_splitk_small, 64, 6, Adopted)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_tma_padded_splitk_large, 128, 4, Adopted)

WGMMA_TMA_BATCHED_ENTRY(matmul_3xtf32_wgmma_tma_padded_splitk_partials, 64, 6, Adopted)

WGMMA_TMA_COPY_ENTRY(matmul_3xtf32_wgmma_tma_padded_splitk_copy)

WGMMA_TMA_REDUCE_ENTRY(matmul_3xtf32_wgmma_tma_padded_splitk_reduce)
