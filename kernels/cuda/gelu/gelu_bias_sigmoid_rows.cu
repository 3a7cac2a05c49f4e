// gelu_bias_sigmoid_rows — bias add followed by GELU in its tanh approximation, FP32, row-major, contiguous.
//
//   v = x[r][c] + bias[c]
//   y[r][c] = 0.5 * v * (1 + tanh(u)),  u = sqrt(2/pi) * (v + 0.044715 * v^3)
//           = v / (1 + exp(-2u))                       (0.5 * (1 + tanh(u)) is the logistic of 2u)
//
// Launch: grid (rows, ceil(ceil(cols / 4) / 64), 1), block (64, 1, 1), no shared memory.
//   Arguments (x, bias, y, rows, cols).
//
// Design: gelu_bias_sigmoid_vec4's arithmetic (four elements a thread, tanh as a logistic) on a 2-D grid: a row
//   is blockIdx.x (y would stop at 65535 rows) and a thread's column quad is blockIdx.y * 64 + threadIdx.x, so
//   no thread divides a 64-bit flat index by cols to find its bias column (in vec4's SASS that division and its
//   setup are about a third of a thread's ~110 instructions). exp2 is ex2.approx.ftz directly, without the range fix-up exp2f adds:
//   where 2u log2(e) passes 126 the logistic is 1 (or 0) to FP32 anyway. 64-thread blocks, so the seed's 768
//   columns (192 quads) fill three blocks a row with no idle thread.
//   Widths that are not a multiple of 4 take the same grid, each thread its four columns one at a time.

namespace {

__device__ __forceinline__ float exp2_approx(float x)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ float gelu_tanh(float v)
{
    const float two_k0_log2e = 2.f * 0.7978845608028654f * 1.4426950408889634f;  // 2 sqrt(2/pi) log2(e)
    const float u2 = two_k0_log2e * fmaf(0.044715f * v, v * v, v);               // 2u log2(e)
    return __fdividef(v, 1.f + exp2_approx(-u2));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(64)
gelu_bias_sigmoid_rows(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ y, int rows,
                       int cols)
{
    const int row = blockIdx.x;
    const int col = (blockIdx.y * 64 + threadIdx.x) * 4;
    if (row >= rows || col >= cols) return;
    const long long at = (long long)row * cols + col;

    if ((cols & 3) == 0) {  // uniform over the launch: whole float4s, each inside one row
        const float4 xv = __ldg(reinterpret_cast<const float4*>(x + at));
        const float4 bv = __ldg(reinterpret_cast<const float4*>(bias + col));
        *reinterpret_cast<float4*>(y + at) = make_float4(gelu_tanh(xv.x + bv.x), gelu_tanh(xv.y + bv.y),
                                                         gelu_tanh(xv.z + bv.z), gelu_tanh(xv.w + bv.w));
        return;
    }
    for (int e = 0; e < 4 && col + e < cols; ++e) y[at + e] = gelu_tanh(x[at + e] + bias[col + e]);
}
