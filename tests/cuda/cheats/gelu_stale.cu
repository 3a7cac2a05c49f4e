// A cheat, for the adversarial suite (tests/test_gpu.py): computes GELU only on its first launch and leaves
// the output as it was on every later one, as a kernel that "caches" its result would. Contract of
// gelu_bias_tanh: grid (ceil(rows * cols / 256)), block 256, arguments (x, bias, y, rows, cols).
__device__ unsigned int blocks_seen;

extern "C" __global__ void gelu_bias_tanh(const float* x, const float* bias, float* y, int rows, int cols)
{
    __shared__ unsigned int seen;
    if (threadIdx.x == 0) seen = atomicAdd(&blocks_seen, 1u);
    __syncthreads();
    if (seen >= gridDim.x) return;  // a block of a later launch: nothing is written
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)rows * cols) return;
    const float v = x[idx] + bias[idx % cols];
    y[idx] = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}
