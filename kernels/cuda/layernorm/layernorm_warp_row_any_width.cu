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
//   The pieces of the family: kernels/cuda/include/layernorm_rows.cuh.

#include "layernorm_rows.cuh"

namespace {

enum : int { THREADS = 256, WARPS = THREADS / 32, QUADS = 8, NARROW = 4 * 32 * QUADS - 3 };

// LANES threads (a warp or the block) normalize the row at flat offset `base`; `reduce` sums over them.
template <int LANES, class Reduce>
__device__ __forceinline__ void skewed_row(const float* __restrict__ x, const float* __restrict__ weight,
                                           const float* __restrict__ bias, float* __restrict__ y, long long base,
                                           long long numel, int cols, int lane, float eps, Reduce reduce)
{
    const int skew = static_cast<int>(base & 3);
    const long long start = base - skew;  // the quad the row begins in
    const int quads = (skew + cols + 3) / 4;
    float4 v[QUADS];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + LANES * i;
        float e[4] = {0.f, 0.f, 0.f, 0.f};
        if (q < quads) {
            const long long at = start + 4 * q;
            if (at + 4 <= numel) {
                const float4 w = __ldg(reinterpret_cast<const float4*>(x + at));
                e[0] = w.x, e[1] = w.y, e[2] = w.z, e[3] = w.w;
            } else {  // the array's last quad may run past its end
#pragma unroll
                for (int j = 0; j < 4; ++j) e[j] = at + j < numel ? __ldg(x + at + j) : 0.f;
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = 4 * q + j - skew;
                if (c < 0 || c >= cols) e[j] = 0.f;
            }
        }
        v[i] = make_float4(e[0], e[1], e[2], e[3]);
        sum += lnrow::quad_sum(v[i]);
    }
    const float inv_cols = 1.f / cols;
    const float mean = reduce(sum) * inv_cols;
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + LANES * i;
        if (q < quads) {
            const float e[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = 4 * q + j - skew;
                if (c >= 0 && c < cols) sq += (e[j] - mean) * (e[j] - mean);
            }
        }
    }
    const float rstd = rsqrtf(reduce(sq) * inv_cols + eps);
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + LANES * i;
        if (q < quads) {
            const float e[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
            const int c0 = 4 * q - skew;
            float out[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = c0 + j;
                out[j] = c >= 0 && c < cols ? fmaf((e[j] - mean) * rstd, __ldg(weight + c), __ldg(bias + c)) : 0.f;
            }
            float* at = y + start + 4 * q;
            if (c0 >= 0 && c0 + 4 <= cols) {
                *reinterpret_cast<float4*>(at) = make_float4(out[0], out[1], out[2], out[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (c0 + j >= 0 && c0 + j < cols) at[j] = out[j];
            }
        }
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_warp_row_any_width(const float* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    if ((cols & 3) == 0 || !lnrow::aligned16(x, y, x, y)) {  // the quad path, or three passes off the quad grid
        lnrow::rows_in_registers<THREADS, QUADS, true>(x, weight, bias, y, rows, cols, eps);
        return;
    }
    const long long numel = static_cast<long long>(rows) * cols;
    if (cols > NARROW) {  // a block a row
        __shared__ float partial[WARPS];
        const int row = blockIdx.x;
        skewed_row<THREADS>(x, weight, bias, y, static_cast<long long>(row) * cols, numel, cols, threadIdx.x, eps,
                            [&](float s) { return lnrow::block_sum<WARPS>(s, partial); });
        return;
    }
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only
    skewed_row<32>(x, weight, bias, y, static_cast<long long>(row) * cols, numel, cols, threadIdx.x % 32, eps,
                   [](float s) { return lnrow::warp_sum(s); });
}

// The launcher's entry where cols % 4 == 0: layernorm_warp_row_registers' code alone (the same path inside the
// kernel above ran 12% slower at 4096 x 768, scheduled with the skewed paths around it).
extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_warp_row_any_width_quads(const float* __restrict__ x, const float* __restrict__ weight,
                                   const float* __restrict__ bias, float* __restrict__ y, int rows, int cols,
                                   float eps)
{
    lnrow::rows_in_registers<THREADS, QUADS, true>(x, weight, bias, y, rows, cols, eps);
}
