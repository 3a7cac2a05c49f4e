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

namespace {

enum : int {
    THREADS = 256,
    WARPS = THREADS / 32,
    QUADS = 6,            // narrow path: 6 x 4 x 32 = 768 columns a warp
    WIDE_QUADS = 8,       // wide path: 8 x 4 x 256 = 8192 columns a block
};

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

__device__ __forceinline__ void load_row(float4 (&v)[QUADS], const float* x, int row, int rows, int quads,
                                         int lane)
{
    const float4* xr = reinterpret_cast<const float4*>(x) + (long long)row * quads;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + 32 * i;
        v[i] = (row < rows && q < quads) ? __ldg(xr + q) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
}

// One warp, rows warp0, warp0 + stride, ...: the next row's quads are loaded before this row is reduced.
__device__ void narrow_rows(const float* x, const float4* w4, const float4* b4, float* y, int rows, int cols,
                            float eps, int warp0, int stride, int lane)
{
    const int quads = cols / 4;
    const float inv_cols = 1.f / cols;
    float4 cur[QUADS], next[QUADS];
    load_row(cur, x, warp0, rows, quads, lane);
    for (int row = warp0; row < rows; row += stride) {
        load_row(next, x, row + stride, rows, quads, lane);
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < QUADS; ++i) sum += quad_sum(cur[i]);  // zero past the row's end
        const float mean = warp_sum(sum) * inv_cols;
        float sq = 0.f;
#pragma unroll
        for (int i = 0; i < QUADS; ++i)
            if (lane + 32 * i < quads) sq += quad_sq(cur[i], mean);
        const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
        float4* yr = reinterpret_cast<float4*>(y) + (long long)row * quads;
#pragma unroll
        for (int i = 0; i < QUADS; ++i) {
            const int q = lane + 32 * i;
            if (q < quads) yr[q] = normalized(cur[i], mean, rstd, __ldg(w4 + q), __ldg(b4 + q));
        }
#pragma unroll
        for (int i = 0; i < QUADS; ++i) cur[i] = next[i];
    }
}

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

// One block, one row of up to 8192 columns held in registers, 4 x WIDE_QUADS floats a thread.
__device__ void wide_row(const float* x, const float4* w4, const float4* b4, float* y, int cols, float eps,
                         int row)
{
    __shared__ float partial[WARPS];
    const int quads = cols / 4;
    const float inv_cols = 1.f / cols;
    const float4* xr = reinterpret_cast<const float4*>(x) + (long long)row * quads;
    float4 v[WIDE_QUADS];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < WIDE_QUADS; ++i) {
        const int q = threadIdx.x + THREADS * i;
        v[i] = q < quads ? __ldg(xr + q) : make_float4(0.f, 0.f, 0.f, 0.f);
        sum += quad_sum(v[i]);
    }
    const float mean = block_sum(sum, partial) * inv_cols;
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < WIDE_QUADS; ++i)
        if (threadIdx.x + THREADS * i < quads) sq += quad_sq(v[i], mean);
    const float rstd = rsqrtf(block_sum(sq, partial) * inv_cols + eps);
    float4* yr = reinterpret_cast<float4*>(y) + (long long)row * quads;
#pragma unroll
    for (int i = 0; i < WIDE_QUADS; ++i) {
        const int q = threadIdx.x + THREADS * i;
        if (q < quads) yr[q] = normalized(v[i], mean, rstd, __ldg(w4 + q), __ldg(b4 + q));
    }
}

// Widths not a multiple of 4 (rows not 16-byte aligned): three passes over global memory, a warp a row.
__device__ void any_row(const float* x, const float* weight, const float* bias, float* y, int cols, float eps,
                        int row, int lane)
{
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    const float inv_cols = 1.f / cols;
    float sum = 0.f;
    for (int c = lane; c < cols; c += 32) sum += xr[c];
    const float mean = warp_sum(sum) * inv_cols;
    float sq = 0.f;
    for (int c = lane; c < cols; c += 32) sq += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
    for (int c = lane; c < cols; c += 32) yr[c] = fmaf((xr[c] - mean) * rstd, weight[c], bias[c]);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_warp_row_pipelined(const float* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    const int lane = threadIdx.x % 32;
    const bool quads = (cols & 3) == 0 && aligned16(x, y, weight, bias);
    const float4* w4 = reinterpret_cast<const float4*>(weight);
    const float4* b4 = reinterpret_cast<const float4*>(bias);
    if (quads && cols > 4 * 32 * QUADS) {
        wide_row(x, w4, b4, y, cols, eps, blockIdx.x);  // the grid is one block a row
        return;
    }
    const int warp0 = blockIdx.x * WARPS + threadIdx.x / 32, stride = gridDim.x * WARPS;
    if (quads) {
        narrow_rows(x, w4, b4, y, rows, cols, eps, warp0, stride, lane);
        return;
    }
    for (int row = warp0; row < rows; row += stride) any_row(x, weight, bias, y, cols, eps, row, lane);
}
