// layernorm_warp_row_six_quads — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (ceil(rows / 8), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols.
//
// Design for sm_90: layernorm_warp_row_registers sized to the seed's rows. One warp per row, and rows of up to
//   768 columns (six 128-bit quads a lane) are held in registers with all their loads in flight at once; the
//   mean, then the variance about it, by shuffles; no shared memory, no barrier. Holding six quads instead of
//   eight brings ptxas to 52 registers with no spill (a 64-register cap on the eight-quad kernel spilled), so
//   four blocks (32 warps) share an SM and the seed's 4096 rows run in one wave. Wider rows, and widths that
//   are not a multiple of 4, stream the row from global memory (L2) in three passes.

namespace {

enum : int {
    WARPS = 8,      // rows per 256-thread block
    QUADS = 6,      // per lane: 6 x 4 x 32 = 768 columns held in registers
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

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
layernorm_warp_row_six_quads(const float* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only: no shuffle below misses a lane
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    const float inv_cols = 1.f / cols;

    if ((cols & 3) == 0 && cols <= 4 * 32 * QUADS && aligned16(x, y, weight, bias)) {
        const int quads = cols / 4;
        float4 v[QUADS];
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < QUADS; ++i) {
            const int q = lane + 32 * i;
            v[i] = q < quads ? __ldg(reinterpret_cast<const float4*>(xr) + q) : make_float4(0.f, 0.f, 0.f, 0.f);
            sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
        }
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
        return;
    }

    float sum = 0.f;
    for (int c = lane; c < cols; c += 32) sum += xr[c];
    const float mean = warp_sum(sum) * inv_cols;
    float sq = 0.f;
    for (int c = lane; c < cols; c += 32) sq += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
    for (int c = lane; c < cols; c += 32) yr[c] = fmaf((xr[c] - mean) * rstd, weight[c], bias[c]);
}
