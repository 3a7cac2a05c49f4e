// A cheat: the result rounded to half precision (eleven significant bits), below the FP32 contract
// (rtol = atol = 1e-4): the fast path a kernel may take unannounced. Contract of gelu_bias_tanh.
__device__ __forceinline__ float through_half(float v)
{
    unsigned short h;
    float back;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    asm("cvt.f32.f16 %0, %1;" : "=f"(back) : "h"(h));
    return back;
}

extern "C" __global__ void gelu_bias_tanh(const float* x, const float* bias, float* y, int rows, int cols)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= (long long)rows * cols) return;
    const float v = through_half(x[idx] + bias[idx % cols]);
    y[idx] = through_half(0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v))));
}
