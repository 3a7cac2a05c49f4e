// matmul_3xtf32_mma_64x64_8warps — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (256, 1, 1), 36864 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: matmul_3xtf32_mma_64x64_blocked (mma.sync m16n8k8 TF32, 3xTF32 split with hi rounded by
//   integer operations, each K step's mma summed from zero and added in FP32, 64 x 64 block tile, K step 32, two
//   shared buffers fed through registers) with eight warps of 32 x 16 instead of four of 32 x 32.
//   Why: at 1024^3 the grid is 256 blocks, so four warps a block leave about two warps on each of an SM's four
//   schedulers, too few to cover shared-memory and mma latency. Eight warps give four a scheduler, at the cost
//   of 12 fragment loads per 12 mma instead of 16 per 24.
//   The mainloop and its policies: kernels/cuda/include/tf32x3_mma.cuh.

#include "tf32x3_mma.cuh"

extern "C" __global__ void __launch_bounds__(256)
matmul_3xtf32_mma_64x64_8warps(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<256, 16, tf32x3::SplitOnLoad<tf32x3::RoundInt>, false, true>(a, b, c, m, n, k);
}
