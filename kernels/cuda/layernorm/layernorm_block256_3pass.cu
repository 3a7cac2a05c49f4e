// layernorm_block256_3pass — layer normalization over the last dimension, FP32, row-major, contiguous.
//
//   mean = sum_c x[r][c] / cols          var = sum_c (x[r][c] - mean)^2 / cols   (population variance)
//   y[r][c] = (x[r][c] - mean) * rsqrt(var + eps) * weight[c] + bias[c]
//
// Launch: grid (rows, 1, 1), block (256, 1, 1), 2048 B static shared, no dynamic shared.
//   Arguments (x, weight, bias, y, rows, cols, eps); any cols >= 1.
//
// Design (mage-001, the first kernel): one block of 256 threads per row and three passes over the row in global
//   memory, scalar loads, the block striding along the row so each load instruction is coalesced: the first pass
//   sums x and a tree reduction in shared memory gives the mean; the second sums the squared deviations from it
//   and a second tree gives the variance; the third writes y. Nothing of the row is kept between passes.

namespace {

enum : int { THREADS = 256 };

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
layernorm_block256_3pass(const float* __restrict__ x, const float* __restrict__ weight,
                         const float* __restrict__ bias, float* __restrict__ y, int rows, int cols, float eps)
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
