// The logistic GELU of h200-001's elementwise kernels: gelu(v) with tanh in its tanh approximation written as the
// logistic of 2u, one exp2 (ex2.approx, relative error about 2^-22) and one division instead of tanhf's long
// sequence; its error stays far inside the 1e-4 gate.
//   0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)),  u = sqrt(2/pi) (v + 0.044715 v^3)
#pragma once

__device__ __forceinline__ float gelu_tanh(float v)
{
    const float two_k0_log2e = 2.f * 0.7978845608028654f * 1.4426950408889634f;  // 2 sqrt(2/pi) log2(e)
    const float u2 = two_k0_log2e * fmaf(0.044715f * v, v * v, v);               // 2u log2(e)
    return __fdividef(v, 1.f + exp2f(-u2));
}

// Four elements: gelu(x + bias) of each.
__device__ __forceinline__ float4 gelu_quad(float4 xv, float4 bv)
{
    return make_float4(gelu_tanh(xv.x + bv.x), gelu_tanh(xv.y + bv.y), gelu_tanh(xv.z + bv.z),
                       gelu_tanh(xv.w + bv.w));
}

// The four elements of one row at flat index `first` when cols is a multiple of 4 (and x, bias, y 16-byte
// aligned): one float4 of x, one of bias and one of y.
__device__ __forceinline__ void gelu_bias_quad(const float* __restrict__ x, const float* __restrict__ bias,
                                               float* __restrict__ y, long long first, int cols)
{
    const int col = (int)(first % cols);
    const float4 xv = __ldg(reinterpret_cast<const float4*>(x + first));
    const float4 bv = __ldg(reinterpret_cast<const float4*>(bias + col));
    *reinterpret_cast<float4*>(y + first) = gelu_quad(xv, bv);
}
