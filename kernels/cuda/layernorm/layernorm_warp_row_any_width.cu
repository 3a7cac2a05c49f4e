// layernorm_warp_row_any_width — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: block (256, 1, 1); arguments (x, weight, bias, y, rows, cols, eps).
//   cols a multiple of 4: the entry layernorm_warp_row_any_width_quads, layernorm_warp_row_registers' code (a warp
//   a row up to 1024, a block a row to 8192).
//   other widths up to 1021: grid (ceil(rows / 8), 1, 1), a warp a row; 1022 to 8189: grid (rows, 1, 1), a block
//   a row.
//
// Design for sm_90: layernorm_warp_row_registers for widths that are not a multiple of 4, which there took three
//   scalar passes over global memory. A row then starts anywhere inside a 16-byte quad of the array, but the
//   array is still one run of quads: each lane loads the aligned quads that cover its row (the first and the
//   last shared with the neighbouring rows), zeroes the elements outside the row, and holds the row in registers
//   as the quad path does. The variance skips those elements; y goes out as whole quads inside the row and
//   element by element at its two ends (the neighbours' elements are theirs to write). weight and bias, whose
//   columns no longer line up with the quads, are read element by element (from L1: every row reads the same).
//   The pieces of the family, this kernel's skewed rows among them: kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

LNROW_ANY_WIDTH_ENTRIES(layernorm_warp_row_any_width, 256, 8, 1)
