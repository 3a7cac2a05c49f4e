// layernorm_warp_two_rows — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 16), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols.
//
// Design for sm_90: layernorm_warp_row_six_quads with two rows a warp. Both rows' loads (twelve 128-bit quads a
//   lane at 768 columns) are issued before either row is reduced, so while a warp reduces and writes its first
//   row the second is already arriving: the load, reduce and store phases of an SM overlap instead of running
//   as one burst each. Rows of up to 768 columns are held in registers; wider rows, and widths that are not
//   a multiple of 4, stream from global memory (L2) in three passes.
//   The pieces of the family: kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

namespace {

enum : int {
    WARPS = 8,      // 256 threads, 16 rows a block
    QUADS = 6,      // per lane and row: 6 x 4 x 32 = 768 columns held in registers
};

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
layernorm_warp_two_rows(const float* __restrict__ x, const float* __restrict__ weight,
                        const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    const int lane = threadIdx.x % 32;
    const int first = (blockIdx.x * WARPS + threadIdx.x / 32) * 2;
    if (first >= rows) return;  // whole warps only: no shuffle below misses a lane
    const bool second = first + 1 < rows;
    const float inv_cols = 1.f / cols;
    const float* x0 = x + (long long)first * cols;
    float* y0 = y + (long long)first * cols;
    if ((cols & 3) == 0 && cols <= 4 * 32 * QUADS && lnrow::aligned16(x, y, weight, bias)) {
        const int quads = cols / 4;
        float4 a[QUADS], b[QUADS];
        lnrow::load_row(a, x0, quads, lane, true);
        lnrow::load_row(b, x0 + cols, quads, lane, second);
        lnrow::normalize_row(a, weight, bias, y0, quads, lane, inv_cols, eps);
        if (second) lnrow::normalize_row(b, weight, bias, y0 + cols, quads, lane, inv_cols, eps);
        return;
    }
    lnrow::scalar_row(x0, weight, bias, y0, cols, lane, inv_cols, eps);
    if (second) lnrow::scalar_row(x0 + cols, weight, bias, y0 + cols, cols, lane, inv_cols, eps);
}
