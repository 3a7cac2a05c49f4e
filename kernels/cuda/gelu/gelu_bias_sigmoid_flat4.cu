// gelu_bias_sigmoid_flat4 — bias add followed by GELU in its tanh approximation, FP32, row-major, contiguous.
//
//   v = x[r][c] + bias[c];  y[r][c] = v / (1 + exp(-2u)),  u = sqrt(2/pi) * (v + 0.044715 * v^3)
//
// Launch: grid (ceil(rows * cols / 1024), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (x, bias, y, rows, cols).
//
// Design: gelu_bias_sigmoid_vec4 for any width. x and y are one contiguous array whatever cols is, so every
//   thread moves its four elements of them as one float4 (16-byte aligned: the array's start is, and each thread
//   starts on a multiple of 4), and only the bias, which may cross a row's end inside the four, is read
//   element by element: four scalar loads from a vector that stays in L1. vec4 took the scalar path for x and y
//   too whenever cols % 4 != 0. With cols % 4 == 0 the bias is one float4, as in vec4. The last numel % 4
//   elements, and arrays whose start is not 16-byte aligned, go one at a time.

#include "gelu_sigmoid.cuh"  // gelu_tanh and gelu_quad, the family's arithmetic

extern "C" __global__ void __launch_bounds__(256)
gelu_bias_sigmoid_flat4(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ y,
                        int rows, int cols)
{
    const long long numel = (long long)rows * cols;
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (first >= numel) return;
    const bool aligned = ((reinterpret_cast<unsigned long long>(x) | reinterpret_cast<unsigned long long>(y)) & 15) == 0;
    if (aligned && first + 4 <= numel) {
        const int col = (int)(first % cols);
        const float4 xv = __ldg(reinterpret_cast<const float4*>(x + first));
        float4 bv;
        if ((cols & 3) == 0) {  // the four inside one row, the bias 16-byte aligned there too
            bv = __ldg(reinterpret_cast<const float4*>(bias + col));
        } else {  // the bias column wraps to 0 at a row's end, possibly inside the four
            int c = col;
            bv.x = __ldg(bias + c);
            c = c + 1 == cols ? 0 : c + 1;
            bv.y = __ldg(bias + c);
            c = c + 1 == cols ? 0 : c + 1;
            bv.z = __ldg(bias + c);
            c = c + 1 == cols ? 0 : c + 1;
            bv.w = __ldg(bias + c);
        }
        *reinterpret_cast<float4*>(y + first) = gelu_quad(xv, bv);
        return;
    }
    for (long long i = first; i < first + 4 && i < numel; ++i)
        y[i] = gelu_tanh(x[i] + bias[i % cols]);
}
