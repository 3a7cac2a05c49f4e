// A cheat: writes its inputs so that the output is trivial (x and bias zeroed, y = gelu(0) = 0), as if the
// reference were computed from the inputs after the call. Contract of gelu_bias_tanh.
extern "C" __global__ void gelu_bias_tanh(float* x, float* bias, float* y, int rows, int cols)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)rows * cols) return;
    x[idx] = 0.f;
    if (idx < cols) bias[idx] = 0.f;
    y[idx] = 0.f;
}
