// matmul_3xtf32_mma_64x64_blocked — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1), 36864 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: matmul_3xtf32_mma_64x64_masksplit (mma.sync m16n8k8 TF32 with the 3xTF32 split, 64 x 64
//   tile, four warps of 32 x 32, mma issued term by term, split by integer operations), made accurate at large K:
//   - The tensor core's FP32 accumulation is not IEEE round-to-nearest (it truncates; Fasi et al. 2021), so a
//     sum chained through 3 x K / 8 mma drifts. masksplit failed the gate at 4096^3 (max abs error 7.3e-4
//     against 1e-4 near zero). Here each K step of 32 accumulates its 12 mma a tile into zeroed partial sums,
//     which are then added to the result in FP32 (round-to-nearest): the chain through the tensor core is 12
//     long at any K.
//   - hi rounds to nearest (add half a TF32 ulp, then mask: cvt.rna's rounding in two integer operations), so
//     lo = x - hi is at most half a TF32 ulp and of either sign, not a truncation remainder of x's sign.
//   A CPU model of both (tests/test_three_tf32.py) puts the worst error at 4096 at 0.19 of the gate.
//   The mainloop and its policies: kernels/cuda/include/tf32x3_mma.cuh.

#include "tf32x3_mma.cuh"

extern "C" __global__ void __launch_bounds__(128)
matmul_3xtf32_mma_64x64_blocked(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<128, 32, tf32x3::SplitOnLoad<tf32x3::RoundInt>, false, true>(a, b, c, m, n, k);
}
