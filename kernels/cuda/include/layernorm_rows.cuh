// The warp-a-row layer norms of h200-001: a row held in registers as 128-bit quads, its mean and then the variance
// about that mean from the registers through shuffle reductions, y written from the same registers. What the
// variants change is around these pieces: how many quads a lane holds, how many rows a warp takes and whether the
// next is loaded before this one is reduced, where weight and bias are read from. Rows wider than a warp holds
// are one block each (wide_row); widths that are not a multiple of 4 take three passes over global memory
// (scalar_row), which keeps that path from costing the quad path registers.
#pragma once

namespace lnrow {

__device__ __forceinline__ float warp_sum(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ bool aligned16(const void* a, const void* b, const void* c, const void* d)
{
    using u64 = unsigned long long;
    return ((reinterpret_cast<u64>(a) | reinterpret_cast<u64>(b) | reinterpret_cast<u64>(c) |
             reinterpret_cast<u64>(d)) & 15ull) == 0;
}

__device__ __forceinline__ float quad_sum(float4 v) { return (v.x + v.y) + (v.z + v.w); }

__device__ __forceinline__ float quad_sq(float4 v, float mean)
{
    const float a = v.x - mean, b = v.y - mean, c = v.z - mean, d = v.w - mean;
    return (a * a + b * b) + (c * c + d * d);
}

__device__ __forceinline__ float4 normalized(float4 v, float mean, float rstd, float4 w, float4 b)
{
    return make_float4(fmaf((v.x - mean) * rstd, w.x, b.x), fmaf((v.y - mean) * rstd, w.y, b.y),
                       fmaf((v.z - mean) * rstd, w.z, b.z), fmaf((v.w - mean) * rstd, w.w, b.w));
}

// A lane's quads of one row (lane, lane + 32, ...), zero past the row's end or for a row that is not live; returns
// their sum, taken as they arrive.
template <int QUADS>
__device__ __forceinline__ float load_row(float4 (&v)[QUADS], const float* xr, int quads, int lane, bool live)
{
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + 32 * i;
        v[i] = live && q < quads ? __ldg(reinterpret_cast<const float4*>(xr) + q) : make_float4(0.f, 0.f, 0.f, 0.f);
        sum += quad_sum(v[i]);
    }
    return sum;
}

template <int QUADS>
__device__ __forceinline__ float row_mean(const float4 (&v)[QUADS], float inv_cols)
{
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) sum += quad_sum(v[i]);  // zero past the row's end
    return warp_sum(sum) * inv_cols;
}

template <int QUADS>
__device__ __forceinline__ float row_rstd(const float4 (&v)[QUADS], float mean, int quads, int lane, float inv_cols,
                                          float eps)
{
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i)
        if (lane + 32 * i < quads) sq += quad_sq(v[i], mean);
    return rsqrtf(warp_sum(sq) * inv_cols + eps);
}

// y from the registers; weight and bias from global memory (read-only path) or, SHARED, from a block's copy.
template <int QUADS, bool SHARED = false>
__device__ __forceinline__ void store_row(const float4 (&v)[QUADS], float mean, float rstd, const float4* w4,
                                          const float4* b4, float* yr, int quads, int lane)
{
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + 32 * i;
        if (q < quads) {
            const float4 w = SHARED ? w4[q] : __ldg(w4 + q), b = SHARED ? b4[q] : __ldg(b4 + q);
            reinterpret_cast<float4*>(yr)[q] = normalized(v[i], mean, rstd, w, b);
        }
    }
}

// A row in registers normalized and written: its mean from `sum` (what load_row returned), or summed here.
template <int QUADS>
__device__ __forceinline__ void normalize_row(const float4 (&v)[QUADS], float sum, const float* weight,
                                              const float* bias, float* yr, int quads, int lane, float inv_cols,
                                              float eps)
{
    const float mean = warp_sum(sum) * inv_cols;
    const float rstd = row_rstd(v, mean, quads, lane, inv_cols, eps);
    store_row(v, mean, rstd, reinterpret_cast<const float4*>(weight), reinterpret_cast<const float4*>(bias), yr,
              quads, lane);
}

template <int QUADS>
__device__ __forceinline__ void normalize_row(const float4 (&v)[QUADS], const float* weight, const float* bias,
                                              float* yr, int quads, int lane, float inv_cols, float eps)
{
    const float mean = row_mean(v, inv_cols);
    const float rstd = row_rstd(v, mean, quads, lane, inv_cols, eps);
    store_row(v, mean, rstd, reinterpret_cast<const float4*>(weight), reinterpret_cast<const float4*>(bias), yr,
              quads, lane);
}

// One row of a multiple of 4 columns, up to 4 x 32 x QUADS, by one warp from its registers.
template <int QUADS>
__device__ __forceinline__ void warp_row(const float* xr, const float* weight, const float* bias, float* yr, int cols,
                                         int lane, float inv_cols, float eps)
{
    const int quads = cols / 4;
    float4 v[QUADS];
    const float sum = load_row(v, xr, quads, lane, true);
    normalize_row(v, sum, weight, bias, yr, quads, lane, inv_cols, eps);
}

template <int WARPS>
__device__ __forceinline__ float block_sum(float v, float* partial)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) partial[warp] = v;
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int i = 0; i < WARPS; ++i) total += partial[i];
    __syncthreads();  // partial is reused by the next reduction
    return total;
}

// One block of THREADS, one row of up to 4 x QUADS x THREADS columns held in registers, reduced through shared memory.
template <int THREADS, int QUADS>
__device__ void wide_row(const float* x, const float4* w4, const float4* b4, float* y, int cols, float eps, int row)
{
    __shared__ float partial[THREADS / 32];
    const int quads = cols / 4;
    const float inv_cols = 1.f / cols;
    const float4* xr = reinterpret_cast<const float4*>(x) + (long long)row * quads;
    float4 v[QUADS];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = threadIdx.x + THREADS * i;
        v[i] = q < quads ? __ldg(xr + q) : make_float4(0.f, 0.f, 0.f, 0.f);
        sum += quad_sum(v[i]);
    }
    const float mean = block_sum<THREADS / 32>(sum, partial) * inv_cols;
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i)
        if (threadIdx.x + THREADS * i < quads) sq += quad_sq(v[i], mean);
    const float rstd = rsqrtf(block_sum<THREADS / 32>(sq, partial) * inv_cols + eps);
    float4* yr = reinterpret_cast<float4*>(y) + (long long)row * quads;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = threadIdx.x + THREADS * i;
        if (q < quads) yr[q] = normalized(v[i], mean, rstd, __ldg(w4 + q), __ldg(b4 + q));
    }
}

// Any width, a warp a row: three passes over global memory.
__device__ __forceinline__ void scalar_row(const float* xr, const float* weight, const float* bias, float* yr,
                                           int cols, int lane, float inv_cols, float eps)
{
    float sum = 0.f;
    for (int c = lane; c < cols; c += 32) sum += xr[c];
    const float mean = warp_sum(sum) * inv_cols;
    float sq = 0.f;
    for (int c = lane; c < cols; c += 32) sq += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
    for (int c = lane; c < cols; c += 32) yr[c] = fmaf((xr[c] - mean) * rstd, weight[c], bias[c]);
}

// A kernel of THREADS / 32 warps, a warp a row from its registers up to 4 x 32 x QUADS columns; wider rows, WIDE,
// one block a row (the grid then has one block a row), else three passes, as rows of other widths take.
template <int THREADS, int QUADS, bool WIDE>
__device__ __forceinline__ void rows_in_registers(const float* __restrict__ x, const float* __restrict__ weight,
                                                  const float* __restrict__ bias, float* __restrict__ y, int rows,
                                                  int cols, float eps)
{
    const bool quads = (cols & 3) == 0 && aligned16(x, y, weight, bias);
    if (WIDE && quads && cols > 4 * 32 * QUADS) {
        wide_row<THREADS, QUADS>(x, reinterpret_cast<const float4*>(weight), reinterpret_cast<const float4*>(bias), y,
                                 cols, eps, blockIdx.x);
        return;
    }
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * (THREADS / 32) + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only: no shuffle below misses a lane
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    const float inv_cols = 1.f / cols;
    if (quads && (WIDE || cols <= 4 * 32 * QUADS)) {
        warp_row<QUADS>(xr, weight, bias, yr, cols, lane, inv_cols, eps);
        return;
    }
    scalar_row(xr, weight, bias, yr, cols, lane, inv_cols, eps);
}

}  // namespace lnrow
