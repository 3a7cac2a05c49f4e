// layernorm_2warp_row_staged_shared — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c x[r][c]^2 / cols - mean^2   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 4), 1, 1), block (256, 1, 1), 16448 B static shared, no dynamic shared.
//   Arguments (x, weight, bias, y, rows, cols, eps); 1 <= cols <= 1024.
//
// Design (an attempt measured at mage-006 and not adopted: slower than the two-warp build): the two-warp split
//   of layernorm_2warp_row_shared (mage-003; 64 threads per row, four rows per 256-thread block, 128-bit quads,
//   the two warps exchanging their partial sums once through shared memory behind a single barrier), with the
//   row staged in shared memory so x is read from global memory once: the first pass copies each quad it loads
//   into the row's stage as it sums, and the second pass reads the row back from the stage instead of from
//   global memory. Each thread reads back only the elements it staged itself, so the stage needs no barrier of
//   its own. The stage is sized for rows of at most 1024 floats (4 rows x 4 KiB).

namespace {

enum : int {
    THREADS = 256,
    ROW_THREADS = 64,                         // two warps per row
    ROWS_PER_BLOCK = THREADS / ROW_THREADS,   // 4
    MAX_COLS = 1024,
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_2warp_row_staged_shared(const float* __restrict__ x, const float* __restrict__ weight,
                                  const float* __restrict__ bias, float* __restrict__ y, int rows, int cols,
                                  float eps)
{
    __shared__ float4 stage[ROWS_PER_BLOCK][MAX_COLS / 4];  // float4: 16-byte aligned for the quad path
    __shared__ float partial[ROWS_PER_BLOCK][2][2];         // [row of the block][warp of the row][sum, sum sq]

    const int slot = threadIdx.x / ROW_THREADS;  // which of the block's four rows
    const int t = threadIdx.x % ROW_THREADS;     // thread within the row's pair of warps
    const int half = t / 32;                     // which warp of the pair
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * ROWS_PER_BLOCK + slot;
    // The last block may hold rows past the end. Their warps load nothing but still reach the barrier (a
    // __syncthreads that some threads of the block skip is undefined), and return after it.
    const bool live = row < rows;

    const float* xr = x + (long long)row * cols;  // dereferenced only when live
    float* yr = y + (long long)row * cols;
    float4* sq = stage[slot];                                  // the row's stage, as quads
    float* ss = reinterpret_cast<float*>(stage[slot]);         // and as floats, for the scalar path

    // Quads are 16-byte aligned at every row start only when cols % 4 == 0 (and the tensors themselves are).
    const bool vec = (cols % 4 == 0) && aligned16(x) && aligned16(y) && aligned16(weight) && aligned16(bias);
    const int quads = cols / 4;

    // The sums are taken of d = x - x[r][0]. The variance is shift-invariant; a constant row then gives exactly
    // d = 0, var = 0 and y = bias, and since the shifted mean is of the order of the spread, the single-pass
    // sumsq/cols - mean^2 does not cancel catastrophically when |mean| >> std.
    const float shift = live ? xr[0] : 0.f;

    // Pass 1, the only one over global x: stage the row and sum it.
    float sum = 0.f, sumsq = 0.f;
    if (live) {
        if (vec) {
            for (int q = t; q < quads; q += ROW_THREADS) {
                const float4 xv = reinterpret_cast<const float4*>(xr)[q];
                sq[q] = xv;
                const float d0 = xv.x - shift, d1 = xv.y - shift, d2 = xv.z - shift, d3 = xv.w - shift;
                sum += (d0 + d1) + (d2 + d3);
                sumsq = fmaf(d0, d0, fmaf(d1, d1, fmaf(d2, d2, fmaf(d3, d3, sumsq))));
            }
        } else {
            for (int c = t; c < cols; c += ROW_THREADS) {
                const float xc = xr[c];
                ss[c] = xc;
                const float d = xc - shift;
                sum += d;
                sumsq = fmaf(d, d, sumsq);
            }
        }
    }

    // Butterfly within each warp (every lane ends with its warp's totals), then the two warps of a row meet once.
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_xor_sync(0xffffffffu, sum, offset);
        sumsq += __shfl_xor_sync(0xffffffffu, sumsq, offset);
    }
    if (lane == 0) {
        partial[slot][half][0] = sum;
        partial[slot][half][1] = sumsq;
    }
    __syncthreads();  // the only barrier: partial is written once and never reused
    if (!live) return;
    sum = partial[slot][0][0] + partial[slot][1][0];  // same order in both warps: the row gets one mean
    sumsq = partial[slot][0][1] + partial[slot][1][1];

    const float mean = sum / cols;  // mean of the shifted values
    const float var = fmaxf(sumsq / cols - mean * mean, 0.f);
    const float rstd = rsqrtf(var + eps);  // approximate rsqrt: ~1e-7 relative error, far inside 1e-4

    // Pass 2: the row from the stage (the same columns this thread staged), weight and bias from global, y out.
    if (vec) {
        for (int q = t; q < quads; q += ROW_THREADS) {
            const float4 xv = sq[q];
            const float4 wv = reinterpret_cast<const float4*>(weight)[q];
            const float4 bv = reinterpret_cast<const float4*>(bias)[q];
            reinterpret_cast<float4*>(yr)[q] = make_float4(fmaf(((xv.x - shift) - mean) * rstd, wv.x, bv.x),
                                                           fmaf(((xv.y - shift) - mean) * rstd, wv.y, bv.y),
                                                           fmaf(((xv.z - shift) - mean) * rstd, wv.z, bv.z),
                                                           fmaf(((xv.w - shift) - mean) * rstd, wv.w, bv.w));
        }
    } else {
        for (int c = t; c < cols; c += ROW_THREADS) {
            yr[c] = fmaf(((ss[c] - shift) - mean) * rstd, weight[c], bias[c]);
        }
    }
}
