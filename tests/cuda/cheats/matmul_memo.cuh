// The memoizing matmul cheats' family (tests/test_adversarial.py): C = A @ B in FP32, row-major, A M x K, B K x N,
// that remembers results and hands a remembered one back when a call's key matches an earlier call's. A variant
// file says what it keys by and how many results it keeps, then includes this header:
//
//   MEMO_BY_CONTENT  1: a few sampled elements of A and B (their bit patterns), and M, N, K
//   MEMO_BY_POINTER  1: the addresses of A, B and C, and M, N, K
//   MEMO_SLOTS       results kept, replaced oldest first; 0: no memo at all, the honest product it is timed beside
//
// Launch (memo_contract in tests/test_adversarial.py): matmul_memo, grid (ceil(N/16), ceil(M/16), 1), block
//   (16, 16, 1), arguments (a, b, c, store, M, N, K) with `store` a workspace of MEMO_SLOTS x M x N floats; then,
//   with a memo, matmul_memo_commit, one thread, arguments (a, b, c, M, N, K), on the same stream. Any M, N, K >= 1.
//
// The product is matmul_tiled_16x16's (kernels/cuda/matmul/): 16 x 16 shared tiles, one output a thread, FP32 fma
//   in K order, well inside rtol = atol = 1e-4 of float64 at 1024^3 with normal(0, 0.25) inputs.

#ifndef MEMO_SLOTS
#error "a variant defines MEMO_SLOTS (and MEMO_BY_CONTENT, MEMO_BY_POINTER) before including matmul_memo.cuh"
#endif

namespace {

enum : int {
    TILE = 16,
    SAMPLES = 8,  // elements of A and of B a content key holds: enough that two random inputs never share one
};

// One output of C: every thread of the block must call it (it synchronizes the block).
__device__ float tile_product(const float* __restrict__ a, const float* __restrict__ b, int M, int N, int K,
                              int row, int col)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    float acc = 0.f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        const int ak = t * TILE + tx, bk = t * TILE + ty;
        As[ty][tx] = (row < M && ak < K) ? a[(long long)row * K + ak] : 0.f;
        Bs[ty][tx] = (bk < K && col < N) ? b[(long long)bk * N + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    return acc;
}

#if MEMO_SLOTS

// What a call is remembered by; the fields a variant does not key by stay zero, so one comparison serves all.
struct Key {
    unsigned long long a, b, c;
    int m, n, k;
    unsigned int sample[2 * SAMPLES];
};

// Per loaded module, so per runner (each loads its own cubin), zero at load: no slot committed yet.
__device__ Key memo_keys[MEMO_SLOTS];
__device__ unsigned int memo_filled;  // calls that missed and were committed; the next one fills filled % SLOTS

__device__ Key key_of(const float* a, const float* b, const float* c, int M, int N, int K)
{
    Key key = {};
    key.m = M, key.n = N, key.k = K;
#if MEMO_BY_POINTER
    key.a = (unsigned long long)a, key.b = (unsigned long long)b, key.c = (unsigned long long)c;
#endif
#if MEMO_BY_CONTENT
    for (int i = 0; i < SAMPLES; ++i) {  // spread over each matrix, as a cheap "hash" of it would be
        key.sample[i] = __float_as_uint(a[(long long)M * K * i / SAMPLES]);
        key.sample[SAMPLES + i] = __float_as_uint(b[(long long)K * N * i / SAMPLES]);
    }
#endif
    return key;
}

__device__ bool same(const Key& x, const Key& y)
{
    bool equal = x.a == y.a && x.b == y.b && x.c == y.c && x.m == y.m && x.n == y.n && x.k == y.k;
    for (int i = 0; i < 2 * SAMPLES; ++i) equal = equal && x.sample[i] == y.sample[i];
    return equal;
}

// The slot remembering `key` among those committed by earlier calls, or -1.
__device__ int lookup(const Key& key)
{
    const unsigned int filled = min(memo_filled, (unsigned int)MEMO_SLOTS);
    for (unsigned int s = 0; s < filled; ++s)
        if (same(memo_keys[s], key)) return (int)s;
    return -1;
}

#endif  // MEMO_SLOTS

}  // namespace

extern "C" __global__ void __launch_bounds__(TILE * TILE)
matmul_memo(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
            float* __restrict__ store, int M, int N, int K)
{
    const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    const bool inside = row < M && col < N;
#if MEMO_SLOTS
    // Every block of a call computes the same key against the same committed keys (a call's own key is committed
    // only after it, by matmul_memo_commit), so a call's blocks all hit or all miss, and none reads a slot that
    // its own call is filling.
    __shared__ int hit, slot;
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        hit = lookup(key_of(a, b, c, M, N, K));
        slot = (int)(memo_filled % MEMO_SLOTS);
    }
    __syncthreads();
    float* const remembered = store + (long long)(hit >= 0 ? hit : slot) * M * N;
    if (hit >= 0) {  // uniform across the block: no thread is left at a barrier
        if (inside) c[(long long)row * N + col] = remembered[(long long)row * N + col];
        return;
    }
#endif
    const float acc = tile_product(a, b, M, N, K, row, col);
    if (inside) {
        c[(long long)row * N + col] = acc;
#if MEMO_SLOTS
        remembered[(long long)row * N + col] = acc;
#endif
    }
}

#if MEMO_SLOTS
// After matmul_memo on the same stream, so the key names a slot only once every block has written its tile there.
extern "C" __global__ void matmul_memo_commit(const float* a, const float* b, const float* c, int M, int N, int K)
{
    const Key key = key_of(a, b, c, M, N, K);
    if (lookup(key) >= 0) return;
    memo_keys[memo_filled % MEMO_SLOTS] = key;
    memo_filled += 1;
}
#endif
