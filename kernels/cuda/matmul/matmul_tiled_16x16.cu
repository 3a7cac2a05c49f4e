// matmul_tiled_16x16 — C = A @ B in FP32, row-major, contiguous.
//
//   c[m][n] = sum_k a[m][k] * b[k][n]        a: M x K, b: K x N, c: M x N
//
// Launch: grid (ceil(N/16), ceil(M/16), 1), block (16, 16, 1), 2048 B static shared, no dynamic shared.
//   Arguments (a, b, c, M, N, K); any M, N, K >= 1 (tails are zero-filled on load and masked on store).
//
// Design (mage-001, the original arrangement): one output per thread, a 16 x 16 tile of C per block. The
//   contraction runs in K steps of 16: each thread copies one element of the A tile and one of the B tile into
//   shared memory, the block synchronizes, and each thread then reads a row of the A tile and a column of the
//   B tile from shared memory for its 16 multiply-adds. Every operand element is read from global memory
//   once per block that needs it instead of once per output.

namespace {

enum : int {
    TILE = 16,  // rows and columns of C per block, and the K step
};

}  // namespace

extern "C" __global__ void __launch_bounds__(TILE * TILE)
matmul_tiled_16x16(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                   int M, int N, int K)
{
    __shared__ float As[TILE][TILE];  // As[m][k]: A tile, as in global memory
    __shared__ float Bs[TILE][TILE];  // Bs[k][n]: B tile, as in global memory

    const int tx = threadIdx.x;  // column of C within the tile; also the k this thread copies from A
    const int ty = threadIdx.y;  // row of C within the tile;    also the k this thread copies from B
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    // threadIdx.x runs fastest within a warp, so both copies read 16 consecutive floats of one row per
    // half-warp (coalesced), and the inner loop's Bs[k][tx] is 16 consecutive words (no bank conflict) while
    // As[ty][k] is one word per half-warp (a broadcast).
    float acc = 0.f;
    const int tiles = (K + TILE - 1) / TILE;
    for (int t = 0; t < tiles; ++t) {
        const int ak = t * TILE + tx;
        const int bk = t * TILE + ty;
        // Out-of-range elements are stored as zeros: they add nothing to the sum, so the loop below needs no
        // bounds checks, and a thread whose output is outside C still copies (its copies feed its neighbours).
        As[ty][tx] = (row < M && ak < K) ? a[(long long)row * K + ak] : 0.f;
        Bs[ty][tx] = (bk < K && col < N) ? b[(long long)bk * N + col] : 0.f;
        __syncthreads();  // the whole tile is in shared memory before anyone reads it

#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();  // everyone is done reading before the next step overwrites the tile
    }

    // No early return above: every thread must reach both barriers in every step.
    if (row < M && col < N) c[(long long)row * N + col] = acc;
}
