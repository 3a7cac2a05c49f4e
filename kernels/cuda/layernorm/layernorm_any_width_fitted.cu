// layernorm_any_width_fitted — layer normalization over the last dimension, FP32, row-major, any width: each row
// held in registers by the fewest quads a lane that hold it, so that no register a row leaves empty is held.
//
// Launch: one entry of sixteen, by cols (registry/ops/layernorm.py, ANY_WIDTH_FITTED); block (256, 1, 1);
//   arguments (x, weight, bias, y, rows, cols, eps). A row's quads: cols / 4 where cols is a multiple of 4, else
//   (cols + 6) / 4 (a row starting three floats into a quad spans that many).
//   quads <= 256:       layernorm_any_width_fitted_warpQ, Q = ceil(quads / 32), eight rows a block;
//   quads <= 2048:      layernorm_any_width_fitted_blockQ, Q = ceil(quads / 256), grid (rows, 1, 1);
//   wider:              layernorm_any_width_fitted, three passes a block a row, grid (rows, 1, 1).
//   Each takes the row's aligned quads where x, y, weight and bias are 16-byte aligned and cols a multiple of 4,
//   the quads covering it where x and y are, else three passes.
//
// Design: layernorm_warp_row_any_width held eight quads a lane whatever the width (64 registers a thread, four
//   blocks an SM): at 4096 columns its blocks fill half their registers, at 3001 three eighths, and the row's two
//   block-wide reductions wait with half the SM's threads idle. Fitted, a 4096-wide row takes four quads a lane
//   (about 36 registers, six or seven blocks an SM) and 3001 three, read once (layernorm_any_width_three_pass read
//   it three times). Prediction in docs/h200-003-kernel-notes.md, section 15.
//
// Measured (an H100, kernel notes of h200-003, section 16): 3% faster than the three passes at 16411x3001, 9%
//   slower at 4096x2050, level at 16384x4096, 11% slower at 4096x768: the registers were not what held the rows
//   back. Not adopted: kept as the registry's measured attempt.
#include "layernorm_rows.cuh"

LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 1)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 2)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 3)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 4)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 5)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 6)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 7)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, warp, 8)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, block, 2)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, block, 3)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, block, 4)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, block, 5)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, block, 6)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, block, 7)
LNROW_FITTED_ENTRY(layernorm_any_width_fitted, block, 8)

extern "C" __global__ void __launch_bounds__(256)
layernorm_any_width_fitted(const float* __restrict__ x, const float* __restrict__ weight,
                                const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    lnrow::three_pass_row<256>(x, weight, bias, y, rows, cols, eps);
}
