// layernorm_2warp_row_shared — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c x[r][c]^2 / cols - mean^2   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 4), 1, 1), block (256, 1, 1), 64 B static shared, no dynamic shared.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols >= 1.
//
// Design (mage-003): two warps (64 threads) per row, four rows per 256-thread block. The pair walks its row in
//   128-bit quads (thread t takes quads t, t + 64, ...; 768 columns are three quads a thread), sums x and x^2 in
//   one pass and reduces both with butterfly shuffles; the two warps then exchange their partial sums once through
//   64 bytes of shared memory (4 rows x 2 warps x {sum, sum of squares}) behind a single barrier, and the pair
//   reads the row a second time to write y. Rows whose width is not a multiple of four (or unaligned tensors) take
//   the same two passes with scalar loads.

namespace {

enum : int {
    THREADS = 256,
    ROW_THREADS = 64,                         // two warps per row
    ROWS_PER_BLOCK = THREADS / ROW_THREADS,   // 4
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_2warp_row_shared(const float* __restrict__ x, const float* __restrict__ weight,
                           const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    __shared__ float partial[ROWS_PER_BLOCK][2][2];  // [row of the block][warp of the row][sum, sum of squares]

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

    // Quads are 16-byte aligned at every row start only when cols % 4 == 0 (and the tensors themselves are).
    const bool vec = (cols % 4 == 0) && aligned16(x) && aligned16(y) && aligned16(weight) && aligned16(bias);
    const int quads = cols / 4;

    // The sums are taken of d = x - x[r][0]. The variance is shift-invariant; a constant row then gives exactly
    // d = 0, var = 0 and y = bias, and since the shifted mean is of the order of the spread, the single-pass
    // sumsq/cols - mean^2 does not cancel catastrophically when |mean| >> std.
    const float shift = live ? xr[0] : 0.f;

    // Pass 1: sum and sum of squares of this thread's share of the row.
    float sum = 0.f, sumsq = 0.f;
    if (live) {
        if (vec) {
            for (int q = t; q < quads; q += ROW_THREADS) {
                const float4 xv = reinterpret_cast<const float4*>(xr)[q];
                const float d0 = xv.x - shift, d1 = xv.y - shift, d2 = xv.z - shift, d3 = xv.w - shift;
                sum += (d0 + d1) + (d2 + d3);
                sumsq = fmaf(d0, d0, fmaf(d1, d1, fmaf(d2, d2, fmaf(d3, d3, sumsq))));
            }
        } else {
            for (int c = t; c < cols; c += ROW_THREADS) {
                const float d = xr[c] - shift;
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

    // Pass 2: read the row again (from cache) and write y.
    if (vec) {
        for (int q = t; q < quads; q += ROW_THREADS) {
            const float4 xv = reinterpret_cast<const float4*>(xr)[q];
            const float4 wv = reinterpret_cast<const float4*>(weight)[q];
            const float4 bv = reinterpret_cast<const float4*>(bias)[q];
            reinterpret_cast<float4*>(yr)[q] = make_float4(fmaf(((xv.x - shift) - mean) * rstd, wv.x, bv.x),
                                                           fmaf(((xv.y - shift) - mean) * rstd, wv.y, bv.y),
                                                           fmaf(((xv.z - shift) - mean) * rstd, wv.z, bv.z),
                                                           fmaf(((xv.w - shift) - mean) * rstd, wv.w, bv.w));
        }
    } else {
        for (int c = t; c < cols; c += ROW_THREADS) yr[c] = fmaf(((xr[c] - shift) - mean) * rstd, weight[c], bias[c]);
    }
}
