// layernorm_4warp_row_uneven — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c x[r][c]^2 / cols - mean^2   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 2), 1, 1), block (256, 1, 1), 64 B static shared, no dynamic shared.
//   Arguments (x, weight, bias, y, rows, cols, eps); 1 <= cols <= 1024.
//
// Design (an attempt measured at mage-006 and not adopted: slower than the two-warp build): four warps (128
//   threads) per row, two rows per 256-thread block. The row's quads are split unevenly: thread t holds quad t
//   in slot 0 and quad 128 + t in slot 1, so at 768 columns (192 quads) threads 0-63 hold two quads and threads
//   64-127 one, with the second slot masked. The row is read once, the sum and the sum of squares come from the
//   registers, the four warps of each row meet once in shared memory (2 rows x 4 warps x {sum, sum of squares},
//   64 bytes) behind one barrier, and y is written from the same registers. Two slots hold at most 1024 columns.

namespace {

enum : int {
    THREADS = 256,
    ROW_THREADS = 128,                       // four warps per row
    ROW_WARPS = ROW_THREADS / 32,
    ROWS_PER_BLOCK = THREADS / ROW_THREADS,  // 2
    SLOT = 4 * ROW_THREADS,                  // 512 columns per slot; two slots cover cols <= 1024
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_4warp_row_uneven(const float* __restrict__ x, const float* __restrict__ weight,
                           const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    __shared__ float partial[ROWS_PER_BLOCK][2][ROW_WARPS];  // [row of the block][sum, sum of squares][warp]

    const int slot_row = threadIdx.x / ROW_THREADS;  // which of the block's two rows
    const int t = threadIdx.x % ROW_THREADS;         // thread within the row's four warps
    const int warp = t / 32;                         // which warp of the row
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * ROWS_PER_BLOCK + slot_row;
    // With an odd number of rows the last block's second row is past the end. Its warps load nothing but still
    // reach the barrier (a __syncthreads that some threads of the block skip is undefined), and return after it.
    const bool live = row < rows;

    const float* xr = x + (long long)row * cols;  // dereferenced only when live
    float* yr = y + (long long)row * cols;

    // Quads are 16-byte aligned at every row start only when cols % 4 == 0 (and the tensors themselves are).
    const bool vec = (cols % 4 == 0) && aligned16(x) && aligned16(y) && aligned16(weight) && aligned16(bias);

    // The sums are taken of d = x - x[r][0]. The variance is shift-invariant; a constant row then gives exactly
    // d = 0, var = 0 and y = bias, and since the shifted mean is of the order of the spread, the single-pass
    // sumsq/cols - mean^2 does not cancel catastrophically when |mean| >> std.
    const float shift = live ? xr[0] : 0.f;

    float d[2][4];  // this thread's columns c0 + j of the row, c0 = s * 512 + 4 * t
    float sum = 0.f, sumsq = 0.f;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const int c0 = s * SLOT + 4 * t;
        if (live && vec && c0 < cols) {  // with cols % 4 == 0, c0 < cols means the whole quad is in range
            const float4 xv = *reinterpret_cast<const float4*>(xr + c0);
            d[s][0] = xv.x - shift;
            d[s][1] = xv.y - shift;
            d[s][2] = xv.z - shift;
            d[s][3] = xv.w - shift;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int col = c0 + j;
                d[s][j] = live && col < cols ? xr[col] - shift : 0.f;  // masked lanes add nothing to either sum
            }
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            sum += d[s][j];
            sumsq = fmaf(d[s][j], d[s][j], sumsq);
        }
    }

    // Warp reduction (butterfly: every lane ends with the warp's totals), then the four warps of a row meet once.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        sumsq += __shfl_xor_sync(0xffffffffu, sumsq, offset);
    }
    if (lane == 0) {
        partial[slot_row][0][warp] = sum;
        partial[slot_row][1][warp] = sumsq;
    }
    __syncthreads();  // the only barrier: partial is written once and never reused
    if (!live) return;
    const float* p = partial[slot_row][0];
    const float* q = partial[slot_row][1];
    sum = (p[0] + p[1]) + (p[2] + p[3]);  // same order in every warp: the row gets one mean
    sumsq = (q[0] + q[1]) + (q[2] + q[3]);

    const float mean = sum / cols;  // mean of the shifted values
    const float var = fmaxf(sumsq / cols - mean * mean, 0.f);
    const float rstd = rsqrtf(var + eps);  // approximate rsqrt: ~1e-7 relative error, far inside 1e-4

    // weight and bias are read only here, so they do not hold registers across the reduction (occupancy).
#pragma unroll
    for (int s = 0; s < 2; ++s) {
        const int c0 = s * SLOT + 4 * t;
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
}
