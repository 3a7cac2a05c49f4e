// layernorm_warp_row_quads — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c x[r][c]^2 / cols - mean^2   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 8), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols >= 1.
//
// Design (mage-002): one warp per row, eight rows per 256-thread block. The warp walks its row in 128-bit quads
//   (lane l takes quads l, l + 32, ...; 768 columns are six quads a lane), sums x and x^2 in one pass, reduces both
//   with butterfly shuffles, so no shared memory and no barrier, then reads the row again to write y. Rows whose
//   width is not a multiple of four (or unaligned tensors) take the same two passes with scalar loads.

namespace {

enum : int {
    THREADS = 256,
    ROWS_PER_BLOCK = THREADS / 32,  // one warp per row
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_warp_row_quads(const float* __restrict__ x, const float* __restrict__ weight,
                         const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32;
    if (row >= rows) return;  // uniform over the warp, and the kernel has no barrier: the last block may be partial

    const int lane = threadIdx.x % 32;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;

    // Quads are 16-byte aligned at every row start only when cols % 4 == 0 (and the tensors themselves are).
    const bool vec = (cols % 4 == 0) && aligned16(x) && aligned16(y) && aligned16(weight) && aligned16(bias);
    const int quads = cols / 4;

    // The sums are taken of d = x - x[r][0]. The variance is shift-invariant; a constant row then gives exactly
    // d = 0, var = 0 and y = bias, and since the shifted mean is of the order of the spread, the single-pass
    // sumsq/cols - mean^2 does not cancel catastrophically when |mean| >> std.
    const float shift = xr[0];

    // Pass 1: sum and sum of squares.
    float sum = 0.f, sumsq = 0.f;
    if (vec) {
        for (int q = lane; q < quads; q += 32) {
            const float4 xv = reinterpret_cast<const float4*>(xr)[q];
            const float d0 = xv.x - shift, d1 = xv.y - shift, d2 = xv.z - shift, d3 = xv.w - shift;
            sum += (d0 + d1) + (d2 + d3);
            sumsq = fmaf(d0, d0, fmaf(d1, d1, fmaf(d2, d2, fmaf(d3, d3, sumsq))));
        }
    } else {
        for (int c = lane; c < cols; c += 32) {
            const float d = xr[c] - shift;
            sum += d;
            sumsq = fmaf(d, d, sumsq);
        }
    }

    // Butterfly: every lane ends with the row's totals.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        sumsq += __shfl_xor_sync(0xffffffffu, sumsq, offset);
    }

    const float mean = sum / cols;  // mean of the shifted values
    const float var = fmaxf(sumsq / cols - mean * mean, 0.f);
    const float rstd = rsqrtf(var + eps);  // approximate rsqrt: ~1e-7 relative error, far inside 1e-4

    // Pass 2: read the row again (from cache) and write y.
    if (vec) {
        for (int q = lane; q < quads; q += 32) {
            const float4 xv = reinterpret_cast<const float4*>(xr)[q];
            const float4 wv = reinterpret_cast<const float4*>(weight)[q];
            const float4 bv = reinterpret_cast<const float4*>(bias)[q];
            reinterpret_cast<float4*>(yr)[q] = make_float4(fmaf(((xv.x - shift) - mean) * rstd, wv.x, bv.x),
                                                           fmaf(((xv.y - shift) - mean) * rstd, wv.y, bv.y),
                                                           fmaf(((xv.z - shift) - mean) * rstd, wv.z, bv.z),
                                                           fmaf(((xv.w - shift) - mean) * rstd, wv.w, bv.w));
        }
    } else {
        for (int c = lane; c < cols; c += 32) yr[c] = fmaf(((xr[c] - shift) - mean) * rstd, weight[c], bias[c]);
    }
}
