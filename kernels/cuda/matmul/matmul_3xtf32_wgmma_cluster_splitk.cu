// matmul_3xtf32_wgmma_cluster_splitk — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch, by shape (the launch contract routes; src/fieldnote/registry/ops/matmul.py, cluster_split_k): where the
//   64 x 128 tiles leave most SMs idle and K has a step for each slice, a cluster entry, grid (ceil(n / 128),
//   ceil(m / 64), SPLITS), block (384, 1, 1), arguments (TMA maps of A, box 64 x 32, and B, box 32 x 32, c, m, n,
//   k, slice), after the padded copies (..._copy) where a row of A or B is no 16-byte stride; elsewhere as
//   matmul_3xtf32_wgmma_tma_padded_splitk, whose entries this cubin holds under its own prefix.
//
// Design for sm_90a: h200-003's split-K at 256^3 is two launches (partials 4.7 us, their sum 1.8, on the H100),
//   the fixed costs of a launch and a round trip of the partials through global memory, not the products. Here
//   the SPLITS blocks of a cluster take one tile's slices of K (the family's batched maps, a slice a batch) and
//   sum their partial tiles through distributed shared memory in rank order: one launch, no partials in global
//   memory, the same bits every run. (A first build read A and B with the family's cp.async producer, to skip the
//   copies: 3.9 us a stage, as h200-002 found, kernel notes of h200-003, section 17.) The mainloop, the stash and
//   the sum: kernels/cuda/include/wgmma_tma.cuh (split_in_cluster).
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_CLUSTER_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_cluster2, 4, 2, Adopted)

WGMMA_TMA_CLUSTER_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_cluster4, 4, 4, Adopted)

WGMMA_TMA_CLUSTER_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_cluster8, 4, 8, Adopted)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_small, 64, 6, Adopted)

WGMMA_TMA_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_large, 128, 4, Adopted)

WGMMA_TMA_BATCHED_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_partials, 64, 6, Adopted)

WGMMA_TMA_COPY_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_copy)

WGMMA_TMA_REDUCE_ENTRY(matmul_3xtf32_wgmma_cluster_splitk_reduce)
