// triangle_by_size — triangle contraction over the shared edge index k, FP32, contiguous.
//
//   out[i][j][c] = sum_k a[i][k][c] * b[j][k][c]        a, b, out: n x n x channels
//
// Launch, by size (the launch contract routes; src/fieldnote/registry/ops/triangle.py, by_size): up to n = 128,
//   triangle_by_size_tile as triangle_smem_tile32x16; past it, the steps of triangle_3xtf32_wgmma
//   (triangle_by_size_pack twice, triangle_by_size_small or _large, triangle_by_size_unpack), whose file gives
//   their grids and arguments.
//
// Design for sm_90a: the batched wgmma product pays two layout copies and an unpacking around it, about 9 of its
//   17 us at 128 x 32 on the H100 (Nsight Compute, kernel notes of h200-003, section 16); below a few hundred
//   positions the products are too small to repay them, and h200-001's CUDA-core tiles, which read a and b as they
//   lie, led on the H100's bench at n = 64, 100 and 128 (section 18). One cubin holds both: the tiles' kernel
//   (kernels/cuda/include/triangle_tile.cuh) and the batched product's (wgmma_tma.cuh, triangle_pack.cuh).
#include "triangle_pack.cuh"
#include "triangle_tile.cuh"
#include "wgmma_tma.cuh"

using Adopted = wgmma_tma::Policy<true, 2, true>;

WGMMA_TMA_BATCHED_ENTRY(triangle_by_size_small, 64, 6, Adopted)

WGMMA_TMA_BATCHED_ENTRY(triangle_by_size_large, 128, 4, Adopted)

TRIANGLE_PACK_ENTRIES(triangle_by_size_pack, triangle_by_size_unpack)

TRIANGLE_TILE_ENTRY(triangle_by_size_tile)
