// matmul_3xtf32_mma_64x64_masksplit — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1), 36864 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: matmul_3xtf32_mma_64x64 (tensor cores through mma.sync m16n8k8 TF32, 3xTF32 split, 64 x 64
//   tile, four warps of 32 x 32, two shared buffers fed through registers, K step 32), with two changes to its
//   inner loop:
//   - The split is a mask, not two conversions: hi = x with its low 13 mantissa bits cleared (exact TF32) and
//     lo = x - hi (exact in FP32; the tensor core reads its top 10 mantissa bits). Two cvt.rna a value cost
//     more issue slots than the three mma they feed; the mask and subtraction are one integer and one FP32
//     instruction. The cost is accuracy: truncated lo loses up to 2^-21 of x instead of 2^-22, still far
//     inside the 1e-4 gate (modelled in tests/test_three_tf32.py).
//   - The mma are issued term by term across the warp's eight accumulator tiles (all lo*hi, then all hi*lo,
//     then all hi*hi) and are not volatile, so no mma waits on the one before it: the three terms of one
//     tile were back to back, each depending on the last.
//   The mainloop and its policies: kernels/cuda/include/tf32x3_mma.cuh.

#include "tf32x3_mma.cuh"

extern "C" __global__ void __launch_bounds__(128)
matmul_3xtf32_mma_64x64_masksplit(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<128, 32, tf32x3::SplitOnLoad<tf32x3::Truncate>, false, false>(a, b, c, m, n, k);
}
