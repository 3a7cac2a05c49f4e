// triangle_smem_tile32x16 — triangle contraction over the shared edge index k, FP32, contiguous.
//
//   out[i][j][c] = sum_k a[i][k][c] * b[j][k][c]        a, b, out: n x n x channels
//
// Launch: grid (ceil(n / 16), ceil(n / 32), ceil(channels / 8)), block (256, 1, 1), 25600 B static shared.
//   Arguments (a, b, out, n, channels).
//
// Design for sm_90. Per channel this is a matrix product, A_c B_c^T, and the kernel is one: a block owns 32 i
//   x 16 j for 8 channels and walks k in steps of 8, staging a[i0:+32][k:+8][c0:+8] and b[j0:+16][k:+8][c0:+8]
//   in shared memory (each 8-channel run is one 32-byte sector). A thread holds 4 i x 4 j of one channel,
//   16 accumulators, and per k reads 4 values of a (the warp's 32 lanes read 32 consecutive floats) and 4 of b
//   (8 distinct addresses a warp, broadcast) for 16 FMAs. The next step's tiles are loaded into registers
//   while the current one is multiplied; two shared buffers, one barrier a step.
//   Why: the lane-per-channel kernel reloads a and b from L1/L2 for every 8 FMAs of a 4 x 2 tile, about
//   100 MB through L2 at the seed shape (n = 128); a 32 x 16 block tile cuts that to 25 MB, 128 blocks.
//   Shared rows are padded by 8 floats per k, so the 128-bit stores of a quarter warp hit distinct banks.

#include "triangle_tile.cuh"

TRIANGLE_TILE_ENTRY(triangle_smem_tile32x16)
