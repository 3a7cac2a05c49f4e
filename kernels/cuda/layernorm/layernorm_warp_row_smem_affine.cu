// layernorm_warp_row_smem_affine — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: block (256, 1, 1), 8 KB static shared; arguments (x, weight, bias, y, rows, cols, eps).
//   cols <= 1024, or not a multiple of 4: grid (ceil(rows / 8), 1, 1), a warp a row.
//   1024 < cols <= 8192, a multiple of 4: grid (rows, 1, 1), a block a row.
//
// Design: layernorm_warp_row_registers, with weight and bias staged in shared memory by the block while the
//   rows' loads are in flight. In that kernel's SASS the weight and bias loads come after both shuffle
//   reductions and the rsqrt, just before the stores. With the seed's 4096 rows in one wave, every warp of an
//   SM then waits on the same first miss of those lines before it can store. Here they are read from shared
//   memory after the reductions, and the block's one barrier waits on loads issued beside x's. (A version that
//   prefetched the lines into L1 instead was not kept: ptxas moved the prefetches after the first reduction.)
//   72 registers: 3 blocks an SM, 1.3 waves at the seed, as the 79-register first version of the registers
//   kernel that measured 5.79 us.
//   The pieces of the family: kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

namespace {

enum : int {
    THREADS = 256,
    WARPS = 8,            // rows per 256-thread block
    MAX_QUADS = 8,        // per lane: 8 x 4 x 32 = 1024 columns; wide path: 8 x 4 x 256 = 8192 a block
};

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
layernorm_warp_row_smem_affine(const float* __restrict__ x, const float* __restrict__ weight,
                               const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    __shared__ float4 affine[2][MAX_QUADS * 32];  // the row's weight and bias quads, up to 1024 floats each

    const bool quads = (cols & 3) == 0 && lnrow::aligned16(x, y, weight, bias);
    if (quads && cols > 4 * 32 * MAX_QUADS) {
        lnrow::wide_row<THREADS, MAX_QUADS>(x, reinterpret_cast<const float4*>(weight),
                                            reinterpret_cast<const float4*>(bias), y, cols, eps,
                                            blockIdx.x);  // the grid is one block a row
        return;
    }
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    const bool live = row < rows;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    const float inv_cols = 1.f / cols;

    if (quads) {  // uniform over the block: every thread reaches the barrier
        const int quads = cols / 4;
        float4 v[MAX_QUADS];
        const float sum = lnrow::load_row(v, xr, quads, lane, live);
        for (int q = threadIdx.x; q < quads; q += 32 * WARPS) {
            affine[0][q] = __ldg(reinterpret_cast<const float4*>(weight) + q);
            affine[1][q] = __ldg(reinterpret_cast<const float4*>(bias) + q);
        }
        __syncthreads();
        if (!live) return;  // whole warps only: no shuffle below misses a lane
        const float mean = lnrow::warp_sum(sum) * inv_cols;
        const float rstd = lnrow::row_rstd(v, mean, quads, lane, inv_cols, eps);
        lnrow::store_row<MAX_QUADS, true>(v, mean, rstd, affine[0], affine[1], yr, quads, lane);
        return;
    }
    if (!live) return;
    lnrow::scalar_row(xr, weight, bias, yr, cols, lane, inv_cols, eps);
}
