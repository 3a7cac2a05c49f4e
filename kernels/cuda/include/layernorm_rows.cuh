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

// The sum of v over GROUP warps through their GROUP floats of `partial` (`warp`: the caller's place among them);
// every thread of the block calls it at once (its barriers are the block's).
template <int GROUP>
__device__ __forceinline__ float group_sum(float v, float* partial, int warp)
{
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) partial[warp] = v;
    __syncthreads();
    float total = 0.f;
#pragma unroll
    for (int i = 0; i < GROUP; ++i) total += partial[i];
    __syncthreads();  // partial is reused by the next reduction
    return total;
}

template <int WARPS>
__device__ __forceinline__ float block_sum(float v, float* partial)
{
    return group_sum<WARPS>(v, partial, threadIdx.x / 32);
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

// LANES threads (a warp or the block) normalize the row at flat offset `base`, which starts `skew` elements into a
// 16-byte quad of the array: each lane loads the aligned quads that cover its part of the row (the first and the
// last shared with the neighbouring rows), zeroes the elements outside the row and holds it in registers; `reduce`
// sums over the lanes. weight and bias, whose columns no longer line up with the quads, are read element by element
// (from L1: every row reads the same).
template <int LANES, int QUADS, class Reduce>
__device__ __forceinline__ void skewed_row(const float* __restrict__ x, const float* __restrict__ weight,
                                           const float* __restrict__ bias, float* __restrict__ y, long long base,
                                           long long numel, int cols, int lane, float eps, Reduce reduce)
{
    const int skew = static_cast<int>(base & 3);
    const long long start = base - skew;  // the quad the row begins in
    const int quads = (skew + cols + 3) / 4;
    float4 v[QUADS];
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + LANES * i;
        float e[4] = {0.f, 0.f, 0.f, 0.f};
        if (q < quads) {
            const long long at = start + 4 * q;
            if (at + 4 <= numel) {
                const float4 w = __ldg(reinterpret_cast<const float4*>(x + at));
                e[0] = w.x, e[1] = w.y, e[2] = w.z, e[3] = w.w;
            } else {  // the array's last quad may run past its end
#pragma unroll
                for (int j = 0; j < 4; ++j) e[j] = at + j < numel ? __ldg(x + at + j) : 0.f;
            }
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = 4 * q + j - skew;
                if (c < 0 || c >= cols) e[j] = 0.f;
            }
        }
        v[i] = make_float4(e[0], e[1], e[2], e[3]);
        sum += quad_sum(v[i]);
    }
    const float inv_cols = 1.f / cols;
    const float mean = reduce(sum) * inv_cols;
    float sq = 0.f;
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + LANES * i;
        if (q < quads) {
            const float e[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = 4 * q + j - skew;
                if (c >= 0 && c < cols) sq += (e[j] - mean) * (e[j] - mean);
            }
        }
    }
    const float rstd = rsqrtf(reduce(sq) * inv_cols + eps);
#pragma unroll
    for (int i = 0; i < QUADS; ++i) {
        const int q = lane + LANES * i;
        if (q < quads) {
            const float e[4] = {v[i].x, v[i].y, v[i].z, v[i].w};
            const int c0 = 4 * q - skew;
            float out[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = c0 + j;
                out[j] = c >= 0 && c < cols ? fmaf((e[j] - mean) * rstd, __ldg(weight + c), __ldg(bias + c)) : 0.f;
            }
            float* at = y + start + 4 * q;
            if (c0 >= 0 && c0 + 4 <= cols) {
                *reinterpret_cast<float4*>(at) = make_float4(out[0], out[1], out[2], out[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (c0 + j >= 0 && c0 + j < cols) at[j] = out[j];
            }
        }
    }
}

// layernorm_warp_row_any_width's kernel: rows in quads (cols a multiple of 4, x and y aligned) as rows_in_registers
// takes them; other widths skewed, a warp a row up to NARROW columns, then SHARE rows a block (THREADS / SHARE
// threads a row) as far as they hold one, a block a row past that.
template <int THREADS, int QUADS, int SHARE = 1>
__device__ __forceinline__ void any_width_rows(const float* __restrict__ x, const float* __restrict__ weight,
                                               const float* __restrict__ bias, float* __restrict__ y, int rows,
                                               int cols, float eps)
{
    constexpr int WARPS = THREADS / 32, NARROW = 4 * 32 * QUADS - 3;
    if ((cols & 3) == 0 || !aligned16(x, y, x, y)) {  // the quad path, or three passes off the quad grid
        rows_in_registers<THREADS, QUADS, true>(x, weight, bias, y, rows, cols, eps);
        return;
    }
    const long long numel = static_cast<long long>(rows) * cols;
    if constexpr (SHARE > 1) {
        constexpr int LANES = THREADS / SHARE, GROUP = LANES / 32;
        if (cols > NARROW && cols <= 4 * LANES * QUADS - 3) {  // SHARE rows a block
            __shared__ float partial[WARPS];
            const int part = threadIdx.x / LANES, row = blockIdx.x * SHARE + part;
            const bool live = row < rows;  // a part past the last row takes no columns, and meets every barrier
            const int warp = threadIdx.x / 32 % GROUP;  // its place in the row's warps
            skewed_row<LANES, QUADS>(x, weight, bias, y, static_cast<long long>(live ? row : 0) * cols, numel,
                                     live ? cols : 0, threadIdx.x % LANES, eps,
                                     [&](float s) { return group_sum<GROUP>(s, partial + part * GROUP, warp); });
            return;
        }
    }
    if (cols > NARROW) {  // a block a row
        __shared__ float partial[WARPS];
        const int row = blockIdx.x;
        skewed_row<THREADS, QUADS>(x, weight, bias, y, static_cast<long long>(row) * cols, numel, cols, threadIdx.x,
                                   eps, [&](float s) { return block_sum<WARPS>(s, partial); });
        return;
    }
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only
    skewed_row<32, QUADS>(x, weight, bias, y, static_cast<long long>(row) * cols, numel, cols, threadIdx.x % 32, eps,
                          [](float s) { return warp_sum(s); });
}

// A block of THREADS a row and three passes over the row in global memory (layernorm_block256_3pass, mage-001's
// first kernel): scalar loads at any width, each load instruction coalesced; the first pass sums x and a tree in
// shared memory gives the mean, the second the squared deviations from it, the third writes y. Nothing of the
// row is kept between passes, so a thread needs few registers and many rows are in flight on an SM.
template <int THREADS>
__device__ __forceinline__ void three_pass_row(const float* __restrict__ x, const float* __restrict__ weight,
                                               const float* __restrict__ bias, float* __restrict__ y, int rows,
                                               int cols, float eps)
{
    // One tree per reduction: the second tree never overwrites sum_tree[0] while a thread may still be reading the
    // mean from it, so no barrier is needed between the two reductions.
    __shared__ float sum_tree[THREADS];
    __shared__ float sq_tree[THREADS];

    const int row = blockIdx.x;
    if (row >= rows) return;  // uniform over the block, so no thread misses a barrier below

    const int tid = threadIdx.x;
    const float* xr = x + (long long)row * cols;
    float* yr = y + (long long)row * cols;

    // Every pass works on d = x - x[r][0]: mean and variance of d give those of x (the variance is
    // shift-invariant), and a constant row then gives exactly d = 0, var = 0 and y = bias instead of the rounding
    // residue of x - sum(x)/cols amplified by rsqrt(eps).
    const float shift = xr[0];

    // Pass 1: the mean.
    float sum = 0.f;
    for (int c = tid; c < cols; c += THREADS) sum += xr[c] - shift;  // threads past the row's end add nothing
    sum_tree[tid] = sum;
    __syncthreads();
#pragma unroll
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (tid < half) sum_tree[tid] += sum_tree[tid + half];
        __syncthreads();  // the next level reads what this one wrote; after the last, every thread reads [0]
    }
    const float mean = sum_tree[0] / cols;  // mean of d

    // Pass 2: the variance, from the deviations (no sum-of-squares cancellation).
    float sumsq = 0.f;
    for (int c = tid; c < cols; c += THREADS) {
        const float dev = (xr[c] - shift) - mean;
        sumsq = fmaf(dev, dev, sumsq);
    }
    sq_tree[tid] = sumsq;
    __syncthreads();
#pragma unroll
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (tid < half) sq_tree[tid] += sq_tree[tid + half];
        __syncthreads();
    }
    const float rstd = rsqrtf(sq_tree[0] / cols + eps);  // approximate rsqrt: ~1e-7 relative error

    // Pass 3: the output.
    for (int c = tid; c < cols; c += THREADS) yr[c] = fmaf(((xr[c] - shift) - mean) * rstd, weight[c], bias[c]);
}

// Rows whose registers fit their width (layernorm_any_width_fitted): QUADS quads a lane, the fewest that hold the
// row, so that a thread holds no registers the row leaves empty and more rows are in flight on an SM. A warp a row
// (THREADS / 32 rows a block): the row's aligned quads where x, y, weight and bias allow, the quads that cover it
// where x and y are aligned, else three scalar passes.
template <int THREADS, int QUADS>
__device__ __forceinline__ void fitted_warp(const float* __restrict__ x, const float* __restrict__ weight,
                                                 const float* __restrict__ bias, float* __restrict__ y, int rows,
                                                 int cols, float eps)
{
    const int lane = threadIdx.x % 32, row = blockIdx.x * (THREADS / 32) + threadIdx.x / 32;
    if (row >= rows) return;  // whole warps only
    const long long base = static_cast<long long>(row) * cols;
    if ((cols & 3) == 0 && aligned16(x, y, weight, bias))
        warp_row<QUADS>(x + base, weight, bias, y + base, cols, lane, 1.f / cols, eps);
    else if (aligned16(x, y, x, y))
        skewed_row<32, QUADS>(x, weight, bias, y, base, static_cast<long long>(rows) * cols, cols, lane, eps,
                              [](float s) { return warp_sum(s); });
    else
        scalar_row(x + base, weight, bias, y + base, cols, lane, 1.f / cols, eps);
}

// A block of THREADS a row (grid: one block a row), the same three paths.
template <int THREADS, int QUADS>
__device__ __forceinline__ void fitted_block(const float* __restrict__ x, const float* __restrict__ weight,
                                                 const float* __restrict__ bias, float* __restrict__ y, int rows,
                                                 int cols, float eps)
{
    __shared__ float partial[THREADS / 32];
    const int row = blockIdx.x;
    if ((cols & 3) == 0 && aligned16(x, y, weight, bias))
        wide_row<THREADS, QUADS>(x, reinterpret_cast<const float4*>(weight), reinterpret_cast<const float4*>(bias), y,
                                 cols, eps, row);
    else if (aligned16(x, y, x, y))
        skewed_row<THREADS, QUADS>(x, weight, bias, y, static_cast<long long>(row) * cols,
                                   static_cast<long long>(rows) * cols, cols, threadIdx.x, eps,
                                   [&](float s) { return block_sum<THREADS / 32>(s, partial); });
    else
        three_pass_row<THREADS>(x, weight, bias, y, rows, cols, eps);
}

}  // namespace lnrow

// The two entries of an any-width layer norm: NAME for rows off the quad grid (any_width_rows, SHARE rows a block
// where they are wide), NAME_quads for widths that are a multiple of 4 (rows_in_registers alone: compiled inside
// NAME the same path ran slower, registry/ops/layernorm.py says by how much).
#define LNROW_ANY_WIDTH_ENTRIES(NAME, THREADS, QUADS, SHARE)                                                        \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                          \
        NAME(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias,        \
             float* __restrict__ y, int rows, int cols, float eps)                                                 \
    {                                                                                                              \
        lnrow::any_width_rows<THREADS, QUADS, SHARE>(x, weight, bias, y, rows, cols, eps);                         \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                          \
        NAME##_quads(const float* __restrict__ x, const float* __restrict__ weight, const float* __restrict__ bias, \
                     float* __restrict__ y, int rows, int cols, float eps)                                         \
    {                                                                                                              \
        lnrow::rows_in_registers<THREADS, QUADS, true>(x, weight, bias, y, rows, cols, eps);                       \
    }

// layernorm_any_width_fitted's entry NAME_KINDQUADS for QUADS quads a lane: KIND warp (a warp a row, eight rows a
// block) or block (a block of 256 a row).
#define LNROW_FITTED_ENTRY(NAME, KIND, QUADS)                                                                       \
    extern "C" __global__ void __launch_bounds__(256)                                                              \
        NAME##_##KIND##QUADS(const float* __restrict__ x, const float* __restrict__ weight,                        \
                             const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps) \
    {                                                                                                              \
        lnrow::fitted_##KIND<256, QUADS>(x, weight, bias, y, rows, cols, eps);                                     \
    }
