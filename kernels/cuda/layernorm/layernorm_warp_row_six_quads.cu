// layernorm_warp_row_six_quads — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 8), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols.
//
// Design for sm_90: layernorm_warp_row_registers sized to the seed's rows. One warp per row, and rows of up to
//   768 columns (six 128-bit quads a lane) are held in registers with all their loads in flight at once; the
//   mean, then the variance about it, by shuffles; no shared memory, no barrier. Holding six quads instead of
//   eight brings ptxas to 52 registers with no spill (a 64-register cap on the eight-quad kernel spilled), so
//   four blocks (32 warps) share an SM and the seed's 4096 rows run in one wave. Wider rows, and widths that
//   are not a multiple of 4, stream the row from global memory (L2) in three passes.
//   The pieces of the family: kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

namespace {

enum : int {
    WARPS = 8,      // rows per 256-thread block
    QUADS = 6,      // per lane: 6 x 4 x 32 = 768 columns held in registers
};

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
layernorm_warp_row_six_quads(const float* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    lnrow::rows_in_registers<32 * WARPS, QUADS, false>(x, weight, bias, y, rows, cols, eps);
}
