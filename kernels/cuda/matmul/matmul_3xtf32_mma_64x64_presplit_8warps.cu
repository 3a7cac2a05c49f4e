// matmul_3xtf32_mma_64x64_presplit_8warps — C = A B, FP32 in and out, row-major: A is m x k, B is k x n, C is m x n.
//
// Launch: grid (ceil(n / 64), ceil(m / 64), 1), block (256, 1, 1), 37888 B static shared.
//   Arguments (a, b, c, m, n, k).
//
// Design for sm_90: matmul_3xtf32_mma_64x64_presplit (mma.sync m16n8k8 TF32 with the 3xTF32 split, each element
//   split once into (hi, lo) pairs as the tile is stored to shared memory, K steps of 16 whose 6 mma are summed
//   from zero and then added in FP32) with eight warps of 32 x 16 instead of four of 32 x 32.
//   - 8warps, blocked's eight-warp form, lost to blocked: every warp split what it read, so more warps brought
//     more splits (issue slots 53%, tensor pipe 45%). Split once at the store, more warps are more mma in
//     flight: four warps a scheduler at 1024^3 in place of two.
//   - The cost: a fragment load per mma (from 0.67), 64-bit and conflict-free as in presplit.
namespace {

enum : int {
    BM = 64, BN = 64, BK = 16,
    THREADS = 256,
    A_STRIDE = BK + 4,  // As[row][k] pairs: a half-warp reads (g, t), g, t < 4: (20g + t) % 16 all distinct
    B_STRIDE = BN + 4,  // Bs[k][col] pairs: a half-warp reads (t, g): (68t + g) % 16 all distinct
};

struct Tiles {
    uint2 a[2][BM * A_STRIDE];
    uint2 b[2][BK * B_STRIDE];
};

__device__ __forceinline__ uint2 split(float x)
{
    const unsigned hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;  // round to nearest TF32
    return make_uint2(hi, __float_as_uint(x - __uint_as_float(hi)));
}

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// One K tile of A (64 x 16) and B (16 x 64) in registers: one quad each per thread.
struct Stage {
    float4 a, b;
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
    s.a = load4(a, row0 + t / 4, k0 + (t % 4) * 4, m, k, k, fast);     // A: row t/4, k quad t%4
    s.b = load4(b, k0 + t / 16, col0 + (t % 16) * 4, k, n, n, fast);  // B: k row t/16, column quad t%16
}

__device__ __forceinline__ void store_split(uint2* at, float4 v)  // four (hi, lo) pairs: two 128-bit stores
{
    const uint2 p0 = split(v.x), p1 = split(v.y), p2 = split(v.z), p3 = split(v.w);
    reinterpret_cast<uint4*>(at)[0] = make_uint4(p0.x, p0.y, p1.x, p1.y);
    reinterpret_cast<uint4*>(at)[1] = make_uint4(p2.x, p2.y, p3.x, p3.y);
}

__device__ __forceinline__ void store(const Stage& s, uint2* as, uint2* bs)
{
    const int t = threadIdx.x;
    store_split(as + (t / 4) * A_STRIDE + (t % 4) * 4, s.a);
    store_split(bs + (t / 16) * B_STRIDE + (t % 16) * 4, s.b);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS, 2)
matmul_3xtf32_mma_64x64_presplit_8warps(const float* __restrict__ a, const float* __restrict__ b,
                                        float* __restrict__ c, int m, int n, int k)
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
        const uint2* as = tiles.a[cur];
        const uint2* bs = tiles.b[cur];
        float part[2][2][4] = {};  // this K step's sums: a chain of 6 mma through the tensor core
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned ahi[2][4], alo[2][4], bhi[2][2], blo[2][2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const uint2* ap = as + (wm + 16 * i + g) * A_STRIDE + kk + t;
                const uint2 x0 = ap[0], x1 = ap[8 * A_STRIDE], x2 = ap[4], x3 = ap[8 * A_STRIDE + 4];
                ahi[i][0] = x0.x, alo[i][0] = x0.y;  // (g,     t)
                ahi[i][1] = x1.x, alo[i][1] = x1.y;  // (g + 8, t)
                ahi[i][2] = x2.x, alo[i][2] = x2.y;  // (g,     t + 4)
                ahi[i][3] = x3.x, alo[i][3] = x3.y;  // (g + 8, t + 4)
            }
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                const uint2* bp = bs + (kk + t) * B_STRIDE + wn + 8 * j + g;
                const uint2 y0 = bp[0], y1 = bp[4 * B_STRIDE];
                bhi[j][0] = y0.x, blo[j][0] = y0.y;  // (k = t,     col g)
                bhi[j][1] = y1.x, blo[j][1] = y1.y;  // (k = t + 4, col g)
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
