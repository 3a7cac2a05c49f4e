// layernorm_warp_two_rows — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 16), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols.
//
// Design for sm_90: layernorm_warp_row_six_quads with two rows a warp. Both rows' loads (twelve 128-bit quads a
//   lane at 768 columns) are issued before either row is reduced, so while a warp reduces and writes its first
//   row the second is already arriving: the load, reduce and store phases of an SM overlap instead of running
//   as one burst each. Rows of up to 768 columns are held in registers; wider rows, and widths that are not
//   a multiple of 4, stream from global memory (L2) in three passes.

namespace {

enum : int {
    WARPS = 8,      // 256 threads, 16 rows a block
    QUADS = 6,      // per lane and row: 6 x 4 x 32 = 768 columns held in registers
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

__device__ __forceinline__ void load_row(float4 (&v)[QUADS], const float* xr, int quads, int lane, bool live)
{
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + 32 * i;
        v[i] = live && q < quads ? __ldg(reinterpret_cast<const float4*>(xr) + q) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
}

__device__ __forceinline__ void normalize_row(const float4 (&v)[QUADS], const float* __restrict__ weight,
                                              const float* __restrict__ bias, float* yr, int quads, int lane,
                                              float inv_cols, float eps)
{
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
    const float mean = warp_sum(sum) * inv_cols;
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        if (lane + 32 * i < quads) {
            const float a = v[i].x - mean, b = v[i].y - mean, c = v[i].z - mean, d = v[i].w - mean;
            sq += (a * a + b * b) + (c * c + d * d);
        }
    }
    const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + 32 * i;
        if (q < quads) {
            const float4 w = __ldg(reinterpret_cast<const float4*>(weight) + q);
            const float4 b = __ldg(reinterpret_cast<const float4*>(bias) + q);
            float4 o;
            o.x = fmaf((v[i].x - mean) * rstd, w.x, b.x);
            o.y = fmaf((v[i].y - mean) * rstd, w.y, b.y);
            o.z = fmaf((v[i].z - mean) * rstd, w.z, b.z);
            o.w = fmaf((v[i].w - mean) * rstd, w.w, b.w);
            reinterpret_cast<float4*>(yr)[q] = o;
        }
    }
}

__device__ void stream_row(const float* xr, const float* __restrict__ weight, const float* __restrict__ bias,
                           float* yr, int cols, int lane, float inv_cols, float eps)
{
    float sum = 0.f;
    for (int c = lane; c < cols; c += 32) sum += xr[c];
    const float mean = warp_sum(sum) * inv_cols;
    float sq = 0.f;
    for (int c = lane; c < cols; c += 32) sq += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
    for (int c = lane; c < cols; c += 32) yr[c] = fmaf((xr[c] - mean) * rstd, weight[c], bias[c]);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
layernorm_warp_two_rows(const float* __restrict__ x, const float* __restrict__ weight,
                        const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    const int lane = threadIdx.x % 32;
    const int first = (blockIdx.x * WARPS + threadIdx.x / 32) * 2;
    if (first >= rows) return;  // whole warps only: no shuffle below misses a lane
    const bool second = first + 1 < rows;
    const float inv_cols = 1.f / cols;
    const float* x0 = x + (long long)first * cols;
    float* y0 = y + (long long)first * cols;

    if ((cols & 3) == 0 && cols <= 4 * 32 * QUADS && aligned16(x, y, weight, bias)) {
        const int quads = cols / 4;
        float4 a[QUADS], b[QUADS];
        load_row(a, x0, quads, lane, true);
        load_row(b, x0 + cols, quads, lane, second);
        normalize_row(a, weight, bias, y0, quads, lane, inv_cols, eps);
        if (second) normalize_row(b, weight, bias, y0 + cols, quads, lane, inv_cols, eps);
        return;
    }
    stream_row(x0, weight, bias, y0, cols, lane, inv_cols, eps);
    if (second) stream_row(x0 + cols, weight, bias, y0 + cols, cols, lane, inv_cols, eps);
}
