// gelu_bias_sigmoid_vec8 — bias add followed by GELU in its tanh approximation, FP32, row-major, contiguous.
//
//   v = x[r][c] + bias[c]
//   y[r][c] = 0.5 * v * (1 + tanh(u)),  u = sqrt(2/pi) * (v + 0.044715 * v^3)
//           = v / (1 + exp(-2u))                       (0.5 * (1 + tanh(u)) is the logistic of 2u)
//
// Launch: grid (ceil(rows * cols / 2048), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (x, bias, y, rows, cols).
//
// Design: gelu_bias_sigmoid_vec4 with eight elements a thread, two float4 a block width apart (both loads of
//   x issued before either is used), so half the blocks and twice the bytes in flight a thread. Widths that are
//   not a multiple of 4 go one element at a time, as there.

#include "gelu_sigmoid.cuh"  // gelu_tanh and gelu_quad, the family's arithmetic

extern "C" __global__ void __launch_bounds__(256)
gelu_bias_sigmoid_vec8(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ y,
                       int rows, int cols)
{
    const long long numel = (long long)rows * cols;
    const long long first = (long long)blockIdx.x * 2048 + threadIdx.x * 4, second = first + 1024;
    if (first >= numel) return;

    if ((cols & 3) == 0) {  // uniform over the launch: whole float4s, each inside one row
        const bool two = second < numel;
        const float4 x0 = __ldg(reinterpret_cast<const float4*>(x + first));
        const float4 x1 = two ? __ldg(reinterpret_cast<const float4*>(x + second)) : x0;
        const float4 b0 = __ldg(reinterpret_cast<const float4*>(bias + first % cols));
        *reinterpret_cast<float4*>(y + first) = gelu_quad(x0, b0);
        if (two) {
            const float4 b1 = __ldg(reinterpret_cast<const float4*>(bias + second % cols));
            *reinterpret_cast<float4*>(y + second) = gelu_quad(x1, b1);
        }
        return;
    }
    for (long long i = first; i < first + 4 && i < numel; ++i) y[i] = gelu_tanh(x[i] + bias[i % cols]);
    for (long long i = second; i < second + 4 && i < numel; ++i) y[i] = gelu_tanh(x[i] + bias[i % cols]);
}
