// layernorm_warp_row_pipelined — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: block (256, 1, 1), no shared memory beyond 64 bytes; arguments (x, weight, bias, y, rows, cols, eps).
//   Narrow rows (cols <= 768, a multiple of 4): grid (ceil(rows / 32), 1, 1), each warp four rows in turn.
//   Wide rows (768 < cols <= 8192, a multiple of 4): grid (rows, 1, 1), one block a row.
//   Other widths: grid (ceil(rows / 32), 1, 1), each warp its rows in three passes over global memory.
//
// Design for sm_90. At the seed shape the input stays in L2, and a one-warp-a-row kernel that holds its row in
//   registers loads in one burst, reduces while L2 idles, then stores in one burst. Here a warp takes rows
//   warp, warp + W, ... (W warps in the grid, four rows each at the seed) and issues the next row's loads
//   before it reduces and stores the current one, so one row's stores are in flight with the next row's loads.
//   Wide rows (the sweep's 4096 columns) are one block each, 16 floats a thread at 4096, reduced through
//   shared memory, so x is read from memory once at any width the sweep takes.
//   The pieces of the family: kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

namespace {

enum : int {
    THREADS = 256,
    WARPS = THREADS / 32,
    QUADS = 6,            // narrow path: 6 x 4 x 32 = 768 columns a warp
    WIDE_QUADS = 8,       // wide path: 8 x 4 x 256 = 8192 columns a block
};

// One warp, rows warp0, warp0 + stride, ...: the next row's quads are loaded before this row is reduced.
__device__ void narrow_rows(const float* x, const float4* w4, const float4* b4, float* y, int rows, int cols,
                            float eps, int warp0, int stride, int lane)
{
    const int quads = cols / 4;
    const float inv_cols = 1.f / cols;
    float4 cur[QUADS], next[QUADS];
    lnrow::load_row(cur, x + (long long)warp0 * cols, quads, lane, warp0 < rows);
    for (int row = warp0; row < rows; row += stride) {
        lnrow::load_row(next, x + (long long)(row + stride) * cols, quads, lane, row + stride < rows);
        const float mean = lnrow::row_mean(cur, inv_cols);
        const float rstd = lnrow::row_rstd(cur, mean, quads, lane, inv_cols, eps);
        lnrow::store_row(cur, mean, rstd, w4, b4, y + (long long)row * cols, quads, lane);
#pragma unroll
        for (int i = 0; i < QUADS; ++i) cur[i] = next[i];
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_warp_row_pipelined(const float* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    const int lane = threadIdx.x % 32;
    const bool quads = (cols & 3) == 0 && lnrow::aligned16(x, y, weight, bias);
    const float4* w4 = reinterpret_cast<const float4*>(weight);
    const float4* b4 = reinterpret_cast<const float4*>(bias);
    if (quads && cols > 4 * 32 * QUADS) {
        lnrow::wide_row<THREADS, WIDE_QUADS>(x, w4, b4, y, cols, eps, blockIdx.x);  // the grid is one block a row
        return;
    }
    const int warp0 = blockIdx.x * WARPS + threadIdx.x / 32, stride = gridDim.x * WARPS;
    if (quads) {
        narrow_rows(x, w4, b4, y, rows, cols, eps, warp0, stride, lane);
        return;
    }
    for (int row = warp0; row < rows; row += stride)
        lnrow::scalar_row(x + (long long)row * cols, weight, bias, y + (long long)row * cols, cols, lane, 1.f / cols,
                          eps);
}
