// Planted for the sanitizer gate (tests/test_adversarial.py): the bias-added inputs are staged in shared memory
// and each thread computes the element of the thread 32 lanes away, in another warp, with no barrier between the
// writes and the reads. The result is usually right, which is why only racecheck can be trusted to see it: it
// must report the hazard every time, at the smallest shape. Contract of gelu_bias_tanh.
extern "C" __global__ void gelu_bias_tanh(const float* x, const float* bias, float* y, int rows, int cols)
{
    __shared__ float staged[256];
    const long long numel = (long long)rows * cols;
    const long long base = (long long)blockIdx.x * blockDim.x;
    const long long mine = base + threadIdx.x;
    staged[threadIdx.x] = mine < numel ? x[mine] + bias[mine % cols] : 0.f;
    // the missing __syncthreads()
    const unsigned other = threadIdx.x ^ 32u;
    const long long theirs = base + other;
    if (theirs >= numel) return;
    const float v = staged[other];
    y[theirs] = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}
