// layernorm_warp_row_registers — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: block (256, 1, 1), no shared memory beyond 32 bytes; arguments (x, weight, bias, y, rows, cols, eps).
//   cols <= 1024, or not a multiple of 4: grid (ceil(rows / 8), 1, 1), a warp a row.
//   1024 < cols <= 8192, a multiple of 4: grid (rows, 1, 1), a block a row (the sweep's 4096 columns).
//
// Design for sm_90, where the seed's 12.6 MB input stays in the 60 MB L2 between calls and the kernel is bound
//   by latency rather than DRAM: one warp per row and nothing else. Each lane issues all its loads of the row
//   up front (up to eight 128-bit quads, six at 768 columns), so a warp has the whole row in flight at once;
//   the mean and then the variance about it come from those registers through two shuffle reductions, with no
//   shared memory and no barrier; y is written from the same registers. Widths that are not a multiple of 4
//   take a three-pass path over global memory; that path once held its row in registers too and cost the
//   kernel 79 registers (6.59 us; see the notes). Rows wider than 1024 floats are one block each, 16 floats a
//   thread at 4096 in registers, reduced through shared memory, so x is read once at the widths the sweep
//   takes (the path of layernorm_warp_row_pipelined, 3915 GB/s at 16384 x 4096 on the H200).
//   The pieces of the family: kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

namespace {

enum : int {
    WARPS = 8,            // rows per 256-thread block
    MAX_QUADS = 8,        // per lane: 8 x 4 x 32 = 1024 columns; wide path: 8 x 4 x 256 = 8192 a block
};

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
layernorm_warp_row_registers(const float* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    lnrow::rows_in_registers<32 * WARPS, MAX_QUADS, true>(x, weight, bias, y, rows, cols, eps);
}
