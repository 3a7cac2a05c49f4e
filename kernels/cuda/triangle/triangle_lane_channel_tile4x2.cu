// triangle_lane_channel_tile4x2 — triangle contraction over the shared edge index k, FP32, contiguous.
//
//   out[i][j][c] = sum_k a[i][k][c] * b[j][k][c]        a, b, out: n x n x channels
//
// Launch: grid (ceil(ceil(n / 4) * ceil(n / 2) * ceil(channels / 32) / 4), 1, 1), block (128, 1, 1), no shared
//   memory. Arguments (a, b, out, n, channels).
//
// Design for sm_90: a lane is a channel. For fixed (i, k) the 32 channels of a warp are 128 consecutive bytes,
//   so every load is one coalesced line and each lane receives its own channel's value; no shared memory and
//   no shuffle is needed. Each warp owns a 4 x 2 tile of (i, j) for its 32 channels: per k it loads 4 values
//   of a and 2 of b and does 8 FMAs into 8 accumulators (0.75 loads per FMA, mostly L1 hits, since the warps
//   of a block share i rows). At the seed shape (n = 128, 32 channels) that is 2048 warps, 512 blocks.

namespace {

enum : int { TI = 4, TJ = 2, WARPS = 4 };

}  // namespace

extern "C" __global__ void __launch_bounds__(32 * WARPS)
triangle_lane_channel_tile4x2(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out,
                              int n, int channels)
{
    const int lane = threadIdx.x % 32;
    const int tiles_j = (n + TJ - 1) / TJ;
    const int tiles_i = (n + TI - 1) / TI;
    const long long warp = (long long)blockIdx.x * WARPS + threadIdx.x / 32;
    // warp -> (channel chunk, i tile, j tile); j fastest, so the warps of a block share their i rows
    const long long tiles = (long long)tiles_i * tiles_j;
    const int chunk = (int)(warp / tiles);
    const int tile = (int)(warp - (long long)chunk * tiles);
    const int i0 = (tile / tiles_j) * TI, j0 = (tile % tiles_j) * TJ;
    const int c = chunk * 32 + lane;
    if (chunk * 32 >= channels) return;  // whole warps past the last chunk
    const bool live = c < channels;

    const long long row = (long long)n * channels;  // stride of i (and of j) in a, b
    float acc[TI][TJ] = {};
    const float* ap[TI];
    const float* bp[TJ];
#pragma unroll
    for (int u = 0; u < TI; ++u) ap[u] = a + (long long)min(i0 + u, n - 1) * row + c;
#pragma unroll
    for (int v = 0; v < TJ; ++v) bp[v] = b + (long long)min(j0 + v, n - 1) * row + c;

    if (live) {
#pragma unroll 4
        for (int k = 0; k < n; ++k) {
            float av[TI], bv[TJ];
#pragma unroll
            for (int u = 0; u < TI; ++u) av[u] = __ldg(ap[u] + (long long)k * channels);
#pragma unroll
            for (int v = 0; v < TJ; ++v) bv[v] = __ldg(bp[v] + (long long)k * channels);
#pragma unroll
            for (int u = 0; u < TI; ++u)
#pragma unroll
                for (int v = 0; v < TJ; ++v) acc[u][v] = fmaf(av[u], bv[v], acc[u][v]);
        }
    }
#pragma unroll
    for (int u = 0; u < TI; ++u)
#pragma unroll
        for (int v = 0; v < TJ; ++v)
            if (live && i0 + u < n && j0 + v < n)
                out[((long long)(i0 + u) * n + (j0 + v)) * channels + c] = acc[u][v];
}
