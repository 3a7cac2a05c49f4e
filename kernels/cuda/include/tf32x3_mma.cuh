// The 64 x 64 mma.sync family of h200-001: C = A B in FP32 from tensor cores, each operand split as x = hi + lo
// (hi a TF32 value) and each product taken as three TF32 products, lo*hi + hi*lo + hi*hi (3xTF32). One mainloop;
// what the variants change are its policies:
//   Storage      SplitOnLoad<Split>: the tiles are FP32 in shared memory, split as each warp reads a fragment
//                (K steps of 32); SplitOnStore: each element split once, as the tile is stored, into (hi, lo)
//                pairs (K steps of 16).
//   Split        how hi is rounded (RoundCvt: cvt.rna for hi and lo; Truncate: hi masked; RoundInt: half a TF32
//                ulp added, then masked).
//   THREADS      128 (four warps of 32 x 32) or 256 (eight warps of 32 x 16, WARP_N = 16).
//   INTERLEAVED  the three products of one tile issued together, or term by term across the warp's tiles.
//   BLOCKED      each K step's products summed from zero and then added in FP32 (the tensor core truncates its
//                FP32 accumulation, so a chain through it as long as K drifts), or accumulated straight through.
// The loads: a block whose tile lies inside A and B and is 16-byte aligned takes 128-bit loads, any other block
// element-wise guarded ones; the next K tile is loaded to registers while the current one is multiplied.
#pragma once

namespace tf32x3 {

enum : int { BM = 64, BN = 64 };

__device__ __forceinline__ unsigned cvt_rna(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

struct RoundCvt {
    static __device__ __forceinline__ uint2 split(float x)
    {
        const unsigned hi = cvt_rna(x);
        return make_uint2(hi, cvt_rna(x - __uint_as_float(hi)));
    }
};

struct Truncate {  // two integer operations and a subtraction; lo keeps x's sign
    static __device__ __forceinline__ uint2 split(float x)
    {
        const unsigned hi = __float_as_uint(x) & 0xffffe000u;
        return make_uint2(hi, __float_as_uint(x - __uint_as_float(hi)));
    }
};

struct RoundInt {  // cvt.rna's rounding in two integer operations: |lo| at most half a TF32 ulp
    static __device__ __forceinline__ uint2 split(float x)
    {
        const unsigned hi = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
        return make_uint2(hi, __float_as_uint(x - __uint_as_float(hi)));
    }
};

template <class Split>
struct SplitOnLoad {
    enum : int {
        BK = 32,
        A_STRIDE = BK + 4,  // As[row][k]: fragment reads (row g, col t) hit bank (4g + t) % 32, all distinct
        B_STRIDE = BN + 8,  // Bs[k][col]: fragment reads (row t, col g) hit bank (8t + g) % 32, all distinct
    };
    using Word = float;
    static __device__ __forceinline__ void put(float* at, float4 v) { *reinterpret_cast<float4*>(at) = v; }
    static __device__ __forceinline__ uint2 get(const float* at) { return Split::split(*at); }
};

struct SplitOnStore {
    enum : int {
        BK = 16,
        A_STRIDE = BK + 4,  // As[row][k] pairs: a half-warp reads (g, t), g, t < 4: (20g + t) % 16 all distinct
        B_STRIDE = BN + 4,  // Bs[k][col] pairs: a half-warp reads (t, g): (68t + g) % 16 all distinct
    };
    using Word = uint2;
    static __device__ __forceinline__ void put(uint2* at, float4 v)  // four (hi, lo) pairs: two 128-bit stores
    {
        const uint2 p0 = RoundInt::split(v.x), p1 = RoundInt::split(v.y), p2 = RoundInt::split(v.z),
                    p3 = RoundInt::split(v.w);
        reinterpret_cast<uint4*>(at)[0] = make_uint4(p0.x, p0.y, p1.x, p1.y);
        reinterpret_cast<uint4*>(at)[1] = make_uint4(p2.x, p2.y, p3.x, p3.y);
    }
    static __device__ __forceinline__ uint2 get(const uint2* at) { return *at; }
};

__device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ __forceinline__ float4 load4(const float* p, long long row, int col, int rows, int cols, long long ld,
                                        bool fast)
{
    if (fast) return __ldg(reinterpret_cast<const float4*>(p + row * ld + col));
    float v[4];
#pragma unroll
    for (int e = 0; e < 4; ++e) v[e] = (row < rows && col + e < cols) ? p[row * ld + col + e] : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

// One K tile of A (64 x BK) and B (BK x 64) in registers, and where each thread's quads go.
template <int THREADS, int BK>
struct Stage {
    enum : int {
        A_QUADS = BK / 4, A_ROWS = THREADS / A_QUADS, A_PASSES = BM / A_ROWS,  // A: rows t/A_QUADS + A_ROWS i
        B_QUADS = BN / 4, B_ROWS = THREADS / B_QUADS, B_PASSES = BK / B_ROWS,  // B: k rows t/16 + B_ROWS i
    };
    float4 a[A_PASSES], b[B_PASSES];

    __device__ __forceinline__ void fetch(const float* a_, const float* b_, int m, int n, int k, int row0, int col0,
                                          int k0, bool fast)
    {
        const int t = threadIdx.x;
#pragma unroll
        for (int i = 0; i < A_PASSES; ++i)
            a[i] = load4(a_, row0 + t / A_QUADS + A_ROWS * i, k0 + (t % A_QUADS) * 4, m, k, k, fast);
#pragma unroll
        for (int i = 0; i < B_PASSES; ++i)
            b[i] = load4(b_, k0 + t / B_QUADS + B_ROWS * i, col0 + (t % B_QUADS) * 4, k, n, n, fast);
    }

    template <class Storage>
    __device__ __forceinline__ void store(typename Storage::Word* as, typename Storage::Word* bs) const
    {
        const int t = threadIdx.x;
#pragma unroll
        for (int i = 0; i < A_PASSES; ++i)
            Storage::put(as + (t / A_QUADS + A_ROWS * i) * Storage::A_STRIDE + (t % A_QUADS) * 4, a[i]);
#pragma unroll
        for (int i = 0; i < B_PASSES; ++i)
            Storage::put(bs + (t / B_QUADS + B_ROWS * i) * Storage::B_STRIDE + (t % B_QUADS) * 4, b[i]);
    }
};

// The three products of one K slice of 8 into d: for each of the warp's 2 x JN mma tiles.
template <int JN, bool INTERLEAVED>
__device__ __forceinline__ void products(float (&d)[2][JN][4], const unsigned (&ahi)[2][4],
                                         const unsigned (&alo)[2][4], const unsigned (&bhi)[JN][2],
                                         const unsigned (&blo)[JN][2])
{
    if constexpr (INTERLEAVED) {
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < JN; ++j) {
                mma(d[i][j], alo[i], bhi[j]);
                mma(d[i][j], ahi[i], blo[j]);
                mma(d[i][j], ahi[i], bhi[j]);
            }
    } else {
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < JN; ++j) mma(d[i][j], alo[i], bhi[j]);
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < JN; ++j) mma(d[i][j], ahi[i], blo[j]);
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < JN; ++j) mma(d[i][j], ahi[i], bhi[j]);
    }
}

template <int THREADS, int WARP_N, class Storage, bool INTERLEAVED, bool BLOCKED>
__device__ __forceinline__ void matmul(const float* __restrict__ a, const float* __restrict__ b,
                                       float* __restrict__ c, int m, int n, int k)
{
    constexpr int BK = Storage::BK, A_STRIDE = Storage::A_STRIDE, B_STRIDE = Storage::B_STRIDE;
    constexpr int ACROSS = BN / WARP_N, JN = WARP_N / 8;  // warps across the block tile; mma tiles across a warp
    using Word = typename Storage::Word;
    struct Tiles {
        Word a[2][BM * A_STRIDE];
        Word b[2][BK * B_STRIDE];
    };
    __shared__ __align__(16) Tiles tiles;

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;  // the mma fragment's group and thread-in-group
    const int wm = (warp / ACROSS) * 32, wn = (warp % ACROSS) * WARP_N;  // this warp's 32 x WARP_N
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;

    using u64 = unsigned long long;
    const bool aligned = ((reinterpret_cast<u64>(a) | reinterpret_cast<u64>(b)) & 15ull) == 0 && k % 4 == 0 &&
                         n % 4 == 0;
    // Every load of this block in range and 16-byte aligned: the whole block takes the float4 path.
    const bool full_mn = aligned && row0 + BM <= m && col0 + BN <= n;

    float acc[2][JN][4] = {};
    Stage<THREADS, BK> stage;
    const int steps = (k + BK - 1) / BK;
    stage.fetch(a, b, m, n, k, row0, col0, 0, full_mn && BK <= k);
    stage.template store<Storage>(tiles.a[0], tiles.b[0]);
    __syncthreads();

    for (int s = 0; s < steps; ++s) {
        const int cur = s & 1;
        if (s + 1 < steps) {
            const int k0 = (s + 1) * BK;
            stage.fetch(a, b, m, n, k, row0, col0, k0, full_mn && k0 + BK <= k);
        }
        const Word* as = tiles.a[cur];
        const Word* bs = tiles.b[cur];
        float part[2][JN][4] = {};  // BLOCKED: this K step's sums, a chain of 3 BK / 8 mma through the tensor core
        auto& into = BLOCKED ? part : acc;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned ahi[2][4], alo[2][4], bhi[JN][2], blo[JN][2];
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const Word* ap = as + (wm + 16 * i + g) * A_STRIDE + kk + t;
                const uint2 x0 = Storage::get(ap), x1 = Storage::get(ap + 8 * A_STRIDE), x2 = Storage::get(ap + 4),
                            x3 = Storage::get(ap + 8 * A_STRIDE + 4);
                ahi[i][0] = x0.x, alo[i][0] = x0.y;  // (g,     t)
                ahi[i][1] = x1.x, alo[i][1] = x1.y;  // (g + 8, t)
                ahi[i][2] = x2.x, alo[i][2] = x2.y;  // (g,     t + 4)
                ahi[i][3] = x3.x, alo[i][3] = x3.y;  // (g + 8, t + 4)
            }
#pragma unroll
            for (int j = 0; j < JN; ++j) {
                const Word* bp = bs + (kk + t) * B_STRIDE + wn + 8 * j + g;
                const uint2 y0 = Storage::get(bp), y1 = Storage::get(bp + 4 * B_STRIDE);
                bhi[j][0] = y0.x, blo[j][0] = y0.y;  // (k = t,     col g)
                bhi[j][1] = y1.x, blo[j][1] = y1.y;  // (k = t + 4, col g)
            }
            products<JN, INTERLEAVED>(into, ahi, alo, bhi, blo);
        }
        if constexpr (BLOCKED) {
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < JN; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[i][j][e] += part[i][j][e];
        }
        if (s + 1 < steps) stage.template store<Storage>(tiles.a[cur ^ 1], tiles.b[cur ^ 1]);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < JN; ++j) {
            const int r = row0 + wm + 16 * i + g, col = col0 + wn + 8 * j + 2 * t;
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // rows g and g + 8 of the mma tile
                const int rr = r + 8 * h;
                if (rr < m && col < n) c[(long long)rr * n + col] = acc[i][j][2 * h];
                if (rr < m && col + 1 < n) c[(long long)rr * n + col + 1] = acc[i][j][2 * h + 1];
            }
        }
}

}  // namespace tf32x3
