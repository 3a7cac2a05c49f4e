// triangle_smem_tile32x16's contraction on CUDA cores (its file says the design): a block owns 32 i x 16 j for 8
// channels, staged through two shared buffers over k steps of 8. In a header so that a routed cubin can take it
// for the sizes where it leads (triangle_by_size).
#pragma once
#include "triangle_runs.cuh"

namespace triangle_tile {

enum : int {
    TI = 32, TJ = 16, CC = 8, BK = 8,
    THREADS = 256,
    A_K = TI * CC + 8,  // floats per k in the shared a tile
    B_K = TJ * CC + 8,
};

struct Tiles {
    float a[2][BK * A_K];
    float b[2][BK * B_K];
};

// The staged 8-channel runs of one k step: a 32 x 8 x 8 and b 16 x 8 x 8, as 2 + 1 quads a thread.
struct Stage {
    float4 a[2], b;
};

using triangle::load4;

// Quad f of a tile: f % 2 is the half of the 8 channels, (f / 2) % 8 the k, f / 16 the row.
__device__ __forceinline__ void fetch(Stage& s, const float* a, const float* b, int n, int channels, int i0,
                                      int j0, int c0, int k0, bool fast)
{
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int f = threadIdx.x + THREADS * r;
        s.a[r] = load4(a, i0 + f / 16, k0 + (f / 2) % 8, c0 + (f % 2) * 4, n, channels, fast);
    }
    const int f = threadIdx.x;
    s.b = load4(b, j0 + f / 16, k0 + (f / 2) % 8, c0 + (f % 2) * 4, n, channels, fast);
}

__device__ __forceinline__ void store(const Stage& s, float* as, float* bs)
{
#pragma unroll
    for (int r = 0; r < 2; ++r) {
        const int f = threadIdx.x + THREADS * r;
        *reinterpret_cast<float4*>(as + ((f / 2) % 8) * A_K + (f / 16) * CC + (f % 2) * 4) = s.a[r];
    }
    const int f = threadIdx.x;
    *reinterpret_cast<float4*>(bs + ((f / 2) % 8) * B_K + (f / 16) * CC + (f % 2) * 4) = s.b;
}

// The contraction of the block's 32 i x 16 j x 8 channels (the launch as triangle_smem_tile32x16's).
__device__ __forceinline__ void contract(const float* __restrict__ a, const float* __restrict__ b,
                                         float* __restrict__ out, int n, int channels)
{
    __shared__ __align__(16) Tiles tiles;

    const int j0 = blockIdx.x * TJ, i0 = blockIdx.y * TI, c0 = blockIdx.z * CC;
    const int c = threadIdx.x % 8;               // this thread's channel within the block's 8
    const int ti = (threadIdx.x / 8) % 8;        // rows ti, ti + 8, ti + 16, ti + 24 of the block's 32
    const int tj = threadIdx.x / 64;             // columns tj, tj + 4, tj + 8, tj + 12 of the block's 16

    using u64 = unsigned long long;
    // Every quad of this block in range and 16-byte aligned: the whole block takes the float4 path.
    const bool fast = ((reinterpret_cast<u64>(a) | reinterpret_cast<u64>(b)) & 15ull) == 0 && channels % 8 == 0 &&
                      i0 + TI <= n && j0 + TJ <= n;

    float acc[4][4] = {};
    Stage stage;
    const int steps = (n + BK - 1) / BK;
    fetch(stage, a, b, n, channels, i0, j0, c0, 0, fast && BK <= n);
    store(stage, tiles.a[0], tiles.b[0]);
    __syncthreads();

    for (int s = 0; s < steps; ++s) {
        const int cur = s & 1;
        if (s + 1 < steps) {
            const int k0 = (s + 1) * BK;
            fetch(stage, a, b, n, channels, i0, j0, c0, k0, fast && k0 + BK <= n);
        }
        const float* as = tiles.a[cur] + ti * CC + c;
        const float* bs = tiles.b[cur] + tj * CC + c;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float av[4], bv[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) av[u] = as[k * A_K + 8 * u * CC];
#pragma unroll
            for (int v = 0; v < 4; ++v) bv[v] = bs[k * B_K + 4 * v * CC];
#pragma unroll
            for (int u = 0; u < 4; ++u)
#pragma unroll
                for (int v = 0; v < 4; ++v) acc[u][v] = fmaf(av[u], bv[v], acc[u][v]);
        }
        if (s + 1 < steps) store(stage, tiles.a[cur ^ 1], tiles.b[cur ^ 1]);
        __syncthreads();
    }

    const int ch = c0 + c;
    if (ch >= channels) return;
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) {
            const int i = i0 + ti + 8 * u, j = j0 + tj + 4 * v;
            if (i < n && j < n) out[((long long)i * n + j) * channels + ch] = acc[u][v];
        }
}

}  // namespace triangle_tile

// Launch: grid (ceil(n / 16), ceil(n / 32), ceil(channels / 8)), block (256, 1, 1); arguments (a, b, out, n,
// channels).
#define TRIANGLE_TILE_ENTRY(NAME)                                                                                  \
    extern "C" __global__ void __launch_bounds__(triangle_tile::THREADS)                                          \
        NAME(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int n, int channels) \
    {                                                                                                              \
        triangle_tile::contract(a, b, out, n, channels);                                                           \
    }
