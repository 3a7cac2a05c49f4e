// matmul_3xtf32_wgmma_cpasync_64x128 — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 128), ceil(m / 64), 1), block (384, 1, 1), dynamic shared memory as Layout<64, 6>::SHARED.
//   Arguments (a, b, c, m, n, k); k > 0.
//
// Design for sm_90a: matmul_3xtf32_wgmma_tma_64x128_ws_chain2 for shapes TMA cannot take (a row of A or B not a
//   16-byte stride: k or n not a multiple of 4): two producer warps copy the tiles element by element with
//   cp.async, into the layout TMA's swizzle gives, and two split A (hi written back); the consumers are the same.
//   The mainloop and its policies: kernels/cuda/include/wgmma_tma.cuh.
#include "wgmma_tma.cuh"

extern "C" __global__ void __launch_bounds__(wgmma_tma::THREADS, 1)
matmul_3xtf32_wgmma_cpasync_64x128(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
    int m, int n, int k)
{
    wgmma_tma::matmul<64, 6, wgmma_tma::Policy<true, 2, false>>(wgmma_tma::Pointers{a, b, m, n, k}, c, m, n, k);
}
