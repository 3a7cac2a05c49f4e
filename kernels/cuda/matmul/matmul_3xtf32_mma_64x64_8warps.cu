// matmul_3xtf32_mma_64x64_8warps — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (256, 1, 1), 36864 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: matmul_3xtf32_mma_64x64_blocked (mma.sync m16n8k8 TF32, 3xTF32 split with hi rounded by
//   integer operations, each K step's mma summed from zero and added in FP32, 64 x 64 block tile, K step 32, two
//   shared buffers fed through registers) with eight warps of 32 x 16 instead of four of 32 x 32.
//   Why: at 1024^3 the grid is 256 blocks, so four warps a block leave about two warps on each of an SM's four
//   schedulers, too few to cover shared-memory and mma latency. Eight warps give four a scheduler, at the cost
//   of 12 fragment loads per 12 mma instead of 16 per 24.
namespace {

enum : int {
    BM = 64, BN = 64, BK = 32,
    THREADS = 256,
    A_STRIDE = BK + 4,  // As[row][k]: fragment reads (row g, col t) hit bank (4g + t) % 32, all distinct
    B_STRIDE = BN + 8,  // Bs[k][col]: fragment reads (row t, col g) hit bank (8t + g) % 32, all distinct
};

struct Tiles {
    float a[2][BM * A_STRIDE];
    float b[2][BK * B_STRIDE];
};

__device__ __forceinline__ void split(float x, unsigned& hi, unsigned& lo)
{
    hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    lo = __float_as_uint(x - __uint_as_float(hi));
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One K tile of A (64 x 32) and B (32 x 64) in registers: four quads each per thread.
struct Stage {
    float4 a[2], b[2];
};

__device__ __forceinline__ float4 load4(const float* p, long long row, int col, int rows, int cols, long long ld,
                                        bool fast)
{
    if (fast) return __ldg(reinterpret_cast<const float4*>(p + row * ld + col));
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = (row < rows && col + e < cols) ? p[row * ld + col + e] : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

__device__ __forceinline__ void fetch(Stage& s, const float* a, const float* b, int m, int n, int k, int row0,
                                      int col0, int k0, bool fast)
{
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 2; ++i)  // A: rows t/8 + 32i, k quad t%8
        s.a[i] = load4(a, row0 + t / 8 + 32 * i, k0 + (t % 8) * 4, m, k, k, fast);
#pragma unroll
    for (int i = 0; i < 2; ++i)  // B: k rows t/16 + 16i, column quad t%16
        s.b[i] = load4(b, k0 + t / 16 + 16 * i, col0 + (t % 16) * 4, k, n, n, fast);
}

__device__ __forceinline__ void store(const Stage& s, float* as, float* bs)
{
    const int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 2; ++i)
        *reinterpret_cast<float4*>(as + (t / 8 + 32 * i) * A_STRIDE + (t % 8) * 4) = s.a[i];
#pragma unroll
    for (int i = 0; i < 2; ++i)
        *reinterpret_cast<float4*>(bs + (t / 16 + 16 * i) * B_STRIDE + (t % 16) * 4) = s.b[i];
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_3xtf32_mma_64x64_8warps(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int m,
                        int n, int k)
{
    __shared__ __align__(16) Tiles tiles;

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;                 // the mma fragment's group and thread-in-group
    const int wm = (warp / 4) * 32, wn = (warp % 4) * 16;  // this warp's 32 x 16 inside the block tile
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    using u64 = unsigned long long;
    const bool aligned = ((reinterpret_cast<u64>(a) | reinterpret_cast<u64>(b)) & 15ull) == 0 && k % 4 == 0 &&
                         n % 4 == 0;
    // Every load of this block in range and 16-byte aligned: the whole block takes the float4 path.
    const bool full_mn = aligned && row0 + BM <= m && col0 + BN <= n;

    float acc[2][2][4] = {};
    Stage stage;
    const int steps = (k + BK - 1) / BK;
    fetch(stage, a, b, m, n, k, row0, col0, 0, full_mn && BK <= k);
    store(stage, tiles.a[0], tiles.b[0]);
    __syncthreads();

    for (int s = 0; s < steps; ++s) {
        const int cur = s & 1;
        if (s + 1 < steps) {
            const int k0 = (s + 1) * BK;
            fetch(stage, a, b, m, n, k, row0, col0, k0, full_mn && k0 + BK <= k);
        }
        const float* as = tiles.a[cur];
        const float* bs = tiles.b[cur];
        float part[2][2][4] = {};  // this K step's sums: a chain of 12 mma through the tensor core
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned ahi[2][4], alo[2][4], bhi[2][2], blo[2][2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const float* ap = as + (wm + 16 * i + g) * A_STRIDE + kk + t;
                split(ap[0], ahi[i][0], alo[i][0]);                 // (g,     t)
                split(ap[8 * A_STRIDE], ahi[i][1], alo[i][1]);      // (g + 8, t)
                split(ap[4], ahi[i][2], alo[i][2]);                 // (g,     t + 4)
                split(ap[8 * A_STRIDE + 4], ahi[i][3], alo[i][3]);  // (g + 8, t + 4)
            }
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const float* bp = bs + (kk + t) * B_STRIDE + wn + 8 * j + g;
                split(bp[0], bhi[j][0], blo[j][0]);                 // (k = t,     col g)
                split(bp[4 * B_STRIDE], bhi[j][1], blo[j][1]);      // (k = t + 4, col g)
            }
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) mma(part[i][j], alo[i], bhi[j]);
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) mma(part[i][j], ahi[i], blo[j]);
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) mma(part[i][j], ahi[i], bhi[j]);
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
        if (s + 1 < steps) store(stage, tiles.a[cur ^ 1], tiles.b[cur ^ 1]);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int r = row0 + wm + 16 * i + g, col = col0 + wn + 8 * j + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // rows g and g + 8 of the mma tile
                const int rr = r + 8 * h;
                if (rr < m && col < n) c[(long long)rr * n + col] = acc[i][j][2 * h];
                if (rr < m && col + 1 < n) c[(long long)rr * n + col + 1] = acc[i][j][2 * h + 1];
            }
        }
}
