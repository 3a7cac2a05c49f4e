// layernorm_2warp_row_registers — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c x[r][c]^2 / cols - mean^2   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 4), 1, 1), block (256, 1, 1), 64 B static shared, no dynamic shared.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols >= 1 (one pass over x up to 768 columns).
//
// Design (an attempt measured at mage-006 and not adopted: slower than the two-warp build): the two-warp split
//   of layernorm_2warp_row_shared (mage-003; 64 threads per row, four rows per 256-thread block, 128-bit quads,
//   the two warps exchanging their partial sums once through shared memory behind a single barrier), with the
//   row held in registers so x is read from global memory once: thread t holds quads t, 64 + t and 128 + t
//   (768 / 64 = 12 floats, three quads), sums them, and writes y from the same registers after the exchange.
//   Columns past 768 are not held (a fourth slot would cost registers at the real shape): they are summed in the
//   first pass and read again for the output.

namespace {

enum : int {
    THREADS = 256,
    ROW_THREADS = 64,                         // two warps per row
    ROWS_PER_BLOCK = THREADS / ROW_THREADS,   // 4
    SLOT = 4 * ROW_THREADS,                   // 256 columns per slot
    SLOTS = 3,
    HELD = SLOTS * SLOT,                      // 768 columns held in registers
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_2warp_row_registers(const float* __restrict__ x, const float* __restrict__ weight,
                              const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    __shared__ float partial[ROWS_PER_BLOCK][2][2];  // [row of the block][warp of the row][sum, sum of squares]

    const int slot_row = threadIdx.x / ROW_THREADS;  // which of the block's four rows
    const int t = threadIdx.x % ROW_THREADS;         // thread within the row's pair of warps
    const int half = t / 32;                         // which warp of the pair
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * ROWS_PER_BLOCK + slot_row;
    // The last block may hold rows past the end. Their warps load nothing but still reach the barrier (a
    // __syncthreads that some threads of the block skip is undefined), and return after it.
    const bool live = row < rows;

    const float* xr = x + (long long)row * cols;  // dereferenced only when live
    float* yr = y + (long long)row * cols;

    // Quads are 16-byte aligned at every row start only when cols % 4 == 0 (and the tensors themselves are).
    const bool vec = (cols % 4 == 0) && aligned16(x) && aligned16(y) && aligned16(weight) && aligned16(bias);

    // The sums are taken of d = x - x[r][0]. The variance is shift-invariant; a constant row then gives exactly
    // d = 0, var = 0 and y = bias, and since the shifted mean is of the order of the spread, the single-pass
    // sumsq/cols - mean^2 does not cancel catastrophically when |mean| >> std.
    const float shift = live ? xr[0] : 0.f;

    float d[SLOTS][4];  // this thread's columns c0 + j of the row, c0 = s * 256 + 4 * t
    float sum = 0.f, sumsq = 0.f;
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
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
    // Columns past the held 768 (none at the real shape), summed here and read again for the output. The loops
    // stay rolled: unrolled, their hoisted loads raise the register count of the whole kernel for a cold path.
    if (live) {
        if (vec) {
#pragma unroll 1
            for (int c = HELD + 4 * t; c < cols; c += SLOT) {
                const float4 xv = *reinterpret_cast<const float4*>(xr + c);
                const float d0 = xv.x - shift, d1 = xv.y - shift, d2 = xv.z - shift, d3 = xv.w - shift;
                sum += (d0 + d1) + (d2 + d3);
                sumsq = fmaf(d0, d0, fmaf(d1, d1, fmaf(d2, d2, fmaf(d3, d3, sumsq))));
            }
        } else {
#pragma unroll 1
            for (int c = HELD + t; c < cols; c += ROW_THREADS) {
                const float dc = xr[c] - shift;
                sum += dc;
                sumsq = fmaf(dc, dc, sumsq);
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
        partial[slot_row][half][0] = sum;
        partial[slot_row][half][1] = sumsq;
    }
    __syncthreads();  // the only barrier: partial is written once and never reused
    if (!live) return;
    sum = partial[slot_row][0][0] + partial[slot_row][1][0];  // same order in both warps: the row gets one mean
    sumsq = partial[slot_row][0][1] + partial[slot_row][1][1];

    const float mean = sum / cols;  // mean of the shifted values
    const float var = fmaxf(sumsq / cols - mean * mean, 0.f);
    const float rstd = rsqrtf(var + eps);  // approximate rsqrt: ~1e-7 relative error, far inside 1e-4

    // weight and bias are read only here, so they do not hold registers across the reduction (occupancy).
#pragma unroll
    for (int s = 0; s < SLOTS; ++s) {
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
    if (vec) {
#pragma unroll 1
        for (int c = HELD + 4 * t; c < cols; c += SLOT) {
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
        for (int c = HELD + t; c < cols; c += ROW_THREADS) {
            yr[c] = fmaf(((xr[c] - shift) - mean) * rstd, weight[c], bias[c]);
        }
    }
}
