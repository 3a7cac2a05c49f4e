// The batched wgmma triangle's layout copies (triangle_3xtf32_wgmma's file says the steps): a and b packed
// channel-major for the batched product, the product's batches unpacked to out[i][j][c]. Grids: pack (ceil(ld /
// 32), rows, ceil(channels / 32)), unpack (ceil(n / 32), n, ceil(channels / 32)); block (256, 1, 1) each.
#pragma once

namespace triangle_pack {

enum : int { TILE = 32, ROWS_A_PASS = 8 };  // a 32 x 32 tile, 256 threads: 8 rows of it a pass

// dst[c][row][q] = src[x][y][c] with (x, y) = (row, q), or (q, row) with swap; zero where row or q >= n. A block
// moves 32 q x 32 channels of one row: read as 32 runs of the channels (128 bytes each at 32 channels), written
// as a run of 32 q a channel, through a padded shared tile.
__device__ __forceinline__ void pack(const float* __restrict__ src, float* __restrict__ dst, int n, int channels,
                                     int rows, int ld, int swap)
{
    __shared__ float tile[TILE][TILE + 1];  // [q][channel]
    const int q0 = blockIdx.x * TILE, row = blockIdx.y, c0 = blockIdx.z * TILE;
    const int lane = threadIdx.x % TILE, pass = threadIdx.x / TILE;
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int q = q0 + t, c = c0 + lane;
        float v = 0.f;
        if (row < n && q < n && c < channels) {
            const long long x = swap ? q : row, y = swap ? row : q;
            v = __ldg(src + (x * n + y) * channels + c);
        }
        tile[t][lane] = v;
    }
    __syncthreads();
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int c = c0 + t, q = q0 + lane;
        if (c < channels && q < ld) dst[(static_cast<long long>(c) * rows + row) * ld + q] = tile[lane][t];
    }
}

// out[i][j][c] = src[c][i][j]: a block moves 32 j x 32 channels of one i, read as a run of 32 j a channel,
// written as 32 runs of the channels.
__device__ __forceinline__ void unpack(const float* __restrict__ src, float* __restrict__ out, int n, int channels)
{
    __shared__ float tile[TILE][TILE + 1];  // [channel][j]
    const int j0 = blockIdx.x * TILE, i = blockIdx.y, c0 = blockIdx.z * TILE;
    const int lane = threadIdx.x % TILE, pass = threadIdx.x / TILE;
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int c = c0 + t, j = j0 + lane;
        if (c < channels && j < n) tile[t][lane] = __ldg(src + (static_cast<long long>(c) * n + i) * n + j);
    }
    __syncthreads();
    for (int t = pass; t < TILE; t += ROWS_A_PASS) {
        const int j = j0 + t, c = c0 + lane;
        if (c < channels && j < n) out[(static_cast<long long>(i) * n + j) * channels + c] = tile[lane][t];
    }
}

}  // namespace triangle_pack

#define TRIANGLE_PACK_ENTRIES(PACK, UNPACK)                                                                        \
    extern "C" __global__ void __launch_bounds__(256) PACK(const float* __restrict__ src, float* __restrict__ dst,  \
                                                            int n, int channels, int rows, int ld, int swap)       \
    {                                                                                                              \
        triangle_pack::pack(src, dst, n, channels, rows, ld, swap);                                                \
    }                                                                                                              \
    extern "C" __global__ void __launch_bounds__(256) UNPACK(const float* __restrict__ src, float* __restrict__ out, \
                                                              int n, int channels)                                 \
    {                                                                                                              \
        triangle_pack::unpack(src, out, n, channels);                                                              \
    }
