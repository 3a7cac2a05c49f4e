// matmul_cpasync_2buf_64x64_broken — DELIBERATELY WRONG copy of kernels/cuda/matmul/matmul_cpasync_2buf_64x64.cu.
//
// It reproduces the first version of the cp.async pipeline (PR #49) that the committed correctness check
// caught: it compiles, runs, and produces wrong results at 1024^3. The pipeline must reject it (the check fails
// and nothing is timed). It carries exactly two defects, each marked by a DEFECT comment
//   (a) the buffer offsets are computed in the wrong units (a count of floats divided by four, as if it were
//       a byte count), so buffer 1 lies inside buffer 0;
//   (b) the final tile consumes buffer tiles % 2 instead of (tiles - 1) % 2.
// The two shared buffers are one flat array with computed offsets here, so that defect (a) is expressible.
//
// What it was meant to compute: C = A @ B in FP32, row-major, contiguous.
//
//   c[m][n] = sum_k a[m][k] * b[k][n]        a: M x K, b: K x N, c: M x N
//
// Launch: grid (ceil(N/64), ceil(M/64), 1), block (256, 1, 1), 33792 B static shared, no dynamic shared.
//   Arguments (a, b, c, M, N, K); any M, N, K >= 1 (tails are zero-filled on load and masked on store).
//   Needs cp.async: sm_80 or newer (built for sm_90).
//
// Design: one 64 x 64 tile of C per block, a 4 x 4 sub-tile per thread (16 x 16 threads). The contraction runs
//   in K steps of 32 through two shared buffers: while the multiply-adds consume one buffer, cp.async is already
//   filling the other with the next K tile, so the copy no longer stands in front of the arithmetic.

namespace {

// Compile-time tile shape (an enum, so no storage is emitted for it).
enum : int {
    BM = 64,            // rows of C per block
    BN = 64,            // columns of C per block
    BK = 32,            // K step held by one buffer
    A_STRIDE = BM + 4,  // 68: see the note on As below
    THREADS = 256,
};

// Asynchronous global -> shared copies (sm_80+). When src_bytes < the copy size the rest of the destination is
// zero-filled and nothing beyond src_bytes is read, which is how tile tails become zeros; src must still be a
// valid address, so callers pass the tensor's base pointer for an element that is out of range.
__device__ __forceinline__ void cp_async_4(float* smem_dst, const float* gmem_src, int src_bytes)
{
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_16(float* smem_dst, const float* gmem_src, int src_bytes)
{
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes)
                 : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most `pending` of this thread's committed groups are still in flight.
template <int pending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory"); }

__device__ __forceinline__ bool aligned16(const void* p)
{
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

// Offset, in floats, of buffer buf in a region of two buffers of buffer_floats floats each.
__device__ __forceinline__ int buffer_offset(int buf, int buffer_floats)
{
    // DEFECT: (a) buffer_floats is already a count of floats; dividing it by four (sizeof(float)), as if it
    // were bytes, places buffer 1 a quarter of the way into buffer 0. Correct: buf * buffer_floats.
    return buf * (buffer_floats / 4);
}

}  // namespace

extern "C" __global__ void __launch_bounds__(THREADS)
matmul_cpasync_2buf_64x64_broken(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                                 int M, int N, int K)
{
    // The A tile is stored transposed (k-major) so the inner loop reads 4 consecutive rows of A as one float4.
    // Row stride 68, not 64: 68 = 4 (mod 32) banks, so the 8 k-rows x 4 m-columns a warp stores per A copy
    // land in 32 distinct banks, and 68 * 4 B is still a multiple of 16 B, so the float4 reads stay aligned.
    // One flat region: two A buffers (BK x A_STRIDE each, A[k][m]) followed by two B buffers (BK x BN, B[k][n]);
    // 2 * 32 * 68 + 2 * 32 * 64 = 8448 floats = 33792 B, the same footprint as the correct kernel.
    __shared__ __align__(16) float smem[2 * BK * A_STRIDE + 2 * BK * BN];
    float* const As0 = smem;                      // A region
    float* const Bs0 = smem + 2 * BK * A_STRIDE;  // B region

    const int tid = threadIdx.x;
    const int tx = tid % 16;  // this thread's columns of the block tile: 4*tx .. 4*tx+3
    const int ty = tid / 16;  // this thread's rows of the block tile:    4*ty .. 4*ty+3
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // A copy role: a warp copies a patch of 4 rows x 8 consecutive k, so every row read is one 32-byte sector
    // and the transposed stores hit distinct banks. Thread: one k column (a_k) and rows a_m + 8*i, i < 8.
    const int a_k = (tid & 7) + 8 * ((tid >> 5) & 3);
    const int a_m = ((tid >> 3) & 3) + 4 * (tid >> 7);

    // 16-byte copies need a 16-byte aligned source: every row start of b is, when N % 4 == 0 and b itself is.
    const bool b_vec = (N % 4 == 0) && aligned16(b);

    // Issue the copies of K tile t into buffer buf (the caller commits them as one group).
    auto issue_tile = [&](int t, int buf) {
        const int k0 = t * BK;

        const int gk = k0 + a_k;
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            const int m = a_m + 8 * i;
            const int gm = m0 + m;
            const bool ok = gm < M && gk < K;
            cp_async_4(As0 + buffer_offset(buf, BK * A_STRIDE) + a_k * A_STRIDE + m,
                       ok ? a + (long long)gm * K + gk : a, ok ? 4 : 0);
        }

        // B tile: 32 x 64 floats = 512 quads, two per thread; a warp copies two full 256-byte rows.
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int q = tid + THREADS * i;
            const int k = q / 16;
            const int n = (q % 16) * 4;
            const int gkb = k0 + k;
            const int gn = n0 + n;
            float* dst = Bs0 + buffer_offset(buf, BK * BN) + k * BN + n;
            if (b_vec && gn + 3 < N) {
                const bool ok = gkb < K;
                cp_async_16(dst, ok ? b + (long long)gkb * N + gn : b, ok ? 16 : 0);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const bool ok = gkb < K && gn + j < N;
                    cp_async_4(dst + j, ok ? b + (long long)gkb * N + gn + j : b, ok ? 4 : 0);
                }
            }
        }
    };

    float acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;

    // acc += As[buf]^T-slice x Bs[buf]-slice over one K tile.
    auto mma_tile = [&](int buf) {
        const float* const As_buf = As0 + buffer_offset(buf, BK * A_STRIDE);
        const float* const Bs_buf = Bs0 + buffer_offset(buf, BK * BN);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const float4 av = *reinterpret_cast<const float4*>(As_buf + k * A_STRIDE + 4 * ty);
            const float4 bv = *reinterpret_cast<const float4*>(Bs_buf + k * BN + 4 * tx);
            const float ar[4] = {av.x, av.y, av.z, av.w};
            const float br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(ar[i], br[j], acc[i][j]);
        }
    };

    // K = 0 would give zero tiles; one all-zero-filled tile then writes the correct c = 0.
    const int tiles = max((K + BK - 1) / BK, 1);

    issue_tile(0, 0);
    cp_async_commit();
    for (int t = 0; t + 1 < tiles; ++t) {
        issue_tile(t + 1, (t + 1) % 2);
        cp_async_commit();
        // wait_group(1), not 0: the group just committed (tile t+1) may stay in flight while tile t is
        // multiplied; only tile t's group must have landed. Waiting for 0 would serialise copy and math again.
        cp_async_wait<1>();
        __syncthreads();  // every thread's copies of tile t are visible to every thread
        mma_tile(t % 2);
        __syncthreads();  // buffer t % 2 is refilled by the next iteration's issue_tile(t + 2)
    }
    // The final tile has nothing behind it: wait for all groups. It sits in buffer (tiles - 1) % 2.
    cp_async_wait<0>();
    __syncthreads();
    // DEFECT: (b) consumes buffer tiles % 2, the buffer the final tile was not copied into (it still holds
    // tile tiles - 2, or nothing when there is one tile). Correct: mma_tile((tiles - 1) % 2).
    mma_tile(tiles % 2);

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
