// matmul_3xtf32_mma_64x64_presplit_8warps — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (256, 1, 1), 37888 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: matmul_3xtf32_mma_64x64_presplit (mma.sync m16n8k8 TF32 with the 3xTF32 split, each element
//   split once into (hi, lo) pairs as the tile is stored to shared memory, K steps of 16 whose 6 mma are summed
//   from zero and then added in FP32) with eight warps of 32 x 16 instead of four of 32 x 32.
//   - 8warps, blocked's eight-warp form, lost to blocked: every warp split what it read, so more warps brought
//     more splits (issue slots 53%, tensor pipe 45%). Split once at the store, more warps are more mma in
//     flight: four warps a scheduler at 1024^3 in place of two.
//   - The cost: a fragment load per mma (from 0.67), 64-bit and conflict-free as in presplit.
//   The mainloop and its policies: kernels/cuda/include/tf32x3_mma.cuh.

#include "tf32x3_mma.cuh"

extern "C" __global__ void __launch_bounds__(256, 2)
matmul_3xtf32_mma_64x64_presplit_8warps(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<256, 16, tf32x3::SplitOnStore, false, true>(a, b, c, m, n, k);
}
