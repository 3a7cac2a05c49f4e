// matmul_regtile_64x64_k32 — C = A @ B in FP32, row-major, contiguous.
//
//   c[m][n] = sum_k a[m][k] * b[k][n]        a: M x K, b: K x N, c: M x N
//
// Launch: grid (ceil(N/64), ceil(M/64), 1), block (256, 1, 1), 16384 B static shared, no dynamic shared.
//   Arguments (a, b, c, M, N, K); any M, N, K >= 1 (tails are zero-filled on load and masked on store).
//
// Design (mage-002, the first rewrite): one 64 x 64 tile of C per block, a 4 x 4 sub-tile per thread (16 x 16
//   threads), accumulated in registers. The contraction runs in K steps of 32 through one shared buffer per
//   operand: copy the A and B tiles global -> shared, barrier, multiply-add, barrier. Each value read from
//   shared memory now feeds four multiply-adds instead of one, and the copies are 128-bit (float4) loads
//   wherever the quad is in range and aligned, with a scalar fallback for the rest.

namespace {

// Compile-time tile shape (an enum, so no storage is emitted for it).
enum : int {
    BM = 64,   // rows of C per block
    BN = 64,   // columns of C per block
    BK = 32,   // K step
    THREADS = 256,
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_regtile_64x64_k32(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                         int M, int N, int K)
{
    // Both tiles are kept as they lie in global memory. __align__(16): the copies store whole quads.
    __shared__ __align__(16) float As[BM][BK];  // As[m][k]
    __shared__ __align__(16) float Bs[BK][BN];  // Bs[k][n]

    const int tid = threadIdx.x;
    const int tx = tid % 16;  // this thread's columns of the block tile: 4*tx .. 4*tx+3
    const int ty = tid / 16;  // this thread's rows of the block tile:    4*ty .. 4*ty+3
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // A quad of 4 consecutive k is one 16-byte load when every row start of a is 16-byte aligned (K % 4 == 0
    // and a itself aligned); likewise a quad of 4 consecutive n of b when N % 4 == 0. Otherwise: 4 scalars.
    const bool a_vec = (K % 4 == 0) && aligned16(a);
    const bool b_vec = (N % 4 == 0) && aligned16(b);

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;

    const int tiles = (K + BK - 1) / BK;
    for (int t = 0; t < tiles; ++t) {
        const int k0 = t * BK;

        // A tile: 64 x 32 floats = 512 quads, two per thread; a warp copies 4 whole 128-byte rows of the tile.
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int q = tid + THREADS * i;
            const int m = q / (BK / 4);
            const int k = (q % (BK / 4)) * 4;
            const int gm = m0 + m;
            const int gk = k0 + k;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gm < M) {
                const float* src = a + (long long)gm * K + gk;
                if (a_vec && gk + 3 < K) {
                    v = *reinterpret_cast<const float4*>(src);
                } else {
                    // The tail quad of a row (or any quad when rows are not 16-byte aligned): only in-range
                    // elements are read, the rest stay zero.
                    if (gk + 0 < K) v.x = src[0];
                    if (gk + 1 < K) v.y = src[1];
                    if (gk + 2 < K) v.z = src[2];
                    if (gk + 3 < K) v.w = src[3];
                }
            }
            *reinterpret_cast<float4*>(&As[m][k]) = v;
        }

        // B tile: 32 x 64 floats = 512 quads, two per thread; a warp copies 2 whole 256-byte rows of the tile.
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int q = tid + THREADS * i;
            const int k = q / (BN / 4);
            const int n = (q % (BN / 4)) * 4;
            const int gk = k0 + k;
            const int gn = n0 + n;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (gk < K) {
                const float* src = b + (long long)gk * N + gn;
                if (b_vec && gn + 3 < N) {
                    v = *reinterpret_cast<const float4*>(src);
                } else {
                    if (gn + 0 < N) v.x = src[0];
                    if (gn + 1 < N) v.y = src[1];
                    if (gn + 2 < N) v.z = src[2];
                    if (gn + 3 < N) v.w = src[3];
                }
            }
            *reinterpret_cast<float4*>(&Bs[k][n]) = v;
        }
        __syncthreads();  // both tiles are complete before anyone reads them

        // acc += A-slice x B-slice: per k, 4 values of A (this thread's rows) and 4 of B (its columns) feed
        // 16 multiply-adds. Zero-filled tails contribute nothing, so no bounds checks are needed here.
        // The reads are 32-bit, as this stage had them: read through a volatile view, each one stays the load
        // it is written as. Plain reads get merged by the compiler into 128-bit loads (4 k of one A row, 4
        // columns of B), and those are the next stage's change (matmul_regtile_64x64_k64_transposed).
        const volatile float(*As_rd)[BK] = As;
        const volatile float(*Bs_rd)[BN] = Bs;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ar[4], br[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) ar[i] = As_rd[4 * ty + i][k];
#pragma unroll
            for (int j = 0; j < 4; ++j) br[j] = Bs_rd[k][4 * tx + j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
        }
        __syncthreads();  // everyone is done reading before the next step overwrites the tiles
    }

    // Store the 4 x 4 sub-tile; a row of 4 goes out as one float4 when it is in range and aligned.
    const bool c_vec = (N % 4 == 0) && aligned16(c);
    const int gn = n0 + 4 * tx;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int gm = m0 + 4 * ty + i;
        if (gm >= M) continue;
        float* crow = c + (long long)gm * N;
        if (c_vec && gn + 3 < N) {
            *reinterpret_cast<float4*>(crow + gn) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (gn + j < N) crow[gn + j] = acc[i][j];
        }
    }
}
