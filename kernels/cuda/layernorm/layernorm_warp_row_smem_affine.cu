// layernorm_warp_row_smem_affine — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: block (256, 1, 1), 8 KB static shared; arguments (x, weight, bias, y, rows, cols, eps).
//   cols <= 1024, or not a multiple of 4: grid (ceil(rows / 8), 1, 1), a warp a row.
//   1024 < cols <= 8192, a multiple of 4: grid (rows, 1, 1), a block a row.
//
// Design: layernorm_warp_row_registers, with weight and bias staged in shared memory by the block while the
//   rows' loads are in flight. In that kernel's SASS the weight and bias loads come after both shuffle
//   reductions and the rsqrt, just before the stores. With the seed's 4096 rows in one wave, every warp of an
//   SM then waits on the same first miss of those lines before it can store. Here they are read from shared
//   memory after the reductions, and the block's one barrier waits on loads issued beside x's. (A version that
//   prefetched the lines into L1 instead was not kept: ptxas moved the prefetches after the first reduction.)
//   72 registers: 3 blocks an SM, 1.3 waves at the seed, as the 79-register first version of the registers
//   kernel that measured 5.79 us.

namespace {

enum : int {
    THREADS = 256,
    WARPS = 8,            // rows per 256-thread block
    MAX_QUADS = 8,        // per lane: 8 x 4 x 32 = 1024 columns; wide path: 8 x 4 x 256 = 8192 a block
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

// One block, one row of up to 8192 columns held in registers, 4 x MAX_QUADS floats a thread.
__device__ void wide_row(const float* x, const float4* w4, const float4* b4, float* y, int cols, float eps,
                         int row)
{
    __shared__ float partial[WARPS];
    const int quads = cols / 4;
    const float inv_cols = 1.f / cols;
    const float4* xr = reinterpret_cast<const float4*>(x) + (long long)row * quads;
    float4 v[MAX_QUADS];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < MAX_QUADS; ++i) {
        const int q = threadIdx.x + THREADS * i;
        v[i] = q < quads ? __ldg(xr + q) : make_float4(0.f, 0.f, 0.f, 0.f);
        sum += quad_sum(v[i]);
    }
    const float mean = block_sum(sum, partial) * inv_cols;
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < MAX_QUADS; ++i)
        if (threadIdx.x + THREADS * i < quads) sq += quad_sq(v[i], mean);
    const float rstd = rsqrtf(block_sum(sq, partial) * inv_cols + eps);
    float4* yr = reinterpret_cast<float4*>(y) + (long long)row * quads;
#pragma unroll
    for (int i = 0; i < MAX_QUADS; ++i) {
        const int q = threadIdx.x + THREADS * i;
        if (q < quads) yr[q] = normalized(v[i], mean, rstd, __ldg(w4 + q), __ldg(b4 + q));
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
layernorm_warp_row_smem_affine(const float* __restrict__ x, const float* __restrict__ weight,
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
{
    __shared__ float4 affine[2][MAX_QUADS * 32];  // the row's weight and bias quads, up to 1024 floats each

    const bool quads = (cols & 3) == 0 && aligned16(x, y, weight, bias);
    if (quads && cols > 4 * 32 * MAX_QUADS) {
        wide_row(x, reinterpret_cast<const float4*>(weight), reinterpret_cast<const float4*>(bias), y, cols, eps,
                 blockIdx.x);  // the grid is one block a row
        return;
    }
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    const bool live = row < rows;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;
    const float inv_cols = 1.f / cols;

    if (quads) {  // uniform over the block: every thread reaches the barrier
        const int quads = cols / 4;
        float4 v[MAX_QUADS];
        float sum = 0.f;
#pragma unroll
        for (int i = 0; i < MAX_QUADS; ++i) {
            const int q = lane + 32 * i;
            v[i] = live && q < quads ? __ldg(reinterpret_cast<const float4*>(xr) + q)
                                     : make_float4(0.f, 0.f, 0.f, 0.f);
            sum += (v[i].x + v[i].y) + (v[i].z + v[i].w);
        }
        for (int q = threadIdx.x; q < quads; q += 32 * WARPS) {
            affine[0][q] = __ldg(reinterpret_cast<const float4*>(weight) + q);
            affine[1][q] = __ldg(reinterpret_cast<const float4*>(bias) + q);
        }
        __syncthreads();
        if (!live) return;  // whole warps only: no shuffle below misses a lane
        const float mean = warp_sum(sum) * inv_cols;
        float sq = 0.f;
#pragma unroll
        for (int i = 0; i < MAX_QUADS; ++i) {
            if (lane + 32 * i < quads) {
                const float a = v[i].x - mean, b = v[i].y - mean, c = v[i].z - mean, d = v[i].w - mean;
                sq += (a * a + b * b) + (c * c + d * d);
            }
        }
        const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
#pragma unroll
        for (int i = 0; i < MAX_QUADS; ++i) {
            const int q = lane + 32 * i;
            if (q < quads) {
                const float4 w = affine[0][q], b = affine[1][q];
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

    // Widths that are not a multiple of 4 (rare; their rows are not 16-byte aligned) read x from global memory in
    // each of three passes rather than hold the row, which keeps this path from costing the quad path registers.
    if (!live) return;
    float sum = 0.f;
    for (int c = lane; c < cols; c += 32) sum += xr[c];
    const float mean = warp_sum(sum) * inv_cols;
    float sq = 0.f;
    for (int c = lane; c < cols; c += 32) sq += (xr[c] - mean) * (xr[c] - mean);
    const float rstd = rsqrtf(warp_sum(sq) * inv_cols + eps);
    for (int c = lane; c < cols; c += 32) yr[c] = fmaf((xr[c] - mean) * rstd, weight[c], bias[c]);
}
