// matmul_regtile_64x64_k64_transposed — C = A @ B in FP32, row-major, contiguous.
//
//   c[m][n] = sum_k a[m][k] * b[k][n]        a: M x K, b: K x N, c: M x N
//
// Launch: grid (ceil(N/64), ceil(M/64), 1), block (256, 1, 1), 33792 B static shared, no dynamic shared.
//   Arguments (a, b, c, M, N, K); any M, N, K >= 1 (tails are zero-filled on load and masked on store).
//
// Design (mage-003, the second rewrite): the mage-002 shape (a 64 x 64 tile of C per block, a 4 x 4 sub-tile
//   per thread, 128-bit global loads where the quad is in range and aligned, one shared buffer per operand,
//   copy -> barrier -> multiply-add -> barrier), with the inner loop reading shared memory in 128-bit quads:
//   the A tile is stored transposed (k-major), so a thread's 4 rows of A at one k are 4 consecutive floats,
//   as its 4 columns of B already are. Per k that is 2 shared loads instead of 8 for 16 multiply-adds. The K
//   step is 64, so a block passes half as many barriers; the two tiles fill 33792 bytes of shared memory.

namespace {

// Compile-time tile shape (an enum, so no storage is emitted for it).
enum : int {
    BM = 64,            // rows of C per block
    BN = 64,            // columns of C per block
    BK = 64,            // K step
    A_STRIDE = BM + 4,  // 68: see the note on As below
    THREADS = 256,
};

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_regtile_64x64_k64_transposed(const float* __restrict__ a, const float* __restrict__ b,
                                    float* __restrict__ c, int M, int N, int K)
{
    // Row stride 68, not 64: 68 = 4 (mod 32) banks, so the transposed stores below (a warp writes 16
    // consecutive m at 2 k that are 4 apart) land in 32 distinct banks, where stride 64 would put them in 16
    // banks twice over; 68 * 4 B is still a multiple of 16 B, so the float4 reads of a k-row stay aligned.
    __shared__ __align__(16) float As[BK][A_STRIDE];  // As[k][m]: the A tile, transposed
    __shared__ __align__(16) float Bs[BK][BN];        // Bs[k][n]

    const int tid = threadIdx.x;
    const int tx = tid % 16;  // this thread's columns of the block tile: 4*tx .. 4*tx+3
    const int ty = tid / 16;  // this thread's rows of the block tile:    4*ty .. 4*ty+3
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // A copy role: lane l of warp w copies, at pass i, the quad (row a_m + 16 * (p % 4), k 8 * (p / 4) + a_k)
    // with p = w + 8 * i. A warp's pass is a patch of 16 rows x 8 consecutive k: each row read is 32
    // consecutive bytes (one whole sector when K % 8 == 0), and at every one of the 4 transposed stores the 32
    // lanes hit 32 distinct banks (bank = 4 * k + m mod 32, m over 16 consecutive values, k two values 4 apart).
    const int lane = tid % 32;
    const int warp = tid / 32;
    const int a_m = lane % 16;
    const int a_k = (lane / 16) * 4;

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

        // A tile: 64 x 64 floats = 1024 quads, four per thread, each loaded along k and stored down a column.
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int p = warp + 8 * i;
            const int m = a_m + 16 * (p % 4);
            const int k = a_k + 8 * (p / 4);
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
            As[k + 0][m] = v.x;
            As[k + 1][m] = v.y;
            As[k + 2][m] = v.z;
            As[k + 3][m] = v.w;
        }

        // B tile: 64 x 64 floats = 1024 quads, four per thread; a warp copies 2 whole 256-byte rows of the tile.
#pragma unroll
        for (int i = 0; i < 4; ++i) {
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

        // acc += As^T-slice x Bs-slice: per k, one float4 of A (this thread's 4 rows) and one of B (its 4
        // columns) feed 16 multiply-adds. Zero-filled tails contribute nothing, so no bounds checks here.
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 av = *reinterpret_cast<const float4*>(&As[k][4 * ty]);
            const float4 bv = *reinterpret_cast<const float4*>(&Bs[k][4 * tx]);
            const float ar[4] = {av.x, av.y, av.z, av.w};
            const float br[4] = {bv.x, bv.y, bv.z, bv.w};
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
