// layernorm_any_width_three_pass — layer normalization over the last dimension, FP32, row-major, any width:
// layernorm_warp_row_any_width, but rows of more than 1021 columns that no quad divides take three passes, a
// block a row (layernorm_block256_3pass's code), in an entry of their own.
//
// Launch: three entries of one cubin, by cols (registry/ops/layernorm.py, ANY_WIDTH_THREE_PASS):
//   cols % 4 == 0:     layernorm_any_width_three_pass_quads, as layernorm_warp_row_any_width_quads;
//   other cols > 1021: layernorm_any_width_three_pass_wide, grid (rows, 1, 1);
//   other cols:        layernorm_any_width_three_pass, eight rows a block, as layernorm_warp_row_any_width.
//   Block (256, 1, 1); arguments (x, weight, bias, y, rows, cols, eps).
//
// Design: at 2050 and 3001 columns the register-held rows of layernorm_warp_row_any_width (64 registers a thread,
//   four blocks an SM) left the rounds waiting on two block-wide reductions a row, and layernorm_block256_3pass
//   (32 registers, eight blocks an SM, the row read three times, the second and third from cache) ran 28.28 and
//   153.68 µs at 4096x2050 and 16411x3001 where it ran 39.57 and 181.71 (an H100, kernel notes of h200-003,
//   section 10). Its own entry keeps its register count: compiled into the any-width entry it would take that
//   entry's 64 and lose the blocks in flight that make it faster.
#include "layernorm_rows.cuh"

LNROW_ANY_WIDTH_ENTRIES(layernorm_any_width_three_pass, 256, 8, 1)

extern "C" __global__ void __launch_bounds__(256)
layernorm_any_width_three_pass_wide(const float* __restrict__ x, const float* __restrict__ weight,
                                    const float* __restrict__ bias, float* __restrict__ y, int rows, int cols,
                                    float eps)
{
    lnrow::three_pass_row<256>(x, weight, bias, y, rows, cols, eps);
}
