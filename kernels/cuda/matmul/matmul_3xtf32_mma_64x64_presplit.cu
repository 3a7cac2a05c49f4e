// matmul_3xtf32_mma_64x64_presplit — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1), 37888 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: matmul_3xtf32_mma_64x64_blocked (mma.sync m16n8k8 TF32 with the 3xTF32 split, 64 x 64 tile,
//   four warps of 32 x 32, each K step's mma summed from zero and then added in FP32), with each element split
//   once, as the tile is stored to shared memory, instead of once per warp that reads it:
//   - ncu on blocked at 1024^3: the tensor pipe active 46% of the time, issue slots 42% busy, L2 under 20%, no
//     bank conflicts. Between shared load and mma sit the split's three ALU operations, repeated by the two
//     warps that read each element of A and of B.
//   - Shared memory holds (hi, lo) pairs: one 64-bit load gives a fragment element both halves. K steps of 16
//     keep two stages inside 48 KB of static shared memory (two barriers fewer than one stage of 32), and sum
//     6 mma a chain before the FP32 add.
//   - Strides of 20 and 68 pairs put a half-warp's 64-bit fragment loads on 32 distinct banks (the stores of
//     the split, four 128-bit stores a thread a K step, are two-way).
//   - __launch_bounds__(128, 2): 144 registers, no spill. With (128) alone ptxas chose 128 and spilled one
//     register inside the K loop. At 1024^3 there are two blocks an SM either way.
//   The mainloop and its policies: kernels/cuda/include/tf32x3_mma.cuh.

#include "tf32x3_mma.cuh"

extern "C" __global__ void __launch_bounds__(128, 2)
matmul_3xtf32_mma_64x64_presplit(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<128, 32, tf32x3::SplitOnStore, false, true>(a, b, c, m, n, k);
}
