// matmul_3xtf32_mma_64x64 — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1), 36864 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: tensor cores through mma.sync m16n8k8 TF32, made FP32-accurate by the 3xTF32 split. Each
//   operand is x = hi + lo with hi = tf32(x) and lo = tf32(x - hi), and every product is taken as
//   lo_a hi_b + hi_a lo_b + hi_a hi_b, smallest terms first, accumulated in FP32. The dropped lo_a lo_b is
//   about 2^-22 of the product, so the result stays within FP32 rounding of the exact one and no TF32 error
//   reaches C.
//   A 64 x 64 block tile over K steps of 32, four warps in 2 x 2, each warp 32 x 32 (2 x 4 mma tiles, 32
//   accumulators a lane). Tiles pass through registers into two shared buffers (the next tile's global loads
//   are in flight during the current tile's mma), one barrier per K step. Shared rows are padded (A by 4
//   floats, B by 8) so the fragment reads are free of bank conflicts. Shapes that are not multiples of the tile,
//   or whose rows are not 16-byte aligned, load with bounds checks one float at a time and zero-fill.
//   The mainloop and its policies: kernels/cuda/include/tf32x3_mma.cuh.

#include "tf32x3_mma.cuh"

extern "C" __global__ void __launch_bounds__(128)
matmul_3xtf32_mma_64x64(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<128, 32, tf32x3::SplitOnLoad<tf32x3::RoundCvt>, true, false>(a, b, c, m, n, k);
}
