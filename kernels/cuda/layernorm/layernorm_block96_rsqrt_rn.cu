// layernorm_block96_rsqrt_rn — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c x[r][c]^2 / cols - mean^2   (population variance)
//   y[r][c] = (x[r][c] - mean) / sqrt_rn(var + eps) * weight[c] + bias[c]
//
// Launch: grid (rows, 1, 1), block (96, 1, 1), 24 B static shared, no dynamic shared.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols >= 1 (one pass over x up to 768 columns).
//
// Design (an attempt measured at mage-006 and not adopted: it did not beat Triton's kernel): the mage-006
//   kernel (layernorm_block_row_1pass) with three warps per row instead of four and Triton's reciprocal,
//   1 / sqrt rounded to nearest, instead of the approximate rsqrt. Each thread holds a quad in each of two slots
//   of 384 columns, so 768 columns, the real shape, are read once and stay in registers from the load to the
//   store; the three warps meet once in 6 floats of shared memory behind one barrier. Columns past 768 are not
//   held (that would cost registers, and occupancy, at the real shape): they are summed in the first pass and
//   read again for the output.

namespace {

enum : int {
    THREADS = 96,
    WARPS = THREADS / 32,
    SLOT = 4 * THREADS,    // 384 columns per slot
    SLOTS = 2,
    HELD = SLOTS * SLOT,   // 768 columns held in registers
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_block96_rsqrt_rn(const float* __restrict__ x, const float* __restrict__ weight,
                           const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    __shared__ float partial[2 * WARPS];  // [0, 3): per-warp sums, [3, 6): per-warp sums of squares

    const int row = blockIdx.x;
    if (row >= rows) return;  // uniform over the block, so no thread misses the barrier below

    const int tid = threadIdx.x;
    const int lane = tid % 32;
    const int warp = tid / 32;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;

    // Quads are 16-byte aligned at every row start only when cols % 4 == 0 (and the tensors themselves are).
    const bool vec = (cols % 4 == 0) && aligned16(x) && aligned16(y) && aligned16(weight) && aligned16(bias);

    // The sums are taken of d = x - x[r][0]. The variance is shift-invariant; a constant row then gives exactly
    // d = 0, var = 0 and y = bias, and since the shifted mean is of the order of the spread, the single-pass
    // sumsq/cols - mean^2 does not cancel catastrophically when |mean| >> std.
    const float shift = xr[0];

    float d[SLOTS][4];  // this thread's columns c0 + j of the row, c0 = s * 384 + 4 * tid
    float sum = 0.f, sumsq = 0.f;
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
        const int c0 = s * SLOT + 4 * tid;
        if (vec && c0 < cols) {  // with cols % 4 == 0, c0 < cols means the whole quad is in range
            const float4 xv = *reinterpret_cast<const float4*>(xr + c0);
            d[s][0] = xv.x - shift;
            d[s][1] = xv.y - shift;
            d[s][2] = xv.z - shift;
            d[s][3] = xv.w - shift;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int col = c0 + j;
                d[s][j] = col < cols ? xr[col] - shift : 0.f;  // masked lanes add nothing to either sum
            }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            sum += d[s][j];
            sumsq = fmaf(d[s][j], d[s][j], sumsq);
        }
    }
    // Columns past the held 768 (none at the real shape), summed here and read again for the output. The loops
    // stay rolled: unrolled, their hoisted loads raise the register count of the whole kernel for a cold path.
    if (vec) {
#pragma unroll 1
        for (int c = HELD + 4 * tid; c < cols; c += SLOT) {
            const float4 xv = *reinterpret_cast<const float4*>(xr + c);
            const float d0 = xv.x - shift, d1 = xv.y - shift, d2 = xv.z - shift, d3 = xv.w - shift;
            sum += (d0 + d1) + (d2 + d3);
            sumsq = fmaf(d0, d0, fmaf(d1, d1, fmaf(d2, d2, fmaf(d3, d3, sumsq))));
        }
    } else {
#pragma unroll 1
        for (int c = HELD + tid; c < cols; c += THREADS) {
            const float dc = xr[c] - shift;
            sum += dc;
            sumsq = fmaf(dc, dc, sumsq);
        }
    }

    // Warp reduction (butterfly: every lane ends with the warp's totals), then the three warps meet once.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        sumsq += __shfl_xor_sync(0xffffffffu, sumsq, offset);
    }
    if (lane == 0) {
        partial[warp] = sum;
        partial[WARPS + warp] = sumsq;
    }
    __syncthreads();  // the only barrier: partial is written once and never reused, so no second one
    sum = (partial[0] + partial[1]) + partial[2];
    sumsq = (partial[3] + partial[4]) + partial[5];

    const float mean = sum / cols;  // mean of the shifted values
    const float var = fmaxf(sumsq / cols - mean * mean, 0.f);
    const float rstd = 1.0f / __fsqrt_rn(var + eps);  // what Triton emits: sqrt and division both rounded to nearest

    // weight and bias are read only here, so they do not hold registers across the reduction (occupancy).
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
        const int c0 = s * SLOT + 4 * tid;
        if (vec && c0 < cols) {
            const float4 wv = *reinterpret_cast<const float4*>(weight + c0);
            const float4 bv = *reinterpret_cast<const float4*>(bias + c0);
            *reinterpret_cast<float4*>(yr + c0) = make_float4(fmaf((d[s][0] - mean) * rstd, wv.x, bv.x),
                                                              fmaf((d[s][1] - mean) * rstd, wv.y, bv.y),
                                                              fmaf((d[s][2] - mean) * rstd, wv.z, bv.z),
                                                              fmaf((d[s][3] - mean) * rstd, wv.w, bv.w));
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int col = c0 + j;
                if (col < cols) yr[col] = fmaf((d[s][j] - mean) * rstd, weight[col], bias[col]);
            }
        }
    }
    if (vec) {
#pragma unroll 1
        for (int c = HELD + 4 * tid; c < cols; c += SLOT) {
            const float4 xv = *reinterpret_cast<const float4*>(xr + c);
            const float4 wv = *reinterpret_cast<const float4*>(weight + c);
            const float4 bv = *reinterpret_cast<const float4*>(bias + c);
            *reinterpret_cast<float4*>(yr + c) = make_float4(fmaf(((xv.x - shift) - mean) * rstd, wv.x, bv.x),
                                                             fmaf(((xv.y - shift) - mean) * rstd, wv.y, bv.y),
                                                             fmaf(((xv.z - shift) - mean) * rstd, wv.z, bv.z),
                                                             fmaf(((xv.w - shift) - mean) * rstd, wv.w, bv.w));
        }
    } else {
#pragma unroll 1
        for (int c = HELD + tid; c < cols; c += THREADS) {
            yr[c] = fmaf(((xr[c] - shift) - mean) * rstd, weight[c], bias[c]);
        }
    }
}
