// layernorm_any_width_paired — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: block (256, 1, 1); arguments (x, weight, bias, y, rows, cols, eps).
//   cols a multiple of 4: the entry layernorm_any_width_paired_quads (layernorm_warp_row_registers' code).
//   other widths up to 1021: grid (ceil(rows / 8), 1, 1), a warp a row; 1022 to 4093: grid (ceil(rows / 2), 1, 1),
//   128 threads a row; 4094 to 8189: grid (rows, 1, 1), a block a row.
//
// Design for sm_90 (h200-003, an attempt at the layer norm's widths from 1022 that are not a multiple of 4):
//   layernorm_warp_row_any_width with two rows a block where it took one. Its block a row holds 64 registers a
//   thread, four blocks an SM: four rows in flight, each through two reductions across the block. At 4096 x 2050 on
//   the H100 (h100-003's first run) it took 41.5 µs, 5.4 µs for each round of 528 rows (132 SMs x 4), where those
//   rows' 8.7 MB need 2.9 µs at the copy rate: latency, not bytes. Here 128 threads take a row (up to eight quads a
//   thread, as the block a row held: 4093 columns), the block's two rows reduced side by side behind the same
//   barriers: eight rows an SM in flight on the same 64 registers. The pieces:
//   kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

LNROW_ANY_WIDTH_ENTRIES(layernorm_any_width_paired, 256, 8, 2)
