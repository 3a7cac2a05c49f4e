// matmul_3xtf32_wgmma_tma_64x128_ws_chain2 — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 128), ceil(m / 64), 1), block (384, 1, 1), dynamic shared memory as Layout<64, 6>::SHARED.
//   Arguments (TMA map of A, box 64 x 32; TMA map of B, box 32 x 32; both with the 128-byte swizzle; c, m, n, k).
//   Shapes TMA cannot take (n or k not a multiple of 4, k = 0) launch matmul_3xtf32_wgmma_tma_fallback:
//   h200-001's adopted mma.sync kernel, grid (ceil(n / 64), ceil(m / 64), 1), block (128, 1, 1).
//
// Design for sm_90a: as matmul_3xtf32_wgmma_tma_64x128 with a warp of its own issuing the loads
//   (ISSUE_WARP) and chains of two stages (CHAIN 2): stage s issued before stage s - 1 is waited for.
//   The mainloop and its policies: kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)
matmul_3xtf32_wgmma_tma_64x128_ws_chain2(const __grid_constant__ wgmma_tma::TensorMap map_a,
    const __grid_constant__ wgmma_tma::TensorMap map_b, float* __restrict__ c, int m, int n, int k)
{
    wgmma_tma::matmul<64, 6, wgmma_tma::Policy<true, 2, false>>(wgmma_tma::Maps{map_a, map_b}, c, m, n, k);
}

extern "C" __global__ void __launch_bounds__(128)
matmul_3xtf32_wgmma_tma_fallback(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    tf32x3::matmul<128, 32, tf32x3::SplitOnLoad<tf32x3::RoundInt>, false, true>(a, b, c, m, n, k);
}
