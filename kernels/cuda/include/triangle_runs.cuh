// The triangle contractions of h200-001 read a and b (n x n x channels, channels innermost) as runs of 8 channels
// of one (row, k): this is the quad of such a run, 128-bit where the whole tile is in range and aligned, else
// element-wise with zero fill past n and past the channels.
#pragma once

namespace triangle {

__device__ __forceinline__ float4 load4(const float* p, int row, int k, int c, int n, int channels, bool fast)
{
    const long long at = ((long long)row * n + k) * channels + c;
    if (fast) return __ldg(reinterpret_cast<const float4*>(p + at));
    float v[4];
    const bool in = row < n && k < n;
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = (in && c + e < channels) ? p[at + e] : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

}  // namespace triangle
