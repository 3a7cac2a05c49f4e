// triangle_thread_per_output — triangle contraction over the shared edge index k, FP32, contiguous.
//
//   out[i][j][c] = sum_k a[i][k][c] * b[j][k][c]        a, b, out: n x n x channels
//
// Launch: grid (ceil(n * n * channels / 256), 1, 1), block (256, 1, 1), no shared memory.
//   Arguments (a, b, out, n, channels).
//
// Design: one thread per output element, flat index t = (i * n + j) * channels + c. Consecutive threads walk
//   the channels, so at every step k a warp reads consecutive floats of a and of b (coalesced).

extern "C" __global__ void __launch_bounds__(256)
triangle_thread_per_output(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                           int n, int channels)
{
    const long long numel = (long long)n * n * channels;
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= numel) return;

    // (i, j, c) of this output; 32-bit division when the tensor allows it (64-bit division is a long sequence).
    int i, j, c;
    if (numel <= 0x7fffffffLL) {
        const unsigned u = (unsigned)t;
        const unsigned ij = u / (unsigned)channels;
        c = (int)(u - ij * (unsigned)channels);
        i = (int)(ij / (unsigned)n);
        j = (int)(ij - (unsigned)i * (unsigned)n);
    } else {
        const long long ij = t / channels;
        c = (int)(t - ij * channels);
        i = (int)(ij / n);
        j = (int)(ij - (long long)i * n);
    }

    const long long row_stride = (long long)n * channels;  // one step of i (or j) in a, b
    const float* ai = a + i * row_stride + c;              // a[i][0][c]
    const float* bj = b + j * row_stride + c;              // b[j][0][c]
    float acc = 0.f;
    for (int k = 0; k < n; ++k) acc = fmaf(ai[(long long)k * channels], bj[(long long)k * channels], acc);
    out[t] = acc;
}
