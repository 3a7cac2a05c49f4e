// matmul_3xtf32_wgmma_cluster_splitk — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch, by shape (the launch contract routes; src/fieldnote/registry/ops/matmul.py, cluster_split_k): where the
//   64 x 128 tiles leave most SMs idle and K has a step for each slice, one launch of a cluster entry, grid
//   (ceil(n / 128), ceil(m / 64), SPLITS), block (384, 1, 1), arguments (a, b, c, m, n, k, slice); elsewhere as
//   matmul_3xtf32_wgmma_tma_padded_splitk, whose entries this cubin holds under its own prefix.
//
// Design for sm_90a: h200-003's split-K at 256^3 is two launches (partials 4.7 us, their sum 1.8, on the H100),
//   and at 255 x 257 x 259 the padded route is three (two copies, 2.8 us, then a GEMM of 12 blocks, 8.8): the
//   fixed costs of a launch and a round trip through global memory, not the products. Here the SPLITS blocks of a
//   cluster take one tile's slices of K, read A and B as they lie with cp.async (no copies), and sum their partial
//   tiles through distributed shared memory in rank order: one launch, no scratch, the same bits every run. The
//   mainloop, the stash and the sum: kernels/cuda/include/wgmma_tma.cuh (split_in_cluster).
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;
using Copied = wgmma_tma::Policy<true, 2, false>;  // cp.async's: no TRUNCATE

WGMMA_TMA_CLUSTER_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_cluster2, 4, 2, Copied)

WGMMA_TMA_CLUSTER_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_cluster4, 4, 4, Copied)

WGMMA_TMA_CLUSTER_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_cluster8, 4, 8, Copied)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_small, 64, 6, Adopted)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_large, 128, 4, Adopted)

WGMMA_TMA_BATCHED_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_partials, 64, 6, Adopted)

WGMMA_TMA_COPY_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_copy)

WGMMA_TMA_REDUCE_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_reduce)
