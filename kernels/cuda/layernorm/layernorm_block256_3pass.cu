// layernorm_block256_3pass — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (rows, 1, 1), block (256, 1, 1), 2048 B static shared, no dynamic shared.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols >= 1.
//
// Design (mage-001, the first kernel; its body is lnrow::three_pass_row, layernorm_rows.cuh): one block of 256
//   threads per row and three passes over the row in global memory, scalar loads, the block striding along the row so each load instruction is coalesced: the first pass
//   sums x and a tree reduction in shared memory gives the mean; the second sums the squared deviations from it
//   and a second tree gives the variance; the third writes y. Nothing of the row is kept between passes.

#include "layernorm_rows.cuh"

extern "C" __global__ void __launch_bounds__(256)
layernorm_block256_3pass(const float* __restrict__ x, const float* __restrict__ weight,
                         const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    lnrow::three_pass_row<256>(x, weight, bias, y, rows, cols, eps);
}
